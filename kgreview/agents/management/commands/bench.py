"""manage.py bench NAME... — the benchmarks named in the issues, on synthetic data."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from benchmarks import BENCHMARKS, scratch_database


class Command(BaseCommand):
    help = (
        "Run benchmarks in a scratch database of the configured engine (PostgreSQL for "
        "the published figures): " + ", ".join(BENCHMARKS) + "."
    )

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="+", metavar="NAME", choices=sorted(BENCHMARKS))
        parser.add_argument("--json", action="store_true", dest="as_json")
        parser.add_argument("--sources", type=int, help="construct: synthetic lessons")
        parser.add_argument("--concepts", type=int, help="concepts seeded in the graph")
        parser.add_argument("--lookups", type=int, help="resolve: lookups timed")
        parser.add_argument("--proposals", type=int, help="review: pending proposals")
        parser.add_argument("--edges", type=int, help="review: active edges")
        parser.add_argument("--keep", action="store_true", help="keep the scratch database")

    def handle(self, *args, names, as_json, keep, **opts):
        results = []
        for name in names:
            kwargs = {
                k: v
                for k, v in opts.items()
                if k in ("sources", "concepts", "lookups", "proposals", "edges") and v
            }
            fn = BENCHMARKS[name]
            with scratch_database(keep=keep):
                try:
                    results.append(fn(**kwargs))
                except TypeError as exc:
                    raise CommandError(f"{name}: {exc}") from exc
        if as_json:
            self.stdout.write(json.dumps(results if len(results) > 1 else results[0], indent=2))
            return
        for result in results:
            self.stdout.write(json.dumps(result, indent=2))
