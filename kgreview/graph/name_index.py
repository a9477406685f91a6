"""Concept names held in memory per process, for the resolver and the question planner.

An ``InMemoryConceptIndex`` (``construction.resolve``) of every active concept's names
(canonical, alias, merged-away), kept in step with the database cheaply: one query reads
a signature (the newest alias row and ``NameIndexVersion``, which services bump when an
existing name changes meaning: a merge, a rename, a retired concept, a removed alias,
a decided proposal). New alias rows are appended; any other change rebuilds the index.

``ActiveNameCache`` holds only what the graph has accepted (the ask loop's index: a
question may only name concepts that exist). ``kgreview.agents.adapters.IndexCache``
extends it with the open add_concept proposals the construction loop must see too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from django.conf import settings
from django.db import connection

from construction import keys
from construction.resolve import InMemoryConceptIndex
from construction.text import name_keys
from construction.types import IndexEntry

from .models import ConceptAlias, NameIndexVersion


def alias_entries(rows: Iterable) -> list[tuple[IndexEntry, list[str]]]:
    """Index entries for (name, kind, concept id, canonical name) rows, with their keys."""
    out = []
    for name, kind, concept_id, canonical in rows:
        entry = IndexEntry(
            name=name,
            canonical=canonical,
            key=keys.concept_key(concept_id),
            concept_id=concept_id,
            is_canonical=kind == ConceptAlias.Kind.CANONICAL,
        )
        out.append((entry, name_keys(name)))
    return out


def add_active_names(index: InMemoryConceptIndex, *, alias_after: int = 0) -> None:
    """Register the current names of active concepts whose alias row is newer than
    ``alias_after``, in id order (so the same graph always resolves the same way)."""
    aliases = (
        ConceptAlias.objects.filter(id__gt=alias_after, concept__status="active")
        .order_by("id")
        .values_list("name", "kind", "concept_id", "concept__name")
    )
    for entry, found in alias_entries(aliases.iterator(chunk_size=5000)):
        index.add(entry, keys=found)


class ActiveNameCache:
    """One index of accepted concept names per process (no open proposals).

    ``get`` costs one small query when nothing changed. Subclasses add sources of names
    by extending ``_signature_sql`` (more columns after the version and the newest
    alias id) and ``_extend``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._index: InMemoryConceptIndex | None = None
        self._signature: tuple | None = None

    def clear(self) -> None:
        with self._lock:
            self._index = None
            self._signature = None

    def _signature_sql(self) -> str:
        alias = ConceptAlias._meta.db_table
        version = NameIndexVersion._meta.db_table
        return (
            f"SELECT (SELECT COALESCE(MAX(version), 0) FROM {version}),"
            f" (SELECT COALESCE(MAX(id), 0) FROM {alias})"
        )

    def signature(self) -> tuple:
        """What the index depends on, read in one round trip; the version comes first."""
        with connection.cursor() as cursor:
            cursor.execute(self._signature_sql())
            return tuple(int(v) for v in cursor.fetchone())

    def _extend(self, index: InMemoryConceptIndex, old: tuple | None) -> None:
        """Add what is newer than the ``old`` signature (everything when None)."""
        add_active_names(index, alias_after=old[1] if old else 0)

    def get(self) -> InMemoryConceptIndex:
        with self._lock:
            signature = self.signature()
            old = self._signature
            if self._index is not None and old == signature:
                return self._index
            if self._index is not None and old is not None and signature[0] == old[0]:
                self._extend(self._index, old)
            else:
                self._index = InMemoryConceptIndex(threshold=settings.KG_FUZZY_THRESHOLD)
                self._extend(self._index, None)
            self._signature = signature
            return self._index


#: The ask loop's index: the names of active concepts only.
QUESTION_INDEX = ActiveNameCache()
