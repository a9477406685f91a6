"""Seeded data kept between benchmark runs, so a 10x graph is generated once per machine.

Seeding the 10x curriculum (500,000 concepts, 2,000,000 edges, their topological orders,
then ``ANALYZE``) takes minutes; copying a database takes seconds. On PostgreSQL a seeding
step wrapped in ``seeded`` is therefore kept as a template database (``kgbench_seed_…``)
beside a pickle of what the step returned and of the random generator's state after it;
the next run of any benchmark that asks for the same step (same parameters, same random
state, same code and migrations, same database before it) replaces its fresh scratch
database by a copy of the template instead of seeding again. The copy is byte for byte
what seeding wrote, planner statistics included, so the figures measured on it are the
ones seeding would have given; each result says which steps were copied (``seeds``).

Off with ``KG_BENCH_SEEDS=0`` (or ``manage.py bench --fresh``); ``manage.py bench
--drop-seeds`` drops every kept template. SQLite always seeds afresh (its base sizes
seed in seconds). At most ``KEEP`` templates are kept; the oldest go first.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import random
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from django.conf import settings
from django.db import connection

T = TypeVar("T")
PREFIX = "kgbench_seed_"
KEEP = 12
ROOT = Path(__file__).resolve().parent.parent
#: What the seeded rows depend on besides the step's parameters.
CODE = [
    "benchmarks/seeds.py",
    "benchmarks/common.py",
    "benchmarks/curriculum.py",
    "benchmarks/synthetic.py",
    "kgreview/graph/order.py",
]

#: What happened to each seeding step of the benchmark now running ("copied"/"seeded").
LOG: list[dict] = []
_lineage = "fresh"
_active = False


def enabled() -> bool:
    """Only in a benchmark's scratch database (never a test's), on PostgreSQL."""
    return (
        _active
        and connection.vendor == "postgresql"
        and os.environ.get("KG_BENCH_SEEDS", "1") != "0"
    )


def reset(*, active: bool) -> None:
    """A new scratch database (``active``), or none any more: nothing seeded in it yet."""
    global _lineage, _active
    _lineage = "fresh"
    _active = active
    LOG.clear()


def _fingerprint() -> str:
    digest = hashlib.sha256()
    files = [ROOT / p for p in CODE]
    files += sorted(ROOT.glob("kgreview/*/migrations/*.py"))
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    # The keys seeding stores come from the name and key functions, which change often
    # for other reasons: what they answer on a sample of names is what counts.
    from benchmarks.synthetic import concept_names
    from construction import keys
    from construction.text import name_key

    for name in concept_names(300):
        key = name_key(name)
        digest.update(f"{key}|{keys.edge_dedup_key(key, 'related', name, symmetric=True)}".encode())
    return digest.hexdigest()


def seeded(label: str, params: tuple, rng: random.Random, build: Callable[[], T]) -> T:
    """``build()``'s result, its rows written to the scratch database, by copying a kept
    template when one matches, else by running ``build`` and keeping what it wrote.

    Between two seeded steps a benchmark must write nothing else (what it wrote would be
    missing from the copy); steps after an unseeded write simply seed afresh.
    """
    global _lineage
    if not enabled():
        return build()
    key = repr((label, params, rng.getstate(), _lineage, _fingerprint()))
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    template = PREFIX + digest
    store = settings.VAR_DIR / "bench-seeds" / f"{digest}.pickle"
    if store.exists() and template in _templates():
        with store.open("rb") as fh:
            result, state = pickle.load(fh)
        _become(template)
        rng.setstate(state)
        LOG.append({"step": label, "how": "copied", "template": template})
    else:
        result = build()
        _keep(template, store, result, rng.getstate())
        LOG.append({"step": label, "how": "seeded", "template": template})
    _lineage = digest
    return result


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


def _templates() -> list[str]:
    with connection._nodb_cursor() as cursor:
        cursor.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s ORDER BY oid",
            [PREFIX + "%"],
        )
        return [row[0] for row in cursor.fetchall()]


def _copy_sql(target: str, source: str) -> str:
    strategy = " STRATEGY FILE_COPY" if (connection.pg_version or 0) >= 150000 else ""
    return f"CREATE DATABASE {_quote(target)} TEMPLATE {_quote(source)}{strategy}"


def _become(template: str) -> None:
    """Replace the scratch database by a copy of ``template``."""
    name = connection.settings_dict["NAME"]
    connection.ensure_connection()
    connection.close()
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {_quote(name)} WITH (FORCE)")
        cursor.execute(_copy_sql(name, template))


def _keep(template: str, store: Path, result: object, state: object) -> None:
    """Keep the scratch database as ``template`` (under a private name first, so a run
    beside this one never copies a half-made template), and ``result`` in ``store``."""
    name = connection.settings_dict["NAME"]
    store.parent.mkdir(parents=True, exist_ok=True)
    partial = store.with_suffix(f".{os.getpid()}.tmp")
    with partial.open("wb") as fh:
        pickle.dump((result, state), fh, protocol=pickle.HIGHEST_PROTOCOL)
    partial.replace(store)
    private = f"{template}_{os.getpid()}"
    connection.close()
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {_quote(private)}")
        cursor.execute(_copy_sql(private, name))
        try:
            cursor.execute(f"ALTER DATABASE {_quote(private)} RENAME TO {_quote(template)}")
        except Exception:  # another run kept the same step first: theirs is as good
            cursor.execute(f"DROP DATABASE IF EXISTS {_quote(private)}")
    _forget_oldest()


def _forget_oldest() -> None:
    kept = _templates()
    for old in kept[: max(0, len(kept) - KEEP)]:
        drop(old)


def drop(template: str) -> None:
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {_quote(template)} WITH (FORCE)")
    digest = template.removeprefix(PREFIX)
    (settings.VAR_DIR / "bench-seeds" / f"{digest}.pickle").unlink(missing_ok=True)


def drop_all() -> int:
    """Drop every kept template; how many there were."""
    if connection.vendor != "postgresql":
        return 0
    kept = _templates()
    for template in kept:
        drop(template)
    return len(kept)
