"""Reads for the review workspace: the filtered queue, counts, cards, history."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime, time
from urllib.parse import urlencode

from django.db.models import Count, Q, QuerySet
from django.http import QueryDict
from django.utils import timezone

from kgreview.graph.models import Concept, Edge, RelationType, Source, SourceRevision
from kgreview.graph.selectors import active_edge_counts

from .models import OPEN_STATUSES, Decision, Proposal

STATUS_CHOICES = ("pending", "held", "open", "accepted", "rejected", "superseded", "all")
SORTS = {"priority": "priority", "confidence": "confidence", "newest": None}
FLAGS = ("contradiction", "new_concept", "below_gate", "previously_rejected")
PAGE_SIZE = 50


@dataclass(frozen=True)
class QueueFilter:
    """What part of the queue a reviewer looks at, and in which order."""

    status: str = "pending"
    kinds: tuple[str, ...] = ()
    relation: str = ""
    source: str = ""
    run: int | None = None
    cmin: float | None = None
    cmax: float | None = None
    flags: tuple[str, ...] = ()
    sort: str = "priority"

    @classmethod
    def from_query(cls, query: QueryDict) -> tuple[QueueFilter, list[str]]:
        """Parse GET parameters; unusable values are dropped and reported in words."""
        errors: list[str] = []
        status = query.get("status") or "pending"
        if status not in STATUS_CHOICES:
            errors.append(f'Unknown status "{status}"; showing pending proposals.')
            status = "pending"
        kinds = tuple(k for k in query.getlist("kind") if k)
        bad = [k for k in kinds if k not in Proposal.Kind.values]
        if bad:
            errors.append(f"Unknown kind: {', '.join(bad)}.")
            kinds = tuple(k for k in kinds if k in Proposal.Kind.values)
        flags = tuple(x for x in query.getlist("flag") if x)
        if any(x not in FLAGS for x in flags):
            errors.append(f"Unknown flag: {', '.join(x for x in flags if x not in FLAGS)}.")
            flags = tuple(x for x in flags if x in FLAGS)
        sort = query.get("sort") or "priority"
        if sort not in SORTS:
            errors.append(f'Unknown sort "{sort}"; sorting by priority.')
            sort = "priority"
        run = None
        if query.get("run"):
            try:
                run = int(query["run"])
            except ValueError:
                errors.append("The agent run must be a number.")

        def confidence(name: str) -> float | None:
            raw = query.get(name, "").strip()
            if not raw:
                return None
            try:
                value = float(raw)
            except ValueError:
                errors.append(f"Confidence bounds are numbers between 0 and 1, not {raw!r}.")
                return None
            if not 0.0 <= value <= 1.0:
                errors.append(f"Confidence bounds lie between 0 and 1, not {value}.")
                return None
            return value

        return (
            cls(
                status=status,
                kinds=kinds,
                relation=(query.get("relation") or "").strip(),
                source=(query.get("source") or "").strip(),
                run=run,
                cmin=confidence("cmin"),
                cmax=confidence("cmax"),
                flags=flags,
                sort=sort,
            ),
            errors,
        )

    def params(self, **overrides) -> list[tuple[str, str]]:
        f = replace(self, **overrides) if overrides else self
        items: list[tuple[str, str]] = []
        if f.status != "pending":
            items.append(("status", f.status))
        items += [("kind", k) for k in f.kinds]
        if f.relation:
            items.append(("relation", f.relation))
        if f.source:
            items.append(("source", f.source))
        if f.run is not None:
            items.append(("run", str(f.run)))
        if f.cmin is not None:
            items.append(("cmin", f"{f.cmin:g}"))
        if f.cmax is not None:
            items.append(("cmax", f"{f.cmax:g}"))
        items += [("flag", x) for x in f.flags]
        if f.sort != "priority":
            items.append(("sort", f.sort))
        return items

    def query(self, **overrides) -> str:
        return urlencode(self.params(**overrides))

    @property
    def is_default(self) -> bool:
        return self == QueueFilter()


def queue_queryset(f: QueueFilter, *, ignore: frozenset[str] = frozenset()) -> QuerySet:
    """Proposals matching the filter, ignoring the named dimensions (for facet counts)."""
    qs = Proposal.objects.all()
    if "status" not in ignore:
        if f.status == "open":
            qs = qs.filter(status__in=OPEN_STATUSES)
        elif f.status != "all":
            qs = qs.filter(status=f.status)
    if f.kinds and "kind" not in ignore:
        qs = qs.filter(kind__in=f.kinds)
    if f.relation and "relation" not in ignore:
        qs = qs.filter(relation_key=f.relation)
    if f.source:
        qs = qs.filter(document__slug=f.source)
    if f.run is not None:
        qs = qs.filter(agent_run_id=f.run)
    if f.cmin is not None:
        qs = qs.filter(confidence__gte=f.cmin)
    if f.cmax is not None:
        qs = qs.filter(confidence__lte=f.cmax)
    if "flags" not in ignore:
        for flag in f.flags:
            qs = qs.filter(flags_text__contains=f"|{flag}|")
    return qs


def _order(sort: str, *, reverse: bool = False) -> list[str]:
    column = SORTS[sort]
    fields = ([column] if column else []) + ["id"]
    return [name if reverse else f"-{name}" for name in fields]


def cursor_of(proposal: Proposal, sort: str) -> str:
    column = SORTS[sort]
    if column is None:
        return str(proposal.pk)
    return f"{getattr(proposal, column)!r}:{proposal.pk}"


def _parse_cursor(cursor: str, sort: str) -> tuple[float | int | None, int] | None:
    try:
        if SORTS[sort] is None:
            return None, int(cursor)
        value, pk = cursor.rsplit(":", 1)
        number = int(value) if sort == "priority" else float(value)
        return number, int(pk)
    except (ValueError, KeyError):
        return None


def _after(qs: QuerySet, sort: str, cursor: str | None, *, before: bool = False) -> QuerySet:
    """Rows after (or before) the cursor in the sort order: a keyset, not an offset.

    A row-value comparison, ``(priority, id) < (p, i)``, lets the index serve the range
    directly; the equivalent OR of two conditions makes PostgreSQL filter row by row.
    """
    if not cursor:
        return qs
    parsed = _parse_cursor(cursor, sort)
    if parsed is None:
        return qs
    value, pk = parsed
    column = SORTS[sort]
    op = ">" if before else "<"
    table = Proposal._meta.db_table
    if column is None:
        return qs.extra(where=[f'"{table}"."id" {op} %s'], params=[pk])
    return qs.extra(
        where=[f'("{table}"."{column}", "{table}"."id") {op} (%s, %s)'], params=[value, pk]
    )


@dataclass
class Page:
    items: list[Proposal]
    next_cursor: str | None
    prev_cursor: str | None


def queue_page(
    f: QueueFilter, *, after: str | None = None, before: str | None = None, size: int = PAGE_SIZE
) -> Page:
    """One page of the queue, by keyset: the same cost on page 1 and page 2,000."""
    base = queue_queryset(f).select_related(
        "document", "agent_run", "source_concept", "target_concept", "relation"
    )
    if before:
        rows = list(
            _after(base, f.sort, before, before=True).order_by(*_order(f.sort, reverse=True))[
                : size + 1
            ]
        )
        has_more = len(rows) > size
        rows = list(reversed(rows[:size]))
        next_cursor = cursor_of(rows[-1], f.sort) if rows else None
        prev_cursor = cursor_of(rows[0], f.sort) if rows and has_more else None
        return Page(rows, next_cursor, prev_cursor)
    rows = list(_after(base, f.sort, after).order_by(*_order(f.sort))[: size + 1])
    has_more = len(rows) > size
    rows = rows[:size]
    return Page(
        rows,
        cursor_of(rows[-1], f.sort) if rows and has_more else None,
        cursor_of(rows[0], f.sort) if rows and after else None,
    )


COUNTS_TTL = 30


def _queue_generation() -> tuple[int, int]:
    """Changes whenever a proposal is added or decided: the newest proposal and decision."""
    newest = Proposal.objects.order_by("-id").values_list("id", flat=True).first() or 0
    decided = Decision.objects.order_by("-id").values_list("id", flat=True).first() or 0
    return newest, decided


def queue_counts_cached(f: QueueFilter) -> dict:
    """``queue_counts``, reused until the queue changes (or ``COUNTS_TTL`` seconds pass).

    Counting 100,000 pending proposals four ways takes PostgreSQL a fifth of a second;
    two index look-ups tell whether anything changed since the last count.
    """
    from django.core.cache import cache

    newest, decided = _queue_generation()
    key = f"kg:queue-counts:{newest}:{decided}:{f.query()}"
    counts = cache.get(key)
    if counts is None:
        counts = queue_counts(f)
        cache.set(key, counts, COUNTS_TTL)
    return counts


def queue_counts(f: QueueFilter) -> dict:
    """Live counts for each filter value, given the other filters (four grouped queries)."""
    status = dict(
        queue_queryset(f, ignore=frozenset({"status"}))
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    status["open"] = status.get("pending", 0) + status.get("held", 0)
    status["all"] = sum(v for k, v in status.items() if k != "open")
    kinds = dict(
        queue_queryset(f, ignore=frozenset({"kind"}))
        .values_list("kind")
        .annotate(n=Count("id"))
        .values_list("kind", "n")
    )
    relations = dict(
        queue_queryset(f, ignore=frozenset({"relation"}))
        .filter(kind="add_edge")
        .values_list("relation_key")
        .annotate(n=Count("id"))
        .values_list("relation_key", "n")
    )
    flags = queue_queryset(f, ignore=frozenset({"flags"})).aggregate(
        **{flag: Count("id", filter=Q(flags_text__contains=f"|{flag}|")) for flag in FLAGS}
    )
    return {
        "status": status,
        "kind": kinds,
        "relation": relations,
        "flags": flags,
        "total": status.get(f.status, 0),
    }


def next_in_queue(
    f: QueueFilter,
    *,
    after: str | None = None,
    before: str | None = None,
    skip=(),
    exclude_kinds=(),
) -> Proposal | None:
    """The proposal after (or before) a cursor in the filter's order, leaving out the
    kinds the reviewer's role does not decide."""
    qs = queue_queryset(f).exclude(pk__in=list(skip))
    if exclude_kinds:
        qs = qs.exclude(kind__in=list(exclude_kinds))
    if before:
        qs = _after(qs, f.sort, before, before=True).order_by(*_order(f.sort, reverse=True))
    else:
        qs = _after(qs, f.sort, after).order_by(*_order(f.sort))
    return qs.select_related(*CARD_RELATED).first()


# --- The focus card ---------------------------------------------------------------------


@dataclass
class Context:
    """The paragraph around a quote, split so the quote can be highlighted."""

    before: str
    quote: str
    after: str
    source: Source | None
    revision: SourceRevision | None
    is_current: bool

    @property
    def found(self) -> bool:
        return bool(self.quote)


def evidence_context(
    revision: SourceRevision | None, start: int | None, end: int | None, *, limit: int = 900
) -> Context | None:
    if revision is None or start is None or end is None:
        return None
    text = revision.text
    para_start = text.rfind("\n\n", 0, start)
    para_start = 0 if para_start == -1 else para_start + 2
    para_end = text.find("\n\n", end)
    para_end = len(text) if para_end == -1 else para_end
    para_start = max(para_start, start - limit)
    para_end = min(para_end, end + limit)
    before = ("…" if para_start > 0 and text[para_start - 1] != "\n" else "") + text[
        para_start:start
    ]
    after = text[end:para_end] + ("…" if para_end < len(text) and text[para_end] != "\n" else "")
    source = revision.source
    return Context(
        before=before,
        quote=text[start:end],
        after=after,
        source=source,
        revision=revision,
        is_current=source.current_revision_id == revision.pk,
    )


@dataclass
class Neighbour:
    edge: Edge
    direction: str  # "out" or "in"
    other: Concept


@dataclass
class Conflict:
    kind: str  # "edge" or "proposal"
    id: int
    explanation: str
    rule: str
    edge: Edge | None = None
    proposal: Proposal | None = None
    context: Context | None = None

    @property
    def is_open(self) -> bool:
        if self.edge is not None:
            return self.edge.is_active
        return self.proposal is not None and self.proposal.is_open


@dataclass
class Card:
    proposal: Proposal
    relation: RelationType | None
    context: Context | None
    endpoints: list[tuple[str, dict, Concept | None, Proposal | None]] = field(default_factory=list)
    neighbours: dict[str, list[Neighbour]] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)
    target_edge: Edge | None = None
    concepts: dict[int, Concept] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    # For a merge: both concepts side by side (role, concept, names, sources, edge count).
    merge_sides: list[dict] = field(default_factory=list)
    # For a cycle-breaking invalidation: the cycle's edges in order, each with its
    # evidence in context, the weakest being the one proposed for retirement.
    cycle: list[tuple[Edge, Context | None]] = field(default_factory=list)
    # Why accepting would be refused right now, in words (the same words the refusal uses).
    blockers: list[str] = field(default_factory=list)
    # For a new concept: existing concepts with a similar name, to spot a duplicate.
    similar: list = field(default_factory=list)
    claim: str = ""


CARD_RELATED = (
    "document",
    "agent_run",
    "evidence_revision__source",
    "relation",
    "source_concept",
    "target_concept",
)


def _neighbours_of(concepts: dict[str, Concept], *, limit: int = 6) -> dict[str, list[Neighbour]]:
    """Recent active edges of each named concept, in one query for all of them."""
    ids = {c.pk for c in concepts.values()}
    if not ids:
        return {}
    rows = list(
        Edge.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids), status=Edge.Status.ACTIVE)
        .select_related("source", "target", "relation")
        .order_by("-recorded_at", "-id")[: limit * 4 * len(ids)]
    )
    out: dict[str, list[Neighbour]] = {}
    for role, concept in concepts.items():
        mine = []
        for e in rows:
            if concept.pk in (e.source_id, e.target_id) and len(mine) < limit:
                out_edge = e.source_id == concept.pk
                mine.append(
                    Neighbour(
                        edge=e,
                        direction="out" if out_edge else "in",
                        other=e.target if out_edge else e.source,
                    )
                )
        out[role] = mine
    return out


def merge_sides(ends: dict[str, Concept]) -> list[dict]:
    """Names, sources and edge counts of the two concepts a merge would join."""
    from kgreview.graph.models import ConceptAlias, SourceConcept

    ids = [c.pk for c in ends.values()]
    names: dict[int, list[str]] = {i: [] for i in ids}
    for cid, name in ConceptAlias.objects.filter(concept_id__in=ids).values_list(
        "concept_id", "name"
    ):
        names[cid].append(name)
    sources: dict[int, list[str]] = {i: [] for i in ids}
    for cid, slug in SourceConcept.objects.filter(concept_id__in=ids).values_list(
        "concept_id", "source__slug"
    ):
        sources[cid].append(slug)
    counts = active_edge_counts(ids)
    return [
        {
            "role": role,
            "concept": c,
            "names": sorted(names[c.pk]),
            "sources": sorted(sources[c.pk]),
            "edges": counts[c.pk],
        }
        for role, c in ends.items()
    ]


def proposal_card(proposal: Proposal) -> Card:
    """Everything a reviewer needs to decide one proposal.

    With the proposal loaded with ``CARD_RELATED``, an edge proposal's card costs one more
    query (the neighbouring edges of both ends); decisions are read only for proposals
    that have any (version > 1), contradictions only when there are some.
    """
    payload = proposal.payload
    relation = proposal.relation if proposal.kind == "add_edge" else None
    revision = proposal.evidence_revision
    if revision is not None and not SourceRevision.source.is_cached(revision):
        revision = SourceRevision.objects.select_related("source").get(pk=revision.pk)
    card = Card(
        proposal=proposal,
        relation=relation,
        context=evidence_context(revision, proposal.evidence_start, proposal.evidence_end),
    )
    concepts: dict[int, Concept] = {}
    if proposal.kind == "add_edge":
        for concept in (proposal.source_concept, proposal.target_concept):
            if concept is not None:
                concepts[concept.pk] = concept
        proposal_ids = {
            payload[role]["proposal_id"]
            for role in ("source", "target")
            if payload[role].get("proposal_id")
        }
        needed = Proposal.objects.in_bulk(proposal_ids) if proposal_ids else {}
        ends = {}
        for role in ("source", "target"):
            end = payload[role]
            concept = concepts.get(end.get("concept_id"))
            card.endpoints.append((role, end, concept, needed.get(end.get("proposal_id"))))
            if concept is not None:
                ends[role] = concept
        card.neighbours = _neighbours_of(ends)
    elif proposal.kind == "merge_concepts":
        concepts = Concept.objects.in_bulk({payload["survivor_id"], payload["loser_id"]})
        ends = {
            role: concepts[payload[key]]
            for role, key in (("survivor", "survivor_id"), ("loser", "loser_id"))
            if payload[key] in concepts
        }
        card.neighbours = _neighbours_of(ends, limit=12)
        card.merge_sides = merge_sides(ends)
    card.concepts = concepts
    if proposal.kind in ("invalidate_edge", "update_edge"):
        cycle_ids = [int(i) for i in payload.get("cycle_edge_ids") or []][:50]
        wanted = {payload["edge_id"], *cycle_ids}
        found = Edge.objects.select_related(
            "source", "target", "relation", "evidence_revision__source"
        ).in_bulk(wanted)
        card.target_edge = found.get(payload["edge_id"])
        card.cycle = [
            (e, evidence_context(e.evidence_revision, e.evidence_start, e.evidence_end))
            for e in (found.get(i) for i in cycle_ids)
            if e is not None
        ]
    conflicts = payload.get("conflicts") or []
    edge_ids = [c["id"] for c in conflicts if c.get("kind") == "edge"]
    prop_ids = [c["id"] for c in conflicts if c.get("kind") == "proposal"]
    edges = (
        Edge.objects.select_related(
            "source", "target", "relation", "evidence_revision__source"
        ).in_bulk(edge_ids)
        if edge_ids
        else {}
    )
    others = (
        Proposal.objects.select_related("evidence_revision__source").in_bulk(prop_ids)
        if prop_ids
        else {}
    )
    seen = set()
    for c in conflicts:
        key = (c.get("kind"), c.get("id"))
        if key in seen:
            continue
        seen.add(key)
        item = Conflict(
            kind=c.get("kind", ""),
            id=c.get("id"),
            explanation=c.get("explanation", ""),
            rule=c.get("rule", ""),
        )
        if item.kind == "edge" and item.id in edges:
            e = edges[item.id]
            item.edge = e
            item.context = evidence_context(e.evidence_revision, e.evidence_start, e.evidence_end)
        elif item.kind == "proposal" and item.id in others:
            other = others[item.id]
            item.proposal = other
            item.context = evidence_context(
                other.evidence_revision, other.evidence_start, other.evidence_end
            )
        card.conflicts.append(item)
    if proposal.version > 1:  # every decision, flag or edit bumps the version
        card.decisions = list(
            proposal.decisions.select_related("user").order_by("created_at", "id")
        )
    if proposal.kind == "add_edge":
        # A merged end names its survivor (one query, only when there is one).
        merged = [c for c in concepts.values() if c.status == Concept.Status.MERGED]
        if merged:
            survivors = Concept.objects.in_bulk({c.merged_into_id for c in merged})
            for c in merged:
                c.survivor = survivors.get(c.merged_into_id)
    elif proposal.kind == "add_concept" and proposal.is_open:
        from kgreview.graph.search import concept_search

        card.similar = concept_search(q=payload["name"], limit=3)
    if proposal.is_open:
        card.blockers = proposal_blockers(proposal)
    card.claim = claim_words(proposal)
    return card


# --- Source view and history ------------------------------------------------------------

STATUS_RANK = {"pending": 0, "held": 1, "accepted": 2, "rejected": 3, "superseded": 4}


def decision_log(
    *, reviewer: str = "", since: date | None = None, until: date | None = None, limit: int = 200
) -> list[Decision]:
    qs = Decision.objects.select_related("user", "proposal").order_by("-created_at", "-id")
    if reviewer:
        qs = qs.filter(user__username=reviewer)
    tz = timezone.get_current_timezone()
    if since:
        qs = qs.filter(created_at__gte=datetime.combine(since, time.min, tzinfo=tz))
    if until:
        qs = qs.filter(created_at__lte=datetime.combine(until, time.max, tzinfo=tz))
    return list(qs[:limit])


LIFE_RELATED = (
    "source",
    "target",
    "relation",
    "decided_by",
    "invalidated_by",
    "evidence_revision__source",
    "proposal",
)


def life_rows() -> QuerySet[Edge]:
    """Edge rows with what the edge page shows, but not the quoted revision's full text."""
    return Edge.objects.select_related(*LIFE_RELATED).defer("evidence_revision__text")


def edge_life(edge: Edge) -> list[Edge]:
    """Every row of one fact's history, oldest first: what it replaced and what replaced it."""
    chain = [edge]
    while chain[0].supersedes_id:
        chain.insert(0, life_rows().get(pk=chain[0].supersedes_id))
    current = chain[-1]
    while True:
        nxt = life_rows().filter(supersedes=current).first()
        if nxt is None:
            break
        chain.append(nxt)
        current = nxt
    return chain


# --- What stands in the way of a decision -----------------------------------------------


def _end_blocker(role: str, end: dict, concepts: dict, needed: dict) -> str:
    from kgreview.graph.services import inactive_words

    if end.get("concept_id"):
        concept = concepts.get(end["concept_id"])
        if concept is None:
            return f"Its {role} (concept #{end['concept_id']}) does not exist."
        return "" if concept.is_active else inactive_words(concept)
    if end.get("proposal_id"):
        p = needed.get(end["proposal_id"])
        if p is None:
            return f'The proposal for its {role} "{end["name"]}" does not exist.'
        if p.is_open:
            return ""
        if p.concept_id:
            concept = concepts.get(p.concept_id) or Concept.objects.get(pk=p.concept_id)
            return "" if concept.is_active else inactive_words(concept)
        return f'Its {role} "{end["name"]}" was {p.status} (proposal #{p.pk}).'
    return ""


def proposal_blockers(proposal: Proposal) -> list[str]:
    """Why this open proposal cannot be accepted as it stands, in words (none: it can).

    The card shows these, and accepting refuses with the same words. The queue is kept
    free of them by ``reconcile``; this is the check that it worked.
    """
    return open_proposal_blockers([proposal]).get(proposal.pk, [])


def open_proposal_blockers(proposals) -> dict[int, list[str]]:
    """``proposal_blockers`` for many open proposals, in a handful of queries."""
    from kgreview.graph.selectors import active_edge_between, name_owner

    proposals = [p for p in proposals if p.is_open]
    concept_ids: set[int] = set()
    needed_ids: set[int] = set()
    edge_ids: set[int] = set()
    for p in proposals:
        payload = p.payload
        if p.kind == "add_edge":
            for role in ("source", "target"):
                if payload[role].get("concept_id"):
                    concept_ids.add(payload[role]["concept_id"])
                elif payload[role].get("proposal_id"):
                    needed_ids.add(payload[role]["proposal_id"])
        elif p.kind == "merge_concepts":
            concept_ids |= {payload["survivor_id"], payload["loser_id"]}
        elif p.kind == "update_concept":
            concept_ids.add(payload["concept_id"])
        elif p.kind in ("invalidate_edge", "update_edge"):
            edge_ids.add(payload["edge_id"])
    needed = Proposal.objects.in_bulk(needed_ids) if needed_ids else {}
    concept_ids |= {n.concept_id for n in needed.values() if n.concept_id}
    # Concepts and relations a card loaded with its proposal are not read again.
    concepts: dict[int, Concept] = {}
    relations: dict[str, RelationType] = {}
    for p in proposals:
        for attr in ("source_concept", "target_concept"):
            if Proposal._meta.get_field(attr).is_cached(p) and getattr(p, attr) is not None:
                concepts[getattr(p, attr).pk] = getattr(p, attr)
        if Proposal._meta.get_field("relation").is_cached(p) and p.relation is not None:
            relations[p.relation.key] = p.relation
    missing = concept_ids - set(concepts)
    if missing:
        concepts.update(Concept.objects.in_bulk(missing))
    wanted_relations = {p.payload["relation"] for p in proposals if p.kind == "add_edge"}
    if wanted_relations - set(relations):
        relations.update({r.key: r for r in RelationType.objects.filter(key__in=wanted_relations)})
    edges = Edge.objects.in_bulk(edge_ids) if edge_ids else {}
    out: dict[int, list[str]] = {}
    for p in proposals:
        words: list[str] = []
        payload = p.payload
        if p.kind == "add_edge":
            ends = {}
            for role in ("source", "target"):
                blocker = _end_blocker(role, payload[role], concepts, needed)
                if blocker:
                    words.append(blocker)
                end = payload[role]
                cid = end.get("concept_id")
                if not cid and end.get("proposal_id") in needed:
                    cid = needed[end["proposal_id"]].concept_id
                ends[role] = cid
            relation = relations.get(payload["relation"])
            if relation is None:
                words.append(f'The relation "{payload["relation"]}" does not exist.')
            elif not relation.active:
                words.append(f'The relation "{relation.key}" was retired; edit it to another.')
            if relation is not None and ends["source"] and ends["target"]:
                if ends["source"] == ends["target"]:
                    words.append("Both ends are the same concept; an edge cannot loop.")
                else:
                    found = active_edge_between(
                        source_id=ends["source"], target_id=ends["target"], relation=relation
                    )
                    if found is not None:
                        words.append(f"The same edge is already in the graph (edge #{found.pk}).")
        elif p.kind == "add_concept":
            owner = name_owner(name=payload["name"])
            retired = owner is not None and owner.concept.status == Concept.Status.RETIRED
            if retired and p.concept_id != owner.concept_id:
                words.append(
                    f'"{payload["name"]}" names the concept "{owner.concept.name}", '
                    "which a curator retired."
                )
        elif p.kind == "merge_concepts":
            from kgreview.graph.services import inactive_words

            for key in ("survivor_id", "loser_id"):
                concept = concepts.get(payload[key])
                if concept is None:
                    words.append(f"Concept #{payload[key]} does not exist.")
                elif not concept.is_active:
                    words.append(inactive_words(concept))
        elif p.kind in ("invalidate_edge", "update_edge"):
            edge = edges.get(payload["edge_id"])
            if edge is None:
                words.append(f"Edge #{payload['edge_id']} does not exist.")
            elif not edge.is_active:
                words.append(f"Edge #{edge.pk} is no longer active ({edge.status}).")
        if words:
            out[p.pk] = words
    return out


def twin_concept_proposals() -> list[Proposal]:
    """Open add_concept proposals whose name already belongs to an active concept: the
    twins ``reconcile`` supersedes when a concept comes into being (should be none)."""
    from construction.keys import concept_dedup_key
    from kgreview.graph.models import ConceptAlias

    keys = {
        concept_dedup_key(name)
        for name in ConceptAlias.objects.filter(concept__status="active").values_list(
            "name", flat=True
        )
    }
    return [
        p
        for p in Proposal.objects.filter(kind="add_concept", status__in=OPEN_STATUSES)
        if p.dedup_key in keys
    ]


# --- Words for a proposal ----------------------------------------------------------------


def claim_words(proposal: Proposal, relations: dict[str, RelationType] | None = None) -> str:
    """What the proposal asks for, as one sentence of plain text."""
    payload = proposal.payload
    kind = proposal.kind
    if kind == "add_edge":
        relation = (relations or {}).get(payload["relation"]) or proposal.relation
        verb = relation.verb if relation is not None else payload["relation"].replace("_", " ")
        return f"{payload['source']['name']} {verb} {payload['target']['name']}"
    if kind == "add_concept":
        return f"New concept {payload['name']}"
    if kind in ("invalidate_edge", "update_edge"):
        what = "Retire" if kind == "invalidate_edge" else "Update"
        if proposal.source_concept_id and proposal.target_concept_id:
            return (
                f"{what} edge #{payload['edge_id']}: {proposal.source_concept.name} "
                f"{proposal.relation.verb if proposal.relation else ''} "
                f"{proposal.target_concept.name}"
            ).replace("  ", " ")
        return f"{what} edge #{payload['edge_id']}"
    if kind == "merge_concepts":
        if proposal.source_concept_id and proposal.target_concept_id:
            return f"Merge {proposal.source_concept.name} into {proposal.target_concept.name}"
        return f"Merge concept #{payload['loser_id']} into #{payload['survivor_id']}"
    if kind == "add_relation_type":
        return f"New relation {payload['label']} (“source {payload['verb']} target”)"
    if kind == "update_concept":
        name = proposal.source_concept.name if proposal.source_concept_id else "a concept"
        parts = []
        if payload.get("name"):
            parts.append(f"rename to {payload['name']}")
        if payload.get("add_aliases"):
            parts.append("add " + ", ".join(payload["add_aliases"]))
        if payload.get("remove_aliases"):
            parts.append("remove " + ", ".join(payload["remove_aliases"]))
        if payload.get("status"):
            parts.append("retire" if payload["status"] == "retired" else "reactivate")
        return f"{name}: " + "; ".join(parts)
    return proposal.get_kind_display()


# --- The concept picker ------------------------------------------------------------------


@dataclass(frozen=True)
class ConceptOption:
    """One choice in the concept picker."""

    kind: str  # concept | proposal | create
    name: str
    id: int | None = None
    detail: str = ""
    same: bool = False  # the same name key (the name itself, or its plural/singular)


def concept_options(*, q: str, limit: int = 8) -> list[ConceptOption]:
    """Choices for a typed name, best first: concepts and aliases (same-key twins such as
    plural/singular first, then exact, prefix and fuzzy matches by score), pending concept
    proposals, and, when nothing has the same key, an explicit "create it as new"."""
    from rapidfuzz import fuzz

    from construction.keys import concept_dedup_key
    from construction.text import name_key
    from kgreview.graph.search import concept_search

    q = " ".join(q.split())[:200]
    if not q:
        return []
    key = name_key(q)
    low = q.casefold()
    ranked: list[tuple[tuple, ConceptOption]] = []
    for hit in concept_search(q=q, limit=limit):
        matched = hit.matched_name.casefold()
        same = bool(key) and key in (name_key(hit.matched_name), name_key(hit.concept.name))
        if not same and hit.match == "fuzzy" and fuzz.partial_ratio(low, matched) < 75:
            continue  # a loose fuzzy hit ("RAG" for "large lang") is noise in a picker
        if matched != hit.concept.name.casefold():
            detail = f"alias “{hit.matched_name}”"
        elif same and matched != low:
            detail = "same concept, other spelling"
        else:
            detail = {"exact": "exact", "prefix": "starts with it"}.get(hit.match, "")
            detail = detail or f"similar ({hit.score:.0f})"
        tier = 0 if same else 1 if hit.match in ("exact", "prefix") else 2
        option = ConceptOption("concept", hit.concept.name, hit.concept.pk, detail, same)
        ranked.append(((tier, -hit.score, hit.concept.name.casefold()), option))
    if key:
        wanted = concept_dedup_key(q)[:255]
        pending = (
            Proposal.objects.filter(kind="add_concept", status__in=OPEN_STATUSES)
            .filter(Q(dedup_key=wanted) | Q(dedup_key__startswith=wanted))
            .order_by("dedup_key", "pk")
            .values_list("pk", "payload", "dedup_key")[:4]
        )
        for pk, payload, dedup in pending:
            same = dedup == wanted
            name = payload.get("name", "")
            option = ConceptOption("proposal", name, pk, f"pending concept proposal #{pk}", same)
            ranked.append(((0 if same else 1, -95.0, name.casefold()), option))
    ranked.sort(key=lambda item: item[0])
    options = [option for _, option in ranked]
    if key and not any(o.same for o in options):
        options.append(ConceptOption("create", q, None, "create it as a new concept"))
    return options


# --- Bulk preview -------------------------------------------------------------------------


def bulk_listing(result, *, page: int | None = None, size: int = 50) -> dict:
    """One page of a bulk result, each item with its proposal's words and what it does."""
    items = result.items
    pages = max(1, (len(items) + size - 1) // size)
    page = min(max(1, page or 1), pages)
    shown = items[(page - 1) * size : page * size]
    found = Proposal.objects.select_related("relation", "source_concept", "target_concept").in_bulk(
        [i.proposal_id for i in shown]
    )
    relations = {r.key: r for r in RelationType.objects.all()}
    rows = []
    for item in shown:
        proposal = found.get(item.proposal_id)
        rows.append(
            {
                "item": item,
                "proposal": proposal,
                "claim": claim_words(proposal, relations) if proposal else f"#{item.proposal_id}",
            }
        )
    return {
        "rows": rows,
        "page": page,
        "pages": pages,
        "page_range": range(1, pages + 1),
        "refused_count": len(result.refused),
        "done_count": len(result.done),
    }
