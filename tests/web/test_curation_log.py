"""The curation log page: curators read every change made outside a decision, newest
first, filtered by change and by person, 50 rows a page; everyone else is refused in
words. Rows are written with ``kgreview.core.audit.record`` as the services write them."""

from __future__ import annotations

import html as htmllib
import re

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse

from kgreview.agents.models import AgentRun
from kgreview.core import audit
from kgreview.core.models import AuditEntry

pytestmark = pytest.mark.django_db

URL = "/curation/"
HX = {"HX-Request": "true"}


def client_for(f, role: str | None, username: str | None = None) -> Client:
    client = Client()
    client.force_login(f.user(username, role=role))
    return client


def write(user, action: str, subject, summary: str, before=None, after=None) -> AuditEntry:
    with transaction.atomic():
        return audit.record(
            acting_user=user,
            action=action,
            subject=subject,
            summary=summary,
            before=before,
            after=after,
        )


def summaries(response) -> list[str]:
    """The summaries in the log's table, in page order."""
    found = re.findall(r'<td class="summary">(.*?) <span class="badge', page(response))
    return [htmllib.unescape(s) for s in found]


def page(response) -> str:
    return response.content.decode()


def test_the_url_keeps_its_name():
    assert reverse("curation-log") == URL


@pytest.mark.parametrize("role", ["viewer", "reviewer"])
def test_readers_and_reviewers_are_refused_in_words(f, role):
    response = client_for(f, role).get(URL)
    assert response.status_code == 403
    assert "Only curators can read the curation log" in page(response)


def test_anonymous_readers_go_to_login(client):
    response = client.get(URL)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login") + "?next=")


def test_curators_see_every_change_newest_first_with_who_what_and_before_after(f):
    cora = f.user("cora", role="curator")
    relation = f.relation("prerequisite")
    write(
        cora,
        "relation_type.retire",
        relation,
        "Retired the relation type “prerequisite”.",
        before={"active": True},
        after={"active": False},
    )
    write(None, "schedule.pause", ("schedule", 7), "Paused the nightly reader.")
    client = Client()
    client.force_login(cora)
    response = client.get(URL)
    assert response.status_code == 200
    body = page(response)
    mine = [
        s
        for s in summaries(response)
        if s in ("Retired the relation type “prerequisite”.", "Paused the nightly reader.")
    ]
    assert mine == ["Paused the nightly reader.", "Retired the relation type “prerequisite”."]
    assert "<td>cora</td>" in body and "<td>system</td>" in body
    assert "<del>true</del> → <ins>false</ins>" in body
    assert f'href="/ontology/#relation-{relation.pk}"' in body
    assert "schedule #7" in body  # no page for a schedule: named, not linked
    assert '<html lang="en">' in body  # the whole page


def test_subjects_link_to_their_pages(f):
    cora = f.user("cora", role="curator")
    concept, source = f.concept("Embeddings"), f.source("lesson-one")
    run = AgentRun.objects.create(agent=AgentRun.Agent.DISCOVER)
    write(cora, "concept.retire", concept, "Retired “Embeddings”.")
    write(cora, "source.retitle", source, "Renamed lesson one.")
    write(cora, "agent_run.start", run, "Started a run by hand.")
    client = Client()
    client.force_login(cora)
    body = page(client.get(URL))
    assert f'href="{reverse("concept-detail", args=[concept.pk])}"' in body
    assert f'href="{reverse("source-detail", args=["lesson-one"])}"' in body
    assert f'href="{reverse("agents:run", args=[run.pk])}"' in body


def test_with_htmx_the_answer_is_the_results_alone(f):
    cora = f.user("cora", role="curator")
    write(cora, "api_token.revoke", ("apitoken", 3), "Revoked a token.")
    client = Client()
    client.force_login(cora)
    response = client.get(URL, {"action": "api_token.revoke"}, headers=HX)
    body = page(response)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="curation-results"')
    assert "<html" not in body and "Revoked a token." in body


def test_filters_by_action_and_by_person(f):
    cora, carl = f.user("cora", role="curator"), f.user("carl", role="curator")
    write(cora, "schedule.pause", ("schedule", 1), "Cora paused a schedule.")
    write(carl, "schedule.pause", ("schedule", 2), "Carl paused a schedule.")
    write(cora, "api_token.revoke", ("apitoken", 1), "Cora revoked a token.")
    client = Client()
    client.force_login(cora)
    assert summaries(client.get(URL, {"action": "schedule.pause"})) == [
        "Carl paused a schedule.",
        "Cora paused a schedule.",
    ]
    assert summaries(client.get(URL, {"action": "schedule.pause", "user": "cora"})) == [
        "Cora paused a schedule."
    ]
    assert "Cora revoked a token." in summaries(client.get(URL, {"user": "cora"}))
    assert "Carl paused a schedule." not in summaries(client.get(URL, {"user": "cora"}))


def test_an_unknown_filter_is_dropped_and_said_in_words(f):
    cora = f.user("cora", role="curator")
    write(cora, "schedule.pause", ("schedule", 1), "Cora paused a schedule.")
    client = Client()
    client.force_login(cora)
    response = client.get(URL, {"action": "nonsense.verb", "page": "two"})
    assert response.status_code == 200
    body = htmllib.unescape(page(response))
    assert "No change 'nonsense.verb' in the log; showing every change." in body
    assert "'two' is not a page number; showing the first page." in body
    assert "Cora paused a schedule." in summaries(response)


def test_fifty_rows_a_page_with_links_that_keep_the_filters(f):
    cora = f.user("cora", role="curator")
    for i in range(51):
        write(cora, "schedule.pause", ("schedule", i), f"Pause {i:02d}.")
    client = Client()
    client.force_login(cora)
    first = client.get(URL, {"action": "schedule.pause"})
    assert len(summaries(first)) == 50
    assert summaries(first)[0] == "Pause 50."
    assert 'href="?action=schedule.pause&amp;page=2"' in page(first)
    second = client.get(URL, {"action": "schedule.pause", "page": "2"}, headers=HX)
    assert summaries(second) == ["Pause 00."]
    assert 'page=1"' in page(second)


def test_the_nav_offers_the_log_to_curators_only(f):
    curator, reviewer = client_for(f, "curator"), client_for(f, "reviewer")
    link = f'href="{URL}"'
    assert link in page(curator.get(reverse("review:decisions")))
    assert link not in page(reviewer.get(reverse("review:decisions")))
