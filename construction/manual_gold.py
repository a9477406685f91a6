"""The gold of a manual kept in ``evaluation/manuals/<name>/``: its index terms
(``terms.jsonl``) and the hand labels of proposals (``labels.jsonl``).

Every name is compared by ``construction.text.name_keys``, the keys the app itself uses,
computed here when the files are read. A labelled edge is found again after a re-run by
its page, its quote (``construction.quotes.quote_key``), both names and its relation;
a labelled concept name by its name. Bad lines are refused with the file, line and
reason in words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .quotes import quote_key
from .text import name_key, name_keys

NAME_JUDGEMENTS = ("sensible", "generic", "junk")
EDGE_JUDGEMENTS = ("quote_supports", "names_are_terms", "relation_right")


class GoldError(ValueError):
    """A line of a gold file that cannot be read; the message says where and why."""


def keys_of(names: Iterable[str]) -> frozenset[str]:
    return frozenset(k for name in names for k in name_keys(name) if k)


@dataclass(frozen=True)
class IndexTerm:
    term: str
    keys: frozenset[str]  # the term's own names: what finds it
    compound_keys: frozenset[str]  # names its sub-entries compose with it
    pages: frozenset[str]  # page ids (source slugs) it points at


@dataclass(frozen=True)
class TermGold:
    terms: tuple[IndexTerm, ...]
    keys: frozenset[str]  # every key of every term, compounds included

    def is_term(self, name: str) -> bool:
        """Whether a name is one of the index's terms (or a compound of one)."""
        return any(k in self.keys for k in name_keys(name))

    def on_pages(self, pages: Iterable[str]) -> list[IndexTerm]:
        """The terms that point at one of these pages."""
        wanted = set(pages)
        return [t for t in self.terms if t.pages & wanted]


def _rows(lines: Iterable[str], where: str) -> Iterable[tuple[int, dict]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise GoldError(f"{where}:{number}: not JSON ({exc})") from None
        if not isinstance(row, dict):
            raise GoldError(f"{where}:{number}: a line must be a JSON object")
        yield number, row


def _strings(row: dict, key: str, where: str) -> list[str]:
    value = row.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise GoldError(f"{where}: {key!r} must be a list of strings")
    return value


def parse_terms(
    lines: Iterable[str], *, where: str = "terms.jsonl", page_id: Callable[[str], str] = str
) -> TermGold:
    """The index terms; ``page_id`` turns a page's file name into the id proposals use."""
    terms = []
    for number, row in _rows(lines, where):
        here = f"{where}:{number}"
        term = row.get("term")
        if not isinstance(term, str) or not term.strip():
            raise GoldError(f"{here}: every line needs a non-empty 'term'")
        keys = keys_of([term, *_strings(row, "names", here)])
        if not keys:
            raise GoldError(f"{here}: the term {term!r} has no name to match on")
        terms.append(
            IndexTerm(
                term=term,
                keys=keys,
                compound_keys=keys_of(_strings(row, "compounds", here)),
                pages=frozenset(page_id(p) for p in _strings(row, "pages", here)),
            )
        )
    if not terms:
        raise GoldError(f"{where} holds no index terms")
    every = frozenset().union(*(t.keys | t.compound_keys for t in terms))
    return TermGold(terms=tuple(terms), keys=every)


# --- Labels ---------------------------------------------------------------------------


def edge_key(
    page: str, quote: str, source: str, relation: str, target: str, *, symmetric: bool
) -> tuple[str, str, str, str, str]:
    """What finds a labelled edge again: page, quote, names and relation, compared as the
    app compares them; a symmetric relation's ends in either order."""
    ends = (name_key(source), name_key(target))
    if symmetric:
        ends = (min(ends), max(ends))
    return (page, quote_key(quote), ends[0], relation, ends[1])


@dataclass
class EdgeLabel:
    page: str
    quote: str
    source: str
    relation: str
    target: str
    quote_supports: bool | None = None
    names_are_terms: bool | None = None
    relation_right: bool | None = None
    note: str = ""
    extra: dict = field(default_factory=dict)  # context kept for the labeller (gate, id)

    @property
    def judged(self) -> bool:
        return None not in (self.quote_supports, self.names_are_terms, self.relation_right)

    @property
    def fully_right(self) -> bool:
        return bool(self.quote_supports and self.names_are_terms and self.relation_right)

    def key(self, symmetric: frozenset[str]) -> tuple[str, ...]:
        return edge_key(
            self.page,
            self.quote,
            self.source,
            self.relation,
            self.target,
            symmetric=self.relation in symmetric,
        )

    def as_json(self) -> dict:
        row = {"kind": "edge", "page": self.page, "quote": self.quote, "source": self.source}
        row |= {"relation": self.relation, "target": self.target}
        row |= {j: getattr(self, j) for j in EDGE_JUDGEMENTS}
        return row | {"note": self.note} | self.extra


@dataclass
class NameLabel:
    name: str
    judgement: str | None = None
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return name_key(self.name)

    def as_json(self) -> dict:
        row = {"kind": "name", "name": self.name, "judgement": self.judgement}
        return row | {"note": self.note} | self.extra


@dataclass
class Labels:
    edges: list[EdgeLabel] = field(default_factory=list)
    names: list[NameLabel] = field(default_factory=list)

    def rows(self) -> list[dict]:
        return [e.as_json() for e in self.edges] + [n.as_json() for n in self.names]


EDGE_FIELDS = ("page", "quote", "source", "relation", "target")


def _edge_label(row: dict, here: str) -> EdgeLabel:
    for name in EDGE_FIELDS:
        if not isinstance(row.get(name), str) or not row[name].strip():
            raise GoldError(f"{here}: an edge label needs a non-empty {name!r}")
    verdicts = {}
    for name in EDGE_JUDGEMENTS:
        value = row.get(name)
        if value is not None and not isinstance(value, bool):
            raise GoldError(f"{here}: {name!r} must be true, false or null, not {value!r}")
        verdicts[name] = value
    known = {"kind", "note", *EDGE_FIELDS, *EDGE_JUDGEMENTS}
    return EdgeLabel(
        page=row["page"],
        quote=row["quote"],
        source=row["source"],
        relation=row["relation"],
        target=row["target"],
        quote_supports=verdicts["quote_supports"],
        names_are_terms=verdicts["names_are_terms"],
        relation_right=verdicts["relation_right"],
        note=str(row.get("note") or ""),
        extra={k: v for k, v in row.items() if k not in known},
    )


def _name_label(row: dict, here: str) -> NameLabel:
    if not isinstance(row.get("name"), str) or not name_key(row["name"]):
        raise GoldError(f"{here}: a name label needs a 'name' with letters or digits")
    judgement = row.get("judgement")
    if judgement is not None and judgement not in NAME_JUDGEMENTS:
        raise GoldError(
            f"{here}: 'judgement' must be one of {', '.join(NAME_JUDGEMENTS)} or null, "
            f"not {judgement!r}"
        )
    known = {"kind", "name", "judgement", "note"}
    return NameLabel(
        name=row["name"],
        judgement=judgement,
        note=str(row.get("note") or ""),
        extra={k: v for k, v in row.items() if k not in known},
    )


def parse_labels(
    lines: Iterable[str], *, symmetric: frozenset[str], where: str = "labels.jsonl"
) -> Labels:
    """Edge and name labels; one label per edge or per name as written (a second one is
    refused)."""
    labels = Labels()
    seen: dict[object, int] = {}
    for number, row in _rows(lines, where):
        here = f"{where}:{number}"
        kind = row.get("kind")
        key: object
        if kind == "edge":
            edge = _edge_label(row, here)
            labels.edges.append(edge)
            key = edge.key(symmetric)
        elif kind == "name":
            name = _name_label(row, here)
            labels.names.append(name)
            key = ("name", name.name)  # judged as written: each spelling once
        else:
            raise GoldError(f'{here}: \'kind\' must be "edge" or "name", not {kind!r}')
        if key in seen:
            raise GoldError(f"{here}: labels the same {kind} as line {seen[key]}")
        seen[key] = number
    return labels
