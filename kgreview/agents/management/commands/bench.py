"""manage.py bench NAME... [--scale 1|5|10] — the benchmarks named in the issues, on
synthetic data in a scratch database that is dropped afterwards."""

from __future__ import annotations

import inspect
import json
import logging
import os

from django.core.management.base import BaseCommand, CommandError

from benchmarks import BENCHMARKS, benchmark, scratch_database, seeds
from benchmarks.common import SCALES, calibration

SIZES = ("sources", "concepts", "lookups", "proposals", "edges")


class Command(BaseCommand):
    help = (
        "Run benchmarks in a scratch database of the configured engine (PostgreSQL for "
        "the published figures): " + ", ".join(BENCHMARKS) + ". Each result carries this "
        "machine's calibration figures, to compare results from different machines."
    )

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="*", metavar="NAME", choices=sorted(BENCHMARKS))
        parser.add_argument("--json", action="store_true", dest="as_json")
        parser.add_argument(
            "--scale",
            type=int,
            choices=SCALES,
            default=1,
            help="1: 50,000 concepts, 200,000 edges, 100,000 proposals; 5 and 10 multiply them",
        )
        parser.add_argument("--sources", type=int, help="construct: synthetic lessons")
        parser.add_argument("--concepts", type=int, help="override: concepts seeded")
        parser.add_argument("--lookups", type=int, help="resolve: lookups timed")
        parser.add_argument("--proposals", type=int, help="override: pending proposals")
        parser.add_argument("--edges", type=int, help="override: edges seeded")
        parser.add_argument("--keep", action="store_true", help="keep the scratch database")
        parser.add_argument(
            "--fresh",
            action="store_true",
            help="seed afresh instead of copying a kept seed (PostgreSQL; see benchmarks/seeds.py)",
        )
        parser.add_argument(
            "--drop-seeds", action="store_true", help="drop every kept seed database first"
        )

    def handle(self, *args, names, as_json, keep, scale, fresh, drop_seeds, **opts):
        if drop_seeds:
            self.stderr.write(f"Dropped {seeds.drop_all()} kept seed database(s).")
        if not names:
            if drop_seeds:
                return
            raise CommandError("Name at least one benchmark: " + ", ".join(BENCHMARKS) + ".")
        if fresh:
            os.environ["KG_BENCH_SEEDS"] = "0"
        # A benchmark asks for refusals on purpose (a learning path over the limit): the
        # 400s it is answered are counted in its result, not logged one by one.
        logging.getLogger("django.request").setLevel(logging.ERROR)
        results = []
        for name in names:
            fn = benchmark(name)
            kwargs = {k: v for k, v in opts.items() if k in SIZES and v}
            takes = inspect.signature(fn).parameters
            if "scale" in takes:
                kwargs["scale"] = scale
            elif scale != 1:
                raise CommandError(f"{name} measures fixed documents; --scale does not apply")
            unknown = sorted(set(kwargs) - set(takes))
            if unknown:
                raise CommandError(f"{name} takes no --{', --'.join(unknown)}")
            with scratch_database(keep=keep):
                figures = calibration()
                result = fn(**kwargs)
                seeded = list(seeds.LOG)
            results.append(
                {
                    **result,
                    "scale": kwargs.get("scale"),
                    "calibration": figures,
                    "seeds": seeded,
                }
            )
            if not as_json:
                self.stdout.write(json.dumps(results[-1], indent=2))
                self.stdout.flush()
        if as_json:
            self.stdout.write(json.dumps(results if len(results) > 1 else results[0], indent=2))
