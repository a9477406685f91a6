"""Benchmarks behind ``manage.py bench``: synthetic data, timed on the configured database.

Each benchmark runs in a database of its own (created next to the configured one and
dropped afterwards), so measuring never touches real data. This package sits above
every app (it builds data through their services and times their views); no app
imports it except the command that runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from . import seeds
from .common import scratch_database

#: Each benchmark's name and where it lives ("module:function"), imported on demand.
BENCHMARKS: dict[str, str] = {
    "documents": "documents:bench_documents",
    "document-memory": "documents:bench_document_memory",
    "reading": "reading:bench_reading",
    "reading-memory": "reading:bench_reading_memory",
    "resolve": "agents:bench_resolve",
    "search": "search:bench_search",
    "construct": "agents:bench_construct",
    "review": "review:bench_review",
    "bulk": "review:bench_bulk",
    "keys": "keys:bench_keys",
    "keys-sample": "keys:bench_keys_sample",
    "queue": "queue:bench_queue",
    "heal": "heal:bench_heal",
    "graph": "graph:bench_graph",
    "render": "render:bench_render",
    "ask": "ask:bench_ask",
    "competency": "competency:bench_competency",
    "lockout": "lockout:bench_lockout",
    "rdf": "rdf:bench_rdf",
    "import-skos": "vocabulary:bench_import_skos",
}


def benchmark(name: str) -> Callable[..., dict]:
    """The function that runs the benchmark called ``name``."""
    module, function = BENCHMARKS[name].split(":")
    return getattr(import_module(f"benchmarks.{module}"), function)


__all__ = ["BENCHMARKS", "benchmark", "scratch_database", "seeds"]
