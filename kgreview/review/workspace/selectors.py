"""Reads for the review workspace: the filtered queue, history, bulk pages; the queue's
counts are ``counts``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime, time
from urllib.parse import urlencode

from django.db.models import Exists, Expression, OuterRef, Q, QuerySet, Subquery
from django.http import QueryDict
from django.utils import timezone

from construction.annotations import is_origin_flag
from kgreview.core.forms import parse_finite, parse_int, parse_row_id
from kgreview.graph.models import ConceptType, Edge, RelationPattern, RelationType
from kgreview.review import provenance, talk
from kgreview.review.models import OPEN_STATUSES, Decision, Proposal, ProposalFlag, ProposalOrigin
from kgreview.review.services import open_twin
from kgreview.review.team import leases
from kgreview.review.workspace.card import claim_words

STATUS_CHOICES = ("pending", "held", "open", "accepted", "rejected", "superseded", "all")
SORTS = {"priority": "priority", "confidence": "confidence", "newest": None}
FLAGS = ("contradiction", "new_concept", "below_gate", "previously_rejected")
PAGE_SIZE = 50
#: The stages a filter may name: only the adjudication queue (a second reviewer's stage
#: is never shown, so that double review stays blind).
STAGES = ("", "adjudicate")


def known_flag(flag: str) -> bool:
    """A flag the Queue filters by: one of ``FLAGS``, or the origin of an annotation
    import (``annotator:TOOL:WHO``: one annotator's work, decided together in bulk)."""
    return flag in FLAGS or is_origin_flag(flag)


def shown_flags(f: QueueFilter) -> tuple[str, ...]:
    """The flags the Queue offers: ``FLAGS``, and the origin flags the filter names."""
    return (*FLAGS, *(x for x in f.flags if x not in FLAGS))


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
    # "adjudicate": the proposals whose two reviewers differ (curators only, ``views``).
    stage: str = ""
    # The assignment this filter came from (``team.assignments``): it selects nothing
    # itself, but tells the focus queue where to go when the assignment runs out.
    assignment: int | None = None
    #: Only cards with an open discussion ("needs discussion"), for curators to find.
    discussion: bool = False

    @classmethod
    def from_query(cls, query: QueryDict) -> tuple[QueueFilter, list[str]]:
        """Parse GET parameters; unusable values are dropped and reported in words."""
        errors: list[str] = []
        status = query.get("status") or "pending"
        if status not in STATUS_CHOICES:
            errors.append(f'Unknown status "{status}"; showing pending proposals.')
            status = "pending"
        kinds = tuple(k for k in query.getlist("kind") if k)
        bad = [k for k in kinds if k not in Proposal.KindChoice.values]
        if bad:
            errors.append(f"Unknown kind: {', '.join(bad)}.")
            kinds = tuple(k for k in kinds if k in Proposal.KindChoice.values)
        flags = tuple(x for x in query.getlist("flag") if x)
        if any(not known_flag(x) for x in flags):
            errors.append(f"Unknown flag: {', '.join(x for x in flags if not known_flag(x))}.")
            flags = tuple(x for x in flags if known_flag(x))
        sort = query.get("sort") or "priority"
        if sort not in SORTS:
            errors.append(f'Unknown sort "{sort}"; sorting by priority.')
            sort = "priority"
        stage = (query.get("stage") or "").strip()
        if stage not in STAGES:
            errors.append(f'Unknown stage "{stage}"; showing every stage.')
            stage = ""
        assignment = None
        if query.get("assignment"):
            assignment = parse_row_id(query["assignment"])
            if assignment is None:
                errors.append("The assignment must be a number: an assignment's id, from 1.")
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
                stage=stage,
                assignment=assignment,
                discussion=query.get("discussion") == "1",
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
        if f.stage:
            items.append(("stage", f.stage))
        if f.assignment is not None:
            items.append(("assignment", str(f.assignment)))
        if f.discussion:
            items.append(("discussion", "1"))
        return items

    def query(self, **overrides) -> str:
        return urlencode(self.params(**overrides))


def queue_queryset(f: QueueFilter) -> QuerySet:
    """Proposals matching the filter. With a flag, the first flag joins the flag rows (the
    status is read there, and the page in the Queue's order off their index, see
    ``queue_order``); any further flag is a semi-join on the same rows."""
    qs = Proposal.objects.all()
    flags = list(dict.fromkeys(f.flags))
    if flags:
        qs = qs.filter(flag_rows__flag=flags[0], **_status_lookup("flag_rows__status", f.status))
    else:
        qs = qs.filter(**_status_lookup("status", f.status))
    if f.kinds:
        qs = qs.filter(kind__in=f.kinds)
    if f.relation:
        qs = qs.filter(relation_key=f.relation)
    if f.source:
        qs = qs.filter(document__slug=f.source)
    if f.run is not None:
        # A submitted proposal's origin number is its token's id, no run.
        qs = qs.filter(origin__run=f.run).exclude(origin__agent__in=ProposalOrigin.SUBMITTED)
    if f.cmin is not None:
        qs = qs.filter(confidence__gte=f.cmin)
    if f.cmax is not None:
        qs = qs.filter(confidence__lte=f.cmax)
    for flag in flags[1:]:
        rows = ProposalFlag.objects.filter(flag=flag, **_status_lookup("status", f.status))
        qs = qs.filter(pk__in=rows.values("proposal_id"))
    if f.stage:
        qs = qs.filter(stage=f.stage)
    if f.discussion:
        qs = qs.filter(talk.in_discussion())
    return qs


def _status_lookup(field: str, status: str) -> dict:
    if status == "open":
        return {f"{field}__in": OPEN_STATUSES}
    return {} if status == "all" else {field: status}


def _order(sort: str, *, reverse: bool = False) -> list[str]:
    column = SORTS[sort]
    fields = ([column] if column else []) + ["id"]
    return [name if reverse else f"-{name}" for name in fields]


def queue_order(f: QueueFilter, *, reverse: bool = False) -> list[str]:
    """The filter's order: the proposals' columns, or with a flag the flag rows' copies of
    them, so the page is read off the flag's index in order (the same order: the rows
    carry the proposal's priority and confidence)."""
    if not f.flags:
        return _order(f.sort, reverse=reverse)
    column = SORTS[f.sort]
    fields = ([f"flag_rows__{column}"] if column else []) + ["flag_rows__proposal_id"]
    return [name if reverse else f"-{name}" for name in fields]


def _keyset_table(qs: QuerySet, f: QueueFilter) -> tuple[str, str]:
    """The table alias and id column the keyset compares: the joined flag rows' with a
    flag, the proposals' otherwise."""
    if f.flags:
        flag_table = ProposalFlag._meta.db_table
        for alias, join in qs.query.alias_map.items():
            if join.table_name == flag_table:
                return alias, "proposal_id"
    return Proposal._meta.db_table, "id"


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


def _after(qs: QuerySet, f: QueueFilter, cursor: str | None, *, before: bool = False) -> QuerySet:
    """Rows after (or before) the cursor in the sort order: a keyset, not an offset.

    A row-value comparison, ``(priority, id) < (p, i)``, lets the index serve the range
    directly; the equivalent OR of two conditions makes PostgreSQL filter row by row.
    """
    if not cursor:
        return qs
    parsed = _parse_cursor(cursor, f.sort)
    if parsed is None:
        return qs
    value, pk = parsed
    column = SORTS[f.sort]
    op = ">" if before else "<"
    table, id_column = _keyset_table(qs, f)
    if column is None:
        return qs.extra(where=[f'"{table}"."{id_column}" {op} %s'], params=[pk])
    return qs.extra(
        where=[f'("{table}"."{column}", "{table}"."{id_column}") {op} (%s, %s)'],
        params=[value, pk],
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
    base = (
        queue_queryset(f)
        .select_related("document", "origin", "source_concept", "target_concept", "relation")
        .annotate(discussion_open=talk.in_discussion())
    )
    if before:
        rows = list(
            _after(base, f, before, before=True).order_by(*queue_order(f, reverse=True))[: size + 1]
        )
        has_more = len(rows) > size
        rows = list(reversed(rows[:size]))
        next_cursor = cursor_of(rows[-1], f.sort) if rows else None
        prev_cursor = cursor_of(rows[0], f.sort) if rows and has_more else None
        return Page(rows, next_cursor, prev_cursor)
    rows = list(_after(base, f, after).order_by(*queue_order(f))[: size + 1])
    has_more = len(rows) > size
    rows = rows[:size]
    return Page(
        rows,
        cursor_of(rows[-1], f.sort) if rows and has_more else None,
        cursor_of(rows[0], f.sort) if rows and after else None,
    )


def next_in_queue(
    f: QueueFilter,
    *,
    after: str | None = None,
    before: str | None = None,
    skip=(),
    exclude_kinds=(),
    reviewer=None,
    limit: int = 1,
) -> list[Proposal]:
    """The next ``limit`` proposals after (or before) a cursor in the filter's order,
    leaving out the kinds the reviewer's role does not decide, and the cards that wait
    for a curator's adjudication. For a ``reviewer`` who decides, also the cards someone
    else holds (``team.leases``) and those waiting for a second reviewer after this one."""
    qs = queue_queryset(f).exclude(pk__in=list(skip))
    if f.stage != Proposal.Stage.ADJUDICATE:
        qs = qs.exclude(stage=Proposal.Stage.ADJUDICATE)
    # --- Needs discussion: a card with an open discussion is served by no focus queue
    # (an anti-join on the open discussions' partial index; ``review.talk``). ---
    qs = qs.exclude(talk.in_discussion())
    if exclude_kinds:
        qs = qs.exclude(kind__in=list(exclude_kinds))
    if reviewer is not None:
        qs = qs.exclude(leases.held_by_others(reviewer)).exclude(
            Q(stage=Proposal.Stage.SECOND) & leases.voted_by(reviewer)
        )
    if before:
        qs = _after(qs, f, before, before=True).order_by(*queue_order(f, reverse=True))
    else:
        qs = _after(qs, f, after).order_by(*queue_order(f))
    return list(with_card(qs)[:limit])


def adjudication_count() -> int:
    """How many proposals wait for a curator because their two reviewers differ."""
    return Proposal.objects.filter(
        stage=Proposal.Stage.ADJUDICATE, status__in=OPEN_STATUSES
    ).count()


#: The rows a card shows with its proposal, joined in the query that loads it. Five
#: joins (six tables): PostgreSQL searches every order of a join of up to
#: ``join_collapse_limit`` (8) tables, and the next card's join of eight, with its sort,
#: took 11 to 31 ms to plan against 1 to 3 ms for these. A card reads nothing of the
#: proposal's ``document``; what higher apps add comes in subqueries (``with_card``).
CARD_RELATED = (
    "origin",
    "evidence_revision__source",
    "relation",
    "source_concept",
    "target_concept",
)


#: Columns a higher app adds to the query of every card, by name: the questions app adds
#: the competency question that asked for a proposal (``question_id``, ``question_text``),
#: which the focus card shows when present. Review itself names none of them.
CARD_ANNOTATIONS: dict[str, Callable[[], Expression]] = {}


def card_annotation(name: str, expression: Callable[[], Expression]) -> None:
    """Add ``name`` to every card's query, computed by ``expression()`` (a subquery
    against ``OuterRef("pk")``, planned on its own); called from an ``AppConfig.ready``."""
    CARD_ANNOTATIONS[name] = expression


def _end_type(column: str, field: str) -> Subquery:
    """The ``field`` of the concept type of the concept in the proposal's ``column``."""
    return Subquery(ConceptType.objects.filter(concepts__pk=OuterRef(column)).values(field)[:1])


def end_types() -> dict[str, Subquery]:
    """Both ends' concept types (``source_type_key``, ``source_type_label``,
    ``target_type_key``, ``target_type_label``; read by ``card._end_types``), as scalar
    subqueries planned on their own: the join of ``CARD_RELATED`` stays as it is."""
    return {
        f"{role}_type_{field}": _end_type(f"{role}_concept_id", field)
        for role in ("source", "target")
        for field in ("key", "label")
    }


def with_card(qs: QuerySet[Proposal]) -> QuerySet[Proposal]:
    """``qs`` loading what a card shows in the same query: ``CARD_RELATED`` joined, both
    ends' types (``end_types``), and the columns higher apps add (``CARD_ANNOTATIONS``)."""
    extra = {name: expression() for name, expression in CARD_ANNOTATIONS.items()}
    # Whether its relation has an active pattern: the blockers read the patterns only then.
    extra["relation_patterned"] = Exists(
        RelationPattern.objects.filter(relation_id=OuterRef("relation_id"), active=True)
    )
    # The talk bar's count and state ("3 comments", "in discussion"), in the same query.
    extra["comment_count"] = talk.comment_count()
    extra["discussion_open"] = talk.in_discussion()
    # The open proposal stating the same fact as its inverse twin (an edge's; none for
    # the other kinds, whose end keys are empty): the card names it without a query.
    extra["open_twin_id"] = open_twin()
    return qs.select_related(*CARD_RELATED).annotate(**end_types(), **extra)


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
    "provenance__proposal",
)


def life_rows() -> QuerySet[Edge]:
    """Edge rows with what the edge page shows, but not the quoted revision's full text."""
    return Edge.objects.select_related(*LIFE_RELATED).defer("evidence_revision__text")


def edge_life(edge: Edge) -> list[Edge]:
    """Every row of one fact's history, oldest first: what it replaced and what replaced it;
    each row with ``made``, its provenance (empty for a row no decision made)."""
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
    for row in chain:
        row.made = provenance.of(row)  # type: ignore[attr-defined]
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
