"""The shape of each relation type (symmetric, acyclic, directed), held per process.

A relation's shape is fixed when it is created (``services.relations``: curators rename,
describe, retire and reactivate a type, never reshape it), and relation types are never
deleted, so a shape read once stays true for the life of the process: walks of the graph
ask here instead of querying the vocabulary on every walk.

A shape is remembered only once the transaction that read it has committed
(``transaction.on_commit``): a type created inside a transaction that rolls back never
existed, and SQLite may give its id to the next type created.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from .models import RelationType


@dataclass(frozen=True)
class Shape:
    key: str
    symmetric: bool
    acyclic: bool
    directed: bool


_SHAPES: dict[int, Shape] = {}
_LOCK = threading.Lock()


def _remember(found: dict[int, Shape]) -> None:
    with _LOCK:
        _SHAPES.update(found)


def shapes(ids: Iterable[int]) -> dict[int, Shape]:
    """The shape of each relation id asked for that exists; no query once every one of
    them has been read by a committed transaction of this process."""
    wanted = {int(i) for i in ids}
    known = {i: _SHAPES[i] for i in wanted if i in _SHAPES}
    missing = wanted - known.keys()
    if not missing:
        return known
    # Read the whole vocabulary: it is small, and the next walk may name another type.
    found = {
        pk: Shape(key=key, symmetric=symmetric, acyclic=acyclic, directed=directed)
        for pk, key, symmetric, acyclic, directed in RelationType.objects.values_list(
            "pk", "key", "symmetric", "acyclic", "directed"
        )
    }
    transaction.on_commit(lambda: _remember(found))
    return {i: found[i] for i in wanted if i in found} | known


def any_symmetric(ids: Iterable[int] | None) -> bool:
    """Whether any of these relations is symmetric (every relation when ``ids`` is empty
    or None, and the starting vocabulary has symmetric ones)."""
    ids = list(ids or ())
    if not ids:
        return True
    return any(s.symmetric for s in shapes(ids).values())


def forget() -> None:
    """Drop what this process remembers (for a database that was replaced under it)."""
    with _LOCK:
        _SHAPES.clear()
