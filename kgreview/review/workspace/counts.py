"""The queue's counts (by status, kind, relation and flag) for a filter: sums over the
queue's tally (``review.queue_index``) when the filter is on those alone, else counted
(exactly up to ``COUNT_EXACT_UP_TO`` proposals, estimated from a sample above it on
PostgreSQL); cached for ``COUNTS_TTL`` seconds per filter."""

from __future__ import annotations

from dataclasses import replace

from django.db import connection
from django.db.models import Count, QuerySet

from kgreview.review import queue_index
from kgreview.review.models import OPEN_STATUSES, Proposal
from kgreview.review.workspace.selectors import QueueFilter, queue_queryset, shown_flags

COUNTS_TTL = 30
#: A filter the tally cannot answer (source, run, confidence) is counted exactly while it
#: matches at most this many proposals; above it, PostgreSQL estimates from a sample.
COUNT_EXACT_UP_TO = 10_000
#: About how many proposals' rows that sample reads.
COUNT_SAMPLE_ROWS = 25_000


def _tally_answers(f: QueueFilter) -> bool:
    """The tally is kept per (status, kind, relation, flags): it answers a filter on
    those alone, exactly (not "needs discussion", which is counted like a source, nor
    the adjudication stage)."""
    return (
        not f.source
        and f.run is None
        and f.cmin is None
        and f.cmax is None
        and not f.discussion
        and not f.stage
    )


def queue_counts_cached(f: QueueFilter) -> dict:
    """``queue_counts``: read from the tally when it answers the filter (a decision only
    adds its own rows there, so nothing is emptied); otherwise kept per filter for
    ``COUNTS_TTL`` seconds, whatever is decided meanwhile."""
    if _tally_answers(f):
        return queue_counts(f)
    from django.core.cache import cache

    key = f"kg:queue-counts:v2:{f.query()}"
    counts = cache.get(key)
    if counts is None:
        counts = queue_counts(f)
        cache.set(key, counts, COUNTS_TTL)
    return counts


def queue_counts(f: QueueFilter) -> dict:
    """Live counts for each filter value, given the other filters.

    Status, kind, relation and flags are summed from the queue's tally (a few hundred
    rows, whatever the queue's size). A filter on source, run or confidence is counted
    from the proposals it matches, grouped the tally's way: exactly while they are at most
    ``COUNT_EXACT_UP_TO``; above that, on PostgreSQL, from a sample of the table, and the
    counts say they are estimates (``estimated``).
    """
    estimated = False
    if _tally_answers(f):
        rows = queue_index.tally_rows()
    else:
        rows, estimated = _subset_rows(f)
    counts = facet_counts(queue_index.grouped(rows), f)
    if estimated:
        for facet in ("status", "kind", "relation", "flags"):
            counts[facet] = {k: _rounded(v) for k, v in counts[facet].items()}
        counts["total"] = _rounded(counts["total"])
    return {
        **counts,
        "estimated": estimated,
        "exact_up_to": COUNT_EXACT_UP_TO,
    }


def _subset_rows(f: QueueFilter) -> tuple[list[queue_index.TallyRow], bool]:
    """Tally-shaped rows of the proposals matching the filter's source, run and
    confidence bounds; and whether they are estimated from a sample."""
    base = queue_queryset(replace(f, status="all", kinds=(), relation="", flags=())).order_by()
    grouped = base.values_list("status", "kind", "relation_key", "flags_text").annotate(
        n=Count("id")
    )
    if connection.vendor != "postgresql":
        return list(grouped), False
    # The planner's guess first: far above the limit, counting up to it is wasted work.
    if (
        _planned_rows(base) <= 4 * COUNT_EXACT_UP_TO
        and base.values("pk")[: COUNT_EXACT_UP_TO + 1].count() <= COUNT_EXACT_UP_TO
    ):
        return list(grouped), False
    return _sampled(grouped), True


def _planned_rows(qs: QuerySet) -> float:
    """How many rows PostgreSQL expects ``qs`` to return (its plan, not a count)."""
    import json

    try:
        plan = json.loads(qs.explain(format="json"))
        return float(plan[0]["Plan"]["Plan Rows"])
    except (ValueError, KeyError, IndexError, TypeError):
        return 0.0


def _sampled(grouped: QuerySet) -> list[queue_index.TallyRow]:
    """The grouped counts from a block sample of the proposals, scaled up (PostgreSQL)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [Proposal._meta.db_table]
        )
        found = cursor.fetchone()
        total = max(float(found[0]) if found else 0.0, 1.0)
        percent = min(100.0, 100.0 * COUNT_SAMPLE_ROWS / total)
        sql, params = grouped.query.sql_with_params()
        table = f'FROM "{Proposal._meta.db_table}"'
        sql = sql.replace(table, f"{table} TABLESAMPLE SYSTEM ({percent:.6f}) REPEATABLE (7)", 1)
        cursor.execute(sql, params)
        scale = 100.0 / percent
        return [(s, k, r, fl, round(n * scale)) for s, k, r, fl, n in cursor.fetchall()]


def _rounded(estimate: float) -> int:
    """An estimate to two significant figures: it claims no more than it knows."""
    if estimate < 100:
        return round(estimate)
    digits = len(str(int(estimate))) - 2
    return int(round(estimate, -digits))


def facet_counts(rows: list[tuple[str, str, str, frozenset[str], int]], f: QueueFilter) -> dict:
    """Each facet's counts given the other facets, from rows of (status, kind, relation,
    flags, how many): the same sums the four grouped queries over proposals would give."""

    def status_ok(status: str) -> bool:
        if f.status == "open":
            return status in OPEN_STATUSES
        return f.status == "all" or status == f.status

    def matches(row, ignore: str) -> bool:
        status, kind, relation, flags, _n = row
        return (
            (ignore == "status" or status_ok(status))
            and (ignore == "kind" or not f.kinds or kind in f.kinds)
            and (ignore == "relation" or not f.relation or relation == f.relation)
            and (ignore == "flags" or all(x in flags for x in f.flags))
        )

    status: dict[str, int] = {}
    kinds: dict[str, int] = {}
    relations: dict[str, int] = {}
    shown = shown_flags(f)
    flags = dict.fromkeys(shown, 0)
    for row in rows:
        n = row[4]
        if matches(row, "status"):
            status[row[0]] = status.get(row[0], 0) + n
        if matches(row, "kind"):
            kinds[row[1]] = kinds.get(row[1], 0) + n
        # The relation facet counts the rows whose kind names a relation (its columns
        # fill ``relation_key``: an edge to add).
        if row[2] and matches(row, "relation"):
            relations[row[2]] = relations.get(row[2], 0) + n
        if matches(row, "flags"):
            for flag in shown:
                if flag in row[3]:
                    flags[flag] += n
    status["open"] = sum(status.get(s, 0) for s in OPEN_STATUSES)
    status["all"] = sum(v for k, v in status.items() if k != "open")
    return {
        "status": status,
        "kind": kinds,
        "relation": relations,
        "flags": flags,
        "total": status.get(f.status, 0),
    }
