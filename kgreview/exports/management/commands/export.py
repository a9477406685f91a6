"""manage.py export --format jsonld|csv|graphml|turtle|skos|owl|shacl [--as-of ISO] [--out PATH]"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from kgreview.core.errors import ValidationFailed
from kgreview.core.instants import AS_OF_HELP, parse_instant
from kgreview.exports import writers
from kgreview.exports.writers.neo4j_csv import CSV_FILES
from kgreview.exports.writers.records import ExportStats, iso


def _atomic_write(path: Path, chunks, *, binary: bool) -> None:
    """Write next to ``path`` and rename, so a failed export never leaves half a file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                out.write(chunk if binary else chunk.encode("utf-8"))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Command(BaseCommand):
    help = (
        "Export the graph as of an instant (default: now) with every edge's provenance. "
        "jsonld: one JSON-LD document; graphml: one GraphML file; csv: nodes.csv, "
        "edges.csv and relation_types.csv for neo4j-admin database import; turtle, skos, "
        "owl: the graph as RDF (Turtle); shacl: the shapes its ontology implies. "
        "Without --out the export goes to stdout (csv as a zip, so redirect it to a "
        "file: manage.py export --format csv > graph.zip). Counts go to stderr. "
        "Formats and the neo4j import command: kgreview/exports/CONTEXT.md."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--format", required=True, choices=sorted(writers.FORMATS), help="What to write."
        )
        parser.add_argument(
            "--as-of",
            dest="as_of",
            default=None,
            metavar="ISO",
            help=f"The instant to export the graph as of: {AS_OF_HELP}. Default: now.",
        )
        parser.add_argument(
            "--out",
            default=None,
            metavar="PATH",
            help=(
                "Where to write. jsonld, graphml and the Turtle formats: a file, or an "
                "existing directory to write a dated file into. csv: a directory (created "
                "if missing) for the three .csv files, or a path ending in .zip for the "
                "zip. Default: stdout."
            ),
        )

        parser.add_argument(
            "--raw-cells",
            dest="raw_cells",
            action="store_true",
            help=(
                "csv only: keep text cells that start with =, +, -, @, a tab or a carriage "
                "return as they are (for neo4j-admin import). By default such cells get a "
                "leading apostrophe so a spreadsheet opening the file never runs them."
            ),
        )

    def handle(
        self,
        *args,
        format: str,
        as_of: str | None,
        out: str | None,
        raw_cells: bool = False,
        **options,
    ):
        if as_of is None:
            at = timezone.now()
        else:
            try:
                at = parse_instant(as_of)
            except ValidationFailed as exc:
                raise CommandError(f"--as-of: {exc}") from None
        fmt = writers.FORMATS[format]
        if raw_cells and not fmt.cells:
            raise CommandError(f"--raw-cells is for the csv export, not {format}.")
        self.raw_cells = raw_cells
        stats = ExportStats()
        if out is None:
            where = "stdout"
            self._to_stdout(fmt, at, stats)
        else:
            where = self._to_path(fmt, at, stats, Path(out))
        vocabulary = f", {stats.relation_types} relation types" if stats.relation_types else ""
        self.stderr.write(
            f"Exported {stats.concepts} concepts, {stats.edges} edges{vocabulary} "
            f"as of {iso(at)} to {where}."
        )

    def _to_stdout(self, fmt: writers.Format, at, stats: ExportStats) -> None:
        buffer = getattr(self.stdout, "buffer", None)
        if fmt.binary:
            if buffer is None:
                raise CommandError(
                    "The csv export is a zip; give --out DIR (or --out FILE.zip), "
                    "or redirect stdout to a file."
                )
            if self.stdout.isatty():
                raise CommandError(
                    "The csv export is a zip, not text for a terminal: redirect stdout "
                    "to a file (> graph.zip) or give --out DIR."
                )
        self.stdout.flush()
        for chunk in fmt.stream(at=at, stats=stats, raw_cells=self.raw_cells):
            if buffer is not None:
                buffer.write(chunk if fmt.binary else chunk.encode("utf-8"))
            else:
                self.stdout.write(chunk, ending="")
        if buffer is not None:
            buffer.flush()
        self.stdout.flush()

    def _to_path(self, fmt: writers.Format, at, stats: ExportStats, path: Path) -> str:
        if fmt.key == "csv" and path.suffix.lower() != ".zip":
            if path.exists() and not path.is_dir():
                raise CommandError(
                    f"--out {path}: the csv export writes three files; give a directory "
                    "or a path ending in .zip."
                )
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise CommandError(f"--out {path}: {exc.strerror}.") from None
            for name, write in CSV_FILES:
                _atomic_write(
                    path / name,
                    write(at=at, stats=stats, raw_cells=self.raw_cells),
                    binary=False,
                )
            return str(path)
        if path.is_dir():
            path = path / writers.filename(fmt, at)
        if not path.parent.is_dir():
            raise CommandError(f"--out {path}: the directory {path.parent} does not exist.")
        _atomic_write(
            path, fmt.stream(at=at, stats=stats, raw_cells=self.raw_cells), binary=fmt.binary
        )
        return str(path)
