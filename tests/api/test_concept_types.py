"""A concept's type in the API's answers: its key, or null, now and as of an instant."""

from __future__ import annotations

import pytest
from django.utils import timezone

from kgreview.graph import services

pytestmark = pytest.mark.django_db


def test_an_untyped_concept_answers_type_null(f, agent):
    """The starting vocabulary is empty: every concept answers ``"type": null``."""
    c = f.concept("VACUUM")
    assert agent.get(f"/api/v1/concepts/{c.pk}").json()["type"] is None


def test_a_concept_answers_the_type_it_had_as_of_an_instant(f, agent):
    """Now: its type; before the change: the type it had then (none)."""
    c = f.concept("VACUUM")
    services.concept_type_create(key="command", label="Command", acting_user=None)
    before = timezone.now()
    services.concept_set_type(concept=c, type_key="command", acting_user=None)
    url = f"/api/v1/concepts/{c.pk}"
    assert agent.get(url).json()["type"] == "command"
    assert agent.get(url, {"as_of": before.isoformat()}).json()["type"] is None
    assert agent.get(url, {"as_of": timezone.now().isoformat()}).json()["type"] == "command"


def _typed(f, key: str, label: str, names: list[str], parent: str = ""):
    services.concept_type_create(key=key, label=label, parent_key=parent, acting_user=None)
    made = [f.concept(name) for name in names]
    for c in made:
        services.concept_set_type(concept=c, type_key=key, acting_user=None)
    return made


def test_search_hits_carry_their_type_and_a_type_filter_keeps_that_type_and_its_subtypes(f, agent):
    """``type=setting`` finds settings and the kinds of setting below it, not commands
    or untyped concepts, each hit with its type's key."""
    _typed(f, "setting", "Setting", ["checkpoint_timeout"])
    _typed(f, "memory_setting", "Memory setting", ["checkpoint_memory"], parent="setting")
    _typed(f, "command", "Command", ["CHECKPOINT"])
    f.concept("checkpoint spikes")
    every = agent.get("/api/v1/concepts", {"q": "checkpoint", "limit": 10}).json()["results"]
    typed = {hit["concept"]["name"]: hit["type"] for hit in every}
    assert typed["checkpoint_timeout"] == "setting" and typed["CHECKPOINT"] == "command"
    assert typed["checkpoint spikes"] is None
    answer = agent.get("/api/v1/concepts", {"q": "checkpoint", "type": "setting"})
    assert answer.status_code == 200
    names = {hit["concept"]["name"] for hit in answer.json()["results"]}
    assert names == {"checkpoint_timeout", "checkpoint_memory"}


def test_a_type_filter_reads_the_type_each_concept_had_as_of_an_instant(f, agent):
    (c,) = _typed(f, "command", "Command", ["VACUUM"])
    services.concept_type_create(key="tool", label="Tool", acting_user=None)
    between = timezone.now()
    services.concept_set_type(concept=c, type_key="tool", acting_user=None)
    then = {"q": "VACUUM", "type": "command", "as_of": between.isoformat()}
    assert [h["type"] for h in agent.get("/api/v1/concepts", then).json()["results"]] == ["command"]
    assert agent.get("/api/v1/concepts", {"q": "VACUUM", "type": "command"}).json()["results"] == []


@pytest.mark.parametrize(
    "value,words",
    [
        ("nothing_like_it", 'There is no concept type "nothing_like_it".'),
        ("Not A Key", "cannot be a concept type's key"),
        ("x" * 200, "cannot be a concept type's key"),
    ],
)
def test_an_unknown_or_malformed_type_is_refused_in_words(f, agent, value, words):
    answer = agent.get("/api/v1/concepts", {"q": "VACUUM", "type": value})
    assert answer.status_code == 400
    assert words in answer.json()["detail"]


@pytest.mark.parametrize("value", ["\x00", "a\x07b", "x" * 201])
def test_a_type_with_control_characters_or_too_long_is_refused_not_a_server_error(agent, value):
    answer = agent.get("/api/v1/concepts", {"q": "VACUUM", "type": value})
    assert answer.status_code in (400, 422)
    assert answer.json()["detail"]


def test_neighbours_carry_each_nodes_type_as_of_an_instant(f, agent):
    """The explorer colours nodes by these: the type each concept had then."""
    (ckpt,) = _typed(f, "process", "Process", ["Checkpointer"])
    timeout = f.concept("checkpoint_timeout")
    services.concept_type_create(key="setting", label="Setting", acting_user=None)
    f.edge(timeout, ckpt, "applies_to")
    between = timezone.now()
    services.concept_set_type(concept=timeout, type_key="setting", acting_user=None)
    url = f"/api/v1/concepts/{ckpt.pk}/neighbours"
    now = {n["name"]: n["type"] for n in agent.get(url).json()["nodes"]}
    assert now == {"Checkpointer": "process", "checkpoint_timeout": "setting"}
    then = agent.get(url, {"as_of": between.isoformat()}).json()["nodes"]
    assert {n["name"]: n["type"] for n in then} == {
        "Checkpointer": "process",
        "checkpoint_timeout": None,
    }
