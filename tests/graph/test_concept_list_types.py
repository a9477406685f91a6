"""The concept list shows each concept's type and filters by a type and every type
below it; an unknown type is said in words and left out, never a 500; the concept page
links its type to the Ontology page and to the list of its type."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from kgreview.graph import services
from tests.pages import client_for, page

pytestmark = pytest.mark.django_db


@pytest.fixture
def typed(f):
    """object > setting > memory_setting; process. A concept of each, and an untyped one."""
    for key, label, parent in (
        ("object", "Object", ""),
        ("setting", "Setting", "object"),
        ("memory_setting", "Memory setting", "setting"),
        ("process", "Process", ""),
    ):
        services.concept_type_create(key=key, label=label, parent_key=parent, acting_user=None)
    made = {}
    for name, key in (
        ("checkpoint_timeout", "setting"),
        ("work_mem", "memory_setting"),
        ("Checkpointer", "process"),
        ("Thing", "object"),
    ):
        made[name] = services.concept_set_type(
            concept=f.concept(name), type_key=key, acting_user=None
        )
    made["Plain"] = f.concept("Plain")
    return made


def names(body: str) -> list[str]:
    table = re.search(r'<table class="table" id="concept-list">(.*?)</table>', body, re.S)
    if table is None:
        return []
    return re.findall(r'<td><a href="[^"]+">([^<]+)</a></td>', table.group(1))


def test_the_list_has_a_type_column(f, typed):
    body = page(client_for(f, "viewer").get(reverse("concepts")))
    assert "<th>Type</th>" in body
    row = re.search(r"<tr>\s*<td><a[^>]*>work_mem</a></td>\s*<td>(.*?)</td>", body, re.S)
    assert row is not None and "Memory setting" in row.group(1)
    plain = re.search(r"<tr>\s*<td><a[^>]*>Plain</a></td>\s*<td>(.*?)</td>", body, re.S)
    assert plain is not None and "—" in plain.group(1)


def test_filtering_by_a_type_keeps_it_and_its_subtypes(f, typed):
    client = client_for(f, "viewer")
    assert names(page(client.get(reverse("concepts"), {"type": "setting"}))) == [
        "checkpoint_timeout",
        "work_mem",
    ]
    assert names(page(client.get(reverse("concepts"), {"type": "object"}))) == [
        "Thing",
        "checkpoint_timeout",
        "work_mem",
    ]
    assert names(page(client.get(reverse("concepts"), {"type": "process"}))) == ["Checkpointer"]


def test_the_untyped_filter_lists_concepts_with_no_type(f, typed):
    body = page(client_for(f, "viewer").get(reverse("concepts"), {"type": "-"}))
    assert names(body) == ["Plain"]


def test_the_menu_lists_subtypes_under_their_parent_and_keeps_the_choice(f, typed):
    body = page(client_for(f, "viewer").get(reverse("concepts"), {"type": "setting"}))
    menu = re.search(r'<select name="type"[^>]*>(.*?)</select>', body, re.S).group(1)
    assert re.findall(r'<option value="([^"]*)"', menu) == [
        "",
        "object",
        "setting",
        "memory_setting",
        "process",
        "-",
    ]
    assert '<option value="setting" selected>' in menu


@pytest.mark.parametrize("asked", ["nosuch", "Not A Key", "x" * 150])
def test_an_unknown_type_is_said_and_every_concept_shown(f, typed, asked):
    response = client_for(f, "viewer").get(reverse("concepts"), {"type": asked})
    body = page(response)
    assert response.status_code == 200
    assert "Showing concepts of every type." in body
    assert len(names(body)) == 5


def test_the_next_page_keeps_the_type_filter(f, typed, monkeypatch):
    from kgreview.graph import selectors

    monkeypatch.setattr(selectors, "CONCEPT_PAGE", 1)
    body = page(client_for(f, "viewer").get(reverse("concepts"), {"type": "setting"}))
    assert names(body) == ["checkpoint_timeout"]
    assert re.search(r'href="\?[^"]*type=setting[^"]*after=checkpoint_timeout"', body)


def test_the_concept_page_links_its_type_to_the_ontology_and_the_list(f, typed):
    body = page(client_for(f, "viewer").get(reverse("concept-detail", args=[typed["work_mem"].pk])))
    section = re.search(r'<section class="card" id="concept-type">(.*?)</section>', body, re.S)
    assert section is not None
    ontology = reverse("ontology")
    assert re.search(rf'href="{ontology}#concept-type-\d+"', section.group(1))
    assert f'href="{reverse("concepts")}?type=memory_setting"' in section.group(1)
