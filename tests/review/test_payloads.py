"""Each proposal kind's payload is validated, and errors say what is wrong."""

from __future__ import annotations

import pytest

from kgreview.core.errors import ValidationFailed
from kgreview.review.kinds import payload_validate

EDGE = {
    "source": {"name": "Embeddings", "concept_id": 4, "match": "exact"},
    "target": {"name": "Vector search", "match": "new"},
    "relation": "prerequisite",
}

VALID = [
    ("add_concept", {"name": "LoRA", "aliases": ["Low-Rank Adaptation"], "description": "x"}),
    ("add_edge", EDGE),
    ("update_edge", {"edge_id": 3, "swap_direction": True}),
    ("invalidate_edge", {"edge_id": 3, "reason_code": "evidence_gone"}),
    ("merge_concepts", {"survivor_id": 1, "loser_id": 2, "score": 93.5, "why": "same"}),
    (
        "add_relation_type",
        {
            "key": "alternative_to",
            "label": "Alternative to",
            "verb": "is an alternative to",
            "directed": False,
            "symmetric": True,
            "examples": [{"quote": "DPO is an alternative to RLHF", "source_slug": "dpo"}],
        },
    ),
]


@pytest.mark.parametrize("kind,payload", VALID, ids=[k for k, _ in VALID])
def test_valid_payloads_are_returned_in_canonical_form(kind, payload):
    """A good payload round-trips, with defaults filled in."""
    clean = payload_validate(kind=kind, payload=payload)
    for key in payload:
        assert key in clean


INVALID = [
    ("add_concept", {}, "name"),
    ("add_concept", {"name": ""}, "name"),
    ("add_concept", {"name": "X", "colour": "red"}, "colour"),
    ("add_edge", {**EDGE, "relation": "Not A Key"}, "relation"),
    ("add_edge", {**EDGE, "weight": -1}, "weight"),
    ("add_edge", {**EDGE, "target": {"name": "embeddings"}}, "cannot join"),
    ("add_edge", {**EDGE, "target": {"name": "T", "match": "fuzzy", "concept_id": 2}}, "score"),
    ("add_edge", {**EDGE, "target": {"name": "T", "match": "exact"}}, "concept_id"),
    ("add_edge", {**EDGE, "target": {"name": "T", "match": "new", "concept_id": 9}}, "new"),
    ("update_edge", {"edge_id": 1}, "change at least one"),
    ("invalidate_edge", {"edge_id": 1, "reason_code": "because"}, "reason_code"),
    ("merge_concepts", {"survivor_id": 1, "loser_id": 1, "why": "x"}, "itself"),
    ("add_relation_type", {"key": "x", "label": "X", "verb": "x", "symmetric": True}, "either"),
    (
        "add_relation_type",
        {
            "key": "x",
            "label": "X",
            "verb": "x",
            "directed": False,
            "symmetric": True,
            "acyclic": True,
        },
        "acyclic",
    ),
]


@pytest.mark.parametrize("kind,payload,words", INVALID)
def test_invalid_payloads_are_refused_in_words(kind, payload, words):
    """The error names the field or rule that failed."""
    with pytest.raises(ValidationFailed) as exc:
        payload_validate(kind=kind, payload=payload)
    assert words in str(exc.value)


def test_unknown_kind_and_non_object_payloads_are_refused():
    """Only the six kinds exist, and payloads are JSON objects."""
    with pytest.raises(ValidationFailed, match="not a proposal kind"):
        payload_validate(kind="delete_everything", payload={})
    with pytest.raises(ValidationFailed, match="JSON object"):
        payload_validate(kind="add_concept", payload=["name"])
