"""``manage.py bench documents``: long PDFs imported, read and re-read.

Budgets (issue 11): a 200-page PDF imports in at most 10 s, with bookmarks or printed
from a browser (no bookmarks: headings from the typography, a running header and footer
on every page to leave out; issue 24); the offline extractor
constructs at least 20 pages a second; import and construct of a 1,000-page PDF peak at
no more than 400 MB of memory (measured in a fresh process, so nothing else counts); a
one-paragraph edit of a 200-page document costs at most 2 model calls.
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
from django.db import connection

from benchmarks.measure import measurement_starts
from benchmarks.synthetic_documents import pages_pdf
from benchmarks.synthetic_print import printed_pdf
from construction.types import Extraction, LLMUsage

BUDGET = {
    "import_200_pages_s": 10.0,
    "construct_pages_per_s": 20.0,
    "peak_memory_1000_pages_mb": 400.0,
    "edit_model_calls": 2,
}


class CountingModel:
    """A model extractor that answers nothing and counts its calls: what a one-paragraph
    edit costs is the number of chunks sent to the model again."""

    name = "bench-model"
    model = "counting"
    local = False

    def __init__(self) -> None:
        self.calls = 0

    def extract(self, doc, *, vocabulary, lexicon, max_edges) -> Extraction:
        self.calls += 1
        return Extraction(
            concepts=(),
            candidates=(),
            usage=LLMUsage(calls=1),
            extractor=self.name,
            model=self.model,
        )


def _import(name: str, raw: bytes):
    from kgreview.graph.importing import read_upload, store_document

    slug, document = read_upload(raw, filename=name, max_bytes=10**9)
    return store_document(
        slug=slug, document=document, raw=raw, filename=name, origin=name, acting_user=None
    )


def _construct(source, extractor=None) -> dict:
    from kgreview.agents.construct import construct_item_run, construct_run_create

    run = construct_run_create(sources=[source], provider="offline")
    item = run.items.get()
    construct_item_run(item_id=item.pk, claim="bench", extractor=extractor)
    item.refresh_from_db()
    return {"status": item.status, "error": item.error, "stats": item.stats}


def _printed(pages: int) -> bytes:
    """A web manual printed from a browser, about ``pages`` pages long."""
    blocks: list[tuple[str, str]] = []
    sentence = "Section {s} explains how setting {n} changes what the server writes to disk. "
    for s in range(pages * 4 // 5):
        blocks.append(("h2", f"{s + 1}. Setting group {s + 1}"))
        for n in range(8):
            blocks.append(("p", sentence.format(s=s + 1, n=n) * 7))
        blocks.append(("label", "Note"))
        blocks.append(("p", "Changes take effect at the next reload."))
    return printed_pdf(blocks, title="Server configuration", url="file:///manual/config.html")


def bench_documents(**_: object) -> dict:
    from kgreview.agents.adapters import INDEX_CACHE

    printed = _printed(200)
    measurement_starts()
    started = time.perf_counter()
    printed_result = _import("printed-200.pdf", printed)
    printed_s = time.perf_counter() - started
    printed_pages = len(printed_result.revision.structure["pages"])

    raw = pages_pdf(200)
    started = time.perf_counter()
    result = _import("manual-200.pdf", raw)
    import_s = time.perf_counter() - started
    pages = len(result.revision.structure["pages"])

    INDEX_CACHE.clear()
    INDEX_CACHE.get()
    started = time.perf_counter()
    offline = _construct(result.source)
    construct_s = time.perf_counter() - started
    pages_per_s = pages / construct_s if construct_s else 0.0

    model = CountingModel()
    first = _construct(result.source, extractor=model)
    first_calls = model.calls
    revision = result.source.current_revision
    text = revision.text
    at = text.index(". ", len(text) // 2) + 2  # a sentence in the middle of page 100
    added = "This sentence was added in next month's revision. "
    edited = text[:at] + added + text[at:]
    from kgreview.graph.sources import source_import

    def moved(offset: int) -> int:
        return offset + len(added) if offset > at else offset

    structure = revision.structure
    source_import(
        slug=result.source.slug,
        title=revision.title,
        text=edited,
        media_type=revision.media_type,
        text_format=revision.text_format,
        structure={
            "sections": [
                {**s, "start": moved(s["start"]), "end": moved(s["end"])}
                for s in structure["sections"]
            ],
            "pages": [moved(p) for p in structure["pages"]],
        },
        acting_user=None,
    )
    result.source.refresh_from_db()
    model.calls = 0
    second = _construct(result.source, extractor=model)
    edit_calls = model.calls

    memory = _peak_memory_in_fresh_process(1000)
    figures = {
        "import_200_pages_s": round(import_s, 3),
        "pdf_bytes": len(raw),
        "pages": pages,
        "import_printed_s": round(printed_s, 3),
        "printed_pages": printed_pages,
        "printed_sections": len(printed_result.revision.structure["sections"]),
        "construct_s": round(construct_s, 3),
        "construct_pages_per_s": round(pages_per_s, 1),
        "offline_proposals": offline["stats"].get("proposals", {}),
        "chunks": first["stats"].get("chunks"),
        "first_read_model_calls": first_calls,
        "edit_model_calls": edit_calls,
        "edit_chunks_cached": second["stats"].get("chunks_cached"),
        "peak_memory_1000_pages_mb": memory.get("peak_mb"),
        "memory_run": memory,
    }
    within = (
        import_s <= BUDGET["import_200_pages_s"]
        and printed_s <= BUDGET["import_200_pages_s"] * printed_pages / 200
        and pages_per_s >= BUDGET["construct_pages_per_s"]
        and edit_calls <= BUDGET["edit_model_calls"]
        and memory.get("peak_mb") is not None
        and memory["peak_mb"] <= BUDGET["peak_memory_1000_pages_mb"]
        and offline["status"] == "done"
    )
    return {
        "benchmark": "documents",
        "database": connection.vendor,
        **figures,
        "budget": BUDGET,
        "within_budget": within,
    }


def bench_document_memory(*, pages: int = 1000, **_: object) -> dict:
    """Import and construct one ``pages``-page PDF; the peak resident memory of this
    process (run it alone: ``bench documents`` starts it in a fresh interpreter)."""
    raw = pages_pdf(pages)
    measurement_starts()
    started = time.perf_counter()
    result = _import(f"manual-{pages}.pdf", raw)
    outcome = _construct(result.source)
    elapsed = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # The PDF is read in a child process (construction.doc_sandbox): its peak counts too.
    reader_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {
        "benchmark": "document-memory",
        "pages": pages,
        "seconds": round(elapsed, 3),
        "status": outcome["status"],
        "error": outcome["error"],
        "peak_mb": round(max(peak_kb, reader_kb) / 1024, 1),
        "process_peak_mb": round(peak_kb / 1024, 1),
        "reader_peak_mb": round(reader_kb / 1024, 1),
    }


def _peak_memory_in_fresh_process(pages: int) -> dict:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as scratch:
        env["KG_VAR_DIR"] = scratch  # its own scratch database beside this one
        url = os.environ.get("DATABASE_URL", "")
        if url:
            # The same server, a database of its own (its scratch copy is made from it).
            env["DATABASE_URL"] = url.rsplit("/", 1)[0] + "/kgreview_memory"
        done = subprocess.run(
            [
                sys.executable,
                "manage.py",
                "bench",
                "document-memory",
                "--json",
                # No calibration: its workload would count in the peak memory measured.
                "--no-calibration",
            ],
            cwd=Path(settings.BASE_DIR),
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    if done.returncode != 0:
        return {"error": done.stderr[-2000:], "peak_mb": None}
    # One JSON document a line, one line per benchmark: this one ran alone.
    return json.loads(done.stdout.strip().splitlines()[-1])
