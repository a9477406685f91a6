"""What each question family walks: one table, shared by every planner (offline rules or
a model), so a question reads the same graph whichever planner understood it.

Relations the vocabulary does not hold are left out of the walks (a family whose
relations are all missing walks nothing, and its answer is a checked absence).
Symmetric relations are walked both ways, whatever the table says.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..types import RelationSpec
from .types import Walk

CONNECTION_HOPS = 3  # a shortest path's first bound; refinement adds one hop per round
TRANSITIVE_HOPS = 1  # the first walk of a transitive family; refinement goes on from there

# family -> (walks, transitive); the hop bound follows from transitivity below.
TABLE: dict[str, tuple[tuple[Walk, ...], bool]] = {
    "prerequisites": ((Walk("prerequisite", "in"), Walk("builds_on", "out")), True),
    "dependents": ((Walk("prerequisite", "out"), Walk("builds_on", "in")), True),
    "parts": ((Walk("part_of", "in"),), True),
    "wholes": ((Walk("part_of", "out"),), True),
    "contrasts": ((Walk("contrasts_with", "both"),), False),
    "uses": ((Walk("applies_to", "out"),), False),
}


def walks_for(
    family: str, relation: str | None, vocabulary: Sequence[RelationSpec]
) -> tuple[tuple[Walk, ...], int, bool]:
    """The walks, the first walk's hop bound, and whether the family is transitive.

    ``relation`` is the relation a yes/no question asks about (ignored otherwise).
    Raises ``ValueError`` for a family that is not one of ``FAMILIES``.
    """
    specs = {spec.key: spec for spec in vocabulary}
    if family == "connection":
        walks = tuple(Walk(key, "both") for key in sorted(specs))
        return walks, CONNECTION_HOPS, True
    if family == "yes_no":
        return _yes_no(relation, specs)
    if family not in TABLE:
        raise ValueError(f"unknown question family {family!r}")
    walks, transitive = TABLE[family]
    kept = tuple(_oriented(w, specs[w.relation]) for w in walks if w.relation in specs)
    return kept, TRANSITIVE_HOPS if transitive else 1, transitive


def _yes_no(
    relation: str | None, specs: dict[str, RelationSpec]
) -> tuple[tuple[Walk, ...], int, bool]:
    spec = specs.get(relation or "")
    if spec is None:
        return (), 1, False
    walks = [_oriented(Walk(spec.key, "out"), spec)]
    if spec.key == "prerequisite" and "builds_on" in specs:
        # "A is a prerequisite for B" also holds when B builds on A.
        walks.append(_oriented(Walk("builds_on", "in"), specs["builds_on"]))
    # Only an acyclic relation chains into a claim ("A before B before C: A before C").
    transitive = spec.acyclic and not spec.symmetric
    return tuple(walks), CONNECTION_HOPS if transitive else 1, transitive


def _oriented(walk: Walk, spec: RelationSpec) -> Walk:
    return Walk(walk.relation, "both") if spec.symmetric else walk
