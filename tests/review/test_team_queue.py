"""The focus queue shared by a team: leases, a doubled card's second reviewer, the
adjudication queue, a card re-pointed by a colleague, the next card fetched ahead."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from kgreview.review.decide import decisions
from kgreview.review.models import Lease, Proposal
from kgreview.review.team import leases
from tests.review.conftest import login_as as _login
from tests.review.conftest import team_edge as _edge

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


# --- Leases ------------------------------------------------------------------------------


def test_taking_a_lease_is_refused_while_a_colleague_holds_it(f, team):
    p = _edge(f)
    assert leases.take(team["ann"], [p.pk]) == [p.pk]
    assert leases.take(team["bob"], [p.pk]) == []
    assert leases.take(team["ann"], [p.pk]) == [p.pk]  # renewing one's own
    Lease.objects.filter(pk=p.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert leases.take(team["bob"], [p.pk]) == [p.pk]  # a lapsed lease is anyone's


def test_releasing_on_logout_lets_colleagues_have_the_cards(f, team, client):
    p = _edge(f)
    client.force_login(team["ann"])
    client.get(reverse("review:focus"))
    assert leases.held(team["ann"]) == [p.pk]
    client.post(reverse("logout"))
    assert leases.held(team["ann"]) == []


def test_two_reviewers_are_served_different_cards(f, team):
    ps = [_edge(f, f"A{i}", f"B{i}") for i in range(4)]
    ann, bob = _login(team["ann"]), _login(team["bob"])
    first = ann.get(reverse("review:focus"), headers=HX).content.decode()
    second = bob.get(reverse("review:focus"), headers=HX).content.decode()
    shown_ann = [p.pk for p in ps if f'data-proposal="{p.pk}"' in first]
    shown_bob = [p.pk for p in ps if f'data-proposal="{p.pk}"' in second]
    assert len(shown_ann) == 1 and len(shown_bob) == 1 and shown_ann != shown_bob
    held = set(leases.held(team["ann"])) & set(leases.held(team["bob"]))
    assert held == set()


def test_a_doubled_card_reaches_the_second_reviewer_only_after_the_first_decided(f, team, doubled):
    p = _edge(f)
    ann, bob = _login(team["ann"]), _login(team["bob"])
    assert (
        f'data-proposal="{p.pk}"' in ann.get(reverse("review:focus"), headers=HX).content.decode()
    )
    assert (
        f'data-proposal="{p.pk}"'
        not in bob.get(reverse("review:focus"), headers=HX).content.decode()
    )
    page = ann.post(reverse("review:accept", args=[p.pk]), {"version": 1}, headers=HX)
    assert f"Accepted #{p.pk}" in page.content.decode()  # the same words as any accept
    assert f'data-proposal="{p.pk}"' not in page.content.decode()  # never again to ann
    shown = bob.get(reverse("review:focus"), headers=HX).content.decode()
    assert f'data-proposal="{p.pk}"' in shown
    assert "ann" not in shown  # blind: nothing of the first vote on the card


def test_the_adjudication_queue_is_for_curators(f, team, doubled):
    p = _edge(f)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"])
    decisions.proposal_reject(proposal_id=p.pk, acting_user=team["bob"], reason_code="duplicate")
    reviewer = _login(f.user("dan", role="reviewer"))
    page = reviewer.get(reverse("review:focus") + "?stage=adjudicate").content.decode()
    assert "Only curators adjudicate" in page and f'data-proposal="{p.pk}"' not in page
    by_id = reviewer.get(reverse("review:focus") + f"?id={p.pk}").content.decode()
    assert "Waiting for a curator" in by_id and 'id="accept-button"' not in by_id
    curator = _login(team["cat"])
    page = curator.get(reverse("review:focus") + "?stage=adjudicate").content.decode()
    assert f'data-proposal="{p.pk}"' in page and "The two reviewers differ" in page
    assert "ann" in page and "bob" in page
    done = curator.post(
        reverse("review:accept", args=[p.pk]),
        {"version": Proposal.objects.get(pk=p.pk).version, "q": "stage=adjudicate"},
        headers=HX,
    )
    assert done.status_code == 200 and Proposal.objects.get(pk=p.pk).status == "accepted"
    assert "Nothing left to review here" in done.content.decode()


def test_the_lease_heartbeat_renews_and_refuses_viewers(f, team, client):
    p = _edge(f)
    leases.take(team["ann"], [p.pk])
    before = Lease.objects.get(pk=p.pk).expires_at
    client.force_login(team["ann"])
    assert client.post(reverse("review:lease-renew")).status_code == 204
    assert Lease.objects.get(pk=p.pk).expires_at >= before
    client.force_login(f.user("vic", role="viewer"))
    assert client.post(reverse("review:lease-renew")).status_code == 403


def test_a_card_re_pointed_by_a_colleagues_concept_is_decided_as_seen(f, team):
    """Ann looks at an edge waiting for the concept proposal "Vector search"; Bob accepts
    that concept meanwhile, which re-points Ann's card at it under the same name. Ann's
    accept at the version she saw goes through: it decides the same thing."""
    concept = f.concept_proposal("Vector search")
    edge = f.edge_proposal(f.concept("Embeddings"), concept)
    seen = Proposal.objects.get(pk=edge.pk).version
    decisions.proposal_accept(proposal_id=concept.pk, acting_user=team["bob"])
    assert Proposal.objects.get(pk=edge.pk).version > seen
    out = decisions.proposal_accept(proposal_id=edge.pk, acting_user=team["ann"], version=seen)
    assert out.decision is not None and Proposal.objects.get(pk=edge.pk).status == "accepted"


def test_a_card_whose_meaning_changed_is_still_refused_until_looked_at(f, team):
    """A change that is not only a re-resolution (here a stage change: a first vote, which
    writes no decision) still asks the reviewer to look again."""
    p = _edge(f)
    seen = Proposal.objects.get(pk=p.pk).version
    Proposal.objects.filter(pk=p.pk).update(version=seen + 1)
    from kgreview.review.decide.outcome import VersionChanged

    with pytest.raises(VersionChanged, match="changed while you were looking"):
        decisions.proposal_accept(proposal_id=p.pk, acting_user=team["ann"], version=seen)


# --- The next card, fetched ahead ---------------------------------------------------------


def test_a_decision_on_a_page_holding_the_next_card_answers_with_only_the_words(f, team):
    a, b = _edge(f, "A1", "B1"), _edge(f, "A2", "B2")
    ann = _login(team["ann"])
    ann.get(reverse("review:focus"))  # b is shown (newest first), a is leased ahead
    from urllib.parse import quote

    from kgreview.review.workspace.selectors import cursor_of

    after = quote(cursor_of(Proposal.objects.get(pk=b.pk), "priority"))
    ahead = ann.get(reverse("review:focus") + f"?after={after}&prefetch=1&trail={b.pk}", headers=HX)
    assert f'data-proposal="{a.pk}"' in ahead.content.decode()
    assert set(leases.held(team["ann"])) >= {a.pk, b.pk}  # the card read is still held
    done = ann.post(
        reverse("review:accept", args=[b.pk]),
        {"version": 1, "trail": ""},
        headers={**HX, "X-KG-Prefetched": str(a.pk)},
    )
    html = done.content.decode()
    assert done["X-KG-Decided"] == "1" and 'id="kg-decided"' in html
    assert f"Accepted #{b.pk}" in html and 'id="undo-button"' in html
    assert "data-proposal" not in html  # no card drawn: the page has it
    assert Proposal.objects.get(pk=b.pk).status == "accepted"


def test_an_edit_accepted_on_a_page_holding_the_next_card_answers_with_only_the_words(f, team):
    a, b = _edge(f, "A3", "B3"), _edge(f, "A4", "B4")
    ann = _login(team["ann"])
    done = ann.post(
        reverse("review:edit", args=[b.pk]),
        {"kind": "add_edge", "version": 1, "confidence": "0.7", "weight": "2"},
        headers={**HX, "X-KG-Prefetched": str(a.pk)},
    )
    html = done.content.decode()
    assert done["X-KG-Decided"] == "1" and f"Edited and accepted #{b.pk}" in html
    assert "data-proposal" not in html
    assert Proposal.objects.get(pk=b.pk).status == "accepted"


def test_a_card_held_ahead_that_the_decision_closed_is_not_put_up(f, team):
    """Accepting an edge accepts the concept proposal it needs: a page holding that
    concept's card ahead gets the next open card instead."""
    concept = f.concept_proposal("Vector search")
    edge = f.edge_proposal(f.concept("Embeddings"), concept)
    ann = _login(team["ann"])
    done = ann.post(
        reverse("review:accept", args=[edge.pk]),
        {"version": Proposal.objects.get(pk=edge.pk).version},
        headers={**HX, "X-KG-Prefetched": str(concept.pk)},
    )
    assert not done.has_header("X-KG-Decided")
    assert f'data-proposal="{concept.pk}"' not in done.content.decode()
    assert Proposal.objects.get(pk=concept.pk).status == "accepted"


def test_a_refused_decision_answers_with_its_card_whatever_the_page_holds(f, team):
    p, q = _edge(f, "C1", "D1"), _edge(f, "C2", "D2")
    decisions.proposal_accept(proposal_id=p.pk, acting_user=team["bob"])
    ann = _login(team["ann"])
    refused = ann.post(
        reverse("review:reject", args=[p.pk]),
        {"version": 1, "reason_code": "too_vague"},
        headers={**HX, "X-KG-Prefetched": str(q.pk)},
    )
    assert not refused.has_header("X-KG-Decided")
    assert "already accepted by bob" in refused.content.decode()


def test_a_card_a_colleague_superseded_and_undid_is_decided_after_one_look_again(f, team):
    """Seen in the team walk: ann rejects the concept an edge needs (the edge is
    superseded), then undoes it (the edge is back). Bob, who had the edge open, is told it
    changed, and the same key decides it with the card as it is now."""
    import re

    from kgreview.review.decide import decisions, undo
    from kgreview.review.models import Proposal
    from tests.review.conftest import login_as

    film, producer = f.concept_proposal("Film"), f.concept_proposal("Producer")
    p = f.edge_proposal(producer, film)
    seen = Proposal.objects.get(pk=p.pk).version
    out = decisions.proposal_reject(
        proposal_id=film.pk, acting_user=team["ann"], reason_code="too_vague"
    )
    assert Proposal.objects.get(pk=p.pk).status == "superseded"
    undo.decisions_undo(acting_user=team["ann"], batch=out.batch)
    assert Proposal.objects.get(pk=p.pk).status == "pending"
    bob = login_as(team["bob"])
    here = {"HX-Request": "true", "HX-Current-URL": "http://testserver/review/focus/"}
    first = bob.post(reverse("review:accept", args=[p.pk]), {"version": seen}, headers=here)
    html = first.content.decode()
    assert "changed while you were looking" in html
    now = re.search(rf'data-proposal="{p.pk}" data-version="(\d+)"', html)
    assert now is not None and int(now.group(1)) == Proposal.objects.get(pk=p.pk).version
    again = bob.post(reverse("review:accept", args=[p.pk]), {"version": now.group(1)}, headers=here)
    assert again.status_code == 200 and "Accepted" in again.content.decode()
    assert Proposal.objects.get(pk=p.pk).status == "accepted"
