"""Grouped figures in one query: ``{value: figure}`` for each value of a column."""

from __future__ import annotations

from django.db.models import Aggregate, Count, QuerySet


def tally(rows: QuerySet, key: str, figure: Aggregate | None = None) -> dict:
    """``rows`` grouped by the column ``key``: each value with its ``figure`` (by default
    how many rows hold it), in one GROUP BY query. Values no row holds are absent."""
    grouped = rows.values_list(key).annotate(figure=figure or Count("id"))
    return dict(grouped.values_list(key, "figure"))
