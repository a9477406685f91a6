"""Concept names held in memory per process, kept in step with the name journal.

Every service that changes what a name means writes a ``NameChange`` row in its own
transaction (``services.name_index_changed``): the concept, or the proposed concept,
whose names changed. A process's index remembers the last row it applied
(``JournalCursor``); on use, one query reads the rows after it, and each touched concept
or proposal is taken out of the index and its current names read again, all in one
query. The index is built from scratch only on first use, when a row asks for it (a
change too wide to name), or when more than ``REBUILD_BACKLOG`` rows wait.

Rows can commit out of id order (PostgreSQL draws ids when rows are inserted, not when
they commit): an id the reader skipped over is remembered as a gap and read again on
each use until it shows up or ``GAP_SECONDS`` pass. The services write their rows last,
just before commit, so a gap closes within milliseconds; a rolled-back transaction
leaves one that never does and simply expires.

``ActiveNameCache`` holds only what the graph has accepted (the ask loop's index: a
question may only name concepts that exist). ``kgreview.agents.adapters.IndexCache``
extends it with the open add_concept proposals the construction loop must see too, and
``graph.search`` keeps the concept search's index the same way.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from django.conf import settings
from django.db import connection

from construction import keys
from construction.resolve import InMemoryConceptIndex
from construction.text import name_keys
from construction.types import IndexEntry

from .models import ConceptAlias, NameChange

#: More journal rows than this waiting: rebuilding is cheaper than applying them.
REBUILD_BACKLOG = 5_000
#: How long an id skipped over is read again before it counts as rolled back (seconds).
GAP_SECONDS = 120.0
#: The most skipped ids remembered (the oldest go first).
MAX_GAPS = 1_000
#: On a rebuild, this many ids below the newest are checked for ones not yet committed.
RECENT_WINDOW = 1_000
#: An index of this many names is moved out of the cyclic collector's sight once built.
FREEZE_AT = 50_000
#: Ids per ``IN`` list when names are read again.
CHUNK = 2_000

T = TypeVar("T")


@dataclass
class Touched:
    """What some journal rows name: concepts, proposed concepts, or everything."""

    concepts: set[int] = field(default_factory=set)
    proposals: set[int] = field(default_factory=set)
    everything: bool = False

    def add(self, concept_id: int | None, proposal_id: int | None) -> None:
        if concept_id is not None:
            self.concepts.add(int(concept_id))
        elif proposal_id is not None:
            self.proposals.add(int(proposal_id))
        else:
            self.everything = True


class JournalCursor:
    """Which journal rows a process has applied: every id up to ``upto`` but ``gaps``
    (ids skipped over, with when they were first missed). Pure bookkeeping."""

    def __init__(self) -> None:
        self.upto = 0
        self.gaps: dict[int, float] = {}

    def start(self, newest: int, recent: Iterable[int], now: float) -> None:
        """After a rebuild that read the journal up to ``newest``: the ``recent`` ids seen
        just below it; the others in that window may still commit."""
        seen = set(recent)
        low = max(0, newest - RECENT_WINDOW)
        self.upto = newest
        self.gaps = {i: now for i in range(low + 1, newest + 1) if i not in seen}
        self._trim(now)

    def take(self, ids: Sequence[int], now: float) -> None:
        """Ids just read (gaps that showed up, and rows after ``upto``)."""
        seen = set(ids)
        for i in seen:
            self.gaps.pop(i, None)
        newest = max(seen, default=self.upto)
        if newest > self.upto:
            for i in range(self.upto + 1, newest):
                if i not in seen:
                    self.gaps[i] = now
            self.upto = newest
        self._trim(now)

    def _trim(self, now: float) -> None:
        old = [i for i, at in self.gaps.items() if now - at > GAP_SECONDS]
        for i in old:
            del self.gaps[i]
        if len(self.gaps) > MAX_GAPS:
            for i in sorted(self.gaps, key=lambda i: (self.gaps[i], i))[
                : len(self.gaps) - MAX_GAPS
            ]:
                del self.gaps[i]

    def span(self, ids: Sequence[int]) -> int:
        """How many ids lie between what was applied and the newest of ``ids``."""
        return max(ids, default=self.upto) - self.upto


def id_chunks(ids: Iterable[int]) -> Iterator[list[int]]:
    ordered = sorted(ids)
    for i in range(0, len(ordered), CHUNK):
        yield ordered[i : i + CHUNK]


class JournalFollower(Generic[T]):
    """One in-memory index per process, following the name journal.

    Subclasses say how to ``_build`` the index from scratch and how to ``_discard`` and
    ``_add`` the touched endpoints. ``get`` costs one small query when nothing changed.
    ``rebuilds`` and ``applied`` count what happened (for tests and benchmarks).
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._index: T | None = None
        self._cursor = JournalCursor()
        self.rebuilds = 0
        self.applied = 0

    def clear(self) -> None:
        """Forget the index; the next ``get`` builds it again."""
        with self.lock:
            self._index = None
            self._cursor = JournalCursor()

    @property
    def version(self) -> int:
        """The newest journal row applied (0 before the first ``get``)."""
        return self._cursor.upto

    def _build(self) -> T:
        raise NotImplementedError

    def _discard(self, index: T, touched: Touched) -> None:
        raise NotImplementedError

    def _add(self, index: T, touched: Touched) -> None:
        raise NotImplementedError

    def get(self) -> T:
        with self.lock:
            if self._index is None:
                return self._rebuild()
            rows = self._rows_after()
            if not rows:
                return self._index
            ids = [row[0] for row in rows]
            touched = Touched()
            for _, concept_id, proposal_id in rows:
                touched.add(concept_id, proposal_id)
            if (
                touched.everything
                or len(rows) > REBUILD_BACKLOG
                or self._cursor.span(ids) > REBUILD_BACKLOG + MAX_GAPS
            ):
                return self._rebuild()
            self._discard(self._index, touched)
            self._add(self._index, touched)
            self._cursor.take(ids, time.monotonic())
            self.applied += len(rows)
            return self._index

    def _rows_after(self) -> list[tuple[int, int | None, int | None]]:
        table = NameChange._meta.db_table
        gaps = sorted(self._cursor.gaps)
        where = "id > %s" + (f" OR id IN ({', '.join(['%s'] * len(gaps))})" if gaps else "")
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, concept_id, proposal_id FROM {table} WHERE {where}"
                f" ORDER BY id LIMIT {REBUILD_BACKLOG + 1}",
                [self._cursor.upto, *gaps],
            )
            return list(cursor.fetchall())

    def _rebuild(self) -> T:
        # The journal first: whatever commits while the names are read is applied again
        # by the next ``get`` (applying a row twice changes nothing).
        table = NameChange._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}")
            newest = int(cursor.fetchone()[0])
            cursor.execute(f"SELECT id FROM {table} WHERE id > %s", [newest - RECENT_WINDOW])
            recent = [int(r[0]) for r in cursor.fetchall()]
        # Hundreds of thousands of long-lived objects: the cyclic collector would walk
        # them over and over while they are made, and again on later collections (a
        # second at 500k concepts). They hold no cycles (reference counting frees them),
        # so they are built with it paused and, when many, moved out of its sight (with
        # whatever else the process holds then: a worker's or web process's long-lived
        # objects, nothing a collection would free).
        paused = gc.isenabled()
        gc.disable()
        try:
            index = self._build()
        finally:
            if paused:
                gc.enable()
        if len(index) >= FREEZE_AT:  # type: ignore[arg-type]
            gc.freeze()
        cursor_ = JournalCursor()
        cursor_.start(newest, recent, time.monotonic())
        self._index, self._cursor = index, cursor_
        self.rebuilds += 1
        return index


def warm(*caches: JournalFollower) -> None:
    """Build ``caches`` now (each logs and skips a failure: the first use builds it)."""
    import logging

    for cache in caches:
        try:
            cache.get()
        except Exception:  # a missing table before migrate, a database not up yet
            logging.getLogger(__name__).exception("could not warm a name index")


def warm_in_background(*caches: JournalFollower) -> threading.Thread | None:
    """With ``KG_NAME_INDEX_WARM``, build ``caches`` in a thread of this process (its
    own database connection, closed afterwards); a use meanwhile waits for the build."""
    if not settings.KG_NAME_INDEX_WARM:
        return None

    def run() -> None:
        try:
            warm(*caches)
        finally:
            connection.close()

    thread = threading.Thread(target=run, name="warm-name-indexes", daemon=True)
    thread.start()
    return thread


# --- The resolver's index of accepted names ---------------------------------------------


def alias_entries(rows: Iterable) -> list[tuple[IndexEntry, list[str]]]:
    """Index entries for (name, kind, concept id, canonical name) rows, with their keys."""
    out = []
    for name, kind, concept_id, canonical in rows:
        entry = IndexEntry(
            name=name,
            canonical=canonical,
            key=keys.concept_key(concept_id),
            concept_id=concept_id,
            is_canonical=kind == ConceptAlias.Role.CANONICAL,
        )
        out.append((entry, name_keys(name)))
    return out


def add_active_names(index: InMemoryConceptIndex, *, concepts: Iterable[int] | None = None) -> None:
    """Register the current names of active concepts (of ``concepts`` only, when given),
    in alias id order (so the same graph always resolves the same way)."""
    base = ConceptAlias.objects.filter(concept__status="active").order_by("id")
    columns = ("name", "kind", "concept_id", "concept__name")
    batches: list[Iterable] = (
        [base.values_list(*columns).iterator(chunk_size=5000)]
        if concepts is None
        else [
            base.filter(concept_id__in=chunk).values_list(*columns) for chunk in id_chunks(concepts)
        ]
    )
    for rows in batches:
        for entry, found in alias_entries(rows):
            index.add(entry, keys=found)


class ActiveNameCache(JournalFollower[InMemoryConceptIndex]):
    """One index of accepted concept names per process (no open proposals)."""

    def _build(self) -> InMemoryConceptIndex:
        index = InMemoryConceptIndex(threshold=settings.KG_FUZZY_THRESHOLD)
        add_active_names(index)
        return index

    def _discard(self, index: InMemoryConceptIndex, touched: Touched) -> None:
        for concept_id in touched.concepts:
            index.discard(concept_id=concept_id)

    def _add(self, index: InMemoryConceptIndex, touched: Touched) -> None:
        if touched.concepts:
            add_active_names(index, concepts=touched.concepts)


#: The ask loop's index: the names of active concepts only.
QUESTION_INDEX = ActiveNameCache()
