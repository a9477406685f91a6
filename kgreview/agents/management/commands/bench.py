"""manage.py bench NAME... [--scale 1|5|10] [--json] [--profile] — the benchmarks named in
the issues, on synthetic data in a scratch database that is dropped afterwards.

Each result carries the machine's calibration taken right before and right after its
measurement, and its timing figures normalised to the reference machine
(``benchmarks.measure``). With ``--json`` each result is printed as one line of JSON as
soon as its benchmark finishes (JSON Lines), so an interrupted run keeps what finished."""

from __future__ import annotations

import inspect
import json
import logging
import os

from django.core.management.base import BaseCommand, CommandError

from benchmarks import BENCHMARKS, benchmark, measure, scratch_database, seeds
from benchmarks.common import SCALES

SIZES = ("sources", "concepts", "lookups", "proposals", "edges", "decisions", "pause_ms")


class Command(BaseCommand):
    help = (
        "Run benchmarks in a scratch database of the configured engine (PostgreSQL for "
        "the published figures): " + ", ".join(BENCHMARKS) + ". Each result carries this "
        "machine's calibration before and after its measurement and its figures normalised "
        "to the reference machine (docs/performance.md), to compare results from different "
        "machines."
    )

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="*", metavar="NAME", choices=sorted(BENCHMARKS))
        parser.add_argument(
            "--json",
            action="store_true",
            dest="as_json",
            help="one line of JSON per benchmark, printed as it finishes (JSON Lines)",
        )
        parser.add_argument(
            "--profile",
            action="store_true",
            help="where each benchmark's measured time goes (SQL, templates, middleware, "
            "the garbage collector, other Python): a table on stderr and a profile block in "
            "the result",
        )
        parser.add_argument(
            "--no-calibration",
            action="store_false",
            dest="calibrate",
            help="no calibration (a memory figure taken in a fresh process)",
        )
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
        parser.add_argument("--decisions", type=int, help="keys: keypresses timed (200)")
        parser.add_argument(
            "--pause-ms", type=int, dest="pause_ms", help="keys: reading time between keys (300)"
        )
        parser.add_argument("--keep", action="store_true", help="keep the scratch database")
        parser.add_argument(
            "--fresh",
            action="store_true",
            help="seed afresh instead of copying a kept seed (PostgreSQL; see benchmarks/seeds.py)",
        )
        parser.add_argument(
            "--drop-seeds", action="store_true", help="drop every kept seed database first"
        )

    def handle(
        self, *args, names, as_json, profile, calibrate, keep, scale, fresh, drop_seeds, **opts
    ):
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
        # Every name's options are checked before the first runs: a refusal in words
        # now, not after an hour of the benchmarks before it.
        runs = [(name, *self._call(name, scale, opts)) for name in names]
        for name, fn, kwargs in runs:
            # The bench seeds, then calls measure.measurement_starts() (the "before"
            # calibration, the profile); the "after" calibration is taken as it returns.
            with (
                scratch_database(keep=keep),
                measure.window(calibrate=calibrate, profile=profile) as window,
            ):
                result = fn(**kwargs)
                window.stop()
                seeded = list(seeds.LOG)
            record = {**result, "scale": kwargs.get("scale"), "seeds": seeded}
            figures = window.calibration()
            if figures is not None:
                record["calibration"] = figures
                record["normalised"] = measure.normalised(result, figures["factor"]["combined"])
            if window.profiler is not None:
                record["profile"] = window.profiler.report()
                self.stderr.write(measure.table(name, record["profile"]))
            if as_json:
                self.stdout.write(json.dumps(record))
            else:
                self.stdout.write(json.dumps(record, indent=2))
            self.stdout.flush()

    @staticmethod
    def _call(name: str, scale: int, opts: dict):
        fn = benchmark(name)
        kwargs = {k: v for k, v in opts.items() if k in SIZES and v is not None}
        takes = inspect.signature(fn).parameters
        if "scale" in takes:
            kwargs["scale"] = scale
        elif scale != 1:
            raise CommandError(f"{name} measures fixed documents; --scale does not apply")
        unknown = sorted(set(kwargs) - set(takes))
        if unknown:
            options = ", --".join(u.replace("_", "-") for u in unknown)
            raise CommandError(f"{name} takes no --{options}")
        return fn, kwargs
