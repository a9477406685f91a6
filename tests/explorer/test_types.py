"""The explorer's concept types: the shell hands the page every type with its parent and
a colour that a later type never changes, dark enough against white; the toolbar offers
the type filter only when the graph has types."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from kgreview.explorer import selectors
from kgreview.graph import services

pytestmark = pytest.mark.django_db


def _config(client: Client, url: str) -> dict:
    body = client.get(url).content.decode()
    found = re.search(
        r'<script id="explorer-config" type="application/json">(.*?)</script>', body, re.S
    )
    assert found is not None
    return json.loads(found.group(1))


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_the_shell_hands_the_types_with_parents_and_colours(f):
    services.concept_type_create(key="setting", label="Setting", acting_user=None)
    services.concept_type_create(
        key="memory_setting", label="Memory setting", parent_key="setting", acting_user=None
    )
    client = Client()
    client.force_login(f.user(role="viewer"))
    config = _config(client, reverse("explorer:concept", args=[f.concept("work_mem").pk]))
    types = {t["key"]: t for t in config["types"]}
    assert types["memory_setting"]["parent"] == "setting" and types["setting"]["parent"] is None
    assert types["setting"]["colour"] != types["memory_setting"]["colour"]
    page = client.get(reverse("explorer:home")).content.decode()
    assert '<select id="ex-type" name="type"' in page
    menu = re.search(r'<select id="ex-type"[^>]*>(.*?)</select>', page, re.S).group(1)
    # Each parent before its subtypes, a subtype indented under it.
    assert re.findall(r'<option value="([^"]*)"', menu) == ["", "setting", "memory_setting"]
    assert re.search(r'value="memory_setting">(&nbsp;)+Memory setting', menu)


def test_an_untyped_graph_has_no_type_filter(f):
    client = Client()
    client.force_login(f.user(role="viewer"))
    page = client.get(reverse("explorer:home")).content.decode()
    assert 'id="ex-type"' not in page


def test_a_new_type_never_recolours_the_old_ones(f):
    services.concept_type_create(key="setting", label="Setting", acting_user=None)
    services.concept_type_create(key="process", label="Process", acting_user=None)
    before = {t["key"]: t["colour"] for t in selectors.type_palette()}
    services.concept_type_create(key="aardvark", label="Aardvark", acting_user=None)
    after = {t["key"]: t["colour"] for t in selectors.type_palette()}
    assert {k: after[k] for k in before} == before


def test_every_node_colour_stands_out_against_white_at_three_to_one():
    """WCAG's contrast for graphics: (1.05) / (L + 0.05) >= 3 against a white page."""
    for colour in (*selectors.TYPE_COLOURS, selectors.UNTYPED_COLOUR):
        assert 1.05 / (_luminance(colour) + 0.05) >= 3, colour


def test_the_legend_leaves_out_a_retired_relation_that_never_held_an_edge(f):
    """A team graph's documentation vocabulary retires the curriculum's relations: the
    explorer listed "Prerequisite (retired)" and two more that never drew anything."""
    from kgreview.graph.models import RelationType

    a, b = f.concept("A"), f.concept("B")
    f.edge(a, b, "builds_on")
    colours = {r["key"]: r["colour"] for r in selectors.relation_palette()}
    for key in ("applies_to", "builds_on"):
        services.relation_type_retire(relation=RelationType.objects.get(key=key), acting_user=None)
    palette = {r["key"]: r for r in selectors.relation_palette()}
    assert "applies_to" not in palette
    assert palette["builds_on"]["active"] is False
    assert all(palette[k]["colour"] == colours[k] for k in palette)
