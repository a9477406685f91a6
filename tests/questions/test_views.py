"""The Questions pages: who may read and act, the forms in words, htmx partials and their
fallbacks, Run now (and a refusing broker), the history and the review card's link."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django_celery_beat.models import PeriodicTask

from kgreview.core.models import AuditEntry
from kgreview.questions.models import CompetencyQuestion, CompetencyRun, QuestionResult
from kgreview.questions.schedule import SCHEDULE_NAME
from kgreview.review.decide.decisions import proposal_accept
from tests.agents.pages import HOSTILE, HX, client_for, flashes, page

pytestmark = pytest.mark.django_db

QUESTION = "What should I learn before quantization?"


def add(client, headers=None, **data):
    body = {"text": QUESTION, "expect": "concepts", "names": "Embeddings", "yes": "", "note": ""}
    body.update(data)
    return client.post(reverse("questions:add"), body, headers=headers or {})


# --- who may do what ----------------------------------------------------------------------


@pytest.mark.parametrize("role", ["viewer", "reviewer", "curator"])
def test_everyone_with_a_role_reads_the_pages(f, world, ask, role):
    """The list and a question's page open for every role; only curators see the forms."""
    q = ask(QUESTION, "concepts", ["Embeddings"])
    client = client_for(f, role)
    home = client.get(reverse("questions:home"))
    detail = client.get(reverse("questions:detail", args=[q.pk]))
    assert home.status_code == detail.status_code == 200
    assert QUESTION in page(home) and QUESTION in page(detail)
    assert ('id="run-now"' in page(home)) is (role == "curator")
    assert ('id="question-form"' in page(home)) is (role == "curator")
    assert ('id="retire-question"' in page(detail)) is (role == "curator")


def test_the_agents_page_links_the_questions_for_curators_only(f, world):
    """Curators find the competency questions beside the agents; reviewers do not (the
    main nav stays short enough to fit a laptop screen unfolded)."""
    link = f'href="{reverse("questions:home")}"'
    assert link in page(client_for(f, "curator").get(reverse("agents:home")))
    assert link not in page(client_for(f, "reviewer").get(reverse("agents:home")))
    assert link not in page(client_for(f, "curator").get(reverse("home")))


def test_no_role_and_anonymous_cannot_read(f, world):
    """No role: 403 in words; not signed in: the login page."""
    assert client_for(f, None).get(reverse("questions:home")).status_code == 403
    anonymous = client_for(f, "anonymous").get(reverse("questions:home"))
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]


@pytest.mark.parametrize("role", ["viewer", "reviewer"])
def test_only_curators_act(f, world, ask, role):
    """Add, edit, retire, reactivate, run now and the schedule toggle are 403 for others;
    nothing is written."""
    q = ask(QUESTION, "concepts", ["Embeddings"])
    client = client_for(f, role)
    posts = [
        (
            reverse("questions:add"),
            {"text": "What is RLHF used for?", "expect": "concepts", "names": "Alignment"},
        ),
        (
            reverse("questions:edit", args=[q.pk]),
            {"text": "x", "expect": "concepts", "names": "Alignment"},
        ),
        (reverse("questions:retire", args=[q.pk]), {}),
        (reverse("questions:reactivate", args=[q.pk]), {}),
        (reverse("questions:run-now"), {}),
        (reverse("questions:schedule-toggle"), {"enabled": "0"}),
    ]
    for url, data in posts:
        assert client.post(url, data).status_code == 403, url
    assert client.get(reverse("questions:edit", args=[q.pk])).status_code == 403
    assert CompetencyQuestion.objects.count() == 1 and not CompetencyRun.objects.exists()
    assert PeriodicTask.objects.get(name=SCHEDULE_NAME).enabled


# --- the forms, in words --------------------------------------------------------------------


def test_a_curator_adds_a_question_without_htmx(curator, world):
    """The POST redirects to the list with a message; the question is there."""
    response = add(curator, names="Embeddings\nTokenization", note="core")
    assert response.status_code == 302 and response["Location"] == reverse("questions:home")
    q = CompetencyQuestion.objects.get()
    assert q.expected_names == ["Embeddings", "Tokenization"] and q.note == "core"
    listing = curator.get(reverse("questions:home"))
    assert QUESTION in page(listing) and "not asked yet" in page(listing)


def test_a_curator_adds_a_question_with_htmx(curator, world):
    """htmx: 204 and HX-Redirect to the list."""
    response = add(curator, headers=HX, names="Embeddings; Tokenization")
    assert response.status_code == 204 and response["HX-Redirect"] == reverse("questions:home")
    assert CompetencyQuestion.objects.get().expected_names == ["Embeddings", "Tokenization"]


def test_unknown_names_come_back_in_words_with_what_was_typed(curator, world):
    """400, the form again with the text kept and the unknown name named; nothing written."""
    response = add(curator, names="Embeddings\nQuantum networking")
    assert response.status_code == 400
    html = page(response)
    assert "does not know the concept “Quantum networking”" in html.replace("&ldquo;", "“")
    assert f'value="{QUESTION}"' in html and "Quantum networking</textarea>" in html
    assert not CompetencyQuestion.objects.exists()


def test_a_refusal_under_htmx_is_the_form_partial_only(curator, world):
    """htmx: the form region alone, with the refusal, status 400."""
    response = add(curator, headers=HX, expect="path", names="Embeddings")
    html = page(response)
    assert response.status_code == 400 and html.lstrip().startswith('<div id="question-form">')
    assert "name exactly two concepts (you named 1)" in html and "<html" not in html


def test_a_bad_choice_is_refused_in_words(curator, world):
    """A kind of answer or a yes that does not exist is said so."""
    html = page(add(curator, expect="maybe"))
    assert "is not a kind of answer" in html
    assert "Answer yes or no, not" in page(add(curator, expect="yes_no", yes="perhaps"))


def test_hostile_text_renders_inert(curator, world, ask):
    """A question's words are escaped on every page."""
    q = ask(f"What should I learn before LoRA? {HOSTILE}", "concepts", ["Fine-tuning"])
    for url in (reverse("questions:home"), reverse("questions:detail", args=[q.pk])):
        html = page(curator.get(url))
        assert HOSTILE not in html and "&lt;script&gt;" in html


def test_a_curator_edits_a_question(curator, world, ask):
    """GET shows the form filled in; POST saves and lands on the question's page."""
    q = ask(QUESTION, "concepts", ["Embeddings"])
    form = page(curator.get(reverse("questions:edit", args=[q.pk])))
    assert f'value="{QUESTION}"' in form and "Embeddings</textarea>" in form
    response = curator.post(
        reverse("questions:edit", args=[q.pk]),
        {"text": QUESTION, "expect": "path", "names": "Quantization\nEmbeddings"},
    )
    assert response.status_code == 302
    q.refresh_from_db()
    assert q.expect == "path" and q.expected_names == ["Quantization", "Embeddings"]
    refused = curator.post(
        reverse("questions:edit", args=[q.pk]),
        {"text": "", "expect": "path", "names": ""},
        headers=HX,
    )
    assert refused.status_code == 400 and "Write the question." in page(refused)


def test_editing_a_missing_question_is_404(curator, world):
    assert curator.get(reverse("questions:edit", args=[999])).status_code == 404


def test_retire_and_reactivate_from_the_question_page(curator, world, ask):
    """Each is audited; doing it twice is refused in words on the page."""
    q = ask(QUESTION, "concepts", ["Embeddings"])
    response = curator.post(reverse("questions:retire", args=[q.pk]), follow=True)
    assert ("success", f"Question #{q.pk} retired; its history stays.") in flashes(response)
    again = curator.post(reverse("questions:retire", args=[q.pk]), follow=True)
    assert ("error", f"Question #{q.pk} is already retired.") in flashes(again)
    curator.post(reverse("questions:reactivate", args=[q.pk]))
    q.refresh_from_db()
    assert q.active
    assert AuditEntry.objects.filter(action__startswith="competency_question.").count() == 3
    assert curator.post(reverse("questions:retire", args=[999])).status_code == 404


# --- Run now, the schedule, results and history --------------------------------------------


def test_run_now_runs_every_question_and_the_list_shows_pass_and_fail(curator, world, ask):
    """The eager task runs at once: the list shows each result and the answer found."""
    ask("What should I learn before LoRA?", "concepts", ["Fine-tuning"])
    ask(QUESTION, "concepts", ["Embeddings"])
    response = curator.post(reverse("questions:run-now"), follow=True)
    run = CompetencyRun.objects.get()
    assert ("success", f"Competency run #{run.pk} queued.") in flashes(response)
    html = page(response)
    assert html.count('<span class="badge ok">pass</span>') == 1
    assert html.count('<span class="badge bad">fail</span>') == 1
    assert "Missing 1 of 1: Embeddings." in html and "1 of 2 active questions passing" in html


def test_run_now_for_one_question_returns_to_its_page(curator, world, ask):
    q = ask(QUESTION, "concepts", ["Embeddings"])
    response = curator.post(reverse("questions:run-now"), {"question": q.pk})
    assert response["Location"] == reverse("questions:detail", args=[q.pk])
    assert CompetencyRun.objects.get().question == q
    assert curator.post(reverse("questions:run-now"), {"question": 999}).status_code == 404
    bad = curator.post(reverse("questions:run-now"), {"question": "x"}, headers=HX)
    assert bad.status_code == 400 and "by its number" in page(bad)


def test_run_now_while_a_run_is_open_is_refused_in_words(curator, world, ask):
    """The open run is named; no second run is made."""
    from kgreview.questions.runs import competency_run_create

    ask(QUESTION, "concepts", ["Embeddings"])
    going = competency_run_create()
    response = curator.post(reverse("questions:run-now"), follow=True)
    assert (
        "error",
        f"Run #{going.pk} is still going: its results will show here when it ends.",
    ) in (flashes(response))
    assert CompetencyRun.objects.count() == 1
    assert 'hx-trigger="every 2s"' in page(response)


def test_run_now_with_a_refusing_broker_says_so_and_fails_the_run(curator, world, ask, monkeypatch):
    """No 500: words, and the run failed rather than queued forever."""
    from kgreview.questions import tasks

    def refused(**kwargs):
        raise ConnectionRefusedError("the broker is down")

    ask(QUESTION, "concepts", ["Embeddings"])
    monkeypatch.setattr(tasks.run_questions, "delay", refused)
    response = curator.post(reverse("questions:run-now"), follow=True)
    run = CompetencyRun.objects.get()
    [(level, words)] = flashes(response)
    assert level == "error" and "could not be started" in words and "the broker is down" in words
    assert run.status == "failed" and "Could not be queued" in run.error


def test_the_results_partial_under_htmx(curator, world, ask):
    """htmx: the results region alone, polling only while a run is open."""
    ask(QUESTION, "concepts", ["Embeddings"])
    html = page(curator.get(reverse("questions:home"), headers=HX))
    assert html.lstrip().startswith('<section id="results"') and "<html" not in html
    assert "every 2s" not in html


def test_a_curator_pauses_and_resumes_the_schedule(curator, world):
    """Audited like the agents' schedules."""
    curator.post(reverse("questions:schedule-toggle"), {"enabled": "0"})
    assert not PeriodicTask.objects.get(name=SCHEDULE_NAME).enabled
    html = page(curator.get(reverse("questions:home")))
    assert "Resume schedule" in html and "paused" in html
    curator.post(reverse("questions:schedule-toggle"), {"enabled": "1"})
    assert PeriodicTask.objects.get(name=SCHEDULE_NAME).enabled
    assert list(
        AuditEntry.objects.filter(action__startswith="schedule.").values_list("action", flat=True)
    ) == ["schedule.resume", "schedule.pause"]


def test_the_history_shows_the_fix_and_the_decision_that_made_it(
    curator, curator_user, world, gap_lesson, ask
):
    """Fail, gap proposal, accept, pass: the page shows both results, the change, the
    decision in between, and the proposal it asked for."""
    q = ask(QUESTION, "concepts", ["Embeddings"])
    curator.post(reverse("questions:run-now"))  # fails, and its gap search proposes the link
    proposal = q.gap_proposals.get()
    proposal_accept(proposal_id=proposal.pk, acting_user=curator_user)
    curator.post(reverse("questions:run-now"))
    html = page(curator.get(reverse("questions:detail", args=[q.pk])))
    assert html.count('<span class="badge ok">pass</span>') == 1
    assert html.count('<span class="badge bad">fail</span>') == 1
    assert "fixed since the run before" in html
    assert f'href="{reverse("review:proposal", args=[proposal.pk])}"' in html
    assert "Embeddings are a prerequisite for quantization." in html
    assert "1 new proposal queued" in html
    partial = page(curator.get(reverse("questions:detail", args=[q.pk]), headers=HX))
    assert partial.lstrip().startswith('<section id="history"') and "<html" not in partial
    assert QuestionResult.objects.filter(question=q).count() == 2


def test_the_review_card_names_the_question_that_asked_for_it(curator, world, gap_lesson, ask):
    """The proposal's card links back to the competency question."""
    q = ask(QUESTION, "concepts", ["Embeddings"])
    curator.post(reverse("questions:run-now"))
    proposal = q.gap_proposals.get()
    with CaptureQueriesContext(connection) as ctx:
        html = page(curator.get(reverse("review:proposal", args=[proposal.pk]), follow=True))
    assert "Asked for by competency question:" in html
    assert f'<a href="{reverse("questions:detail", args=[q.pk])}">{QUESTION}</a>' in html
    # Its text comes with the card's own query, not one more (the decision budget).
    alone = 'SELECT "questions_competencyquestion"'
    assert not [x for x in ctx.captured_queries if x["sql"].startswith(alone)]


def test_a_gap_search_run_reads_on_the_agents_page(curator, world, gap_lesson, ask):
    """The search is an agent run like the others: its page shows what it found."""
    from kgreview.agents.models import AgentRun

    ask(QUESTION, "concepts", ["Embeddings"])
    curator.post(reverse("questions:run-now"))
    search = AgentRun.objects.get(agent="gaps")
    html = page(curator.get(reverse("agents:run", args=[search.pk])))
    assert "Gap search (competency questions)" in html and "1 new proposal queued" in html
    assert "Gap search (competency questions)" in page(curator.get(reverse("agents:home")))
