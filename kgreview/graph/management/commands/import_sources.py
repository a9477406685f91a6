"""manage.py import_sources PATH... — import documents (Markdown, text, HTML, PDF, Word)."""

from __future__ import annotations

import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from kgreview.core.progress import progress_bar
from kgreview.graph.importing import SUPPORTED, import_paths


class Command(BaseCommand):
    help = (
        f"Import documents ({SUPPORTED}) or folders of them as sources. Markdown may "
        "carry front matter (title:, slug: between --- lines); the slug defaults to the "
        "file name. A changed file adds a revision, an unchanged one adds nothing, a bad "
        "one is reported in words and the rest of the batch still imports (exit status 1 "
        "if any file failed). Symbolic links are refused, never followed; files of other "
        "types inside folders are skipped."
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
        if max_bytes < 1:
            raise CommandError("--max-bytes must be at least 1.")
        with progress_bar(self.stdout, "Importing", enabled=not opts["json"]) as advance:
            # The command imports as the system: no person is attached to these revisions.
            report = import_paths(
                opts["paths"], max_bytes=max_bytes, acting_user=None, progress=advance
            )
        if opts["json"]:
            self.stdout.write(json.dumps(report.as_json(), indent=2))
        else:
            for path, result in report.results:
                revision = result.revision
                pages = revision.page_count
                size = f"{pages} pages" if pages else f"{revision.word_count:,} words"
                self.stdout.write(
                    f"{result.outcome:>9}  {result.source.slug} (revision "
                    f"{revision.number}, {size})  {path}"
                )
            for note in report.notes:
                self.stdout.write(self.style.WARNING(f"     note  {note.path}: {note.message}"))
            for problem in report.problems:
                self.stderr.write(self.style.ERROR(f"    error  {problem.path}: {problem.message}"))
            counts = report.as_json()["counts"]
            skipped = (
                f", {counts['skipped']} skipped (not a document type kgreview reads)"
                if counts["skipped"]
                else ""
            )
            self.stdout.write(
                self.style.SUCCESS(
                    f"{counts['created']} created, {counts['revised']} revised, "
                    f"{counts['unchanged']} unchanged, {counts['errors']} failed{skipped}."
                )
            )
        if report.problems:
            raise CommandError(
                f"{len(report.problems)} file(s) could not be imported; the others were.",
                returncode=1,
            )
