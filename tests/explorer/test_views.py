"""The explorer's page shell and the changes page: roles, the shell's facts, the diff
between two instants with its planted edges, bad dates, and the htmx partial."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from kgreview.explorer import selectors
from kgreview.graph import services
from kgreview.graph.models import Edge

pytestmark = pytest.mark.django_db

HOSTILE = "<img src=x onerror=alert(1)>"


def _at(edge: Edge, *, days_ago: float) -> Edge:
    """Move an edge back in time, as if it had been recorded (and held) then."""
    when = timezone.now() - timedelta(days=days_ago)
    Edge.objects.filter(pk=edge.pk).update(recorded_at=when, valid_at=when)
    edge.refresh_from_db()
    return edge


def _client(f, role: str | None = "viewer") -> Client:
    c = Client()
    c.force_login(f.user(role=role))
    return c


def _config(response) -> dict:
    match = re.search(
        r'<script id="explorer-config" type="application/json">(.*?)</script>',
        response.content.decode(),
        re.S,
    )
    assert match, "the page carries no explorer-config"
    return json.loads(match.group(1))


def _local(value) -> str:
    return timezone.localtime(value).strftime("%Y-%m-%dT%H:%M:%S")


@pytest.fixture
def trio(f):
    """Embeddings → Vector search → RAG, recorded ten days ago."""
    emb, vs, rag = f.concept("Embeddings"), f.concept("Vector search"), f.concept("RAG")
    e1 = _at(f.edge(emb, vs), days_ago=10)
    e2 = _at(f.edge(vs, rag, "builds_on"), days_ago=10)
    return {"emb": emb, "vs": vs, "rag": rag, "e1": e1, "e2": e2}


# --- Who may see the pages ---------------------------------------------------------------


@pytest.mark.parametrize("role", ["viewer", "reviewer", "curator"])
def test_every_role_sees_the_explorer_and_the_changes_page(f, trio, role):
    """Viewers, reviewers and curators all read the explorer, a concept, and the changes."""
    c = _client(f, role)
    for url in (
        reverse("explorer:home"),
        reverse("explorer:concept", args=[trio["vs"].pk]),
        reverse("explorer:changes"),
    ):
        assert c.get(url).status_code == 200, url


@pytest.mark.parametrize("name,args", [("home", []), ("concept", [1]), ("changes", [])])
def test_anonymous_visitors_are_sent_to_login(client, name, args):
    """No session: every explorer page redirects to the login form."""
    response = client.get(reverse(f"explorer:{name}", args=args))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("name", ["home", "concept", "changes"])
def test_an_account_without_a_role_is_refused(f, trio, name):
    """A signed-in user with no role gets 403 with the reason in words."""
    args = [trio["vs"].pk] if name == "concept" else []
    response = _client(f, role=None).get(reverse(f"explorer:{name}", args=args))
    assert response.status_code == 403


def test_an_unknown_concept_is_not_found(f, trio):
    """/explore/<id>/ for an id no concept has answers 404."""
    assert _client(f).get(reverse("explorer:concept", args=[999999])).status_code == 404


def test_the_explorer_only_accepts_get(f, trio):
    """The pages read; a POST is refused."""
    c = _client(f)
    assert c.post(reverse("explorer:concept", args=[trio["vs"].pk])).status_code == 405
    assert c.post(reverse("explorer:changes")).status_code == 405


# --- The explorer's shell ------------------------------------------------------------------


def test_concept_page_is_a_shell_that_names_the_concept_and_the_api(f, trio):
    """The page carries the centre, the API base and the vendored cytoscape, no CDN."""
    response = _client(f).get(reverse("explorer:concept", args=[trio["vs"].pk]))
    html = response.content.decode()
    config = _config(response)
    assert config["centre"] == {"id": trio["vs"].pk, "name": "Vector search"}
    assert config["apiBase"] == "/api/v1/"
    assert config["urls"]["edge"] == "/review/edges/{id}/"
    assert config["urls"]["concept"] == "/concepts/{id}/"
    assert config["urls"]["source"] == "/sources/{slug}/"
    assert '<span id="ex-centre-name">Vector search</span>' in html
    assert "vendor/cytoscape/cytoscape.min.js" in html
    assert "js/explorer.js" in html
    assert not re.search(r'src="(https?:)?//', html), "a script or image from another host"


def test_slider_starts_at_the_first_instant_an_edge_held(f, trio):
    """firstEdgeAt is the earliest time any edge was both recorded and valid, not before it."""
    late = f.concept("Agents")
    edge = f.edge(trio["rag"], late)
    # Recorded 20 days ago but only valid from 15 days ago: it counts from 15 days ago.
    Edge.objects.filter(pk=edge.pk).update(
        recorded_at=timezone.now() - timedelta(days=20),
        valid_at=timezone.now() - timedelta(days=15),
    )
    config = _config(_client(f).get(reverse("explorer:concept", args=[trio["vs"].pk])))
    first = parse_datetime(config["firstEdgeAt"])
    expected = Edge.objects.get(pk=edge.pk).valid_at
    assert timedelta(0) <= first - expected < timedelta(milliseconds=1)
    # Recorded later than that edge but holding earlier (17 days ago): it is the first.
    other = _at(f.edge(trio["emb"], late, "related"), days_ago=17)
    config = _config(_client(f).get(reverse("explorer:concept", args=[trio["vs"].pk])))
    first = parse_datetime(config["firstEdgeAt"])
    assert timedelta(0) <= first - other.recorded_at < timedelta(milliseconds=1)


def test_slider_is_disabled_in_words_when_no_edge_exists(f):
    """With no edge the slider cannot move and the page says why."""
    lone = f.concept("Lonely")
    response = _client(f).get(reverse("explorer:concept", args=[lone.pk]))
    assert _config(response)["firstEdgeAt"] is None
    html = response.content.decode()
    assert re.search(r'<input type="range" id="ex-time"[^>]*\bdisabled\b', html)
    assert "No edge has been recorded yet" in html


def test_every_relation_type_gets_its_own_colour_including_new_ones(f, trio):
    """Seeded and curator-added types each have a distinct colour in the config, which
    explorer.js paints the legend with (the browser test checks the swatches)."""
    services.relation_type_create(key="uses", label="Uses", verb="uses", acting_user=None)
    response = _client(f).get(reverse("explorer:concept", args=[trio["vs"].pk]))
    relations = _config(response)["relations"]
    keys = [r["key"] for r in relations]
    assert {"prerequisite", "builds_on", "related", "uses"} <= set(keys)
    colours = [r["colour"] for r in relations]
    assert len(set(colours)) == len(colours)
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in colours)
    html = response.content.decode()
    for r in relations:
        assert f'value="{r["key"]}" checked' in html
    assert {r["key"]: r["directed"] for r in relations}["related"] is False


def test_a_hostile_concept_name_is_escaped_in_the_shell(f):
    """Markup in a name is text in the heading, the title and the JSON config."""
    bad = f.concept(HOSTILE)
    f.edge(bad, f.concept("Safe"))
    html = _client(f).get(reverse("explorer:concept", args=[bad.pk])).content.decode()
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_home_offers_the_most_connected_concepts_to_start_from(f, trio):
    """Without a centre the explorer lists concepts with the most edges out, linked."""
    f.edge(trio["emb"], trio["rag"], "related")
    html = _client(f).get(reverse("explorer:home")).content.decode()
    starts = re.search(r'<ul class="ex-starts" id="ex-starts">(.*?)</ul>', html, re.S).group(1)
    names = re.findall(r'data-concept="\d+">([^<]+)</a>', starts)
    assert names[0] == "Embeddings"
    assert set(names) == {"Embeddings", "Vector search"}
    assert f'href="/explore/{trio["emb"].pk}/"' in starts


def test_a_merged_concept_points_to_the_concept_it_was_merged_into(f, trio):
    """The shell of a merged concept says so and links the survivor's neighbourhood."""
    dup = f.concept("Vector retrieval")
    services.concept_merge(loser=dup, survivor=trio["vs"], acting_user=None)
    html = _client(f).get(reverse("explorer:concept", args=[dup.pk])).content.decode()
    merged = re.search(r'<p class="flash warn" id="ex-merged">(.*?)</p>', html, re.S).group(1)
    assert "merged into" in merged
    assert f'href="/explore/{trio["vs"].pk}/"' in merged


# --- The changes page ----------------------------------------------------------------------


@pytest.fixture
def history(f, trio):
    """Within the last seven days: one edge added, one invalidated, one superseded; and an
    edge recorded (and left alone) long before the window."""
    curator = f.user("carla", role="curator")
    ag = f.concept("Agents")
    added = _at(
        f.edge(trio["rag"], ag, "applies_to", reason="Agents retrieve with RAG."), days_ago=2
    )
    gone = services.edge_invalidate(
        edge=trio["e1"],
        reason="The lesson no longer says so.",
        acting_user=curator,
        at=timezone.now() - timedelta(days=1),
    )
    replaced = Edge.objects.get(pk=trio["e2"].pk)
    newer = services.edge_supersede(
        edge=replaced,
        acting_user=curator,
        confidence=0.55,
        reason="Only partly.",
        why="Weaker claim.",
    )
    old = _at(f.edge(f.concept("Tokens"), trio["emb"]), days_ago=30)
    return {
        "added": added,
        "gone": gone,
        "replaced": replaced,
        "newer": newer,
        "old": old,
        "curator": curator,
    }


def _section(html: str, section_id: str) -> str:
    match = re.search(
        rf'<section class="ch-section card" id="{section_id}">(.*?)</section>', html, re.S
    )
    assert match, section_id
    return match.group(1)


def _edges_in(section: str) -> set[int]:
    return {int(n) for n in re.findall(r'<li data-edge="(\d+)"', section)}


def test_changes_page_shows_added_invalidated_and_superseded_edges(f, history):
    """The last seven days: each planted change in its list, the old edge in none."""
    response = _client(f).get(reverse("explorer:changes"))
    assert response.status_code == 200
    html = response.content.decode()
    added = _section(html, "changes-added")
    assert history["added"].pk in _edges_in(added)
    # The superseding row is new in the window too.
    assert history["newer"].pk in _edges_in(added)
    assert history["old"].pk not in _edges_in(added)
    assert 'RAG</bdi></strong> <span class="verb">applies to</span> <strong><bdi>Agents' in added

    invalidated = _section(html, "changes-invalidated")
    assert _edges_in(invalidated) == {history["gone"].pk}
    assert "by carla: The lesson no longer says so." in invalidated

    superseded = _section(html, "changes-superseded")
    assert _edges_in(superseded) == {history["replaced"].pk}
    assert "confidence 0.90 → 0.55" in unescape(superseded)
    assert "reason “Stated in the lesson.” → “Only partly.”" in unescape(superseded)
    assert "by carla: Weaker claim." in superseded

    counts = re.search(r'id="changes-counts">(.*?)</div>\s*\n\s*<section', html, re.S).group(1)
    numbers = [int(n) for n in re.findall(r'<span class="n">(\d+)</span>', counts)]
    # Edges: RAG→Agents and the superseding row added, one invalidated, one superseded.
    # Concepts: all five were created just now (only the edges were moved back in time).
    assert numbers == [2, 1, 1, 5, 0]


def test_changes_page_counts_match_the_lists(f, history):
    """The totals are the lengths of the lists when nothing is truncated."""
    html = _client(f).get(reverse("explorer:changes")).content.decode()
    numbers = [int(n) for n in re.findall(r'<span class="n">(\d+)</span>', html)]
    assert numbers[:3] == [
        len(_edges_in(_section(html, "changes-added"))),
        len(_edges_in(_section(html, "changes-invalidated"))),
        len(_edges_in(_section(html, "changes-superseded"))),
    ]


def test_an_explicit_window_leaves_out_what_happened_outside_it(f, history):
    """since/until pick the window: a window ending three days ago has none of the recent
    changes, and one around thirty days ago has the old edge as added."""
    now = timezone.now()
    c = _client(f)
    html = c.get(
        reverse("explorer:changes"),
        {"since": _local(now - timedelta(days=6)), "until": _local(now - timedelta(days=3))},
    ).content.decode()
    assert _edges_in(_section(html, "changes-added")) == set()
    assert _edges_in(_section(html, "changes-invalidated")) == set()
    html = c.get(
        reverse("explorer:changes"),
        {"since": _local(now - timedelta(days=31)), "until": _local(now - timedelta(days=29))},
    ).content.decode()
    assert _edges_in(_section(html, "changes-added")) == {history["old"].pk}


def test_the_window_defaults_to_the_seven_days_before_until(f, trio):
    """No dates: until is now and since a week earlier, both shown in the inputs."""
    before = timezone.now()
    html = _client(f).get(reverse("explorer:changes")).content.decode()
    since = re.search(r'id="ch-since" name="since" step="1" value="([^"]+)"', html).group(1)
    until = re.search(r'id="ch-until" name="until" step="1" value="([^"]+)"', html).group(1)
    tz = timezone.get_current_timezone()
    s = timezone.make_aware(parse_datetime(since), tz)
    u = timezone.make_aware(parse_datetime(until), tz)
    assert abs((u - before).total_seconds()) < 5
    assert u - s == timedelta(days=7)


def test_changes_link_every_edge_to_its_explanation_in_the_explorer(f, history):
    """Each edge opens the explorer on its source with the panel on it; a retired edge is
    shown as of an instant when the API still draws it."""
    html = _client(f).get(reverse("explorer:changes")).content.decode()
    added = history["added"]
    assert f'href="/explore/{added.source_id}/?edge={added.pk}"' in html
    gone = Edge.objects.get(pk=history["gone"].pk)
    link = re.search(rf'href="(/explore/{gone.source_id}/\?edge={gone.pk}&amp;as_of=[^"]+)"', html)
    assert link, "the invalidated edge has no explorer link with as_of"
    params = parse_qs(urlsplit(unescape(link.group(1))).query)
    as_of = parse_datetime(params["as_of"][0])
    assert as_of < gone.invalid_at
    api = _client(f).get(
        f"/api/v1/concepts/{gone.source_id}/neighbours", {"as_of": params["as_of"][0]}
    )
    assert gone.pk in [e["id"] for e in api.json()["edges"]]


def test_changes_lists_concepts_added_and_merged(f, trio):
    """A concept created and one merged inside the window appear, the merge with its survivor."""
    fresh = f.concept("Rerankers")
    dup = f.concept("Vector retrieval")
    services.concept_merge(loser=dup, survivor=trio["vs"], acting_user=None)
    html = _client(f).get(reverse("explorer:changes")).content.decode()
    added = _section(html, "changes-concepts-added")
    assert f'href="/explore/{fresh.pk}/">Rerankers</a>' in added
    merged = _section(html, "changes-concepts-merged")
    assert "Vector retrieval</a>" in merged
    assert f'href="/explore/{trio["vs"].pk}/">Vector search</a>' in merged


def test_long_lists_are_cut_at_the_limit_with_the_totals_said(f, trio, monkeypatch):
    """Past the limit a list shows the first rows and says how many there are in all."""
    monkeypatch.setattr(selectors, "DIFF_LIMIT", 2)
    hub = f.concept("Hub")
    for i in range(3):
        f.edge(hub, f.concept(f"Spoke {i}"), "related")
    html = _client(f).get(reverse("explorer:changes")).content.decode()
    added = _section(html, "changes-added")
    assert len(_edges_in(added)) == 2
    assert "the first 2 of 3" in added
    assert "3 edges were added in all" in added


@pytest.mark.parametrize(
    "params,words",
    [
        ({"since": "yesterday"}, '"yesterday" is not a date and time for since'),
        ({"until": "2025-13-45T10:00"}, "is not a date and time for until"),
        ({"since": "0001-01-01T00:00:00+05:00"}, "is not a date and time for since"),
        (
            {"since": "2025-03-02T00:00", "until": "2025-03-01T00:00"},
            "“Since” is after “until”",
        ),
    ],
)
def test_bad_dates_answer_400_with_the_error_in_words(f, trio, params, words):
    """An unreadable or backwards window is a 400 page that says what is wrong."""
    response = _client(f).get(reverse("explorer:changes"), params)
    assert response.status_code == 400
    html = response.content.decode()
    error = re.search(r'<p class="error" id="changes-error" role="alert">(.*?)</p>', html).group(1)
    assert words in unescape(error)
    assert 'id="changes-form"' in html
    assert 'id="changes-counts"' not in html


def test_htmx_gets_only_the_results_region(f, history):
    """With HX-Request the answer is the diff-results partial, not the page."""
    c = _client(f)
    response = c.get(reverse("explorer:changes"), headers={"HX-Request": "true"})
    html = response.content.decode().strip()
    assert response.status_code == 200
    assert html.startswith('<div id="diff-results"')
    assert "<html" not in html and 'id="changes-form"' not in html
    assert history["added"].pk in _edges_in(_section(html, "changes-added"))
    bad = c.get(reverse("explorer:changes"), {"since": "nope"}, headers={"HX-Request": "true"})
    assert bad.status_code == 400
    assert bad.content.decode().strip().startswith('<div id="diff-results"')
    assert "is not a date and time" in bad.content.decode()


def test_a_hostile_concept_name_is_escaped_on_the_changes_page(f, trio):
    """Markup in a concept name is text in the lists of changes."""
    f.edge(f.concept(HOSTILE), trio["rag"], "related")
    html = _client(f).get(reverse("explorer:changes")).content.decode()
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_edge_changes_names_moved_endpoints_and_relation(f, trio):
    """A supersession that moves the target and changes the relation says both."""
    other = f.concept("Hybrid search")
    newer = services.edge_supersede(
        edge=trio["e1"],
        target=other,
        relation=f.relation("applies_to"),
        why="Moved.",
        acting_user=None,
    )
    old = Edge.objects.get(pk=trio["e1"].pk)
    words = selectors.edge_changes(old, newer)
    assert "target Vector search → Hybrid search" in words
    assert "relation Prerequisite → Applies to" in words
    assert not any(w.startswith("confidence") for w in words)


@pytest.mark.parametrize(
    "params,words",
    [
        ({"until": "0001-01-03T00:00"}, "There is no week before “until”"),
        ({"since": "9999-12-31T23:59"}, "“Since” is after “until”"),
    ],
)
def test_dates_at_the_ends_of_the_calendar_are_a_400_in_words(f, trio, params, words):
    """An "until" with no week before it, or a "since" past every "until", is refused in
    words, not a server error."""
    response = _client(f).get(reverse("explorer:changes"), params)
    assert response.status_code == 400
    error = re.search(
        r'<p class="error" id="changes-error" role="alert">(.*?)</p>', response.content.decode()
    ).group(1)
    assert words in unescape(error)


def test_a_nul_byte_in_the_window_is_refused_at_the_door(f, trio):
    response = _client(f).get(reverse("explorer:changes"), {"since": "\x00"})
    assert response.status_code == 400
    assert "The query parameter “since” holds a NUL byte" in response.content.decode()


def test_the_changes_form_reads_the_window_and_its_defaults():
    """Without "since" the window is the week before "until"; "until" defaults to now."""
    from datetime import UTC, datetime

    from kgreview.explorer.forms import DEFAULT_WINDOW, ChangesForm

    now = datetime(2025, 3, 10, 12, tzinfo=UTC)
    form = ChangesForm({}, now=now)
    assert form.is_valid() and form.window == (now - DEFAULT_WINDOW, now)
    form = ChangesForm({"since": "2025-03-01T00:00:00+00:00", "until": ""}, now=now)
    assert form.is_valid() and form.window == (datetime(2025, 3, 1, tzinfo=UTC), now)
    form = ChangesForm({"since": "nope", "until": "2025-03-02"}, now=now)
    assert not form.is_valid() and form.window == (None, datetime(2025, 3, 2, tzinfo=UTC))
    assert form.error_in_words().startswith('"nope" is not a date and time for since')
