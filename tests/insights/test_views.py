"""The dashboard page: who may read it, the full page and its htmx region, filters, bad
parameters answered in words (never a 500), empty states and hostile names."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from kgreview.review.models import Decision

from .planting import plant, run

pytestmark = pytest.mark.django_db

URL = "/insights/"
CHARTS = (
    "chart-queue",
    "chart-reviewers",
    "chart-accept-relation",
    "chart-accept-agent",
    "chart-accept-model",
    "chart-calibration",
    "chart-ece",
    "chart-gate",
)
HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def viewer(client, f):
    client.force_login(f.user("vera", role="viewer"))
    return client


@pytest.fixture
def planted(f):
    """Decided proposals of two relation types, one decision, one open proposal."""
    construct = run("construct", "openai", "gpt-4o-mini")
    for confidence, status in ((0.95, "accepted"), (0.9, "accepted"), (0.7, "rejected")):
        plant(confidence=confidence, rel="prerequisite", status=status, run=construct)
    plant(confidence=0.8, rel="contrasts_with", status="rejected")
    p = plant(confidence=0.5)
    Decision.objects.create(
        proposal=p, user=f.user("rita", role="reviewer"), action="accept", proposal_version=1
    )


def svg(html: str, chart_id: str) -> ET.Element:
    """The chart's SVG, parsed as XML: it must be well-formed inside the page."""
    start = html.index(f'<svg xmlns="http://www.w3.org/2000/svg" id="{chart_id}"')
    end = html.index("</svg>", start) + len("</svg>")
    return ET.fromstring(html[start:end])


def marks(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter() if "mark" in e.get("class", "").split()]


def test_the_dashboard_is_at_insights():
    """The URL name resolves to /insights/."""
    assert reverse("insights:dashboard") == URL


def test_anonymous_visitors_are_sent_to_log_in(client):
    """No account, no numbers: a redirect to the login page, back here after."""
    response = client.get(URL)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={URL}"


def test_an_account_without_a_role_is_refused_in_words(client, f):
    """Signed in but in no group: 403 with the reason."""
    client.force_login(f.user("nobody"))
    response = client.get(URL)
    assert response.status_code == 403
    assert "no role yet" in response.content.decode()


@pytest.mark.parametrize("role", ["viewer", "reviewer", "curator"])
def test_every_role_can_read_the_dashboard_with_all_its_charts(client, f, planted, role):
    """Viewers, reviewers and curators all see the eight charts and the numbers."""
    client.force_login(f.user(f"{role}-1", role=role))
    response = client.get(URL)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" in html and 'id="insights-filters"' in html
    for chart_id in CHARTS:
        root = svg(html, chart_id)
        assert root.get("role") == "img" and root.get("aria-label")
    assert html.count("Show the numbers") == 8
    assert 'href="/static/css/insights.css"' in html


def test_htmx_requests_get_only_the_charts_region(viewer, planted):
    """With HX-Request the answer is the named partial: the charts, no page around them."""
    response = viewer.get(URL, {"window": "7"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="insights-charts"')
    assert "<html" not in html and 'id="insights-filters"' not in html
    for chart_id in CHARTS:
        svg(html, chart_id)


def test_a_history_restore_gets_the_whole_page(viewer, planted):
    """Going back to a pushed URL that htmx no longer has cached reloads the full page."""
    response = viewer.get(
        URL, {"window": "7"}, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    html = response.content.decode()
    assert "<html" in html and 'id="insights-filters"' in html


@pytest.mark.parametrize("window,points", [("1", 24), ("7", 7), ("30", 30), ("90", 90)])
def test_the_window_sets_the_number_of_points_on_the_queue_chart(viewer, planted, window, points):
    """Three lines (open, pending, held), one point per hour or day of the window."""
    html = viewer.get(URL, {"window": window}).content.decode()
    assert len(marks(svg(html, "chart-queue"))) == 3 * points
    assert f'<option value="{window}" selected>' in html


def test_the_relation_filter_picks_the_calibration_chart(viewer, planted):
    """Calibration for one relation type counts only its decided proposals."""
    html = viewer.get(URL, {"relation": "prerequisite"}).content.decode()
    root = svg(html, "chart-calibration")
    assert root.get("aria-label") == "Calibration: prerequisite"
    counts = [t.text for t in root.iter() if t.get("class") == "bin-n"]
    assert counts == ["0", "0", "0", "0", "0", "0", "0", "1", "0", "2"]
    everything = svg(viewer.get(URL).content.decode(), "chart-calibration")
    assert everything.get("aria-label") == "Calibration: All proposals"
    assert [t.text for t in everything.iter() if t.get("class") == "bin-n"][8] == "1"


def test_the_target_sets_the_gate_each_relation_type_needs(viewer, planted):
    """At 80% prerequisite needs 0.9; at 60% any gate from 0.7 up will do."""
    html = viewer.get(URL, {"target": "0.8"}).content.decode()
    assert "Gate needed for 80% accepted" in html
    assert "0.9: 67% would pass" in html
    html = viewer.get(URL, {"target": "0.6"}).content.decode()
    assert "Gate needed for 60% accepted" in html
    assert "0.7: 100% would pass" in html
    assert "not reachable" in html  # contrasts_with: its only proposal was rejected


@pytest.mark.parametrize(
    "params,message",
    [
        ({"window": "5"}, "The window is one of"),
        ({"window": "99999999999999999999999"}, "The window is one of"),
        ({"window": "<script>"}, "The window is one of"),
        ({"target": "abc"}, "The target acceptance rate is a number"),
        ({"target": "nan"}, "The target acceptance rate is a number"),
        ({"target": "inf"}, "The target acceptance rate is a number"),
        ({"target": "2"}, "at most 1"),
        ({"target": "-0.5"}, "at least 0.01"),
        ({"relation": "causes"}, "no relation type with that key"),
        ({"relation": "x" * 500}, "at most 64 characters"),
    ],
)
def test_bad_parameters_answer_400_with_the_reason_and_the_default_in_place(
    viewer, planted, params, message
):
    """Never a 500: the page says what was wrong and shows the defaults instead."""
    response = viewer.get(URL, params)
    html = response.content.decode()
    assert response.status_code == 400
    assert message in html
    assert 'role="alert"' in html
    assert "<script>" not in html
    for chart_id in CHARTS:
        svg(html, chart_id)


def test_relation_types_are_read_once_to_check_the_filter_and_to_list_the_choices(viewer, planted):
    """A type with no decisions yet is a valid choice; the keys come from one query."""
    with CaptureQueriesContext(connection) as ctx:
        response = viewer.get(URL, {"relation": "related"})
    html = response.content.decode()
    assert response.status_code == 200
    assert '<option value="related" selected>related (0 decided)</option>' in html
    reads = [q["sql"] for q in ctx.captured_queries if 'FROM "graph_relationtype"' in q["sql"]]
    assert len(reads) == 1, reads


def test_bad_parameters_over_htmx_answer_400_with_the_region_and_the_reason(viewer, planted):
    """The htmx config swaps 400s, so the message lands where the charts were."""
    response = viewer.get(URL, {"target": "7"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 400
    assert html.lstrip().startswith('<div id="insights-charts"')
    assert "at most 1" in html
    assert "Gate needed for 80% accepted" in html


def test_a_valid_filter_beside_a_bad_one_is_kept(viewer, planted):
    """Only the bad value falls back to its default."""
    html = viewer.get(URL, {"window": "7", "target": "zzz"}).content.decode()
    assert len(marks(svg(html, "chart-queue"))) == 21
    assert "Gate needed for 80% accepted" in html


def test_no_proposals_at_all_says_so_in_words_with_a_link_to_the_queue(viewer):
    """Empty states are sentences: nothing waiting, no decisions, nothing to measure."""
    response = viewer.get(URL)
    html = response.content.decode()
    assert response.status_code == 200
    assert "No proposals were waiting at any time in the last 30 days" in html
    assert "No decisions in the last 30 days" in html
    assert "No decisions yet" in html
    assert f'href="{reverse("review:queue")}"' in html
    for chart_id in CHARTS:
        assert f'id="{chart_id}"' not in html


def test_proposals_without_decisions_show_the_queue_but_nothing_to_measure(viewer):
    """Open proposals draw the queue; rates wait for decisions."""
    plant(confidence=0.9)
    plant(confidence=0.3)
    html = viewer.get(URL).content.decode()
    assert len(marks(svg(html, "chart-queue"))) == 90
    assert "open now: 1 pending, 1 held" in html
    assert "No decisions yet" in html
    assert 'id="chart-calibration"' not in html


def test_hostile_model_names_and_usernames_render_as_text(client, f):
    """Markup in a model name or a username is escaped in charts, tables and tooltips."""
    agent = run("construct", HOSTILE, HOSTILE)
    plant(confidence=0.9, status="accepted", run=agent)
    plant(confidence=0.2, status="rejected", run=agent)
    villain = f.user(HOSTILE, role="reviewer")
    Decision.objects.create(
        proposal=plant(confidence=0.7), user=villain, action="reject", proposal_version=1
    )
    client.force_login(villain)
    html = client.get(URL).content.decode()
    assert HOSTILE not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    model = svg(html, "chart-accept-model")
    label = f"{HOSTILE} · {HOSTILE}"
    assert label in {t.text for t in model.iter()}
    reviewers = svg(html, "chart-reviewers")
    assert any(HOSTILE in (t.text or "") for t in reviewers.iter())


def test_only_get_is_allowed(viewer):
    """The page only reads."""
    assert viewer.post(URL).status_code == 405
