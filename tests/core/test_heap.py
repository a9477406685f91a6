"""``kgreview.core.heap``: a process's long-lived objects frozen out of the collector's
walks, once what is garbage has been collected."""

from __future__ import annotations

import gc
import weakref

import pytest

from kgreview.core import heap


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


@pytest.fixture
def thawed():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_settling_freezes_what_lives_so_a_collection_no_longer_walks_it(thawed):
    kept = [_Node() for _ in range(50)]
    frozen = heap.settle()
    assert frozen == gc.get_freeze_count() > 0
    walked = {id(o) for o in gc.get_objects()}
    assert not any(id(n) in walked for n in kept)
    assert id(kept) not in walked


def test_settling_collects_a_cycle_first_instead_of_freezing_it(thawed):
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    heap.settle()
    assert gone() is None


def test_a_frozen_object_is_still_freed_when_nothing_refers_to_it(thawed):
    node = _Node()
    gone = weakref.ref(node)
    heap.settle()
    del node
    assert gone() is None


def test_a_celery_worker_process_settles_its_heap_once_loaded():
    from celery.signals import worker_process_init

    from kgreview import celery

    receivers = [
        r() if isinstance(r, weakref.ReferenceType) else r for _, r in worker_process_init.receivers
    ]
    assert celery.settle_heap in receivers


def test_the_wsgi_application_settles_its_heap_once_loaded(thawed, settings):
    """gunicorn's worker imports ``kgreview.wsgi``: the application is loaded, then frozen."""
    import importlib
    import sys

    settings.KG_NAME_INDEX_WARM = False
    if "kgreview.wsgi" in sys.modules:
        importlib.reload(sys.modules["kgreview.wsgi"])
    else:
        importlib.import_module("kgreview.wsgi")
    assert gc.get_freeze_count() > 10_000
