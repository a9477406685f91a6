"""Precision and recall of proposed edges against hand-labelled gold edges.

A proposal counts as correct when a gold edge of the same lesson has the same relation
(a prerequisite A→B also in its inverse form "B builds on A"; symmetric relations in
either direction) and both ends name the same concept, by any of its names.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .text import name_keys

SYMMETRIC = frozenset({"contrasts_with", "related"})
INVERSES = {("prerequisite", "builds_on"), ("builds_on", "prerequisite")}


@dataclass(frozen=True)
class GoldEdge:
    lesson: str
    source: str
    relation: str
    target: str


@dataclass(frozen=True)
class ProposedEdge:
    id: int
    lesson: str
    source_names: tuple[str, ...]
    relation: str
    target_names: tuple[str, ...]
    status: str = "pending"


def concept_keys(names: Iterable[str]) -> frozenset[str]:
    """Every key a concept answers to: each name, and both halves of "Long (ABBR)"."""
    found = set()
    for name in names:
        found.update(name_keys(name))
    return frozenset(found)


def matches(gold: GoldEdge, proposed: ProposedEdge) -> bool:
    g_src, g_dst = concept_keys([gold.source]), concept_keys([gold.target])
    p_src, p_dst = concept_keys(proposed.source_names), concept_keys(proposed.target_names)
    forward = bool(g_src & p_src) and bool(g_dst & p_dst)
    backward = bool(g_src & p_dst) and bool(g_dst & p_src)
    if gold.relation == proposed.relation:
        return forward or (gold.relation in SYMMETRIC and backward)
    if (gold.relation, proposed.relation) in INVERSES:
        return backward
    return False


@dataclass
class Report:
    proposals: int = 0
    correct: int = 0
    gold: int = 0
    found: int = 0
    per_relation: dict[str, dict[str, int]] = field(default_factory=dict)
    per_lesson: dict[str, dict[str, int]] = field(default_factory=dict)
    false_positives: list[ProposedEdge] = field(default_factory=list)
    misses: list[GoldEdge] = field(default_factory=list)

    @property
    def precision(self) -> float | None:
        return self.correct / self.proposals if self.proposals else None

    @property
    def recall(self) -> float | None:
        return self.found / self.gold if self.gold else None

    def as_json(self) -> dict:
        def ratio(a: int, b: int) -> float | None:
            return round(a / b, 3) if b else None

        return {
            "precision": None if self.precision is None else round(self.precision, 3),
            "recall": None if self.recall is None else round(self.recall, 3),
            "proposals": self.proposals,
            "correct": self.correct,
            "gold": self.gold,
            "found": self.found,
            "per_relation": {
                rel: {
                    **counts,
                    "precision": ratio(counts["correct"], counts["proposals"]),
                    "recall": ratio(counts["found"], counts["gold"]),
                }
                for rel, counts in sorted(self.per_relation.items())
            },
            "per_lesson": {
                lesson: {
                    **counts,
                    "precision": ratio(counts["correct"], counts["proposals"]),
                    "recall": ratio(counts["found"], counts["gold"]),
                }
                for lesson, counts in sorted(self.per_lesson.items())
            },
            "false_positives": [
                {
                    "id": p.id,
                    "lesson": p.lesson,
                    "source": p.source_names[0] if p.source_names else "",
                    "relation": p.relation,
                    "target": p.target_names[0] if p.target_names else "",
                }
                for p in self.false_positives
            ],
            "misses": [
                {"lesson": g.lesson, "source": g.source, "relation": g.relation, "target": g.target}
                for g in self.misses
            ],
        }


def _bump(table: dict[str, dict[str, int]], key: str, field_name: str) -> None:
    slot = table.setdefault(key, {"proposals": 0, "correct": 0, "gold": 0, "found": 0})
    slot[field_name] += 1


def evaluate(gold: Sequence[GoldEdge], proposed: Sequence[ProposedEdge]) -> Report:
    """Precision over proposals drafted from gold lessons; recall over gold edges.

    A proposal is judged against the gold of its own lesson (the gold lists everything
    that lesson states). A gold edge counts as found when the queue holds it, whichever
    lesson proposed it first: a fact stated in two lessons is proposed once, and the
    second lesson's candidate is dropped as a duplicate.
    """
    lessons = {g.lesson for g in gold}
    report = Report(gold=len(gold))
    by_lesson: dict[str, list[GoldEdge]] = defaultdict(list)
    for g in gold:
        by_lesson[g.lesson].append(g)
        _bump(report.per_relation, g.relation, "gold")
        _bump(report.per_lesson, g.lesson, "gold")
    found: set[GoldEdge] = set()
    for p in sorted(proposed, key=lambda x: x.id):
        if p.lesson not in lessons:
            continue
        report.proposals += 1
        _bump(report.per_relation, p.relation, "proposals")
        _bump(report.per_lesson, p.lesson, "proposals")
        hit = next((g for g in by_lesson[p.lesson] if matches(g, p)), None)
        if hit is None:
            report.false_positives.append(p)
            continue
        report.correct += 1
        _bump(report.per_relation, p.relation, "correct")
        _bump(report.per_lesson, p.lesson, "correct")
        if hit not in found:
            found.add(hit)
            report.found += 1
            _bump(report.per_relation, hit.relation, "found")
            _bump(report.per_lesson, hit.lesson, "found")
    for g in gold:
        if g in found:
            continue
        if any(matches(g, p) for p in proposed if p.lesson != g.lesson):
            found.add(g)
            report.found += 1
            _bump(report.per_relation, g.relation, "found")
            _bump(report.per_lesson, g.lesson, "found")
    report.misses = [g for g in gold if g not in found]
    return report
