"""Annotations made in another tool (Label Studio, doccano, INCEpTION/WebAnno), read into
one neutral form: the annotated texts, each with its annotator's labelled spans and the
labelled relations between them. Pure Python, no Django.

A reader never raises on what a file holds: whatever it cannot use is a ``Problem`` in
words (which document, which item, why) and the rest is read. Only a file that is not of
the format at all (not JSON, not a list of tasks) is refused whole, with ``BadAnnotations``.

Offsets are characters of the text as Python counts them (code points), as doccano's
exports count them and Label Studio's have since its editor stopped counting the
browser's UTF-16 code units (label-studio-frontend #308; exports from 2021 and before
count UTF-16). In a text with characters beyond the Basic Multilingual Plane (emoji) a
Label Studio span is read as code points first and as UTF-16 units second, and its
own copy of the span's text (``value.text``), where the export has one, decides.
INCEpTION's CAS counts in UTF-16 too; ``dkpro-cassis`` converts them when it loads the
file (``annotations_inception``).

The texts are stored in the canonical form of every stored text
(``documents.clean_text``: ``\\n`` line ends, no control characters, NFC); ``cleaned``
cleans a text piece by piece between the spans' offsets, so each offset still points
at the same characters afterwards.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from .documents import clean_text
from .text import normal_name

__all__ = [
    "TOOLS",
    "AnnotatedText",
    "AnnotationMap",
    "MAX_ITEMS",
    "BadAnnotations",
    "Entity",
    "Problem",
    "Relation",
    "TextLoader",
    "cleaned",
    "is_origin_flag",
    "origin_flag",
    "parse_map",
    "read_doccano",
]

#: The tools whose exports are read, by the name ``--format`` takes, with their words.
TOOLS = {
    "labelstudio": "Label Studio",
    "inception": "INCEpTION/WebAnno",
    "doccano": "doccano",
}
#: The prefix of the flag naming a proposal's origin: ``annotator:<tool>:<who>``.
ORIGIN_FLAG = "annotator"
#: Words of an annotator kept in the flag: letters, digits and . _ - @ (others become -).
_WHO = re.compile(r"[^a-z0-9._@-]+")
MAX_WHO = 64


class BadAnnotations(Exception):
    """The file is not of the format at all (its words say why); nothing is read."""


@dataclass(frozen=True)
class Problem:
    """Something of the file that could not be used: where, and why, in words.
    ``skipped``: left out on purpose, no fault of the file (an annotation its annotator
    cancelled, a task nobody annotated); reported, but not a failure."""

    where: str
    words: str
    skipped: bool = False

    def as_json(self) -> dict:
        return {"where": self.where, "problem": self.words}

    def __str__(self) -> str:
        return f"{self.where}: {self.words}"


@dataclass(frozen=True)
class Entity:
    """A labelled span: ``text[start:end]``, its label, the tool's id for it."""

    id: str
    start: int
    end: int
    label: str


@dataclass(frozen=True)
class Relation:
    """A labelled relation from one span (by id) to another."""

    id: str
    from_id: str
    to_id: str
    label: str


@dataclass
class AnnotatedText:
    """One annotated text of the file by one annotator: where it is in the file (words),
    a name for it (its slug is made from that), its title, its spans and relations."""

    where: str
    name: str
    title: str
    text: str
    annotator: str
    entities: list[Entity] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)

    def entity(self, entity_id: str) -> Entity | None:
        return next((e for e in self.entities if e.id == entity_id), None)


def origin_flag(tool: str, annotator: str) -> str:
    """The flag every proposal of this annotator's work carries, ``annotator:TOOL:WHO``:
    what the Queue filters by to decide one annotator's work together."""
    who = _WHO.sub("-", normal_name(annotator).casefold()).strip("-")[:MAX_WHO] or "unknown"
    return f"{ORIGIN_FLAG}:{tool}:{who}"


# --- The mapping file ------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotationMap:
    """What the labels mean: relation labels to the graph's relation keys; entity labels
    to a concept type's key ("" for no type). With no ``entities`` given every entity
    label is a concept without a type; given, a label outside it is left out."""

    relations: Mapping[str, str] = field(default_factory=dict)
    entities: Mapping[str, str] | None = None


def parse_map(raw: bytes | str | None) -> AnnotationMap:
    """The mapping file: ``{"relations": {LABEL: KEY}, "entities": {LABEL: TYPE_KEY}}``
    (JSON; both optional). Raises ``BadAnnotations`` in words for anything else."""
    if raw is None:
        return AnnotationMap()
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadAnnotations(f"the mapping file is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise BadAnnotations(
            'the mapping file holds one JSON object: {"relations": {"label": "relation_key"}, '
            '"entities": {"label": "concept_type_key"}}'
        )
    unknown = sorted(set(data) - {"relations", "entities"})
    if unknown:
        raise BadAnnotations(
            f"the mapping file has keys it does not know: {', '.join(map(str, unknown))} "
            '(only "relations" and "entities")'
        )

    def table(name: str) -> dict[str, str]:
        value = data.get(name) or {}
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise BadAnnotations(f'"{name}" in the mapping file maps labels to keys (text to text)')
        return {k: v.strip() for k, v in value.items()}

    relations = table("relations")
    for label, key in relations.items():
        if not key:
            raise BadAnnotations(f'the relation label "{label[:64]}" is mapped to no key')
    return AnnotationMap(
        relations=relations, entities=table("entities") if "entities" in data else None
    )


# --- Offsets and clean text ------------------------------------------------------------


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@lru_cache(maxsize=4)
def _astral_units(text: str) -> tuple[int, ...]:
    """Where each character beyond the BMP starts, in UTF-16 units (read once per text:
    a file's spans all ask about the same one)."""
    return tuple(m.start() + k for k, m in enumerate(_ASTRAL.finditer(text)))


def utf16_to_python(text: str, offset: int) -> int | None:
    """A UTF-16 code unit offset as an offset in ``text`` (None if it splits a pair or
    lies outside the text)."""
    units = _astral_units(text)
    before = bisect_left(units, offset)  # pairs that start before the offset
    if before and units[before - 1] + 1 == offset:
        return None  # between the two halves of a pair
    index = offset - before
    return index if 0 <= index <= len(text) else None


def cleaned(text: str, offsets: Iterable[int]) -> tuple[str, dict[int, int]]:
    """``text`` in its stored form, and where each of ``offsets`` is in it: cleaned
    piece by piece between the offsets, so a span keeps its characters. Raises
    ``ValueError`` when no such cleaning exists (an offset inside a character that
    normalisation joins with the next)."""
    cuts = sorted({0, len(text), *(o for o in offsets if 0 <= o <= len(text))})
    out: list[str] = []
    where: dict[int, int] = {}
    length = 0
    for lo, hi in zip(cuts, cuts[1:], strict=False):
        where[lo] = length
        piece = clean_text(text[lo:hi])
        out.append(piece)
        length += len(piece)
    where[cuts[-1]] = length
    joined = "".join(out)
    if clean_text(joined) != joined:
        raise ValueError("an offset falls between characters that belong together")
    return joined, where


def _offset(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def checked_span(
    text: str, start, end, *, label_text: str | None = None, utf16: bool = True
) -> tuple[int, int] | str:
    """Python offsets of a span, or why they are unusable (words). ``label_text``: the
    tool's own copy of the span's text, which must match."""
    start, end = _offset(start), _offset(end)
    if start is None or end is None:
        return "its start and end are not whole numbers"
    candidates = [(start, end)]  # code points first: what Label Studio stores today
    if utf16 and _astral_units(text) and 0 <= start < end <= 2 * len(text):
        lo16, hi16 = utf16_to_python(text, start), utf16_to_python(text, end)
        if lo16 is not None and hi16 is not None and (lo16, hi16) != (start, end):
            candidates.append((lo16, hi16))
    for lo, hi in candidates:
        if not 0 <= lo < hi <= len(text):
            continue
        if label_text is None or text[lo:hi] == label_text:
            return lo, hi
    shown_at = f"{shortened(start, 20)}–{shortened(end, 20)}"
    if not 0 <= start < end:
        return f"its offsets {shown_at} are not a span (start from 0, end after start)"
    if end > len(text):
        return f"its offsets {shown_at} run past the end of the text ({len(text)} characters)"
    shown = text[start:end][:60]
    return f'its text "{(label_text or "")[:60]}" is not the text at {start}–{end} ("{shown}")'


# --- Reading a file (Label Studio's and doccano's JSON) ---------------------------------

#: At most this many labelled spans and relations are read from one file: a bigger
#: export is refused before it is parsed (split it), so a file never costs more than a
#: few hundred MB to read.
MAX_ITEMS = 100_000
_ITEM_MARKS = (b'"start', b'"from_id', b'"Governor')
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

#: How a text given by reference is found: the reference in, the text out, or a
#: ``LookupError`` whose words say why not. Never a download: the command line gives a
#: folder (``--texts``); without one every such task is refused in words.
TextLoader = Callable[[str], str]


def shortened(value, limit: int = 40) -> str:
    """A value of the file as words of bounded length (ids and numbers can be huge)."""
    words = value if isinstance(value, str) else json.dumps(value, default=str)[: limit + 1]
    return words if len(words) <= limit else words[: limit - 1] + "…"


def plain_text(value: str) -> str:
    """A string of the file with no lone surrogate (JSON's ``\\ud83d`` alone): those are
    no characters, and no database stores them."""
    return _LONE_SURROGATE.sub("\ufffd", value)


def too_many_items(raw: bytes) -> str | None:
    """Why a file is refused unread for its number of items, or None."""
    seen = sum(raw.count(mark) for mark in _ITEM_MARKS)
    if seen > MAX_ITEMS:
        return (
            f"it holds about {seen:,} labelled spans and relations; at most {MAX_ITEMS:,} are "
            "read from one file (export the project in parts)"
        )
    return None


def read_json(raw: bytes, what: str):
    if not raw.strip():
        raise BadAnnotations(f"the file is empty: it is not {what}")
    if b"\x00" in raw:
        raise BadAnnotations(f"the file holds NUL bytes: it is not {what}")
    too_many = too_many_items(raw)
    if too_many:
        raise BadAnnotations(too_many)
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise BadAnnotations(f"the file is not UTF-8 text: it is not {what}") from None
    except RecursionError:
        raise BadAnnotations(f"the file nests its JSON too deep: it is not {what}") from None
    except ValueError as exc:
        raise BadAnnotations(
            f"the file is not JSON ({shortened(str(exc), 160)}): it is not {what}"
        ) from None


def annotator_of(value) -> str:
    """An annotator as Label Studio names them: a user id, or an object with an email."""
    if isinstance(value, dict):
        value = value.get("email") or value.get("username") or value.get("id")
    if isinstance(value, bool) or value is None or value == "":
        return ""
    if isinstance(value, int):
        return f"user {shortened(value)}"
    return plain_text(shortened(value, MAX_WHO * 2)) if isinstance(value, str) else ""


def region_id(value, number: int) -> str | None:
    if value is None:
        return str(number)
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return shortened(value, 64)
    return None


def reference_id(value) -> str | None:
    """The id a relation's end names, or None when it names none."""
    return None if value is None else region_id(value, 0)


# --- doccano ---------------------------------------------------------------------------


def _lines(raw: bytes) -> Iterator[tuple[int, str]]:
    if not raw.strip():
        raise BadAnnotations("the file is empty: it is not doccano JSONL")
    too_many = too_many_items(raw.replace(b'"start_offset', b'"start'))
    if too_many:
        raise BadAnnotations(too_many)
    if b"\x00" in raw:
        raise BadAnnotations("the file holds NUL bytes: it is not doccano JSONL")
    try:
        body = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BadAnnotations("the file is not UTF-8 text: it is not doccano JSONL") from None
    for number, line in enumerate(body.splitlines(), start=1):
        if line.strip():
            yield number, line


def read_doccano(raw: bytes, *, annotator: str = "") -> tuple[list[AnnotatedText], list[Problem]]:
    """A doccano relation-extraction export, JSON Lines: each line
    ``{"id"?, "text", "entities": [{"id", "start_offset", "end_offset", "label"}],
    "relations": [{"id", "from_id", "to_id", "type"}]}`` (``start``/``end`` are read
    too); an annotator from ``"user"`` or ``"annotator"`` where the export has one."""
    texts: list[AnnotatedText] = []
    problems: list[Problem] = []
    read_any = False
    for number, line in _lines(raw):
        where = f"line {number}"
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as exc:
            problems.append(Problem(where, f"is not JSON ({shortened(str(exc), 120)})"))
            continue
        read_any = True
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            problems.append(Problem(where, 'is not a doccano example (an object with "text")'))
            continue
        entities, relations = row.get("entities", []), row.get("relations", [])
        if not isinstance(entities, list) or not isinstance(relations, list):
            problems.append(Problem(where, '"entities" and "relations" are lists'))
            continue
        name = shortened(row.get("id", number))
        item = AnnotatedText(
            where=where,
            name=f"example-{name}",
            title=f"Example {name}",
            text=plain_text(row["text"]),
            annotator=annotator
            or annotator_of(row.get("user") or row.get("annotator"))
            or "unknown",
        )
        seen: set[str] = set()
        for index, entity in enumerate(entities, start=1):
            if not isinstance(entity, dict):
                problems.append(Problem(f"{where}, entity {index}", "is not an object"))
                continue
            eid = region_id(entity.get("id"), index)
            if eid is None:
                problems.append(
                    Problem(
                        f"{where}, entity {index}", "left out: its id is not a word or a number"
                    )
                )
                continue
            if eid in seen:
                problems.append(
                    Problem(
                        f"{where}, entity {eid}",
                        "left out: another entity of this line has the same id",
                    )
                )
                continue
            found = checked_span(
                item.text,
                entity.get("start_offset", entity.get("start")),
                entity.get("end_offset", entity.get("end")),
                utf16=False,  # doccano's backend counts characters as Python does
            )
            if isinstance(found, str):
                problems.append(Problem(f"{where}, entity {eid}", f"left out: {found}"))
                continue
            seen.add(eid)
            label = entity.get("label") or ""
            item.entities.append(Entity(eid, *found, label=plain_text(shortened(label, 200))))
        for index, relation in enumerate(relations, start=1):
            if not isinstance(relation, dict):
                problems.append(Problem(f"{where}, relation {index}", "is not an object"))
                continue
            ends = [reference_id(relation.get(k)) for k in ("from_id", "to_id")]
            if ends[0] is None or ends[1] is None:
                problems.append(
                    Problem(
                        f"{where}, relation {index}", "left out: from_id and to_id name no entities"
                    )
                )
                continue
            label = relation.get("type") or relation.get("label") or ""
            item.relations.append(
                Relation(
                    region_id(relation.get("id"), index) or str(index),
                    ends[0],
                    ends[1],
                    plain_text(shortened(label, 200)),
                )
            )
        texts.append(item)
    if not read_any and not problems:
        raise BadAnnotations("the file holds no lines of JSON: it is not doccano JSONL")
    if not read_any:
        raise BadAnnotations(f"no line is JSON (the first: {problems[0].words}): not doccano JSONL")
    return texts, problems


_ORIGIN = re.compile(rf"{ORIGIN_FLAG}:(?:{'|'.join(TOOLS)}):[a-z0-9._@-]{{1,{MAX_WHO}}}")


def is_origin_flag(flag: str) -> bool:
    """Whether ``flag`` names an annotator's work (``origin_flag``'s form)."""
    return _ORIGIN.fullmatch(flag) is not None
