"""manage.py vocabulary --preset NAME | --file PATH [--json]; manage.py vocabulary --list."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from kgreview.core.errors import DomainError
from kgreview.graph.models import RelationType
from kgreview.graph.vocabulary_files import load_file, load_preset, preset_names
from kgreview.review.vocabulary import vocabulary_install, vocabulary_installed


class Command(BaseCommand):
    help = (
        "Install a relation vocabulary: a preset (curriculum, documentation) or your own "
        "JSON or YAML file with the same fields. Adds the relations that are missing, "
        "describes changed ones again, retires the active relations the vocabulary does "
        "not name (only while they hold no active edge and no open proposal), all in one "
        "transaction; installing it again changes nothing. --list shows the presets and "
        "the graph's relations."
    )

    def add_arguments(self, parser):
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--preset", metavar="NAME", help=f"one of {', '.join(preset_names())}")
        which.add_argument("--file", metavar="PATH", help="a .json, .yaml or .yml file")
        which.add_argument(
            "--list",
            action="store_true",
            dest="show_list",
            help="the presets and the graph's relations",
        )
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print one JSON document"
        )

    def handle(self, *args, preset, file, show_list: bool, as_json: bool, **opts):
        if show_list:
            return self._list(as_json=as_json)
        try:
            vocabulary = load_preset(preset) if preset else load_file(file)
            # Run by the operator from a shell: the system's own change, no person.
            report = vocabulary_install(vocabulary=vocabulary, acting_user=None)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        if as_json:
            self.stdout.write(_dumps(report.as_json()))
            return
        for what, keys in (
            ("added", report.created),
            ("described", report.described),
            ("reactivated", report.reactivated),
            ("retired", report.retired),
        ):
            for key in keys:
                self.stdout.write(f"{what:>11}  {key}")
        self.stdout.write(self.style.SUCCESS(report.summary()))

    def _list(self, *, as_json: bool) -> None:
        presets = {}
        for name in preset_names():
            vocabulary = load_preset(name)
            presets[name] = {"description": vocabulary.description, "relations": vocabulary.keys}
        relations = [
            {"key": r.key, "label": r.label, "verb": r.verb, "active": r.active}
            for r in RelationType.objects.order_by("key")
        ]
        installed = vocabulary_installed()
        if as_json:
            if installed is not None:
                installed = {**installed, "at": installed["at"].isoformat()}
            self.stdout.write(
                _dumps({"presets": presets, "installed": installed, "relations": relations})
            )
            return
        self.stdout.write("Presets:")
        for name, preset in presets.items():
            self.stdout.write(f"  {name:<14} {', '.join(preset['relations'])}")
            self.stdout.write(f"  {'':<14} {preset['description']}")
        if installed is not None:
            self.stdout.write(
                f"Last installed here: {installed['name']} ({installed['origin']}), "
                f"{installed['at']:%Y-%m-%d %H:%M}."
            )
        self.stdout.write("This graph's relations:")
        for row in relations:
            state = "" if row["active"] else "  (retired)"
            self.stdout.write(f"  {row['key']:<16} source {row['verb']} target{state}")


def _dumps(data) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=list)
