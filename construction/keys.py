"""Identity keys shared by the loop and the Django side, so both agree what "the same" is.

An endpoint key is ``c<id>`` for a concept in the graph and ``n:<name key>`` for a
concept that is only proposed. Two proposals with the same dedup key ask for the same
change; the queue holds at most one of them open.
"""

from __future__ import annotations

from typing import TypeVar

from .text import name_key

E = TypeVar("E")
R = TypeVar("R")


def concept_key(concept_id: int) -> str:
    return f"c{concept_id}"


def new_concept_key(name: str) -> str:
    return f"n:{name_key(name)}"


def concept_id_of(key: str) -> int | None:
    if key.startswith("c") and key[1:].isdigit():
        return int(key[1:])
    return None


def fact_forms(
    source: E, relation: R, target: E, *, inverse: R | None, symmetric: bool
) -> tuple[tuple[E, R, E], ...]:
    """The one rule of which (source, relation, target) triples state the same fact: the
    triple itself; the ends swapped under the relation's inverse ("A prerequisite B" is
    "B builds_on A"); and, a symmetric relation being its own inverse, the ends swapped
    under the relation itself. The triple comes first. Ends and relations are whatever
    the caller keys them by (ids, keys), as long as ``inverse`` is given the same way;
    ``None`` (or "") when the relation declares no inverse.

    ``kgreview.graph.rules.fact_keys`` reads it for the graph's rows, the construction
    loop for its drafts (``edge_dedup_keys``); nothing else decides what a twin is.
    """
    own = (source, relation, target)
    other = relation if symmetric else inverse
    if other is None or other == "" or source == target:
        return (own,)
    return own, (target, other, source)


def edge_dedup_keys(
    source_key: str, relation: str, target_key: str, *, symmetric: bool, inverse: str = ""
) -> tuple[str, ...]:
    """The dedup keys under which the same fact may be queued: the proposal's own
    (``edge_dedup_key``) first, then its inverse twin's (``fact_forms``). A symmetric
    relation orders its ends, so it has one key."""
    out: list[str] = []
    for s, r, t in fact_forms(
        source_key, relation, target_key, inverse=inverse or None, symmetric=symmetric
    ):
        key = edge_dedup_key(s, r, t, symmetric=symmetric)
        if key not in out:
            out.append(key)
    return tuple(out)


def edge_dedup_key(source_key: str, relation: str, target_key: str, *, symmetric: bool) -> str:
    if symmetric and target_key < source_key:
        source_key, target_key = target_key, source_key
    return f"add_edge:{source_key}|{relation}|{target_key}"


def concept_dedup_key(name: str) -> str:
    return f"add_concept:{name_key(name)}"


def alias_dedup_key(concept_id: int, alias: str) -> str:
    """Giving one concept one more name, however the name is spelt."""
    return f"add_alias:{concept_id}|{name_key(alias)}"


def invalidation_dedup_key(edge_id: int) -> str:
    return f"invalidate_edge:{edge_id}"


def merge_dedup_key(a: int, b: int) -> str:
    """Merging a into b and b into a ask for the same change: the pair, smaller id first."""
    return f"merge_concepts:{min(a, b)}|{max(a, b)}"


def relation_type_dedup_key(key: str) -> str:
    return f"add_relation_type:{key}"


def relation_key(label: str) -> str:
    """A free-form relation label as a snake_case key ("Is Part Of" -> "is_part_of")."""
    out = []
    for ch in label.strip().casefold():
        out.append(ch if ch.isalnum() else "_")
    return "_".join(part for part in "".join(out).split("_") if part)
