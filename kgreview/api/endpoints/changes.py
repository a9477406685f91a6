"""What changed between two instants: /v1/diff."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone
from ninja import Query

from kgreview.graph import history

from .. import schemas as s
from ..app import ApiError, answers, api, served
from ..params import instant
from ..serializers import diff_out, edges_by_id
from ..throttle import EVERY, HEAVY


@api.get(
    "/v1/diff",
    response=answers(s.DiffOut, 400),
    tags=["time travel"],
    throttle=[EVERY, HEAVY],
)
@served
def diff(
    request,
    since: datetime,
    until: datetime | None = None,
    limit: int = Query(200, ge=1, le=1000),  # noqa: B008
):
    """What changed between two instants (``until`` defaults to now): edges added,
    invalidated, and superseded (with the row that replaced each), concepts added and
    merged. Lists hold at most ``limit`` rows each; ``counts`` has the totals. A window
    that runs backwards (``since`` after ``until``) is refused, as on the Changes page."""
    start = instant(since, "since")
    end = instant(until, "until") or timezone.now()
    if start > end:
        raise ApiError(
            400,
            f"since ({start.isoformat()}) is after until ({end.isoformat()}): the window "
            "runs backwards. Swap the two instants.",
        )
    d = history.graph_diff(since=start, until=end, limit=limit)
    rows = edges_by_id(
        [e.pk for e in (*d.added, *d.invalidated)]
        + [e.pk for pair in d.superseded for e in pair if e is not None]
    )
    return diff_out(d, rows)
