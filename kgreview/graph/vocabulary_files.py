"""Relation vocabularies as files: the presets kgreview ships (``vocabularies/*.json``)
and a team's own file, JSON or YAML with the same fields, read and checked whole before
anything is installed (``review.vocabulary.vocabulary_install`` installs one).

A file is an object with ``relations`` (a list; ``name`` and ``description`` optional),
or the list alone. Each relation has ``key`` (lowercase letters, digits and
underscores), ``label``, ``verb`` (how "source <verb> target" reads), and optionally
``description``, ``symmetric`` and ``acyclic`` (true or false; a symmetric relation has
no direction, so it cannot be acyclic) and ``inverse``, the key of another relation of
the file stating its facts the other way round (both directed, both acyclic or neither;
naming it on one side of the pair is enough; a file naming none leaves the graph's pairs
as they are). Every problem is reported at once, each with its
line and field, in words: a team fixes its file in one pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from construction.text import normal_name
from kgreview.core.errors import ValidationFailed

PRESETS_DIR = Path(__file__).with_name("vocabularies")
SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}
MAX_FILE_BYTES = 1_000_000
FIELDS = ("key", "label", "verb", "description", "symmetric", "acyclic", "inverse")
KEY_PATTERN = r"^[a-z][a-z0-9_]*$"


class RelationDef(BaseModel):
    """One relation of a vocabulary file, as the ``RelationType`` it becomes."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    key: Annotated[str, Field(min_length=1, max_length=64, pattern=KEY_PATTERN)]
    label: Annotated[str, Field(min_length=1, max_length=100)]
    verb: Annotated[str, Field(min_length=1, max_length=100)]
    description: str = ""
    symmetric: bool = False
    acyclic: bool = False
    inverse: Annotated[str, Field(max_length=64, pattern=r"^([a-z][a-z0-9_]*)?$")] = ""

    @field_validator("label", "verb", mode="after")
    @classmethod
    def _stored_form(cls, value: str) -> str:
        """The label and verb as the graph stores them (``normal_name``), so a file that
        spells them with invisible characters installs once, not at every run."""
        return normal_name(value)

    @model_validator(mode="after")
    def _shape(self) -> RelationDef:
        if not self.label.strip() or not self.verb.strip():
            raise ValueError("label and verb must hold words, not only spaces")
        if self.symmetric and self.acyclic:
            raise ValueError(
                "a symmetric relation has no direction, so it cannot be acyclic: "
                "make it acyclic or symmetric, not both"
            )
        return self

    @property
    def directed(self) -> bool:
        return not self.symmetric


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[str, Field(max_length=64)] = ""
    description: str = ""
    relations: Annotated[list[RelationDef], Field(min_length=1)]


@dataclass(frozen=True)
class Vocabulary:
    """A whole relation vocabulary: every relation a graph should have active."""

    name: str
    description: str
    relations: tuple[RelationDef, ...]
    origin: str  # "preset documentation" or the file's path, for messages and the log

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(r.key for r in self.relations)

    @property
    def inverses(self) -> dict[str, str]:
        """Each relation of a declared inverse pair -> the other (both ways round)."""
        out: dict[str, str] = {}
        for r in self.relations:
            if r.inverse:
                out[r.key], out[r.inverse] = r.inverse, r.key
        return out


class BadVocabulary(ValidationFailed):
    """A vocabulary file that cannot be installed; ``problems`` lists each in words."""

    code = "bad_vocabulary"
    status = 400

    def __init__(self, origin: str, problems: list[str]) -> None:
        shown = "\n".join(f"  - {p}" for p in problems)
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(f"{origin}: {len(problems)} {noun}; nothing was installed.\n{shown}")
        self.problems = problems


# --- Presets ---------------------------------------------------------------------------


def preset_names() -> list[str]:
    """The presets kgreview ships, by name."""
    return sorted(p.stem for p in PRESETS_DIR.glob("*.json"))


def load_preset(name: str) -> Vocabulary:
    """A preset by name; an unknown name is refused in words that list the presets."""
    if name not in preset_names():
        raise ValidationFailed(
            f"There is no vocabulary preset called “{name[:40]}”: use "
            f"{' or '.join(preset_names())}, or give a file of your own."
        )
    path = PRESETS_DIR / f"{name}.json"
    return parse(path.read_text(encoding="utf-8"), fmt="json", origin=f"preset {name}")


# --- Files -----------------------------------------------------------------------------


def load_file(path: str | Path) -> Vocabulary:
    """A team's vocabulary file (``.json``, ``.yaml`` or ``.yml``), checked whole."""
    path = Path(path)
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise BadVocabulary(
            str(path), [f"a vocabulary file ends in .json, .yaml or .yml, not “{path.suffix}”"]
        )
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise BadVocabulary(str(path), [f"the file is over {MAX_FILE_BYTES:,} bytes"])
        raw = path.read_bytes()
    except OSError as exc:
        raise BadVocabulary(str(path), [f"cannot be read: {exc.strerror or exc}"]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadVocabulary(
            str(path), [f"not UTF-8 text (byte {exc.start} cannot be read)"]
        ) from None
    return parse(text, fmt=fmt, origin=str(path))


def parse(text: str, *, fmt: str, origin: str) -> Vocabulary:
    """A vocabulary from the text of a file in ``fmt`` ("json" or "yaml")."""
    data = _load_json(text, origin) if fmt == "json" else _load_yaml(text, origin)
    node = _compose(text)
    problems = [f"line {line}: {p}" if line else p for line, p in _duplicates(node)]
    if isinstance(data, list):
        data = {"relations": data}
    if not isinstance(data, dict):
        problems.append("the file must hold an object with “relations” (or a list of relations)")
        raise BadVocabulary(origin, problems)
    try:
        parsed = _File.model_validate(data)
    except ValidationError as err:
        problems += [_in_words(dict(e), data, node) for e in err.errors()]
        raise BadVocabulary(origin, problems) from None
    seen: dict[str, int] = {}
    for i, relation in enumerate(parsed.relations):
        if relation.key in seen:
            where = _line(node, ("relations", i, "key"))
            problems.append(
                f"{_at(where)}relation {i + 1}: the key “{relation.key}” is already used by "
                f"relation {seen[relation.key] + 1}; each key names one relation"
            )
        seen.setdefault(relation.key, i)
    problems += _pair_problems(parsed.relations, node)
    if problems:
        raise BadVocabulary(origin, problems)
    return Vocabulary(
        name=parsed.name.strip() or Path(origin).stem,
        description=parsed.description.strip(),
        relations=tuple(parsed.relations),
        origin=origin,
    )


def _pair_problems(relations: list[RelationDef], node: yaml.Node | None) -> list[str]:
    """What makes no sense in the file's inverse pairs, in words (see the module's
    docstring; the graph's rule book, ``rules.inverse_refusal``, says the same of one
    pair on the Ontology page)."""
    by_key = {r.key: r for r in relations}
    problems: list[str] = []
    for i, r in enumerate(relations):
        if not r.inverse:
            continue
        at = f"{_at(_line(node, ('relations', i, 'inverse')))}relation {i + 1}: "
        other = by_key.get(r.inverse)
        if r.inverse == r.key:
            problems.append(f"{at}“{r.key}” cannot be its own inverse (make it symmetric)")
        elif other is None:
            problems.append(f"{at}its inverse “{r.inverse}” is not a relation of the file")
        elif r.symmetric or other.symmetric:
            problems.append(
                f"{at}a symmetric relation is its own inverse: “{r.key}” and “{other.key}” "
                "cannot be a pair"
            )
        elif r.acyclic != other.acyclic:
            problems.append(
                f"{at}“{r.key}” and its inverse “{other.key}” state one fact, so both are "
                "acyclic or neither is"
            )
        elif other.inverse and other.inverse != r.key:
            problems.append(
                f"{at}“{r.key}” names “{other.key}” its inverse, but “{other.key}” names "
                f"“{other.inverse}”"
            )
    named = [r.inverse for r in relations if r.inverse and r.inverse != r.key]
    for key in sorted({k for k in named if named.count(k) > 1 and by_key.get(k)}):
        if not by_key[key].inverse:
            problems.append(f"“{key}” is named the inverse of more than one relation")
    return problems


def _load_json(text: str, origin: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=dict)
    except json.JSONDecodeError as exc:
        raise BadVocabulary(
            origin, [f"line {exc.lineno}, column {exc.colno}: not JSON ({exc.msg})"]
        ) from None


def _load_yaml(text: str, origin: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BadVocabulary(origin, [f"{where}not YAML ({problem})"]) from None


# --- Where a problem is: line numbers from the file's node tree ------------------------


def _compose(text: str) -> yaml.Node | None:
    """The file's node tree, for line numbers (JSON is YAML); None when YAML cannot read
    it (a JSON file with tabs), and then problems are told without a line."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None


def _child(node: yaml.Node | None, step: str | int) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode) and isinstance(step, str):
        for key, value in node.value:
            if key.value == step:
                return value
        return None
    if isinstance(node, yaml.SequenceNode) and isinstance(step, int):
        return node.value[step] if 0 <= step < len(node.value) else None
    return None


def _line(root: yaml.Node | None, loc: tuple) -> int | None:
    """The line of the deepest node of ``loc`` the file has (1-based)."""
    if root is None:
        return None
    node = root
    # A file that is a bare list has no "relations" node: skip that step.
    if isinstance(root, yaml.SequenceNode) and loc[:1] == ("relations",):
        loc = loc[1:]
    for step in loc:
        nxt = _child(node, step)
        if nxt is None:
            break
        node = nxt
    return node.start_mark.line + 1


def _at(line: int | None) -> str:
    return f"line {line}: " if line else ""


def _duplicates(node: yaml.Node | None) -> Iterator[tuple[int, str]]:
    """Keys written twice in one object: JSON and YAML readers keep the last silently."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if key.value in seen:
                yield key.start_mark.line + 1, f"“{key.value}” is written twice in one object"
            seen.add(key.value)
            yield from _duplicates(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _duplicates(item)


def _relation_words(data: dict, index: int) -> str:
    rows = data.get("relations")
    row = rows[index] if isinstance(rows, list) and 0 <= index < len(rows) else None
    key = row.get("key") if isinstance(row, dict) else None
    return (
        f"relation {index + 1} (“{key}”)"
        if isinstance(key, str) and key
        else (f"relation {index + 1}")
    )


def _in_words(error: dict, data: dict, node: yaml.Node | None) -> str:
    """One pydantic error as a sentence: where (line, relation, field) and what."""
    loc = tuple(error["loc"])
    where = _line(node, loc)
    parts: list[str] = []
    in_relation = len(loc) >= 2 and loc[0] == "relations" and isinstance(loc[1], int)
    if in_relation:
        parts.append(_relation_words(data, loc[1]))
        field = loc[2] if len(loc) > 2 else None
    else:
        field = loc[0] if loc else None
    if error["type"] == "extra_forbidden":
        allowed = ", ".join(FIELDS) if in_relation else "name, description, relations"
        whose = "a relation" if in_relation else "a vocabulary file"
        parts.append(f"“{field}” is not a field of {whose} (use {allowed})")
    elif field is not None:
        parts.append(f"“{field}” {_what(error)}")
    else:
        parts.append(_what(error))
    return _at(where) + ": ".join(parts)


def _what(error: dict) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return "is missing"
    if kind == "bool_type":
        return f"must be true or false, not {_shown(error.get('input'))}"
    if kind == "string_type":
        return f"must be text, not {_shown(error.get('input'))}"
    if kind == "list_type":
        return "must be a list of relations"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return "must be an object with key, label and verb"
    if kind == "string_too_long":
        return f"is longer than {ctx.get('max_length')} characters"
    if kind == "string_too_short":
        return "is empty"
    if kind == "too_short":
        return "holds no relation: a vocabulary needs at least one"
    if kind == "string_pattern_mismatch":
        return (
            "must be lowercase letters, digits and underscores, starting with a letter "
            f"(e.g. part_of), not {_shown(error.get('input'))}"
        )
    if kind == "value_error":
        return str(ctx.get("error") or error["msg"])
    return str(error["msg"]).lower()


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else f"“{value}”"
    return text if len(text) <= 40 else text[:39] + "…"
