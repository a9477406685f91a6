"""VERIFY: vocabulary, self-loops, evidence, gate, duplicates, contradictions, patterns.

Every check either lets a candidate through (with flags) or drops it with exactly one
reason code. A candidate whose ends' types break its relation's patterns is let through
flagged ``pattern_violation`` (held in the queue, never dropped: a curator may widen the
pattern, and accepting one verifies it again). Contradictions are looked for in active
edges, in open proposals, and in what this source already drafted, so a cycle closed
across two lessons is caught.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .cycles import find_chain
from .keys import edge_dedup_key, edge_dedup_keys, fact_forms, relation_key
from .protocols import GraphView
from .relations import normalise_label
from .types import Conflict, Link, Ontology, RelationSpec

MAX_CYCLE_DEPTH = 16
MAX_CYCLE_NODES = 5000

# Pairs of relations that cannot both hold between the same two concepts.
# (relation_a, relation_b, same_direction_only): builds_on and contrasts_with contradict
# in any direction; "A is a prerequisite for B" contradicts "A builds on B" (which puts B
# before A) only in the same direction.
OPPOSED: tuple[tuple[str, str, bool], ...] = (
    ("builds_on", "contrasts_with", False),
    ("part_of", "contrasts_with", False),
    ("prerequisite", "builds_on", True),
)


# Table entries for a relation's meaning (``normalise_label``) rather than its words.
MEANING = "meaning:"


def vocabulary_lookup(vocabulary: Sequence[RelationSpec]) -> dict[str, RelationSpec]:
    """Every way a relation may be named (key, label, verb) mapped to its spec, and the
    meaning of each of those names (``MEANING`` + ``normalise_label``), as discovery
    reads them."""
    table: dict[str, RelationSpec] = {}
    for spec in vocabulary:
        for label in (spec.key, spec.label, spec.verb):
            key = relation_key(label)
            if key:
                table.setdefault(key, spec)
    for spec in vocabulary:
        for label in (spec.key, spec.label, spec.verb):
            meaning = normalise_label(label) or relation_key(label)
            if meaning:
                table.setdefault(MEANING + meaning, spec)
    return table


def match_relation(label: str, table: dict[str, RelationSpec]) -> RelationSpec | None:
    key = relation_key(label)
    if key in table:
        return table[key]
    # "is_prerequisite_for" / "prerequisite_of" and similar phrasings of a known key.
    trimmed = key
    for prefix in ("is_a_", "is_an_", "is_", "are_"):
        if trimmed.startswith(prefix):
            trimmed = trimmed[len(prefix) :]
            break
    for suffix in ("_for", "_of", "_to", "_with", "_on"):
        if trimmed.endswith(suffix) and trimmed[: -len(suffix)] in table:
            return table[trimmed[: -len(suffix)]]
    if trimmed in table:
        return table[trimmed]
    # Another wording of a known meaning ("based on", "used for"): discovery treats these
    # as known, so they must not be dropped as unknown here either.
    meaning = normalise_label(label)
    return table.get(MEANING + meaning) if meaning else None


@dataclass
class SourceState:
    """What this source has drafted so far, consulted by later candidates of it."""

    links: list[Link] = field(default_factory=list)
    seen_keys: set[str] = field(default_factory=set)

    def successors(self, relation: str, keys: set[str]) -> list[Link]:
        return [x for x in self.links if x.relation == relation and x.source_key in keys]

    def predecessors(self, relation: str, keys: set[str]) -> list[Link]:
        return [x for x in self.links if x.relation == relation and x.target_key in keys]

    def between(self, a: str, b: str) -> list[Link]:
        return [x for x in self.links if {x.source_key, x.target_key} == {a, b}]


def find_cycle(
    *,
    graph: GraphView,
    state: SourceState,
    relation: str,
    source_key: str,
    target_key: str,
) -> list[Link] | None:
    """The chain target -> ... -> source that the candidate source -> target would close.

    ``cycles.find_chain`` from the target to the source over active edges, open
    proposals and this source's drafts, each frontier asked of the graph in one question.
    Bounded in depth and visited nodes; the check is advisory here (acceptance re-checks).
    """
    if source_key == target_key:
        return []

    def forward(frontier: list[str]) -> list[tuple[Link, str, str]]:
        step = graph.successors(relation, sorted(frontier)) + state.successors(
            relation, set(frontier)
        )
        return [(x, x.source_key, x.target_key) for x in sorted(step, key=_link_order)]

    def backward(frontier: list[str]) -> list[tuple[Link, str, str]]:
        step = graph.predecessors(relation, sorted(frontier)) + state.predecessors(
            relation, set(frontier)
        )
        return [(x, x.target_key, x.source_key) for x in sorted(step, key=_link_order)]

    chain, _ = find_chain(
        target_key,
        source_key,
        forward,
        backward,
        max_depth=MAX_CYCLE_DEPTH,
        max_nodes=MAX_CYCLE_NODES,
    )
    return chain


def _link_order(link: Link) -> tuple:
    return (link.source_key, link.target_key, link.kind, link.id)


def find_conflicts(
    *,
    graph: GraphView,
    state: SourceState,
    spec: RelationSpec,
    source_key: str,
    target_key: str,
    names: dict[str, str],
) -> tuple[Conflict, ...]:
    """Contradictions of ``source --spec--> target`` with the graph, the queue and this source."""
    conflicts: list[Conflict] = []
    if spec.acyclic:
        chain = find_cycle(
            graph=graph,
            state=state,
            relation=spec.key,
            source_key=source_key,
            target_key=target_key,
        )
        if chain is not None:
            path = [names.get(chain[0].source_key, chain[0].source_key)]
            path += [names.get(link.target_key, link.target_key) for link in chain]
            conflicts.append(
                Conflict(
                    rule="cycle",
                    links=tuple(chain),
                    explanation=(
                        f"Together with {len(chain)} existing or proposed {spec.key} "
                        f"link(s) this closes a cycle: {' → '.join(path)} → "
                        f"{names.get(target_key, target_key)}."
                    ),
                )
            )
    pair = graph.between(source_key, target_key) + state.between(source_key, target_key)
    for rel_a, rel_b, same_direction in OPPOSED:
        if spec.key not in (rel_a, rel_b):
            continue
        other = rel_b if spec.key == rel_a else rel_a
        for link in pair:
            if link.relation != other:
                continue
            if same_direction and (link.source_key, link.target_key) != (source_key, target_key):
                continue
            a = names.get(link.source_key, link.source_key)
            b = names.get(link.target_key, link.target_key)
            where = {
                "edge": f"edge #{link.id} in the graph",
                "proposal": f"proposal #{link.id} in the queue",
                "draft": "also drafted from this source",
            }[link.kind]
            conflicts.append(
                Conflict(
                    rule="opposed_relation",
                    links=(link,),
                    explanation=(
                        f'"{a}" {other.replace("_", " ")} "{b}" ({where}) contradicts '
                        f'"{spec.key.replace("_", " ")}" between the same two concepts.'
                    ),
                )
            )
    return tuple(conflicts)


def dedup_key_for(spec: RelationSpec, source_key: str, target_key: str) -> str:
    return edge_dedup_key(source_key, spec.key, target_key, symmetric=spec.symmetric)


def dedup_keys_for(spec: RelationSpec, source_key: str, target_key: str) -> tuple[str, ...]:
    """The dedup keys the same fact may be queued under: the draft's own first, then its
    inverse twin's (``keys.edge_dedup_keys``)."""
    return edge_dedup_keys(
        source_key, spec.key, target_key, symmetric=spec.symmetric, inverse=spec.inverse
    )


def is_existing_edge(
    *, graph: GraphView, spec: RelationSpec, source_key: str, target_key: str
) -> Link | None:
    """The graph's edge stating this fact (``keys.fact_forms``: itself, a symmetric one
    either way round, or its inverse twin), if any."""
    forms = fact_forms(
        source_key, spec.key, target_key, inverse=spec.inverse or None, symmetric=spec.symmetric
    )
    for link in graph.between(source_key, target_key):
        if link.kind == "edge" and (link.source_key, link.relation, link.target_key) in forms:
            return link
    return None


PATTERN_FLAG = "pattern_violation"


def pattern_break(
    ontology: Ontology, spec: RelationSpec, source_type: str, target_type: str
) -> str | None:
    """Why ``source -> target`` breaks its relation's patterns, in a few words, or None
    when it fits one (a subtype satisfies its parent; both ways round in a symmetric
    relation) or the relation has none. An untyped end ("") fits no pattern. The graph's
    rule book (``graph.rules.pattern_refusal``) says it again, in full, on acceptance."""
    pairs = ontology.patterns.get(spec.key, ())
    if not pairs:
        return None
    source_line, target_line = ontology.line(source_type), ontology.line(target_type)
    for domain, range_ in pairs:
        if domain in source_line and range_ in target_line:
            return None
        if spec.symmetric and domain in target_line and range_ in source_line:
            return None
    allowed = ", ".join(f"{d} → {r}" for d, r in pairs)
    ends = f"{source_type or 'untyped'} → {target_type or 'untyped'}"
    return f'"{spec.key}" allows {allowed}, not {ends}'
