"""manage.py import_ontology FILE [--map broader=part_of ...] [--format ...] [--json] —
import a vocabulary (SKOS, OWL) as one batch of proposals."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from construction.vocab_plan import MAPPABLE
from construction.vocab_read import READABLE
from kgreview.agents.models import AgentRun
from kgreview.agents.ontology_import import ontology_import, vocabulary_limits
from kgreview.core.errors import DomainError


class Command(BaseCommand):
    help = (
        f"Import a vocabulary file ({READABLE}: Turtle, RDF/XML, N-Triples, JSON-LD) as one "
        "batch of proposals a curator decides: SKOS concepts with their labels as names "
        "and aliases, schemes and top concepts as concept types, and the SKOS relations "
        "you map (--map broader=part_of); OWL classes as types, object properties as "
        "relation types with patterns, datatype properties as attributes, individuals as "
        "typed concepts. The file is kept as a source; importing it again adds nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE")
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="SKOS=RELATION",
            help=f"map a SKOS relation ({', '.join(MAPPABLE)}) to a relation of the graph; "
            "repeat it or separate pairs with commas. Unmapped ones are reported, not imported",
        )
        parser.add_argument(
            "--format",
            dest="syntax",
            default=None,
            help="turtle, xml (RDF/XML), nt (N-Triples) or json-ld; by default read from "
            "the file name, else from its first characters",
        )
        parser.add_argument(
            "--lang", default="en", help="the language names are taken in (default en)"
        )
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, file: str, map: list[str], syntax, lang: str, as_json: bool, **o):
        path = Path(file)
        if path.is_symlink() or not path.is_file():
            raise CommandError(f"{file} is not a regular file (symbolic links are not followed).")
        limit = vocabulary_limits().max_bytes
        if path.stat().st_size > limit:
            raise CommandError(
                f"{file} is {path.stat().st_size / 1048576:.1f} MB; a vocabulary is "
                f"{limit // 1048576} MB at most (KG_VOCABULARY_MAX_BYTES)."
            )
        try:
            summary = ontology_import(
                raw=path.read_bytes(),
                filename=path.name,
                syntax=syntax,
                relation_map=map,
                lang=lang,
                acting_user=None,  # the command line imports as the system
                trigger=AgentRun.Trigger.CLI,
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from None
        if as_json:
            self.stdout.write(json.dumps(summary.as_json(), indent=2))
            return
        self.stdout.write(
            f"{summary.source_outcome} source {summary.source_slug} (revision "
            f"{summary.revision}, {summary.syntax}); import run #{summary.run_id}."
        )
        for kind, count in sorted(summary.proposed.items()):
            self.stdout.write(f"{count:>8}  {kind}")
        for item in summary.skipped_by_reason():
            self.stdout.write(self.style.WARNING(f"{item['count']:>8}  left out: {item['reason']}"))
        self.stdout.write(
            self.style.SUCCESS(
                f"{summary.total} proposals queued in {summary.seconds:.1f} s; decide them "
                f"in the queue filtered by run {summary.run_id}."
            )
        )
