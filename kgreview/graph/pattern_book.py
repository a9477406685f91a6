"""The relation patterns and the concept type tree, read once for a batch of edges, so the
rule book's ``pattern_refusal`` can be asked of each edge with no query of its own.

One query reads the active patterns of the relations asked (their types joined); a second
reads the type tree, only when some relation has a pattern. A batch of any size pays
those two at most; a batch of open relations pays the first alone.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from kgreview.core.errors import PatternViolation

from . import rules
from .models import Concept, ConceptType, RelationPattern, RelationType


@dataclass
class PatternBook:
    """The active patterns of some relations, by relation id, and every concept type."""

    patterns: dict[int, list[RelationPattern]] = field(default_factory=dict)
    types: dict[int, ConceptType] = field(default_factory=dict)
    _lines: dict[int, frozenset[int]] = field(default_factory=dict)

    def of(self, relation_id: int) -> list[RelationPattern]:
        """The relation's active patterns (none: it is open)."""
        return self.patterns.get(relation_id, [])

    def line(self, type_id: int) -> frozenset[int]:
        """The type and every type above it (a subtype satisfies its parent)."""
        if type_id not in self._lines:
            line, at = [type_id], self.types.get(type_id)
            while at is not None and at.parent_id is not None and at.parent_id not in line:
                line.append(at.parent_id)
                at = self.types.get(at.parent_id)
            self._lines[type_id] = frozenset(line)
        return self._lines[type_id]

    def type_id(self, key: str) -> int | None:
        """The id of the type ``key`` (None: no such type, or no key)."""
        if not key:
            return None
        return next((t.pk for t in self.types.values() if t.key == key), None)

    def type_of(self, type_id: int | None) -> ConceptType | None:
        return self.types.get(type_id) if type_id is not None else None

    def refusal(
        self,
        relation: RelationType,
        source_name: str,
        source_type_id: int | None,
        target_name: str,
        target_type_id: int | None,
    ) -> PatternViolation | None:
        """The rule book's ``pattern_refusal`` for an edge whose ends have these types."""
        patterns = self.of(relation.pk)
        if not patterns:
            return None
        ids = [i for i in (source_type_id, target_type_id) if i is not None]
        return rules.pattern_refusal(
            relation=relation,
            source_name=source_name,
            source_type=self.type_of(source_type_id),
            target_name=target_name,
            target_type=self.type_of(target_type_id),
            patterns=patterns,
            ancestors={i: self.line(i) for i in ids},
        )

    def concepts_refusal(
        self, relation: RelationType, source: Concept, target: Concept
    ) -> PatternViolation | None:
        """``refusal`` for an edge between two concept rows, as their types are now."""
        return self.refusal(relation, source.name, source.type_id, target.name, target.type_id)


EMPTY = PatternBook()


def load(relation_ids: Iterable[int] | None = None) -> PatternBook:
    """The active patterns of ``relation_ids`` (every relation's when ``None``) and, when
    there is any, the type tree: one query, or two."""
    rows = RelationPattern.objects.filter(active=True).select_related("domain", "range")
    if relation_ids is not None:
        ids: Collection[int] = set(relation_ids)
        if not ids:
            return PatternBook()
        rows = rows.filter(relation_id__in=ids)
    book = PatternBook()
    for p in rows.order_by("pk"):
        book.patterns.setdefault(p.relation_id, []).append(p)
    if book.patterns:
        book.types = ConceptType.objects.in_bulk()
    return book


def pattern_overview() -> list[tuple[RelationType, list[RelationPattern]]]:
    """Every relation (active ones first, by key) with its patterns, active ones first,
    for the Ontology page; a relation with no active pattern is open. Two queries."""
    patterns: dict[int, list[RelationPattern]] = {}
    for p in RelationPattern.objects.select_related("domain", "range").order_by(
        "-active", "domain__key", "range__key", "pk"
    ):
        patterns.setdefault(p.relation_id, []).append(p)
    return [
        (relation, patterns.get(relation.pk, []))
        for relation in RelationType.objects.order_by("-active", "key")
    ]
