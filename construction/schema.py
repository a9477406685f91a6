"""The shape of the model's answer, checked with pydantic before anything else sees it.

The JSON schema sent to the endpoint is written by hand rather than generated, because
OpenAI's strict mode accepts only a subset of JSON Schema (every property required,
``additionalProperties: false``, no defaults) and other OpenAI-compatible servers accept
less still. Length and range limits therefore live in the descriptions for the model and
in the pydantic models for us: the endpoint's grammar cannot be trusted to enforce them.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

NAME_MAX = 200
EVIDENCE_MAX = 2000
REASON_MAX = 1000
DESCRIPTION_MAX = 1000
RELATION_MAX = 64
ALIASES_MAX = 20


def _none_as(empty: Any):
    """Strict mode makes the model write ``null`` for an optional field it has no value for."""

    def convert(value: Any) -> Any:
        return empty if value is None else value

    return BeforeValidator(convert)


Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=NAME_MAX)]
Relation = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=RELATION_MAX)
]


def _not_bool(value: Any) -> Any:
    # pydantic reads true as 1.0, which would turn a malformed answer into full confidence.
    if isinstance(value, bool):
        raise ValueError("confidence must be a number, not true/false")
    return value


# Python's json module reads NaN and Infinity; neither is a confidence.
Confidence = Annotated[
    float, BeforeValidator(_not_bool), Field(ge=0.0, le=1.0, allow_inf_nan=False)
]


class ConceptAnswer(BaseModel):
    """A concept as the model names it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: Name
    aliases: Annotated[tuple[Name, ...], _none_as(()), Field(max_length=ALIASES_MAX)] = ()
    description: Annotated[
        str,
        _none_as(""),
        StringConstraints(strip_whitespace=True, max_length=DESCRIPTION_MAX),
    ] = ""
    # The key of one of the graph's concept types the prompt lists, or "".
    type: Annotated[str, _none_as(""), StringConstraints(strip_whitespace=True, max_length=100)] = (
        ""
    )


class EdgeAnswer(BaseModel):
    """One drafted edge; ``relation`` is free text so new relation kinds can surface."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    source: Name
    target: Name
    relation: Relation
    confidence: Confidence
    reason: Annotated[str, StringConstraints(strip_whitespace=True, max_length=REASON_MAX)]
    evidence: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=EVIDENCE_MAX)
    ]


class GraphAnswer(BaseModel):
    """The whole answer. ``edges`` is required so that an off-topic object is an error."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    concepts: Annotated[tuple[ConceptAnswer, ...], _none_as(())] = ()
    edges: tuple[EdgeAnswer, ...]


def _string(description: str) -> dict:
    return {"type": "string", "description": description}


def answer_json_schema() -> dict:
    """The JSON schema for ``response_format`` (strict: all required, nothing extra)."""
    concept = {
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "aliases", "description", "type"],
        "properties": {
            "name": _string(f"The concept's name as the text writes it (1-{NAME_MAX} chars)."),
            "aliases": {
                "type": ["array", "null"],
                "items": {"type": "string"},
                "description": (
                    "Other names or abbreviations the text gives it (at most "
                    f"{ALIASES_MAX}), or null; never one the text does not use."
                ),
            },
            "description": {
                "type": ["string", "null"],
                "description": "One sentence saying what it is, from the text, or null.",
            },
            "type": {
                "type": ["string", "null"],
                "description": "The key of the concept type it is, from the list of the "
                "graph's concept types, or null when none fits or none is listed.",
            },
        },
    }
    edge = {
        "type": "object",
        "additionalProperties": False,
        "required": ["source", "target", "relation", "confidence", "reason", "evidence"],
        "properties": {
            "source": _string("Name of the concept the edge starts from."),
            "target": _string("Name of the concept the edge points to."),
            "relation": _string(
                "A relation key from the vocabulary, or a short snake_case label when the "
                "text clearly states a relation none of them fits."
            ),
            "confidence": {
                "type": "number",
                "description": "Calibrated probability, between 0 and 1, that the text states it.",
            },
            "reason": _string("One sentence: why the text supports this edge."),
            "evidence": _string(
                f"A sentence or clause copied verbatim from the text (1-{EVIDENCE_MAX} chars)."
            ),
        },
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["concepts", "edges"],
        "properties": {
            "concepts": {"type": "array", "items": concept},
            "edges": {"type": "array", "items": edge},
        },
    }
