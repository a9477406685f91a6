"""Checking a set of edge and concept proposals before it is accepted: which edges the
set takes, what each concept proposal stands for, and which edges would be refused, in
the words of the single path (the graph's rule book, ``graph.rules``).

``edge_set`` calls these stages in order; none of them writes (they lock the concepts
at the ends). What they read they read once for the whole batch (one read of the
relations, of the concepts at the ends, of the quoted revisions, of the edges already
holding the same facts).
"""

from __future__ import annotations

from dataclasses import dataclass

from kgreview.core.errors import DomainError
from kgreview.graph import bulk as graph_bulk
from kgreview.graph import pattern_book, rules
from kgreview.graph import selectors as graph_selectors
from kgreview.graph.models import Concept, ConceptType, RelationType, SourceRevision
from kgreview.graph.pattern_book import PatternBook
from kgreview.review.decide.ends import retired_name_words
from kgreview.review.decide.outcome import stale
from kgreview.review.models import Proposal

ROLES = ("source", "target")
EDGE = "add_edge"  # the set's edges; its other proposals propose concepts


def type_refusal(type_key: str, types: dict[str, ConceptType] | None = None) -> DomainError | None:
    """Why the new concept cannot be given the type it proposes (missing or retired), in
    the service's words; ``types``: the vocabulary by key, when the caller read it."""
    if not type_key:
        return None
    if types is None:
        types = {t.key: t for t in ConceptType.objects.filter(key=type_key)}
    found = types.get(type_key)
    return rules.no_type(type_key) if found is None else rules.type_active_refusal(found)


def end_gone_words(name: str, needed: Proposal) -> str:
    """Why an edge's end cannot stand for the concept proposal it waits for: that was
    decided without leaving a concept for the name."""
    return (
        f'The concept "{name}" was {needed.status} (proposal #{needed.pk}); '
        "edit the proposal to use another concept, or reject it."
    )


def one_by_one(p: Proposal) -> bool:
    """Whether the open proposal ``p`` is left to the one-by-one path: an edge with an
    end that names neither a concept nor a proposal (a bare name, resolved one by one)."""
    return p.kind == EDGE and any(
        not p.payload[r].get("concept_id") and not p.payload[r].get("proposal_id") for r in ROLES
    )


def waiting_on(p: Proposal) -> list[int]:
    """The concept proposals the edge proposal ``p`` waits for (an end with no concept)."""
    return [p.payload[r]["proposal_id"] for r in ROLES if not p.payload[r].get("concept_id")]


# An end of an edge in the batch: a concept id, or a concept to create ("new", proposal id).
End = int | tuple[str, int]


class Ends:
    """What each concept proposal of the batch stands for: a concept id, a concept to
    create (``("new", proposal id)``), or a refusal in words. Filled as the batch is
    checked, then as its concepts are made."""

    def __init__(self) -> None:
        self.stands: dict[int, End] = {}
        self.refused: dict[int, str] = {}
        # proposal -> names to add to the existing concept it is accepted as
        self.reuse_aliases: dict[int, list[str]] = {}
        self.reactivate: dict[int, int] = {}  # proposal -> its own retired concept

    def concept_id(self, pk: int) -> int:
        """The concept proposal ``pk`` stands for, once the batch's new concepts are made."""
        stands = self.stands[pk]
        if not isinstance(stands, int):
            raise RuntimeError(f"Proposal #{pk} stands for a concept not made yet.")
        return stands

    def resolve(self, end: End) -> int:
        """The concept an edge's end is, once the batch's new concepts are made."""
        return self.concept_id(end[1]) if isinstance(end, tuple) else end


@dataclass(frozen=True)
class Gathered:
    """The open proposals the set takes, and every concept proposal in play: the batch's
    own and the ones its edges wait for, each with what it stands for."""

    fast: list[Proposal]
    edges: list[Proposal]  # the add_edge proposals among ``fast``
    concepts: list[Proposal]  # the add_concept proposals among ``fast``
    needed: dict[int, Proposal]  # every concept proposal in play, by id
    ends: Ends
    types: dict[str, ConceptType]  # the types the new concepts are to be given, by key


def gather(fast: list[Proposal], proposals: dict[int, Proposal], result) -> Gathered:
    """Gather the concept proposals the edges need (locked by the driver with the batch),
    say what each stands for, and refuse the batch's concept proposals that cannot be
    accepted."""
    edges = [p for p in fast if p.kind == EDGE]
    concepts = [p for p in fast if p.kind != EDGE]
    wanted = {pid for p in edges for pid in waiting_on(p)}
    needed = {p.pk: p for p in concepts}
    # The driver locked them with the batch (``lock_proposals(..., needed=True)``); one
    # missing there does not exist, and the edge waiting for it is refused in words.
    needed.update({pk: proposals[pk] for pk in wanted if pk in proposals})
    ends = _resolve_concept_proposals(needed)
    types = _check_types(needed, ends)
    for p in concepts:
        if p.pk in ends.refused:
            result.refuse(p.pk, stale(ends.refused[p.pk]))
    return Gathered(
        fast=fast, edges=edges, concepts=concepts, needed=needed, ends=ends, types=types
    )


def _check_types(needed: dict[int, Proposal], ends: Ends) -> dict[str, ConceptType]:
    """Read the types the new concepts are to be given (one query, when any is), and
    refuse, in the single path's words, a concept proposal whose type is missing or
    retired."""
    new = [
        p
        for p in needed.values()
        if ends.stands.get(p.pk) == ("new", p.pk) and p.payload.get("type_key")
    ]
    if not new:
        return {}
    types = {
        t.key: t for t in ConceptType.objects.filter(key__in={p.payload["type_key"] for p in new})
    }
    for p in new:
        refusal = type_refusal(p.payload["type_key"], types)
        if refusal is not None:
            del ends.stands[p.pk]
            ends.refused[p.pk] = str(refusal)
    return types


def _resolve_concept_proposals(needed: dict[int, Proposal]) -> Ends:
    ends = Ends()
    owners = graph_selectors.concepts_for_names(p.payload["name"] for p in needed.values())
    for p in needed.values():
        owner = owners.get(p.payload["name"])
        if p.is_open:
            _resolve_open(p, owner, ends)
        else:
            _resolve_decided(p, owner, ends)
    return ends


def _resolve_open(p: Proposal, owner: Concept | None, ends: Ends) -> None:
    """An open concept proposal: a new concept, the concept owning its name (which gains
    its names), or its own retired concept brought back."""
    name = p.payload["name"]
    if owner is None:
        ends.stands[p.pk] = ("new", p.pk)
    elif owner.status != Concept.Status.RETIRED:
        ends.stands[p.pk] = owner.pk
        ends.reuse_aliases[p.pk] = [name, *p.payload.get("aliases", [])]
    elif p.concept_id == owner.pk:
        ends.stands[p.pk] = owner.pk
        ends.reactivate[p.pk] = owner.pk
    else:
        ends.refused[p.pk] = retired_name_words(name, owner)


def _resolve_decided(p: Proposal, owner: Concept | None, ends: Ends) -> None:
    """A decided concept proposal: the concept it was linked to (or that owns its name),
    while that concept is active."""
    concept = None
    if p.concept_id:
        concept = Concept.objects.filter(pk=p.concept_id).first()
    concept = concept or owner
    if concept is None:
        ends.refused[p.pk] = end_gone_words(p.payload["name"], p)
    elif not concept.is_active:
        ends.refused[p.pk] = rules.inactive_words(concept)
    else:
        ends.stands[p.pk] = concept.pk


# An edge the batch may write: the proposal, its two ends and its relation.
Planned = tuple[Proposal, End, End, RelationType]


@dataclass(frozen=True)
class Lookups:
    """What checking the edges reads once for the whole batch. ``concepts`` grows as the
    batch makes and brings back concepts."""

    relations: dict[int, RelationType]
    by_key: dict[str, RelationType]
    concepts: dict[int, Concept]
    revisions: dict[int, SourceRevision]
    patterns: PatternBook  # the edges' relations' patterns and the type tree, read once


def read_lookups(g: Gathered) -> Lookups:
    """The relations, the concepts at the ends (locked), and the quoted revisions (each
    read once, not once per proposal quoting it, and set on the proposals)."""
    relations = {r.pk: r for r in RelationType.objects.all()}
    concept_ids = {
        p.payload[r]["concept_id"] for p in g.edges for r in ROLES if p.payload[r].get("concept_id")
    } | {v for v in g.ends.stands.values() if isinstance(v, int)}
    # Locked, in id order: the ends must stay active concepts until the edges are in.
    concepts = {
        c.pk: c
        for c in Concept.objects.select_for_update(no_key=True)
        .filter(pk__in=concept_ids)
        .order_by("pk")
    }
    revisions = SourceRevision.objects.select_related("source").in_bulk(
        {p.evidence_revision_id for p in g.fast if p.evidence_revision_id}
    )
    for p in g.fast:
        if p.evidence_revision_id:
            p.evidence_revision = revisions[p.evidence_revision_id]
    by_key = {r.key: r for r in relations.values()}
    asked = {p.relation_id or getattr(by_key.get(p.payload["relation"]), "pk", 0) for p in g.edges}
    return Lookups(
        relations=relations,
        by_key=by_key,
        concepts=concepts,
        revisions=revisions,
        patterns=pattern_book.load(asked - {0}),
    )


def check_edges(g: Gathered, look: Lookups, result) -> list[Planned]:
    """Check every edge without writing (relation, ends, loops, evidence); refuse the
    ones that fail, in words, and return the others."""
    planned: list[Planned] = []
    for p in g.edges:
        relation, words = _relation_of(p, look)
        ids, end_words = _edge_ends(p, g.ends)
        words = words or end_words or _edge_refusal(p, ids, look)
        if not words and relation is not None:
            words = _pattern_refusal(p, ids, relation, g, look)
        source, target = ids
        if words or relation is None or source is None or target is None:
            result.refuse(p.pk, words)  # each missing part gave its words above
        else:
            planned.append((p, source, target, relation))
    return planned


def _relation_of(p: Proposal, look: Lookups) -> tuple[RelationType | None, str]:
    relation = look.relations.get(p.relation_id) if p.relation_id else None
    relation = relation or look.by_key.get(p.payload["relation"])
    if relation is None:
        return None, str(rules.no_relation(p.payload["relation"]))
    refusal = rules.relation_refusal(relation)
    return relation, stale(str(refusal)) if refusal is not None else ""


def _edge_ends(p: Proposal, ends: Ends) -> tuple[list[End | None], str]:
    """The two ends of an edge proposal, None where the concept proposal it waits for was
    refused (or does not exist), with the words of the first such refusal."""
    ids: list[End | None] = []
    words = ""
    for role in ROLES:
        end = p.payload[role]
        if end.get("concept_id"):
            ids.append(end["concept_id"])
            continue
        pid = end["proposal_id"]
        stands = ends.stands.get(pid)
        if stands is None:
            words = words or stale(ends.refused.get(pid, f"There is no proposal #{pid}."))
        ids.append(stands)
    return ids, words


def _edge_refusal(p: Proposal, ids: list[End | None], look: Lookups) -> str:
    """Why an edge with a live relation and both ends known is refused, or "" if not:
    an end no longer an active concept, a loop, or evidence no longer in its revision."""
    for cid in ids:
        if isinstance(cid, int):
            refusal = rules.end_refusal(look.concepts.get(cid), cid)
            if refusal is not None:
                return stale(str(refusal))
    if ids[0] == ids[1]:
        return str(rules.ends_meet())
    evidence = rules.evidence_of(p)  # its revision read once for the batch (``read_lookups``)
    if evidence is not None:
        refusal = rules.evidence_refusal(*evidence)
        if refusal is not None:
            return stale(str(refusal))
    return ""


def _pattern_refusal(
    p: Proposal, ids: list[End | None], relation: RelationType, g: Gathered, look: Lookups
) -> str:
    """The rule book's pattern refusal of an edge whose ends have the types they have,
    or will be given by the concept proposals they wait for, or "" if it fits."""
    if not look.patterns.of(relation.pk):
        return ""
    typed: list[tuple[str, int | None]] = []
    for end in ids:
        if isinstance(end, int):
            concept = look.concepts[end]
            typed.append((concept.name, concept.type_id))
        elif end is not None:
            wanted = g.needed[end[1]].payload
            typed.append((wanted["name"], look.patterns.type_id(wanted.get("type_key", ""))))
    (source, source_type), (target, target_type) = typed
    refusal = look.patterns.refusal(relation, source, source_type, target, target_type)
    return stale(str(refusal)) if refusal is not None else ""


def drop_repeats(planned: list[Planned], look: Lookups, result) -> list[Planned]:
    """Refuse the edges the graph already holds and the repeats within the batch; return
    the edges left to write."""
    known = [(s, r, t) for _, s, t, r in planned if isinstance(s, int) and isinstance(t, int)]
    held = graph_bulk.facts_held(known)
    seen: dict[tuple, tuple[int, tuple]] = {}
    survivors = []
    for p, s, t, relation in planned:
        fact = (s, relation.pk, t)
        facts = rules.fact_keys(s, relation, t)
        hit = next((k for k in facts if k in held), None)
        if hit is not None and isinstance(s, int) and isinstance(t, int):
            names = look.concepts[s].name, look.concepts[t].name
            edge_id, holder = held[hit]
            refusal = rules.duplicate_refusal(relation, *names, edge_id, held_relation_id=holder)
            result.refuse(p.pk, stale(str(refusal)))
            continue
        twin = next((seen[k] for k in facts if k in seen), None)
        if twin is not None:
            words = "edge" if twin[1] == fact else "fact, stated the other way round,"
            result.refuse(p.pk, f"The same {words} is accepted earlier in this batch (#{twin[0]}).")
            continue
        seen.update(dict.fromkeys(facts, (p.pk, fact)))
        survivors.append((p, s, t, relation))
    return survivors
