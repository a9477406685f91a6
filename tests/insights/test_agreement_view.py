"""The dashboard's Agreement section: the figures per relation type with the hard ones
said in words, each person's own row for a reviewer and everyone's for a curator, and
the htmx region that neither reads nor draws it again."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from kgreview.review.models import Vote
from tests.review.agreement_world import at, session, vote

from .planting import plant

pytestmark = pytest.mark.django_db

URL = "/insights/"


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def people(f, monkeypatch):
    """ana and ben double-reviewed twenty part_of proposals (alpha 0.42: too low) and
    twelve builds_on ones (alpha 1); cora adjudicated."""
    ana, ben = f.user("ana", role="reviewer"), f.user("ben", role="reviewer")
    cora = f.user("cora", role="curator")
    session(monkeypatch, ana, ben, cora, rel="part_of")
    for i in range(12):
        p = plant(confidence=0.8, rel="builds_on")
        vote(p, ana, "accept" if i else "reject:vague", at(5000 + i))
        vote(p, ben, "accept" if i else "reject:vague", at(5001 + i))
    return ana, ben, cora


def page(user, **headers) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(URL, **headers)
    assert response.status_code == 200
    return response.content.decode()


def section(html: str) -> str:
    start = html.index('id="agreement-section"')
    return html[start : html.index("</section>", start)]


def test_the_section_shows_each_relation_and_says_which_people_cannot_agree_on(people):
    html = section(page(people[0]))
    assert "Agreement between reviewers" in html
    assert '<caption id="agreement-relations-caption"' in html
    assert '<th scope="row">part_of</th>' in html and '<th scope="row">builds_on</th>' in html
    low = html[html.index('class="agree-low"') :]
    assert low.startswith('class="agree-low"><th scope="row">part_of</th>')
    assert "people cannot agree on these" in low.split("</tr>")[0]
    assert "People cannot agree on these:</strong> part_of (α 0.42 over 20)" in html
    assert 'role="region"' in html and 'tabindex="0"' in html


def test_a_reviewer_sees_only_their_own_row_and_pairs(people):
    html = section(page(people[0]))
    table = html[html.index('id="agreement-reviewers"') :]
    assert '<th scope="row">ana</th>' in table
    assert '<th scope="row">ben</th>' not in table and '<th scope="row">cora</th>' not in table
    assert "Your figures" in html and "Curators see everyone" in html
    assert '<th scope="row">ana and ben</th>' in html


def test_a_curator_sees_every_reviewers_row(people):
    html = section(page(people[2]))
    table = html[html.index('id="agreement-reviewers"') :]
    for name in ("ana", "ben", "cora"):
        assert f'<th scope="row">{name}</th>' in table
    assert "Each reviewer" in html and "Curators see everyone" not in html
    assert "83% of 6" in table  # ana matched five of six adjudications


def test_a_viewer_without_decisions_is_told_their_figures_come_later(people, f):
    html = section(page(f.user("vera", role="viewer")))
    assert "You have not decided a proposal yet" in html
    assert 'id="agreement-reviewers"' not in html and 'id="agreement-pairs"' not in html
    assert 'id="agreement-relations"' in html


def test_no_votes_yet_says_so_in_words(f):
    html = section(page(f.user("cora", role="curator")))
    assert "No proposal has been decided by two reviewers yet" in html
    assert 'id="agreement-relations"' not in html


def test_the_htmx_region_neither_reads_votes_nor_draws_agreement(people):
    client = Client()
    client.force_login(people[2])
    with CaptureQueriesContext(connection) as queries:
        response = client.get(URL, {"window": "7"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert 'id="insights-charts"' in response.content.decode()
    assert "agreement-section" not in response.content.decode()
    assert not [q for q in queries if Vote._meta.db_table in q["sql"]]


def test_a_history_restore_gets_the_whole_page_with_the_section(people):
    html = page(people[2], HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true")
    assert 'id="agreement-section"' in html


def test_the_figures_are_read_once_a_minute(people):
    page(people[2])
    client = Client()
    client.force_login(people[2])
    with CaptureQueriesContext(connection) as queries:
        client.get(URL)
    assert not [q for q in queries if Vote._meta.db_table in q["sql"]]


def test_names_are_escaped(f, monkeypatch):
    hostile = f.user("<b>x</b>", role="reviewer")
    ben = f.user("ben", role="reviewer")
    p = plant(confidence=0.8)
    vote(p, hostile, "accept", at(0))
    vote(p, ben, "accept", at(1))
    html = page(f.user("cora", role="curator"))
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
