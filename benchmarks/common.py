"""What every benchmark shares: synthetic lessons, percentiles, a scratch database,
concepts seeded in bulk."""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connection, transaction

from construction.text import name_key

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

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 4)

    return {
        "mean_ms": round(statistics.fmean(ordered), 4),
        "p50_ms": pct(0.50),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "max_ms": round(ordered[-1], 4),
    }


@contextmanager
def scratch_database(*, keep: bool = False) -> Iterator[str]:
    """A freshly migrated database of the configured engine, dropped afterwards."""
    settings_dict = connection.settings_dict
    test_settings = settings_dict.setdefault("TEST", {})
    if connection.vendor == "sqlite":
        test_settings["NAME"] = str(settings.VAR_DIR / "bench.sqlite3")
    else:
        test_settings["NAME"] = f"{settings_dict['NAME']}_bench"
    old_name = settings_dict["NAME"]
    name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        yield name
    finally:
        if not keep:
            connection.creation.destroy_test_db(old_name, verbosity=0)


def seed_concepts(names: list[str], *, alias_every: int = 3) -> None:
    """Bulk-insert concepts with their canonical name rows (and some aliases)."""
    from kgreview.graph.models import Concept, ConceptAlias

    batch = 5000
    for start in range(0, len(names), batch):
        chunk = names[start : start + batch]
        with transaction.atomic():
            concepts = Concept.objects.bulk_create([Concept(name=n) for n in chunk])
            if concepts[0].pk is None:  # backends that do not return ids
                concepts = list(Concept.objects.filter(name__in=chunk))
            aliases = [ConceptAlias(concept=c, name=c.name, kind="canonical") for c in concepts]
            aliases += [
                ConceptAlias(
                    concept=c,
                    name="".join(w[0] for w in c.name.split()).upper() + f"-{c.pk}",
                    kind="alias",
                )
                for i, c in enumerate(concepts)
                if i % alias_every == 0
            ]
            for alias in aliases:
                alias.key = name_key(alias.name)[:200]
            ConceptAlias.objects.bulk_create(aliases)
