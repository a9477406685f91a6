"""Reads for the review workspace: the filtered queue, its counts, history, bulk pages."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime, time
from urllib.parse import urlencode

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.http import QueryDict
from django.utils import timezone

from kgreview.core.forms import parse_finite, parse_int, parse_row_id
from kgreview.graph.models import Edge, RelationType

from .card import claim_words
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
            run = parse_row_id(query["run"])
            if run is None:
                errors.append("The agent run must be a number: a run's id, from 1.")

        def confidence(name: str) -> float | None:
            raw = query.get(name, "").strip()
            if not raw:
                return None
            value = parse_finite(raw)
            if value is None:
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
    """The (sort value, id) a cursor names; None for one that names no place in the
    queue (not numbers, numbers no column holds, not finite)."""
    if sort not in SORTS:
        return None
    if SORTS[sort] is None:
        pk = parse_row_id(cursor)
        return None if pk is None else (None, pk)
    value, _, pk_text = cursor.rpartition(":")
    pk = parse_row_id(pk_text)
    number = parse_int(value) if sort == "priority" else parse_finite(value)
    if pk is None or number is None:
        return None
    return number, pk


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
    return with_card(qs).first()


#: The rows a card shows with its proposal, joined in the query that loads it. Five
#: joins (six tables): PostgreSQL searches every order of a join of up to
#: ``join_collapse_limit`` (8) tables, and the next card's join of eight, with its sort,
#: took 11 to 31 ms to plan against 1 to 3 ms for these. A card reads nothing of the
#: proposal's ``document`` and only the text of its competency question (``with_card``).
CARD_RELATED = (
    "agent_run",
    "evidence_revision__source",
    "relation",
    "source_concept",
    "target_concept",
)


def with_card(qs: QuerySet[Proposal]) -> QuerySet[Proposal]:
    """``qs`` loading what a card shows in the same query: ``CARD_RELATED`` joined, the
    competency question's text as ``question_text`` (a subquery, planned on its own)."""
    question = Proposal._meta.get_field("competency_question").related_model
    text = question.objects.filter(pk=OuterRef("competency_question_id")).values("text")[:1]
    return qs.select_related(*CARD_RELATED).annotate(question_text=Subquery(text))


def card_proposals() -> QuerySet[Proposal]:
    """Proposals with what their card shows (``with_card``): load a card's with this."""
    return with_card(Proposal.objects.all())


# --- Source view and history ------------------------------------------------------------

STATUS_RANK = {"pending": 0, "held": 1, "accepted": 2, "rejected": 3, "superseded": 4}


def decision_log(
    *, reviewer: str = "", since: date | None = None, until: date | None = None, limit: int = 200
) -> list[Decision]:
    qs = Decision.objects.select_related(
        "user",
        "proposal__source_concept",
        "proposal__target_concept",
        "proposal__relation",
    ).order_by("-created_at", "-id")
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
