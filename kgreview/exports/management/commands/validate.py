"""manage.py validate [--json] [--as-of ISO]"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from kgreview.core.errors import ValidationFailed
from kgreview.core.instants import AS_OF_HELP, parse_instant
from kgreview.exports.shapes import validate


class Command(BaseCommand):
    help = (
        "Validate the graph (now, or as of an instant) against the SHACL shapes its "
        "ontology implies: edges that break their relation's patterns, concepts without "
        "a type where types are required (KG_REQUIRE_TYPES), attribute values of the "
        "wrong datatype, cycles in acyclic relations. Exits 1 when the graph does not "
        "conform. The shapes themselves: manage.py export --format shacl."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--json",
            action="store_true",
            help='Print {"conforms", "as_of", "violations": [{"focus", "path", "message", '
            '"kind", "concept"}]} instead of sentences.',
        )
        parser.add_argument(
            "--as-of",
            dest="as_of",
            default=None,
            metavar="ISO",
            help=f"Validate the graph as it was at this instant: {AS_OF_HELP}. Default: now.",
        )

    def handle(self, *args, json: bool = False, as_of: str | None = None, **options):
        try:
            at = parse_instant(as_of) if as_of is not None else timezone.now()
        except ValidationFailed as exc:
            raise CommandError(f"--as-of: {exc}") from None
        report = validate(at=at)
        if json:
            self.stdout.write(_dumps(report.as_json()))
        elif report.conforms:
            self.stdout.write("The graph conforms to its ontology's shapes.")
        else:
            n = len(report.violations)
            self.stdout.write(f"{n} violation{'s' if n != 1 else ''} of the ontology's shapes:")
            for v in report.violations:
                self.stdout.write(f"- {v.message}")
        if not report.conforms:
            raise SystemExit(1)


def _dumps(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=1)
