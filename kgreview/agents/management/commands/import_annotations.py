"""manage.py import_annotations FILE --format labelstudio|inception|doccano [--map FILE]
[--annotator NAME] [--typesystem FILE] [--texts DIR] [--confidence X] [--json] — a team's
annotations from another tool, as proposals in the review queue."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from construction.annotations import TOOLS
from kgreview.agents.annotations import DEFAULT_CONFIDENCE, annotations_import, folder_texts
from kgreview.agents.models import AgentRun
from kgreview.core.errors import DomainError


def _read(path_text: str, what: str, limit: int) -> bytes:
    path = Path(path_text)
    if path.is_symlink() or not path.is_file():
        raise CommandError(f"{path_text} is not a regular file (symbolic links are not followed).")
    size = path.stat().st_size
    if size > limit:
        raise CommandError(
            f"{path_text} is {size / 1048576:.1f} MB; {what} is {limit / 1048576:.1f} MB at "
            "most (KG_MAX_SOURCE_BYTES). Nothing was imported."
        )
    return path.read_bytes()


class Command(BaseCommand):
    help = (
        "Import annotations made in Label Studio (JSON or JSON-MIN export), INCEpTION/WebAnno "
        "(UIMA CAS XMI with its TypeSystem.xml, the export's ZIP, or CAS JSON) or doccano "
        "(relation "
        "JSONL) as proposals: each text is kept as a source, each labelled span proposes "
        "a concept quoting it, each labelled relation an edge of the relation the mapping "
        "file (--map) gives its label. Every proposal is flagged annotator:TOOL:WHO, so the "
        "Queue decides one annotator's work in bulk. Unmapped labels are reported and "
        "counted, never guessed; bad items are reported one by one and the rest imports "
        "(exit status 1 if anything was left out); a file with nothing usable is refused "
        "whole and writes nothing. Importing the same file again adds nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE")
        parser.add_argument(
            "--format", dest="tool", required=True, choices=sorted(TOOLS), help="the tool"
        )
        parser.add_argument(
            "--map",
            dest="mapping",
            default=None,
            metavar="FILE",
            help='JSON: {"relations": {"label": "relation_key"}, "entities": {"label": '
            '"concept_type_key"}}; a relation label not in it is left out and reported',
        )
        parser.add_argument(
            "--annotator",
            default="",
            help="who annotated, where the file does not say (doccano, a single XMI)",
        )
        parser.add_argument(
            "--typesystem",
            default=None,
            metavar="FILE",
            help="the type system of an INCEpTION XMI file (default: TypeSystem.xml beside it)",
        )
        parser.add_argument(
            "--texts",
            default=None,
            metavar="DIR",
            help="Label Studio: the folder holding the texts its tasks give by URL or path "
            "(/data/upload/…, https://…), found by file name; nothing is downloaded",
        )
        parser.add_argument(
            "--confidence",
            type=float,
            default=DEFAULT_CONFIDENCE,
            help=f"how sure a person's label is taken to be (default {DEFAULT_CONFIDENCE})",
        )
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, file: str, tool: str, mapping, annotator, typesystem, **opts):
        limit = settings.KG_MAX_SOURCE_BYTES
        load_text = None
        if opts["texts"]:
            if tool != "labelstudio":
                raise CommandError("--texts is for Label Studio exports (--format labelstudio).")
            if not Path(opts["texts"]).is_dir():
                raise CommandError(f"{opts['texts']} is not a folder (--texts DIR).")
            load_text = folder_texts(opts["texts"], max_bytes=limit)
        raw = _read(file, "an annotation file", limit)
        mapping_raw = _read(mapping, "a mapping file", limit) if mapping else None
        types_raw = None
        if typesystem:
            types_raw = _read(typesystem, "a type system", limit)
        elif tool == "inception":
            beside = Path(file).with_name("TypeSystem.xml")
            if beside.is_file() and not beside.is_symlink():
                types_raw = _read(str(beside), "a type system", limit)
        try:
            report = annotations_import(
                raw=raw,
                filename=Path(file).name,
                tool=tool,
                mapping=mapping_raw,
                annotator=annotator,
                typesystem=types_raw,
                load_text=load_text,
                confidence=opts["confidence"],
                acting_user=None,  # the command line imports as the system
                trigger=AgentRun.Trigger.CLI,
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from None
        if opts["as_json"]:
            self.stdout.write(json.dumps(report.as_json(), indent=2))
        else:
            self._words(report)
        if report.problems:
            raise CommandError(
                f"{len(report.problems)} item(s) of {report.filename} were left out; the rest "
                "was imported.",
                returncode=1,
            )

    def _words(self, report) -> None:
        for text in report.texts:
            made = sum(text["proposals"].values())
            dropped = sum(text["dropped"].values())
            self.stdout.write(
                f"{text['source_outcome']:>9}  {text['source']} (revision {text['revision']}) "
                f"{text['where']}: {made} proposed, {dropped} already known or left by the "
                f"checks, by {text['annotator']}"
            )
            for outcome in text["outcomes"]:
                into = f" into #{outcome['id']}" if outcome["result"] == "merged" else ""
                self.stdout.write(
                    f"{outcome['result']:>9}  {text['where']}: {outcome['item']}{into}: "
                    f"{outcome.get('detail', '')}"
                )
        for words, count in sorted(report.unmapped.items()):
            self.stdout.write(
                self.style.WARNING(f"{count:>8}  {words}: no mapping; left out, not guessed")
            )
        for skipped in report.skipped:
            self.stdout.write(f"  skipped  {skipped}")
        for problem in report.problems:
            self.stderr.write(self.style.ERROR(f"    error  {problem}"))
        flags = ", ".join(report.flags) or "none"
        self.stdout.write(
            self.style.SUCCESS(
                f"{report.total} proposals queued in {report.seconds:.1f} s (run "
                f"{report.run_id}); decide an annotator's in the Queue filtered by flag: {flags}."
            )
        )
