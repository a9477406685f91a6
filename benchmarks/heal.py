"""``manage.py bench heal``: the self-healing agent over the curriculum-shaped graph.

The graph is ``seed_curriculum``'s, and every edge carries evidence: a line of one of the
lessons (a source per thousand edges, a hundred lines each, so about ten edges quote each
line). Planted on top, as a grown graph holds them:

- near-duplicate twins, one per thousand concepts, in three kinds in turn: a plural
  ("Dense index ranking" / "Dense index rankings"), a misspelling (a letter dropped or
  doubled) and the words in another order ("Causal spectral …" / "Spectral causal …");
  each twin shares a neighbour with its original, as a real duplicate does;
- cycles in ``prerequisite``, five per scale, each three edges long and closed by a weak
  edge (confidence 0.3) written past the services, as imported legacy data would be;
- one lesson in twenty imported again (through ``source_import``) with one line in ten
  reworded, so the edges quoting those lines lost their evidence and the vanished-
  evidence step has real work: every edge on an old revision is checked.

The heal itself runs in a fresh process (``heal_run`` on the scratch database, as the
scheduled task calls it), so its peak memory is its own (the seeding's does not count):
``seconds`` is the run's own time, ``process_s`` and ``process_cpu_s`` the whole
process's wall and processor time (Django's start included), ``peak_mb`` its peak
resident set size, Django and the libraries included. What the run found is compared
with what was planted, and every block of names it skipped as too large is listed, as
the run's stats record them.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from urllib.parse import quote

from django.conf import settings
from django.db import connection, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from benchmarks.measure import measurement_starts
from benchmarks.synthetic import concept_names, typo
from kgreview.review.kinds.invalidate_edge import InvalidateEdgeKind
from kgreview.review.kinds.merge_concepts import MergeConceptsKind

from .common import FILLER, analyze, insert_rows, scaled
from .curriculum import BASE_CONCEPTS, BASE_EDGES, local_pair

#: Edges quoting each lesson, and lines in each lesson.
EDGES_PER_SOURCE = 1_000
LINES = 100
#: One lesson in ``REIMPORT_EVERY`` is imported again, with one line in ``REWORD_EVERY``
#: reworded.
REIMPORT_EVERY = 20
REWORD_EVERY = 10
TWIN_KINDS = ("plural", "misspelling", "word order")


def line_of(source: int, k: int) -> str:
    return f"Point {k} of lesson {source}: {FILLER[k % len(FILLER)]}"


def lesson(source: int, *, reworded: bool = False) -> str:
    lines = [f"# Lesson {source}", ""]
    for k in range(LINES):
        if reworded and k % REWORD_EVERY == 3:
            lines.append(f"Point {k} of lesson {source} was rewritten since.")
        else:
            lines.append(line_of(source, k))
    return "\n".join(lines) + "\n"


def twin_of(name: str, kind: str, rng: random.Random) -> str:
    if kind == "plural":
        return name + "s"
    if kind == "misspelling":
        return typo(name, rng)
    words = name.split()
    words[0], words[1] = words[1].lower(), words[0].capitalize()
    return " ".join(words)


def bench_heal(*, scale: int = 1, seed: int = 13) -> dict:
    """The self-healing agent over the curriculum-shaped graph with evidence, planted
    twins, cycles and vanished quotes (see the module)."""
    from kgreview.graph.models import Concept, Edge

    from .curriculum import seed_curriculum

    rng = random.Random(seed)
    started = time.perf_counter()
    concepts = scaled(BASE_CONCEPTS, scale)
    edges = scaled(BASE_EDGES, scale)
    names = concept_names(concepts)
    taken = {n.casefold() for n in names}
    twins: list[tuple[int, str, str]] = []  # (original's position, twin's name, kind)
    for i in range(0, concepts, 1000):
        kind = TWIN_KINDS[len(twins) % len(TWIN_KINDS)]
        twin = twin_of(names[i], kind, rng)
        if twin.casefold() not in taken:
            taken.add(twin.casefold())
            twins.append((i, twin, kind))
    sources = _seed_sources(max(1, edges // EDGES_PER_SOURCE))
    graph = seed_curriculum(
        rng=rng,
        names=names + [t for _, t, _ in twins],
        edges=edges,
        evidence=sources.evidence,
    )
    planted_cycles = _plant(graph, twins, len(names), rng, 5 * scale)
    gone = _reimport(sources, rng)
    analyze()
    seeded_s = time.perf_counter() - started
    measurement_starts()
    outcome = _heal_in_a_fresh_process()

    from kgreview.agents.models import AgentRun
    from kgreview.review.models import Proposal

    run = AgentRun.objects.filter(agent="heal").order_by("-pk").first()
    stats = (run.stats if run else {}) or {}
    by_name = dict(Concept.objects.values_list("name", "pk"))
    proposed = {
        frozenset((p["survivor_id"], p["loser_id"]))
        for p in Proposal.objects.filter(
            kind=MergeConceptsKind.key, origin__agent_run=run
        ).values_list("payload", flat=True)
    }
    found_by_kind = {kind: [0, 0] for kind in TWIN_KINDS}
    for i, twin, kind in twins:
        found_by_kind[kind][1] += 1
        if frozenset((by_name.get(names[i]), by_name.get(twin))) in proposed:
            found_by_kind[kind][0] += 1
    retiring = set(
        Proposal.objects.filter(kind=InvalidateEdgeKind.key, origin__agent_run=run).values_list(
            "payload__edge_id", flat=True
        )
    )
    expected_gone = {
        pk
        for pk, rev, quote_ in Edge.objects.filter(
            status="active", evidence_revision_id__in=sources.reimported
        ).values_list("pk", "evidence_revision_id", "evidence_quote")
        if quote_ in gone
    }
    seconds = stats.get("duration_s") or 0.0
    peak_mb = outcome["peak_mb"]
    return {
        "benchmark": "heal",
        "scale": scale,
        "database": connection.vendor,
        "concepts": len(graph.ids),
        "edges": Edge.objects.filter(status="active").count(),
        "sources": sources.count,
        "sources_reimported": len(sources.reimported),
        "seeding_s": round(seeded_s, 1),
        "status": run.status if run else "missing",
        "seconds": seconds,
        "process_s": outcome["process_s"],
        "process_cpu_s": outcome["process_cpu_s"],
        "peak_mb": peak_mb,
        "found": {
            "planted_twins": {k: f"{f} of {n}" for k, (f, n) in found_by_kind.items()},
            "merge_proposals": stats.get("merge_proposals"),
            "planted_cycles": f"{len(planted_cycles & retiring)} of {len(planted_cycles)}",
            "cycle_proposals": stats.get("cycle_proposals"),
            "vanished_quotes": (
                f"{len(expected_gone & retiring)} of {len(expected_gone)} proposed; "
                f"{stats.get('still_supported')} kept, still stated by an equivalent edge"
            ),
            "edges_on_old_revisions": stats.get("edges_on_old_revisions"),
            "evidence_proposals": stats.get("evidence_proposals"),
        },
        "skipped_blocks": stats.get("oversized_blocks_skipped"),
        "skipped_block_keys": stats.get("skipped_blocks"),
        "stats": stats,
        "budget": {"seconds": 120, "peak_mb": 1024},
        "within_budget": bool(
            run and run.status == "succeeded" and seconds <= 120 and peak_mb <= 1024
        ),
        "output": outcome["output"],
    }


class _Sources:
    """The seeded lessons: the evidence of the i-th edge, and which were imported again."""

    def __init__(self, revisions: list[int], texts: list[str]) -> None:
        self.revisions = revisions
        self.count = len(revisions)
        self.reimported: list[int] = []  # the old revisions of lessons imported again
        self.offsets = []
        # Every lesson has the same layout, so one table of line offsets serves all but the
        # lesson number's width: kept per lesson (a hundred ints each).
        for text in texts:
            where, at = [], 0
            for line in text.split("\n"):
                where.append((at, at + len(line)))
                at += len(line) + 1
            self.offsets.append(where[2 : 2 + LINES])

    def evidence(self, i: int) -> dict:
        # Runs of seven edges share a line, so the lessons imported again hold edges of
        # every age and status (the curriculum retires every tenth edge).
        source = (i // 7) % self.count
        k = (i // (7 * self.count)) % LINES
        start, end = self.offsets[source][k]
        return {
            "evidence_revision_id": self.revisions[source],
            "evidence_start": start,
            "evidence_end": end,
            "evidence_quote": line_of(source, k),
        }


def _seed_sources(count: int) -> _Sources:
    """``count`` lessons with one revision each, copied in (set-up only)."""
    import hashlib

    from kgreview.graph.models import Source, SourceRevision

    texts = [lesson(s) for s in range(count)]
    with transaction.atomic():
        first = Source.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
        insert_rows(
            Source,
            (Source(slug=f"heal-lesson-{s:05d}", title=f"Lesson {s}") for s in range(count)),
        )
        ids = list(Source.objects.filter(pk__gt=first).order_by("pk").values_list("pk", flat=True))
        insert_rows(
            SourceRevision,
            (
                SourceRevision(
                    source_id=pk,
                    number=1,
                    title=f"Lesson {s}",
                    text=text,
                    sha256=hashlib.sha256(text.encode()).hexdigest(),
                    word_count=len(text.split()),
                )
                for s, (pk, text) in enumerate(zip(ids, texts, strict=True))
            ),
        )
        Source.objects.filter(pk__in=ids).update(
            current_revision_id=Subquery(
                SourceRevision.objects.filter(source_id=OuterRef("pk"), number=1).values("pk")[:1]
            )
        )
        revisions = dict(
            SourceRevision.objects.filter(source_id__in=ids).values_list("source_id", "pk")
        )
    return _Sources([revisions[pk] for pk in ids], texts)


def _plant(graph, twins, originals: int, rng: random.Random, cycles: int) -> set[int]:
    """Each twin joined to a neighbour of its original (``related``), and ``cycles``
    three-edge prerequisite cycles, each closed by a weak edge; returns those edges' ids."""
    from kgreview.graph.models import Edge

    now = timezone.now()
    related = graph.relations["related"]
    prerequisite = graph.relations["prerequisite"]
    ids = graph.ids
    rows = []
    for position, (i, _, _) in enumerate(twins):
        original, twin = ids[i], ids[originals + position]
        preds = graph.preds.get(original)
        neighbour = preds[0] if preds else ids[(i + 1) % originals]
        # The twin shares a neighbour with its original (joined to both when the original
        # has no prerequisite to share).
        for end in (twin,) if preds else (twin, original):
            a, b = sorted((end, neighbour))
            if (a, related.pk, b) not in graph.facts:
                graph.facts.add((a, related.pk, b))
                rows.append((a, b, related, 0.9))
    closing = []
    n = originals
    while len(closing) < cycles:
        a, c = local_pair(n, rng)
        if c - a < 2:
            continue
        b = rng.randrange(a + 1, c)
        chain = [(ids[a], ids[b]), (ids[b], ids[c]), (ids[c], ids[a])]
        if any((s, prerequisite.pk, t) in graph.facts for s, t in chain[2:]):
            continue
        for s, t in chain:
            if (s, prerequisite.pk, t) not in graph.facts:
                graph.facts.add((s, prerequisite.pk, t))
                weak = (s, t) == chain[2]
                rows.append((s, t, prerequisite, 0.3 if weak else 0.9))
        closing.append(chain[2])
    with transaction.atomic():
        insert_rows(
            Edge,
            (
                Edge(
                    source_id=s,
                    target_id=t,
                    relation_id=rel.pk,
                    is_symmetric=rel.symmetric,
                    confidence=confidence,
                    reason="Planted.",
                    valid_at=now,
                    recorded_at=now,
                )
                for s, t, rel, confidence in rows
            ),
        )
    return set(
        Edge.objects.filter(
            relation=prerequisite, confidence=0.3, reason="Planted.", status="active"
        ).values_list("pk", flat=True)
    )


def _reimport(sources: _Sources, rng: random.Random) -> set[str]:
    """One lesson in ``REIMPORT_EVERY`` imported again with lines reworded; returns the
    quotes that vanished."""
    from kgreview.graph.services import source_import

    gone: set[str] = set()
    for s in range(0, sources.count, REIMPORT_EVERY):
        source_import(
            slug=f"heal-lesson-{s:05d}",
            title=f"Lesson {s}",
            text=lesson(s, reworded=True),
            acting_user=None,
        )
        sources.reimported.append(sources.revisions[s])
        gone.update(line_of(s, k) for k in range(LINES) if k % REWORD_EVERY == 3)
    return gone


def _database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    user = quote(db.get("USER") or "")
    password = f":{quote(db['PASSWORD'])}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "localhost"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{user}{password}@{host}{port}/{db['NAME']}"


#: What the scheduled task does (``agents.tasks.heal``), in a process of its own.
HEAL = (
    "import django; django.setup()\n"
    "from kgreview.agents.heal import heal_run\n"
    "from kgreview.agents.runs import agent_run_create\n"
    "run = heal_run(agent_run_create(agent='heal'))\n"
    "print(f'heal run #{run.pk} {run.status}: {run.error or run.stats}')\n"
)


def _heal_in_a_fresh_process() -> dict:
    """A heal run on the scratch database in a process of its own, as the scheduled task
    runs it: its wall and processor time, its peak resident set size (``wait4``'s, so
    only the heal's process counts) and what it printed."""
    connection.close()  # the child must see every row; SQLite must not be held open
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "kgreview.settings"),
    }
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-c", HEAL],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - started
        out.seek(0)
        output = out.read().decode(errors="replace").strip()
    return {
        "process_s": round(elapsed, 2),
        # The heal process's own processor time: on a shared machine the wall time also
        # counts the time it waited for a core.
        "process_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_mb": round(usage.ru_maxrss / 1024, 1),  # kilobytes on Linux
        "output": output[-2000:],
        "exit": child.returncode,
    }
