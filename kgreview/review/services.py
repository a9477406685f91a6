"""Writes to the proposal queue: queueing proposals (one or many at once) and flagging a
contradiction. What differs by kind (the payload's schema, columns and dedup key) is
asked of the proposal's kind (``kinds``); decisions live in ``decisions``.

Locking rules: a service that changes a proposal locks its row first, then checks the
status and version it expects; a mismatch raises ``StateConflict`` naming who decided.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, IntegerField, OuterRef, Subquery
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from construction import verify
from construction.text import name_key
from kgreview.core.errors import DuplicateProposal, ValidationFailed
from kgreview.graph import rules as graph_rules
from kgreview.graph import services as graph_services
from kgreview.graph.models import Concept, RelationType, Source
from kgreview.graph.services import Evidence
from kgreview.review.kinds import kind_of, payload_validate
from kgreview.review.kinds.base import Rows
from kgreview.review.models import OPEN_STATUSES, Discussion, Proposal, ProposalOrigin

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def flags_text(flags: Iterable[str]) -> str:
    """The "|a|b|" form stored beside the JSON flags for portable filtering."""
    ordered = sorted(set(flags))
    return ("|" + "|".join(ordered) + "|") if ordered else ""


def endpoint_columns(
    kind: str,
    payload: dict,
    relation_ids: dict[str, int] | None = None,
    edges: dict[int, tuple[int, int, int]] | None = None,
) -> dict:
    """The denormalised endpoint columns of a proposal, from its payload (see each kind's
    ``columns``); ``relation_ids`` and ``edges`` are rows read already for a batch."""
    return kind_of(kind).columns(payload, Rows(relation_ids, edges))


def _check_concepts_named(specs: list[ProposalSpec]) -> None:
    """The concepts the proposals name must exist (one query for the whole batch)."""
    named = [(spec.kind, set(kind_of(spec.kind).concepts_named(spec.payload))) for spec in specs]
    wanted = {pk for _, ids in named for pk in ids}
    if not wanted:
        return
    missing = wanted - set(Concept.objects.filter(pk__in=wanted).values_list("pk", flat=True))
    for kind, ids in named:
        if missing & ids:
            listed = ", ".join(f"#{pk}" for pk in sorted(missing & ids))
            label = Proposal.KindChoice(kind).label.lower()
            raise ValidationFailed(
                f'A "{label}" proposal names concepts that do not exist: {listed}.'
            )


#: Flags that hold a proposal whatever its confidence: a candidate whose ends' types break
#: its relation's patterns waits, held, until a curator widens the pattern or someone
#: changes a type (``release_pattern_holds`` lets it go once it fits).
PATTERN_FLAG = verify.PATTERN_FLAG
HOLDING_FLAGS = frozenset({PATTERN_FLAG})


def proposal_dedup_key(*, kind: str, payload: dict, symmetric: bool | None = None) -> str:
    """A key that is equal for two proposals asking for the same change (see each kind's
    ``dedup_key``: endpoints count by concept when resolved and by name key when new, the
    same keys the construction loop uses)."""
    return kind_of(kind).dedup_key(payload, symmetric=symmetric)


@dataclass(frozen=True)
class ProposalSpec:
    """Everything needed to queue one proposal; see ``proposal_create``."""

    kind: str
    payload: dict
    confidence: float
    reason: str = ""
    evidence: Evidence | None = None
    flags: tuple[str, ...] = ()
    dedup_key: str | None = None
    priority: int = 0
    # Who or what drafted it (an agent's run gives its own: ``agents.runs.run_origin``).
    origin: ProposalOrigin | None = None
    created_by: User | None = None
    document: Source | None = None


def _build(
    spec: ProposalSpec,
    *,
    gate: float,
    rows: Rows,
) -> Proposal:
    """An unsaved, validated proposal: held below the gate, pending otherwise."""
    clean = payload_validate(kind=spec.kind, payload=spec.payload)
    confidence = spec.confidence
    refusal = graph_rules.confidence_refusal(confidence)
    if refusal is not None:
        raise refusal
    evidence = spec.evidence
    if evidence is not None:
        evidence.check()
    flags = set(spec.flags)
    status = Proposal.Status.PENDING
    if confidence < gate:
        status = Proposal.Status.HELD
        flags.add("below_gate")
    if flags & HOLDING_FLAGS:
        status = Proposal.Status.HELD
    key = (spec.dedup_key or proposal_dedup_key(kind=spec.kind, payload=clean))[:255]
    endpoints = kind_of(spec.kind).columns(clean, rows)
    return Proposal(
        kind=spec.kind,
        status=status,
        payload=clean,
        confidence=confidence,
        reason=spec.reason.strip(),
        **Evidence.columns(evidence),
        flags=sorted(flags),
        flags_text=flags_text(flags),
        dedup_key=key,
        priority=spec.priority,
        origin=spec.origin,
        created_by=spec.created_by,
        document=spec.document,
        **endpoints,
    )


def proposal_origin(
    *, agent: str, agent_label: str, provider: str = "", model: str = "", run: int | None = None
) -> ProposalOrigin:
    """The origin of the proposals ``agent``'s run number ``run`` queues, made the first
    time it is asked for. The agents' own work (no acting user, no curation log row):
    the origin is what the queue shows beside a proposal and filters by."""
    origin, _ = ProposalOrigin.objects.get_or_create(
        agent=agent,
        run=run,
        defaults={"agent_label": agent_label, "provider": provider, "model": model},
    )
    return origin


def _duplicate(key: str) -> DuplicateProposal:
    existing = Proposal.objects.filter(dedup_key=key, status__in=("pending", "held")).first()
    return DuplicateProposal(
        "The same change is already waiting for review"
        + (f" (proposal #{existing.pk})." if existing else "."),
        proposal_id=existing.pk if existing else None,
    )


@transaction.atomic
def proposal_create(
    *,
    kind: str,
    payload: dict,
    confidence: float,
    reason: str = "",
    evidence: Evidence | None = None,
    flags: Iterable[str] = (),
    dedup_key: str | None = None,
    priority: int = 0,
    origin=None,
    created_by=None,
    document=None,
    gate: float | None = None,
    decided_at_once: bool = False,
) -> Proposal:
    """Queue a proposal: ``held`` below the confidence gate, ``pending`` otherwise.

    Raises ``DuplicateProposal`` when the same change is already open, in its words or
    in other words (an edge's inverse twin, ``Kind.twin_keys``), unless the caller
    decides it in the same transaction (``decided_at_once``: a change mended by hand,
    whose decision settles the open twin instead, as it settles an exact one).
    """
    spec = ProposalSpec(
        kind=kind,
        payload=payload,
        confidence=confidence,
        reason=reason,
        evidence=evidence,
        flags=tuple(flags),
        dedup_key=dedup_key,
        priority=priority,
        origin=origin,
        created_by=created_by,
        document=document,
    )
    _check_concepts_named([spec])
    proposal = _build(spec, gate=settings.KG_CONFIDENCE_GATE if gate is None else gate, rows=Rows())
    twin = None if decided_at_once else _open_twins([proposal]).get(0)
    if twin is not None:
        raise twin
    try:
        with transaction.atomic():
            proposal.save(force_insert=True)
    except IntegrityError:
        raise _duplicate(proposal.dedup_key) from None
    _journal_names([proposal])
    return proposal


def _journal_names(proposals) -> None:
    """New proposed concepts' names, for every process's name index (the name journal)."""
    named = [p.pk for p in proposals if isinstance(p, Proposal) and kind_of(p).names_a_concept]
    graph_services.name_index_changed(proposals=named)


@transaction.atomic
def proposals_create_many(
    specs: list[ProposalSpec], *, gate: float | None = None
) -> list[Proposal | DuplicateProposal]:
    """Queue many proposals with one INSERT; used by agents writing a source's results.

    Every spec is validated first (any invalid one raises before anything is written).
    If the batch collides with an open proposal (someone queued the same change a moment
    ago), it is retried one by one and the colliding specs come back as
    ``DuplicateProposal`` in their place.
    """
    gate = settings.KG_CONFIDENCE_GATE if gate is None else gate
    rows = Rows()  # relations read at the first edge; the edges named, read at once
    rows.load_edges(i for spec in specs for i in kind_of(spec.kind).edge_ids(spec.payload))
    _check_concepts_named(specs)
    built = [_build(spec, gate=gate, rows=rows) for spec in specs]
    if not built:
        return []
    twins = _open_twins(built)
    if twins:
        kept = [p for i, p in enumerate(built) if i not in twins]
        made = iter(_insert_many(kept)) if kept else iter(())
        return [twins[i] if i in twins else next(made) for i in range(len(built))]
    return _insert_many(built)


def _open_twins(built: list[Proposal]) -> dict[int, DuplicateProposal]:
    """The refusals of the proposals (by index) whose twin, the same change in other
    words (``Kind.twin_keys``: an edge's inverse twin), is already open, or is earlier
    in the same batch. Two queries when the batch has a kind with twins, else none."""
    relation_keys = {p.relation_key for p in built if p.relation_key}
    if not relation_keys:
        return {}
    relations = {
        r.key: r
        for r in RelationType.objects.select_related("inverse").filter(
            key__in=relation_keys, inverse__isnull=False
        )
    }
    if not relations:
        return {}
    wanted: dict[int, tuple[str, ...]] = {}
    for i, p in enumerate(built):
        relation = relations.get(p.relation_key)
        if relation is not None:
            wanted[i] = kind_of(p.kind).twin_keys(p.payload, relation)
    every = {k for ks in wanted.values() for k in ks}
    open_by_key = {
        q.dedup_key: q
        for q in Proposal.objects.filter(dedup_key__in=every, status__in=OPEN_STATUSES)
        .select_related("relation")
        .order_by("-pk")
    }
    out: dict[int, DuplicateProposal] = {}
    earlier: dict[str, int] = {}
    for i, p in enumerate(built):
        twin = next((open_by_key[k] for k in wanted.get(i, ()) if k in open_by_key), None)
        if twin is not None:
            out[i] = DuplicateProposal(
                f"The same fact is already waiting for review as proposal #{twin.pk} "
                f"({kind_of(twin).claim(twin)}).",
                proposal_id=twin.pk,
            )
        elif any(k in earlier for k in wanted.get(i, ())):
            out[i] = DuplicateProposal("The same fact is asked for earlier in this batch.")
        else:
            earlier[p.dedup_key] = i
    return out


def _insert_many(built: list[Proposal]) -> list[Proposal | DuplicateProposal]:
    """Insert built proposals with one INSERT (see ``proposals_create_many``)."""
    try:
        with transaction.atomic():
            created = Proposal.objects.bulk_create(built)
        if any(p.pk is None for p in created):  # a backend that returns no ids
            raise IntegrityError("ids not returned")
        _journal_names(created)
        return list(created)
    except IntegrityError:
        out: list[Proposal | DuplicateProposal] = []
        for proposal in built:
            proposal.pk = None
            proposal._state.adding = True
            try:
                with transaction.atomic():
                    proposal.save(force_insert=True)
                out.append(proposal)
            except IntegrityError:
                out.append(_duplicate(proposal.dedup_key))
        _journal_names(out)
        return out


@transaction.atomic
def proposal_flag_conflict(*, proposal_id: int, other: dict) -> Proposal | None:
    """Mark an open proposal as contradicted by another fact, linking to it.

    Locks the proposal; a decided proposal is left alone (its contradiction no longer
    matters for review). The version is bumped so a reviewer looking at the old card is
    told it changed.
    """
    proposal = Proposal.objects.select_for_update(no_key=True).filter(pk=proposal_id).first()
    if proposal is None or not proposal.is_open:
        return None
    payload = dict(proposal.payload)
    conflicts = list(payload.get("conflicts") or [])
    if other not in conflicts:
        conflicts.append(other)
    if kind_of(proposal).keeps_conflicts:
        payload["conflicts"] = conflicts
    flags = sorted(set(proposal.flags) | {"contradiction"})
    if flags == proposal.flags and payload == proposal.payload:
        return proposal
    proposal.payload = payload
    proposal.flags = flags
    proposal.flags_text = flags_text(flags)
    proposal.version += 1
    proposal.save(update_fields=["payload", "flags", "flags_text", "version", "updated_at"])
    return proposal


@transaction.atomic
def proposal_add_flags(*, proposal_id: int, flags: Iterable[str]) -> Proposal | None:
    """Give an open proposal more flags: its flags stay a set (one already there is not
    added twice). The agents' own work, as ``proposal_add_names`` (an annotation import
    whose annotator marked what another's open proposal already proposes: the proposal
    carries both annotators' origins). Locks the proposal; a decided one is left alone
    (``None``). A flag that would not fit the stored ``flags_text`` is not added (the
    caller sees it missing from the proposal's flags). The version is bumped when a flag
    was added, as ``proposal_flag_conflict`` does."""
    proposal = Proposal.objects.select_for_update(no_key=True).filter(pk=proposal_id).first()
    if proposal is None or not proposal.is_open:
        return None
    limit = Proposal._meta.get_field("flags_text").max_length or 0
    kept = set(proposal.flags or ())
    for flag in dict.fromkeys(flags):
        if flag and flag not in kept and len(flags_text(kept | {flag})) <= limit:
            kept.add(flag)
    if kept == set(proposal.flags or ()):
        return proposal
    proposal.flags = sorted(kept)
    proposal.flags_text = flags_text(kept)
    proposal.version += 1
    proposal.save(update_fields=["flags", "flags_text", "version", "updated_at"])
    return proposal


#: The most aliases (and defined names) a concept proposal's payload holds.
NAMES_MAX = 50


@transaction.atomic
def proposal_add_names(*, proposal_id: int, defined: list[dict]) -> Proposal | None:
    """Give an open proposal of a concept the names a document defines for it: each
    ``{"alias", "quote", "start", "end", "revision_id"}`` not yet among its names is added
    to its aliases, with its sentence. The agents' own work (no audit row: the proposal
    is not decided yet). Locks the proposal; a decided one is left alone (an accepted
    concept gets an ``add_alias`` proposal instead). The version is bumped so a reviewer
    looking at the old card is told it changed; the name index re-reads its names.
    """
    proposal = Proposal.objects.select_for_update(no_key=True).filter(pk=proposal_id).first()
    if proposal is None or not proposal.is_open or not kind_of(proposal).names_a_concept:
        return None
    payload = dict(proposal.payload)
    aliases = list(payload.get("aliases") or [])
    known = {name_key(n) for n in [payload["name"], *aliases]}
    kept = list(payload.get("defined") or [])
    for item in defined:
        key = name_key(item["alias"])
        if len(aliases) >= NAMES_MAX or len(kept) >= NAMES_MAX:
            break  # a payload holds so many names at most
        if key and key not in known:
            known.add(key)
            aliases.append(item["alias"])
            kept.append(item)
    if len(aliases) == len(payload.get("aliases") or []):
        return proposal
    payload = payload_validate(
        kind=proposal.kind, payload={**payload, "aliases": aliases, "defined": kept}
    )
    proposal.payload = payload
    proposal.version += 1
    proposal.save(update_fields=["payload", "version", "updated_at"])
    graph_services.name_index_changed(proposals=[proposal.pk])
    return proposal


def _needed_by(ids) -> list:
    """Queries of the concept proposals the proposals ``ids`` wait for (an edge's end
    naming an add_concept proposal), one per end."""
    return [
        Proposal.objects.filter(pk__in=ids)
        .order_by()
        .annotate(needed=Cast(KT(f"payload__{role}__proposal_id"), IntegerField()))
        .filter(needed__isnull=False)
        .values("needed")
        for role in ("source", "target")
    ]


def lock_proposals(ids, *, needed: bool = False, related=()) -> dict[int, Proposal]:
    """Lock many proposals in id order, in one statement (the first step of the lock
    order, so two decisions never wait on each other crosswise), and return them by id.

    With ``needed``, the concept proposals their edges wait for are locked in the same
    statement, in the same order, and returned too.
    """
    ids = list(ids)
    wanted: object = ids
    open_discussion = Discussion.objects.filter(
        proposal_id=OuterRef("pk"), resolved_at__isnull=True
    )
    if needed:
        # One id list, as a UNION subquery: "id IN (...) OR id IN (subquery)" made
        # PostgreSQL scan every proposal (40 ms at 100k); the union is index lookups.
        wanted = (
            Proposal.objects.filter(pk__in=ids)
            .order_by()
            .values("pk")
            .union(*_needed_by(ids), all=True)
        )
    rows = (
        Proposal.objects.select_for_update(no_key=True, of=("self",))
        .select_related(*related)
        .filter(pk__in=wanted)
        # Whether it is in discussion, read with the lock: a decision then resolves the
        # discussion (``talk.discussions_closed_by``) without asking again.
        .annotate(in_discussion=Exists(open_discussion), open_twin_id=open_twin())
        .order_by("pk")
    )
    return {p.pk: p for p in rows}


def open_twin() -> Subquery:
    """The open proposal stating the same fact as the outer one's inverse twin (an
    edge's: its relation's inverse, the ends swapped; none for the other kinds, whose end
    keys are empty), as a scalar subquery: a card names it, and settling after an accept
    asks for twins only when there was one, without a query of their own."""
    from kgreview.review.kinds.add_edge import AddEdgeKind  # the kinds import services

    return Subquery(
        Proposal.objects.filter(
            # The open edge proposals' index on their end keys answers it.
            kind=AddEdgeKind.key,
            status__in=OPEN_STATUSES,
            relation__inverse=OuterRef("relation_id"),
            source_key=OuterRef("target_key"),
            target_key=OuterRef("source_key"),
        )
        .order_by("pk")
        .values("pk")[:1]
    )
