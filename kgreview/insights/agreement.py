"""The dashboard's Agreement section: review's agreement report, as the person reading
it may see it (``review.agreement.seen_by``), in rows the template shows as they are."""

from __future__ import annotations

from kgreview.core.permissions import is_curator
from kgreview.review.agreement import cached_ratings, seen_by

LOW_WORDS = "people cannot agree on these"


def verdict(row: dict, min_items: int) -> str:
    """What a group's alpha says, in words (never by colour alone)."""
    if row.get("below_threshold"):
        return LOW_WORDS
    if row["items"] < min_items:
        return f"too few to judge (fewer than {min_items})"
    if row["alpha"] is None:
        return "one answer only"
    return "agreed enough"


def section(user) -> dict:
    """The figures ``user`` may read: the groups for everyone, every reviewer's row for
    a curator, the person's own row for anyone else. Read from the minute's cache."""
    report = seen_by(cached_ratings(), user)
    overall = report["overall"]
    min_items = overall["min_items"]

    def rows(groups: dict) -> list[dict]:
        return [
            {"key": key, **row, "verdict": verdict(row, min_items)} for key, row in groups.items()
        ]

    relations = rows(report["relations"])
    return {
        "overall": overall,
        "relations": relations,
        "kinds": rows(report["kinds"]),
        "low": [r for r in relations if r.get("below_threshold")],
        "reviewers": report["reviewers"],
        "pairs": report["pairs"],
        "everyone": is_curator(user),
        "low_words": LOW_WORDS,
    }
