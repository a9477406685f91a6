"""What every benchmark shares: the scale, a calibration workload, percentiles, a scratch
database, fast inserts, synthetic lessons, concepts seeded in bulk.

The curriculum-shaped graph every graph-reading benchmark seeds lives in
``benchmarks.curriculum``.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import islice

from django.conf import settings
from django.db import connection, models, transaction

from construction.text import name_key

from . import seeds

#: The sizes a benchmark can be run at: ``--scale 1`` is the published base (50,000
#: concepts, 200,000 edges, 100,000 proposals), 5 and 10 multiply every one of them.
SCALES = (1, 5, 10)

FILLER = [
    "In practice the details matter more than the names suggest.",
    "Engineers usually meet this idea long before they can name it.",
    "The trade-offs change with the size of the data and the budget for latency.",
    "A small experiment on your own data is worth more than any benchmark table.",
    "Most production systems combine several of these ideas at once.",
    "It helps to sketch the data flow on paper before writing any code.",
]
CUES = [
    "Before learning {b} you should understand {a}.",
    "{a} is a prerequisite for {b}.",
    "{b} builds on {a}.",
    "{a} is part of {b}.",
    "Unlike {a}, {b} keeps its state small.",
    "{a} is used for {b}.",
    "{a} is related to {b}.",
    "{b} depends on {a}.",
    "{a} is an alternative to {b}.",
]


def lesson_text(title: str, names: list[str], rng: random.Random, words: int = 250) -> str:
    """A lesson naming pairs of ``names``; a cue always names the earlier one first."""
    parts = [f"# {title}", ""]
    count = 0
    while count < words:
        if rng.random() < 0.45:
            # Names are drawn in list order, so prerequisite-like cues respect a hidden
            # topological order, as a curriculum does: the graph is a DAG, not a tangle.
            i, j = sorted(rng.sample(range(len(names)), 2))
            a, b = names[i], names[j]
            sentence = rng.choice(CUES).format(a=a.lower(), b=b.lower())
        else:
            sentence = rng.choice(FILLER)
        parts.append(sentence)
        count += len(sentence.split())
    return "\n".join(parts) + "\n"


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    if not ordered:
        return {}

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 4)

    return {
        "mean_ms": round(statistics.fmean(ordered), 4),
        "p50_ms": pct(0.50),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "max_ms": round(ordered[-1], 4),
        "samples": len(ordered),
    }


def scaled(base: int, scale: int) -> int:
    """``base`` at ``scale`` (1, 5 or 10)."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(map(str, SCALES))}, not {scale}")
    return base * scale


# --- Calibration ----------------------------------------------------------------------------


def calibration() -> dict:
    """The time of a fixed workload on this machine now, so figures from two machines can
    be compared (``benchmarks.measure`` takes it before and after each benchmark's
    measurement and normalises the figures with it).

    ``python_ms``: pure Python and rapidfuzz work of the kind the resolver and the
    extractor do (string keys, dicts, sorting, 2,000 fuzzy lookups in 5,000 names).
    ``database_ms``: 2,000 round trips (an indexed insert and a select each) and one
    20,000-row aggregate, in a temporary table of the configured database. The best of
    three runs of each, so a passing hiccup does not count. Measured afresh at every call
    (a machine's load moves in the minutes a benchmark takes).
    """
    return {
        "python_ms": round(min(_python_workload() for _ in range(3)), 1),
        "database_ms": round(min(_database_workload() for _ in range(3)), 1),
        "database": connection.vendor,
    }


def _python_workload() -> float:
    from rapidfuzz import fuzz, process

    from benchmarks.synthetic import concept_names

    started = time.perf_counter()
    names = concept_names(5_000, seed=99)
    keys = [name_key(n) for n in names]
    index: dict[str, int] = {}
    for i, k in enumerate(keys):
        index.setdefault(" ".join(sorted(k.split())), i)
    rng = random.Random(99)
    numbers = [rng.random() for _ in range(200_000)]
    numbers.sort()
    for i in range(2_000):
        process.extractOne(keys[(i * 7919) % len(keys)] + "s", keys, scorer=fuzz.ratio)
    return (time.perf_counter() - started) * 1000


def _database_workload() -> float:
    table = "kg_calibration"
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"CREATE TEMPORARY TABLE {table} (id integer PRIMARY KEY, v integer)")
        for i in range(2_000):
            cursor.execute(f"INSERT INTO {table} (id, v) VALUES (%s, %s)", [i, i % 97])
            cursor.execute(f"SELECT v FROM {table} WHERE id = %s", [i // 2])
            cursor.fetchone()
        cursor.execute(
            f"INSERT INTO {table} (id, v) SELECT i, i % 89 FROM "
            + (
                "generate_series(2000, 21999) AS s(i)"
                if connection.vendor == "postgresql"
                else "(WITH RECURSIVE s(i) AS (SELECT 2000 UNION ALL SELECT i + 1 FROM s"
                " WHERE i < 21999) SELECT i FROM s)"
            )
        )
        cursor.execute(f"SELECT v, COUNT(*) FROM {table} GROUP BY v ORDER BY v")
        cursor.fetchall()
        cursor.execute(f"DROP TABLE {table}")
    return (time.perf_counter() - started) * 1000


# --- The scratch database and fast inserts ----------------------------------------------


@contextmanager
def scratch_database(*, keep: bool = False) -> Iterator[str]:
    """A freshly migrated database of the configured engine, dropped afterwards (also when
    the benchmark fails or is interrupted)."""
    settings_dict = connection.settings_dict
    test_settings = settings_dict.setdefault("TEST", {})
    if connection.vendor == "sqlite":
        test_settings["NAME"] = str(settings.VAR_DIR / "bench.sqlite3")
    else:
        test_settings["NAME"] = f"{settings_dict['NAME']}_bench"
    old_name = settings_dict["NAME"]
    name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    seeds.reset(active=True)
    try:
        yield name
    finally:
        seeds.reset(active=False)
        if not keep:
            connection.creation.destroy_test_db(old_name, verbosity=0)


def analyze() -> None:
    """Fresh planner statistics after seeding, as autovacuum would have gathered on a
    database that grew over months (PostgreSQL; SQLite's planner gets ``ANALYZE`` too)."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def insert_rows(model: type[models.Model], objs: Iterable[models.Model], *, batch=20_000) -> int:
    """Insert unsaved ``objs`` of ``model`` as fast as the database takes them: ``COPY`` on
    PostgreSQL, batched ``bulk_create`` elsewhere. Ids are not returned (read them back
    in id order). Set-up only: no signals, no ``save()``, constraints still checked.

    ``objs`` is drawn a batch at a time before each ``COPY`` starts, so a generator that
    queries the database on the way never runs while the connection is busy copying
    (psycopg would wait for itself).
    """
    count = 0
    iterator = iter(objs)
    while chunk := list(islice(iterator, batch)):
        if connection.vendor == "postgresql":
            _copy(model, chunk)
        else:
            model.objects.bulk_create(chunk)
        count += len(chunk)
    return count


def _copy(model: type[models.Model], objs: list[models.Model]) -> None:
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    rows = [[f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields] for obj in objs]
    connection.ensure_connection()
    # The psycopg cursor itself: COPY is not in Django's cursor API.
    raw = connection.connection.cursor()
    with raw, raw.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def seed_concepts(names: list[str], *, alias_every: int = 3) -> list[int]:
    """Concepts with their canonical name rows, and an abbreviation-like alias for every
    ``alias_every``-th; returns the concept ids in the order of ``names``."""
    from kgreview.graph.models import Concept, ConceptAlias

    with transaction.atomic():
        first = (Concept.objects.order_by("-pk").values_list("pk", flat=True).first()) or 0
        insert_rows(Concept, (Concept(name=n) for n in names))
        rows = list(Concept.objects.filter(pk__gt=first).order_by("pk").values_list("pk", "name"))
        ids = [pk for pk, _ in rows]

        def aliases() -> Iterator[ConceptAlias]:
            for i, (pk, name) in enumerate(rows):
                yield ConceptAlias(
                    concept_id=pk, name=name, kind="canonical", key=name_key(name)[:200]
                )
                if i % alias_every == 0:
                    short = "".join(w[0] for w in name.split()).upper() + f"-{pk}"
                    yield ConceptAlias(
                        concept_id=pk, name=short, kind="alias", key=name_key(short)[:200]
                    )

        insert_rows(ConceptAlias, aliases())
    return ids


# --- Requests through the test client ------------------------------------------------------


def timed_request(
    client, method: str, url: str, data=None, headers=None, *, page=False, statements=None
):
    """One request through the test client: (milliseconds, SQL queries, status code), or
    with ``page`` the page's text instead of the status (a refusal answers 200 in words).
    A list given as ``statements`` receives the request's SQL, to say what a count is."""
    from django.test.utils import CaptureQueriesContext

    connection.queries_log.clear()  # the log is capped at 9,000: start each request at zero
    with CaptureQueriesContext(connection) as ctx:
        t0 = time.perf_counter()
        response = getattr(client, method)(url, data or {}, headers=headers or {})
        elapsed = (time.perf_counter() - t0) * 1000
    answer = response.content.decode() if page else response.status_code
    # Savepoints are how a transaction nests inside a test's own transaction; run for
    # real (the bench), the same request opens and commits its transaction without a
    # statement Django logs. They are not the request's queries either way.
    ran = [q["sql"] for q in ctx.captured_queries if "SAVEPOINT" not in q["sql"]]
    if statements is not None:
        statements[:] = ran
    return elapsed, len(ran), answer


@contextmanager
def plain_static() -> Iterator[None]:
    """Static URLs without a collected manifest: what is measured is the request itself."""
    from django.test.utils import override_settings

    with override_settings(
        STORAGES={
            "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
            "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
        }
    ):
        yield
