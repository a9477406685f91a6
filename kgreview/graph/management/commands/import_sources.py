"""manage.py import_sources PATH... — import Markdown lessons as sources."""

from __future__ import annotations

import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from kgreview.graph.importing import import_paths


class Command(BaseCommand):
    help = (
        "Import Markdown files or folders of them as sources. Optional front matter "
        "(title:, slug: between --- lines); the slug defaults to the file stem. A changed "
        "file adds a revision, an unchanged one adds nothing, a bad one is reported and "
        "the rest of the batch still imports (exit status 1 if any file failed)."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--json", action="store_true", help="print one JSON document")
        parser.add_argument(
            "--max-bytes",
            type=int,
            default=None,
            help="largest accepted file in bytes "
            f"(default KG_MAX_SOURCE_BYTES={settings.KG_MAX_SOURCE_BYTES})",
        )

    def handle(self, *args, **opts):
        max_bytes = opts["max_bytes"] or settings.KG_MAX_SOURCE_BYTES
        report = import_paths(opts["paths"], max_bytes=max_bytes)
        if opts["json"]:
            self.stdout.write(json.dumps(report.as_json(), indent=2))
        else:
            for path, result in report.results:
                self.stdout.write(
                    f"{result.outcome:>9}  {result.source.slug} (revision "
                    f"{result.revision.number})  {path}"
                )
            for problem in report.problems:
                self.stderr.write(self.style.ERROR(f"    error  {problem.path}: {problem.message}"))
            counts = report.as_json()["counts"]
            self.stdout.write(
                self.style.SUCCESS(
                    f"{counts['created']} created, {counts['revised']} revised, "
                    f"{counts['unchanged']} unchanged, {counts['errors']} failed."
                )
            )
        if report.problems:
            raise CommandError(
                f"{len(report.problems)} file(s) could not be imported; the others were.",
                returncode=1,
            )
