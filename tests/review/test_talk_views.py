"""The talk on a card over HTTP, with htmx (a panel, or the next card) and without (a
page, or a redirect): guideline, comments, needs discussion, examples; the home page's
answers and the nav's count; the card's query count unchanged by its talk."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from kgreview.graph import services as graph
from kgreview.graph.models import RelationType
from kgreview.review import talk
from kgreview.review.decide import decisions
from kgreview.review.models import Comment, Discussion, Example
from tests.pages import HOSTILE, HX, flashes, page

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(f):
    return {
        role: f.user(name, role=role) for name, role in (("rita", "reviewer"), ("cora", "curator"))
    } | {"viewer": f.user("vic", role="viewer")}


def as_(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def cards(f):
    doc = f.lesson(slug="talk")
    a, b, c = f.concept("Alpha"), f.concept("Beta"), f.concept("Gamma")
    return [f.edge_proposal(a, b, doc=doc), f.edge_proposal(b, c, doc=doc)]


def test_the_card_offers_the_guideline_comments_and_a_question_by_key(people, cards):
    html = page(as_(people["reviewer"]).get(reverse("review:focus"), {"id": cards[0].pk}))
    assert 'data-key="i"' in html and 'data-key="c"' in html and 'data-key="d"' in html
    assert '<span id="comment-count">0</span>' in html
    assert '<div id="talk-panel"' in html
    # The help lists the keys.
    assert re.search(r"<kbd>i</kbd></th><td>The guideline", html)
    assert re.search(r"<kbd>d</kbd></th><td>Needs discussion", html)


def test_a_viewer_has_no_question_to_ask_but_reads_the_comments(people, cards):
    talk.comment_post(proposal_id=cards[0].pk, body="Hmm.", acting_user=people["reviewer"])
    viewer = as_(people["viewer"])
    html = page(viewer.get(reverse("review:focus"), {"id": cards[0].pk}))
    assert 'data-key="d"' not in html and '<span id="comment-count">1</span>' in html
    thread = page(viewer.get(reverse("review:comments", args=[cards[0].pk]), headers=HX))
    assert "Hmm." in thread and "reviewers and curators write in it" in thread
    assert 'id="comment-form"' not in thread


def test_the_guideline_panel_with_htmx_and_its_page_without(people, cards):
    relation = RelationType.objects.get(key="prerequisite")
    graph.relation_type_guideline(
        relation=relation, text=f"**Order** of study. {HOSTILE}", acting_user=people["curator"]
    )
    url = reverse("review:guideline", args=[cards[0].pk])
    panel = page(as_(people["reviewer"]).get(url, headers=HX))
    assert panel.lstrip().startswith("<section") and "<html" not in panel
    assert "<strong>Order</strong>" in panel and HOSTILE not in panel
    whole = page(as_(people["reviewer"]).get(url))
    assert "<html" in whole and "<strong>Order</strong>" in whole and "Back to the card" in whole


def test_the_guideline_panel_lists_accepted_then_rejected_examples_with_reasons(people, cards, f):
    cora = people["curator"]
    decisions.proposal_reject(
        proposal_id=cards[0].pk, reason_code="wrong_direction", note="Backwards.", acting_user=cora
    )
    decisions.proposal_accept(proposal_id=cards[1].pk, acting_user=cora)
    talk.example_add(proposal_id=cards[0].pk, acting_user=cora)
    talk.example_add(proposal_id=cards[1].pk, acting_user=cora)
    other = f.edge_proposal(f.concept("X"), f.concept("Y"))
    panel = page(
        as_(people["reviewer"]).get(reverse("review:guideline", args=[other.pk]), headers=HX)
    )
    accepted, rejected = panel.index("example-accepted"), panel.index("example-rejected")
    assert accepted < rejected
    assert "Rejected because: Wrong direction — Backwards." in panel
    assert "Before learning vector search" in panel  # the quote


def test_a_reviewer_comments_with_htmx_and_the_count_follows(people, cards):
    url = reverse("review:comments", args=[cards[0].pk])
    response = as_(people["reviewer"]).post(url, {"body": "Looks *right*."}, headers=HX)
    html = page(response)
    assert response.status_code == 200 and "<em>right</em>" in html
    assert '<span id="comment-count" hx-swap-oob="true">1</span>' in html
    reply = as_(people["curator"]).post(
        url, {"body": "Agreed.", "parent": Comment.objects.get().pk}, headers=HX
    )
    assert 'class="comment depth-1' in page(reply)


def test_a_comment_without_htmx_redirects_to_the_thread_page(people, cards):
    url = reverse("review:comments", args=[cards[0].pk])
    response = as_(people["reviewer"]).post(url, {"body": "Plain form."}, follow=True)
    assert ("success", "Your comment is posted.") in flashes(response)
    assert "Plain form." in page(response) and "<html" in page(response)


def test_a_viewer_posting_a_comment_is_refused_403_in_words(people, cards):
    url = reverse("review:comments", args=[cards[0].pk])
    response = as_(people["viewer"]).post(url, {"body": "Let me in."}, headers=HX)
    assert response.status_code == 403
    assert "reviewers and curators write in it" in page(response)
    assert not Comment.objects.exists()


def test_an_empty_comment_is_refused_in_words_and_nothing_is_swapped(people, cards):
    url = reverse("review:comments", args=[cards[0].pk])
    response = as_(people["reviewer"]).post(url, {"body": "  "}, headers=HX)
    assert response.status_code == 400 and "the comment is empty" in page(response)
    assert response.headers.get("HX-Reswap") == "none"


def test_an_edit_after_the_window_is_refused_in_words(people, cards):
    from datetime import timedelta

    from django.utils import timezone

    c = talk.comment_post(
        proposal_id=cards[0].pk,
        body="old",
        acting_user=people["reviewer"],
        now=timezone.now() - timedelta(minutes=16),
    )
    url = reverse("review:comment-edit", args=[c.pk])
    response = as_(people["reviewer"]).post(url, {"body": "new"}, headers=HX)
    assert response.status_code == 409 and "15 minutes" in page(response)
    fresh = talk.comment_post(proposal_id=cards[0].pk, body="typo", acting_user=people["reviewer"])
    ok = as_(people["reviewer"]).post(
        reverse("review:comment-edit", args=[fresh.pk]), {"body": "fixed"}, headers=HX
    )
    assert ok.status_code == 200 and "fixed" in page(ok)
    assert list(fresh.revisions.values_list("body", flat=True)) == ["typo", "fixed"]


def test_asking_with_htmx_moves_on_to_the_next_card(people, cards):
    reviewer = as_(people["reviewer"])
    ask = page(
        reviewer.get(reverse("review:comments", args=[cards[0].pk]), {"ask": "1"}, headers=HX)
    )
    assert 'id="ask-form"' in ask
    response = reviewer.post(
        reverse("review:discuss", args=[cards[0].pk]), {"question": "Which way?"}, headers=HX
    )
    html = page(response)
    assert response.status_code == 200 and "out of the focus queue" in html
    assert f'data-proposal="{cards[1].pk}"' in html
    assert Discussion.objects.get().question.body == "Which way?"


def test_asking_on_a_card_a_colleague_decided_meanwhile_says_so_and_offers_a_comment(
    people, cards, f
):
    """The card was open when the page showed it; a colleague accepted it since: "d"
    finds no question to ask, and the panel says who decided it instead of nothing."""
    colleague = f.user("cole", role="reviewer")
    decisions.proposal_accept(proposal_id=cards[0].pk, acting_user=colleague)
    for headers in (HX, {}):
        html = page(
            as_(people["reviewer"]).get(
                reverse("review:comments", args=[cards[0].pk]), {"ask": "1"}, headers=headers
            )
        )
        assert 'id="ask-form"' not in html and 'id="comment-form"' in html
        assert f"Proposal #{cards[0].pk} was accepted by cole while the card was open" in html
    plain = page(as_(people["reviewer"]).get(reverse("review:comments", args=[cards[0].pk])))
    assert 'id="no-question"' not in plain


def test_asking_without_htmx_redirects_to_the_focus_queue(people, cards):
    response = as_(people["reviewer"]).post(
        reverse("review:discuss", args=[cards[0].pk]), {"question": "Which way?"}, follow=True
    )
    html = page(response)
    assert f'data-proposal="{cards[1].pk}"' in html
    assert any("out of the focus queue" in text for _, text in flashes(response))


def test_the_focus_queue_never_serves_a_card_in_discussion(people, cards):
    talk.discussion_open(proposal_id=cards[1].pk, question="?", acting_user=people["reviewer"])
    reviewer = as_(people["reviewer"])
    html = page(reviewer.get(reverse("review:focus"), {"status": "open"}))
    assert f'data-proposal="{cards[0].pk}"' in html
    talk.discussion_open(proposal_id=cards[0].pk, question="?", acting_user=people["reviewer"])
    html = page(reviewer.get(reverse("review:focus"), {"status": "open"}))
    assert "Nothing left to review here" in html


def test_a_curator_answers_and_resolves_and_the_card_returns(people, cards):
    talk.discussion_open(proposal_id=cards[0].pk, question="?", acting_user=people["reviewer"])
    curator = as_(people["curator"])
    thread = page(curator.get(reverse("review:comments", args=[cards[0].pk]), headers=HX))
    assert "Needs discussion." in thread and 'id="resolve-button"' in thread
    response = curator.post(
        reverse("review:resolve", args=[cards[0].pk]), {"note": "It is."}, headers=HX
    )
    html = page(response)
    assert "back in the queue" in html and f'data-proposal="{cards[0].pk}"' in html
    assert 'id="in-discussion"' not in html
    assert talk.open_discussion_of(cards[0].pk) is None


def test_another_reviewer_resolving_is_refused_403(people, cards, f):
    talk.discussion_open(proposal_id=cards[0].pk, question="?", acting_user=people["reviewer"])
    other = as_(f.user("rob2", role="reviewer"))
    thread = page(other.get(reverse("review:comments", args=[cards[0].pk]), headers=HX))
    assert 'id="resolve-button"' not in thread
    response = other.post(reverse("review:resolve", args=[cards[0].pk]), headers=HX)
    assert response.status_code == 403 and "Only the reviewer who asked" in page(response)


def test_the_queue_filters_cards_that_need_discussion(people, cards):
    talk.discussion_open(proposal_id=cards[1].pk, question="?", acting_user=people["reviewer"])
    curator = as_(people["curator"])
    html = page(curator.get(reverse("review:queue"), {"discussion": "1"}))
    ids = re.findall(r'<td class="num small muted">(\d+)</td>', html)
    assert ids == [str(cards[1].pk)] and "needs discussion" in html
    part = page(curator.get(reverse("review:queue"), {"discussion": "1"}, headers=HX))
    assert re.findall(r'<td class="num small muted">(\d+)</td>', part) == [str(cards[1].pk)]
    counts = page(curator.get(reverse("review:queue-counts"), {"discussion": "1"}))
    assert re.search(r'<strong id="result-count"[^>]*>1</strong>', counts)


def test_use_as_example_on_a_decided_card_and_retire_it_on_the_ontology_page(people, cards):
    cora = people["curator"]
    decisions.proposal_accept(proposal_id=cards[0].pk, acting_user=cora)
    curator = as_(cora)
    card = page(curator.get(reverse("review:focus"), {"id": cards[0].pk}))
    assert 'id="example-button"' in card
    reviewer_card = page(as_(people["reviewer"]).get(reverse("review:focus"), {"id": cards[0].pk}))
    assert 'id="example-button"' not in reviewer_card
    refused = as_(people["reviewer"]).post(reverse("review:example-add", args=[cards[0].pk]))
    assert refused.status_code == 403
    response = curator.post(reverse("review:example-add", args=[cards[0].pk]), headers=HX)
    assert "is now an example of “prerequisite”" in page(response)
    example = Example.objects.get()
    ontology = page(curator.get(reverse("ontology")))
    assert f'id="example-{example.pk}"' in ontology
    gone = curator.post(reverse("review:example-retire", args=[example.pk]), follow=True)
    assert ("success", "The example is retired; it no longer shows on cards.") in flashes(gone)
    assert f'id="example-{example.pk}"' not in page(gone)
    assert Example.objects.get().retired_at is not None


def test_answers_show_on_the_askers_home_page_and_in_the_nav(people, cards):
    rita = people["reviewer"]
    talk.discussion_open(proposal_id=cards[0].pk, question="Which way round?", acting_user=rita)
    home = page(as_(rita).get(reverse("home")))
    assert 'id="nav-answers"' not in home and 'id="answers"' not in home
    talk.comment_post(proposal_id=cards[0].pk, body="This way.", acting_user=people["curator"])
    home = page(as_(rita).get(reverse("home")))
    assert re.search(r'id="nav-answers"[^>]*>1 answer<', home)
    assert "Which way round?" in home and "new" in home
    as_(rita).get(reverse("review:comments", args=[cards[0].pk]), headers=HX)  # read it
    assert 'id="nav-answers"' not in page(as_(rita).get(reverse("home")))


def test_the_nav_count_costs_no_query_on_an_htmx_card(people, cards):
    """The count is asked only by a page that shows the nav: a card swapped in by htmx
    costs the same with unread answers as without."""
    rita = people["reviewer"]
    client = as_(rita)
    url = reverse("review:focus")

    def counted() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url, {"id": cards[1].pk}, headers=HX).status_code == 200
        return len(ctx.captured_queries)

    before = counted()
    talk.discussion_open(proposal_id=cards[0].pk, question="?", acting_user=rita)
    for i in range(3):
        talk.comment_post(proposal_id=cards[1].pk, body=f"c{i}", acting_user=people["curator"])
    talk.comment_post(proposal_id=cards[0].pk, body="answer", acting_user=people["curator"])
    assert counted() == before
