"""Checking a bulk accept before it writes: which proposals the set can take, what each
concept proposal stands for, and which edges would be refused, in the words of
``decisions``.

``bulk_accept`` calls these stages in order; none of them writes (they lock the
concept proposals needed and the concepts at the ends). What they read they
read once for the whole batch (one locking read of the concept proposals the edges need,
one read of the relations, of the concepts at the ends, of the quoted revisions, of the
edges already holding the same facts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.utils import timezone

from kgreview.graph import selectors as graph_selectors
from kgreview.graph import services as graph
from kgreview.graph.models import Concept, Edge, RelationType, SourceRevision

from .decisions import can_decide_kind
from .ends import retired_name_words
from .kinds import kind_of
from .models import Proposal
from .services import lock_proposals

if TYPE_CHECKING:
    from django.contrib.auth.models import User

ROLES = ("source", "target")


def stale(words: str) -> str:
    """A refusal because the graph changed since the proposal was made."""
    return f"Cannot apply it as it stands: {words}"


def _already(proposal: Proposal, names: dict[int, str]) -> str:
    when = timezone.localtime(proposal.decided_at).strftime("%Y-%m-%d %H:%M")
    who = "the system"
    if proposal.decided_by_id is not None:
        who = names.get(proposal.decided_by_id, who)
    return f"Proposal #{proposal.pk} was already {proposal.status} by {who} at {when}."


def _user_names(proposals) -> dict[int, str]:
    ids = {p.decided_by_id for p in proposals if p.decided_by_id}
    if not ids:
        return {}
    User = get_user_model()
    return dict(User.objects.filter(pk__in=ids).values_list("pk", User.USERNAME_FIELD))


def screen(ids, proposals, result, *, acting_user: User) -> list[Proposal]:
    """Refuse what cannot be decided at all; return the open proposals, in the given order."""
    closed = [p for p in proposals.values() if not p.is_open]
    names = _user_names(closed)
    out = []
    for pid in ids:
        p = proposals.get(pid)
        if p is None:
            result.refuse(pid, f"There is no proposal #{pid}.")
        elif not p.is_open:
            result.refuse(pid, _already(p, names))
        elif not can_decide_kind(acting_user, p.kind):
            result.refuse(pid, f"Only curators decide {p.get_kind_display().lower()} proposals.")
        else:
            out.append(p)
    return out


def one_by_one(p: Proposal) -> bool:
    """Whether the open proposal ``p`` is left to the one-by-one path: a kind not decided
    as a set, or an edge with an end that names neither a concept nor a proposal."""
    if not kind_of(p).decided_as_a_set:
        return True
    return p.kind == "add_edge" and any(
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


def gather(fast: list[Proposal], proposals: dict[int, Proposal], result) -> Gathered:
    """Lock the concept proposals the edges need (after the batch's own rows), say what
    each stands for, and refuse the batch's concept proposals that cannot be accepted."""
    edges = [p for p in fast if p.kind == "add_edge"]
    concepts = [p for p in fast if p.kind == "add_concept"]
    wanted = {pid for p in edges for pid in waiting_on(p)}
    needed = {p.pk: p for p in concepts}
    needed.update(lock_proposals(wanted - set(proposals)))
    needed.update({pk: proposals[pk] for pk in wanted if pk in proposals})
    ends = _resolve_concept_proposals(needed)
    for p in concepts:
        if p.pk in ends.refused:
            result.refuse(p.pk, stale(ends.refused[p.pk]))
    return Gathered(fast=fast, edges=edges, concepts=concepts, needed=needed, ends=ends)


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
        ends.refused[p.pk] = (
            f'The concept "{p.payload["name"]}" was {p.status} (proposal #{p.pk}); '
            "edit the proposal to use another concept, or reject it."
        )
    elif not concept.is_active:
        ends.refused[p.pk] = graph.inactive_words(concept)
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
    return Lookups(relations=relations, by_key=by_key, concepts=concepts, revisions=revisions)


def check_edges(g: Gathered, look: Lookups, result) -> list[Planned]:
    """Check every edge without writing (relation, ends, loops, evidence); refuse the
    ones that fail, in words, and return the others."""
    planned: list[Planned] = []
    for p in g.edges:
        relation, words = _relation_of(p, look)
        ids, end_words = _edge_ends(p, g.ends)
        words = words or end_words or _edge_refusal(p, ids, look)
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
        return None, f'The relation "{p.payload["relation"]}" does not exist.'
    if not relation.active:
        return relation, stale(
            f'The relation "{relation.key}" was retired; choose an active relation.'
        )
    return relation, ""


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
            concept = look.concepts.get(cid)
            if concept is None:
                return stale(f"There is no concept #{cid}.")
            if not concept.is_active:
                return stale(graph.inactive_words(concept))
    if ids[0] == ids[1]:
        return "Both ends are now the same concept; an edge cannot loop."
    if p.evidence_revision_id:
        revision = look.revisions[p.evidence_revision_id]
        if revision.text[p.evidence_start : p.evidence_end] != p.evidence_quote:
            return stale(
                f"The quoted evidence does not match revision {revision.number} of "
                f"{revision.source.slug} at {p.evidence_start}..{p.evidence_end}."
            )
    return ""


def drop_repeats(planned: list[Planned], look: Lookups, result) -> list[Planned]:
    """Refuse the edges the graph already holds and the repeats within the batch; return
    the edges left to write."""
    held = _facts_held(planned, look.relations)
    seen: dict[tuple, int] = {}
    survivors = []
    for p, s, t, relation in planned:
        fact = (s, relation.pk, t)
        if fact in held:
            result.refuse(p.pk, stale(f"This edge is already in the graph (edge #{held[fact]})."))
            continue
        twin = seen.get(fact) or (seen.get((t, relation.pk, s)) if relation.symmetric else None)
        if twin is not None:
            result.refuse(p.pk, f"The same edge is accepted earlier in this batch (#{twin}).")
            continue
        seen[fact] = p.pk
        survivors.append((p, s, t, relation))
    return survivors


def _facts_held(
    planned: list[Planned], relations: dict[int, RelationType]
) -> dict[tuple[int, int, int], int]:
    """The active edges already holding a planned fact between existing concepts, by
    (source, relation, target); a symmetric edge holds both directions."""
    known = [(s, r, t) for _, s, t, r in planned if isinstance(s, int) and isinstance(t, int)]
    held: dict[tuple[int, int, int], int] = {}
    if not known:
        return held
    ends = {s for s, _, _ in known} | {t for _, _, t in known}
    rows = Edge.objects.filter(
        status=Edge.Status.ACTIVE,
        source_id__in=ends,
        target_id__in=ends,
        relation_id__in={r.pk for _, r, _ in known},
    ).values_list("pk", "source_id", "relation_id", "target_id")
    for pk, s, r, t in rows:
        held[(s, r, t)] = pk
        if relations[r].symmetric:
            held[(t, r, s)] = pk
    return held
