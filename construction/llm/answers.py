"""Reading the model's answers: JSON (fenced or not), validated, errors in words."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from ..schema import ConceptAnswer, GraphAnswer
from ..text import name_key
from ..types import ConceptMention

MAX_ERRORS_FED_BACK = 8
FENCE = re.compile(r"^\s*```[\w-]*[ \t]*\n?(?P<body>.*?)\n?[ \t]*```\s*$", re.DOTALL)


def read_answer(content: str | None) -> tuple[Any, GraphAnswer | None, list[str]]:
    """The answer's JSON, the answer if valid, and otherwise what is wrong with it."""
    if content is None or not content.strip():
        return None, None, ["the answer was empty"]
    fenced = FENCE.match(content)
    body = fenced.group("body") if fenced else content
    try:
        data = json.loads(body)
    except json.JSONDecodeError as err:
        return None, None, [f"{err.msg} at line {err.lineno} column {err.colno}"]
    if not isinstance(data, dict):
        return data, None, [f"expected a JSON object, got {type(data).__name__}"]
    try:
        return data, GraphAnswer.model_validate(data), []
    except ValidationError as err:
        return data, None, describe_errors(err)


def describe_errors(err: ValidationError) -> list[str]:
    found = err.errors(include_url=False)
    lines = []
    for e in found[:MAX_ERRORS_FED_BACK]:
        where = ".".join(str(part) for part in e["loc"]) or "answer"
        value = e.get("input")
        shown = ""
        if isinstance(value, int | float | bool) or value is None:
            shown = f" (got {json.dumps(value)})"
        elif isinstance(value, str):
            shown = f" (got {json.dumps(value[:60] + ('...' if len(value) > 60 else ''))})"
        lines.append(f"{where}: {e['msg']}{shown}")
    if len(found) > MAX_ERRORS_FED_BACK:
        lines.append(f"... and {len(found) - MAX_ERRORS_FED_BACK} more")
    return lines


def merge_concepts(concepts: Sequence[ConceptAnswer]) -> tuple[ConceptMention, ...]:
    """One mention per name key; later duplicates only add aliases and a missing description."""
    merged: dict[str, ConceptMention] = {}
    for concept in concepts:
        key = name_key(concept.name) or concept.name
        current = merged.get(key)
        if current is None:
            current = ConceptMention(name=concept.name)
        seen = {name_key(current.name)} | {name_key(a) for a in current.aliases}
        aliases = list(current.aliases)
        for alias in concept.aliases:
            if name_key(alias) not in seen:
                seen.add(name_key(alias))
                aliases.append(alias)
        merged[key] = ConceptMention(
            name=current.name,
            aliases=tuple(aliases),
            description=current.description or concept.description,
        )
    return tuple(merged.values())


def unfence(content: str) -> str:
    match = FENCE.match(content)
    return match.group("body") if match else content


class RelationAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    label: str = Field(min_length=1, max_length=100)
    verb: str = Field(min_length=1, max_length=100)
    description: str = Field(min_length=1, max_length=2000)
    symmetric: StrictBool
    acyclic: StrictBool
