"""``manage.py bench reading``: the linguistic offline reader on real manuals, one core.

Budgets (issue 24): at least 10,000 words (20 pages of 500 words) read per second of
CPU on one core, NLP pipeline included; at most 500 MB peak memory reading 1,000 pages
in a fresh process. The words are those of the manuals kept in ``evaluation/manuals``
(their stored text, as imported: navigation removed, code kept); importing them is not
timed here (``bench documents`` times a 200-page PDF's import). Each page is cut into
chunks and read as the agents read it, with the documentation vocabulary.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings

from .measure import measurement_starts

BUDGET = {"words_per_cpu_s": 10_000.0, "peak_memory_1000_pages_mb": 500.0}
WORDS_PER_PAGE = 500
MANUALS = Path(settings.BASE_DIR) / "evaluation" / "manuals"


def _documents(limit: int | None = None) -> list:
    from construction.documents import read_document

    out = []
    for path in sorted(MANUALS.glob("*/pages/*")):
        out.append(read_document(path.read_bytes(), filename=path.name, max_bytes=10**8))
        if limit is not None and len(out) >= limit:
            break
    return out


def _vocabulary():
    from construction.types import RelationSpec
    from kgreview.graph.vocabulary_files import load_preset

    return [
        RelationSpec(r.key, r.label, r.verb, r.description, r.symmetric, r.acyclic)
        for r in load_preset("documentation").relations
    ]


def _read(documents, vocabulary) -> dict:
    from construction.linguistic import LinguisticExtractor
    from construction.reading import plan_chunks, read_in_order
    from construction.resolve import InMemoryConceptIndex
    from construction.types import SourceDoc

    extractor = LinguisticExtractor()
    edges = chunks = 0
    for number, document in enumerate(documents):
        doc = SourceDoc(f"page-{number}", number, 1, document.title, document.text)
        plans = plan_chunks(
            doc,
            sections=document.sections,
            max_tokens=settings.KG_CHUNK_TOKENS,
            overlap_tokens=settings.KG_CHUNK_OVERLAP_TOKENS,
            extractor_key="bench",
        )
        readings = read_in_order(
            plans,
            lambda part, known: extractor.extract(
                part,
                vocabulary=vocabulary,
                lexicon=known,
                max_edges=settings.KG_MAX_EDGES_PER_CHUNK,
            ),
            InMemoryConceptIndex(),
        )
        chunks += len(plans)
        edges += sum(len(r.candidates) for r in readings)
    return {"chunks": chunks, "edges": edges}


def bench_reading(**_: object) -> dict:
    from construction.linguistic.nlp import warm

    documents = _documents()
    vocabulary = _vocabulary()
    words = sum(len(d.text.split()) for d in documents)
    measurement_starts()
    started_load = time.process_time()
    warm()
    load_s = time.process_time() - started_load
    cpu = time.process_time()
    wall = time.perf_counter()
    read = _read(documents, vocabulary)
    cpu_s = time.process_time() - cpu
    wall_s = time.perf_counter() - wall
    words_per_s = words / cpu_s if cpu_s else 0.0
    memory = _peak_memory_in_fresh_process(1000)
    figures = {
        "manual_pages": len(documents),
        "words": words,
        "pipeline_load_cpu_s": round(load_s, 2),
        "cpu_s": round(cpu_s, 2),
        "wall_s": round(wall_s, 2),
        "words_per_cpu_s": round(words_per_s),
        "pages_per_cpu_s": round(words_per_s / WORDS_PER_PAGE, 1),
        "chunks": read["chunks"],
        "edges": read["edges"],
        "peak_memory_1000_pages_mb": memory.get("peak_mb"),
        "memory_run": memory,
    }
    within = (
        words_per_s >= BUDGET["words_per_cpu_s"]
        and memory.get("peak_mb") is not None
        and memory["peak_mb"] <= BUDGET["peak_memory_1000_pages_mb"]
    )
    return {"benchmark": "reading", **figures, "budget": BUDGET, "within_budget": within}


def bench_reading_memory(*, pages: int = 1000, **_: object) -> dict:
    """Read ``pages`` pages of 500 words cut from the manuals, in this process (run it
    alone: ``bench reading`` starts it in a fresh interpreter)."""
    from construction.documents import Document

    words: list[str] = []
    for document in _documents():
        words += document.text.split(" ")
    total = pages * WORDS_PER_PAGE
    text = " ".join((words * (total // max(1, len(words)) + 1))[:total])
    document = Document(
        title="Manual",
        text=text,
        media_type="text/plain",
        text_format="plain",
        sections=(),
        pages=(),
        notes=(),
    )
    measurement_starts()
    started = time.perf_counter()
    read = _read([document], _vocabulary())
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "benchmark": "reading-memory",
        "pages": pages,
        "seconds": round(time.perf_counter() - started, 2),
        **read,
        "peak_mb": round(peak_kb / 1024, 1),
    }


def _peak_memory_in_fresh_process(pages: int) -> dict:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as scratch:
        env["KG_VAR_DIR"] = scratch  # its own scratch database beside this one
        url = os.environ.get("DATABASE_URL", "")
        if url:
            env["DATABASE_URL"] = url.rsplit("/", 1)[0] + "/kgreview_reading_memory"
        done = subprocess.run(
            [
                sys.executable,
                "manage.py",
                "bench",
                "reading-memory",
                "--json",
                # No calibration: its workload would count in the peak memory measured.
                "--no-calibration",
            ],
            cwd=Path(settings.BASE_DIR),
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
    if done.returncode != 0:
        return {"error": done.stderr[-2000:], "peak_mb": None}
    # One JSON document a line, one line per benchmark: this one ran alone.
    return json.loads(done.stdout.strip().splitlines()[-1])
