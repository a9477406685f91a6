"""manage.py agreement [--since ISO] [--json]"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from kgreview.core.errors import ValidationFailed
from kgreview.core.instants import AS_OF_HELP, parse_instant
from kgreview.review.agreement import ratings


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _interval(row: dict) -> str:
    low, high = row["interval"]["low"], row["interval"]["high"]
    return "–" if low is None else f"{low:.3f}–{high:.3f}"


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return out


GROUP_HEADERS = ["", "items", "alpha", "95% interval", "kappa", "observed"]


def _group_rows(groups: dict, flag: bool = False) -> list[list[str]]:
    return [
        [
            key + (" (people cannot agree)" if flag and row.get("below_threshold") else ""),
            str(row["items"]),
            _num(row["alpha"]),
            _interval(row),
            _num(row["kappa"]),
            _num(row["observed"]),
        ]
        for key, row in groups.items()
    ]


def render_text(report: dict) -> list[str]:
    """The report as readable tables."""
    overall = report["overall"]
    lines = [
        f"Agreement over {overall['items']} proposals decided twice "
        f"({overall['votes']} votes{', since ' + overall['since'] if overall['since'] else ''}).",
        "",
    ]
    if overall["note"]:
        lines += [overall["note"], ""]
    lines += _table(GROUP_HEADERS, _group_rows({"all": overall}))
    if report["relations"]:
        lines += ["", "Per relation type:"]
        lines += _table(GROUP_HEADERS, _group_rows(report["relations"], flag=True))
    if report["kinds"]:
        lines += ["", "Per kind (proposals that are not edges):"]
        lines += _table(GROUP_HEADERS, _group_rows(report["kinds"]))
    if report["pairs"]:
        lines += ["", "Pairs of reviewers (Cohen's kappa):"]
        lines += _table(
            ["pair", "items", "kappa", "observed"],
            [
                [" & ".join(p["reviewers"]), str(p["items"]), _num(p["kappa"]), _num(p["observed"])]
                for p in report["pairs"]
            ],
        )
    if report["reviewers"]:
        lines += ["", "Reviewers:"]
        lines += _table(
            [
                "reviewer",
                "items",
                "observed",
                "kappa",
                "w/ adjudication",
                "per hour",
                "median s",
                "reversed",
            ],
            [
                [
                    r["username"],
                    str(r["items"]),
                    _num(r["observed"]),
                    _num(r["kappa"]),
                    _num(r["with_adjudication"]),
                    _num(r["per_hour"], 1),
                    _num(r["median_seconds"], 0),
                    _num(r["reversed_share"]),
                ]
                for r in report["reviewers"]
            ],
        )
    lines += ["", *overall["notes"]]
    return lines


class Command(BaseCommand):
    help = (
        "How far reviewers agree on the proposals double review sent to two of them: "
        "Krippendorff's alpha (with a 95% bootstrap interval), kappa and observed "
        "agreement overall, per relation type and per kind; Cohen's kappa per pair of "
        "reviewers; and each reviewer's agreement, agreement with adjudication, speed "
        "and share of acceptances others reversed."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--since",
            default=None,
            metavar="ISO",
            help=f"Only votes and decisions from this instant on: {AS_OF_HELP}. Default: all time.",
        )
        parser.add_argument(
            "--json",
            action="store_true",
            help='Print {"overall", "relations", "kinds", "reviewers", "pairs"} as JSON.',
        )

    def handle(self, *args, since: str | None = None, json: bool = False, **options):
        try:
            start = parse_instant(since) if since is not None else None
        except ValidationFailed as exc:
            raise CommandError(f"--since: {exc}") from None
        report = ratings(since=start)
        if json:
            self.stdout.write(_dumps(report))
        else:
            self.stdout.write("\n".join(render_text(report)))


def _dumps(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=1)
