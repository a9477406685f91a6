"""Benchmarks behind ``manage.py bench``: synthetic data, timed on the configured database.

Each benchmark runs in a database of its own (created next to the configured one and
dropped afterwards), so measuring never touches real data. This package sits above
every app (it builds data through their services and times their views); no app
imports it except the command that runs it.
"""

from __future__ import annotations

from collections.abc import Callable

from .common import scratch_database


def _lazy(module: str, name: str) -> Callable[..., dict]:
    def run(**kwargs) -> dict:
        from importlib import import_module

        return getattr(import_module(f"benchmarks.{module}"), name)(**kwargs)

    run.__name__ = name
    return run


BENCHMARKS: dict[str, Callable[..., dict]] = {
    "documents": _lazy("documents", "bench_documents"),
    "document-memory": _lazy("documents", "bench_document_memory"),
    "resolve": _lazy("agents", "bench_resolve"),
    "construct": _lazy("agents", "bench_construct"),
    "review": _lazy("review", "bench_review"),
    "bulk": _lazy("review", "bench_bulk"),
    "heal": _lazy("agents", "bench_heal"),
    "graph": _lazy("graph", "bench_graph"),
    "render": _lazy("render", "bench_render"),
    "ask": _lazy("ask", "bench_ask"),
    "competency": _lazy("competency", "bench_competency"),
}

__all__ = ["BENCHMARKS", "scratch_database"]
