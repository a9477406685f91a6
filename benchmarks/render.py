"""``manage.py bench render``: a long document read and shown.

Timed, each the median of ``repeat`` runs after one warm-up: rendering 200 pages of
Markdown (the curriculum repeated to 600,000 characters) with 500 overlapping
highlighted spans; reading a 200-page PDF into text with its page offsets; and the
source page of a 200-page PDF revision (about 500,000 characters) with 300 highlighted
quotes, requested through the test client by a viewer.

The tests check what these produce (every span marked, 200 page offsets, a few hundred
bytes of markup per quote); how long they take is measured here, never in a test. The
budgets are the limits those tests used to assert, with a margin for a busy machine.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import override_settings

from benchmarks.measure import measurement_starts
from benchmarks.synthetic_documents import pages_pdf
from construction.documents import read_document
from kgreview.core.markup import Span, render_markdown
from kgreview.review.kinds.add_concept import AddConceptKind

BUDGET = {
    "markup_200_pages_500_spans_s": 2.5,
    "read_200_page_pdf_s": 5.0,
    "source_page_200_pages_300_quotes_s": 1.0,
}


def _median_s(run: Callable[[], object], repeat: int) -> float:
    """The median wall time of ``run`` over ``repeat`` calls, after one to warm up."""
    run()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _markup_case() -> tuple[str, list[Span]]:
    lessons = "\n\n".join(
        p.read_text() for p in sorted((settings.BASE_DIR / "corpus").glob("*.md"))
    )
    text = (lessons * (600_000 // len(lessons) + 1))[:600_000]
    rng = random.Random(7)
    spans = []
    for i in range(500):
        start = rng.randrange(len(text) - 2_000)
        spans.append(Span(start, start + rng.randrange(10, 1_500), key=str(i), rank=i % 3))
    return text, spans


def long_source():
    """A 200-page PDF revision ("long") with 300 pending quotes, as the source page sees
    it: the source and its text. The page-rendering test reads the same sample."""
    from kgreview.graph.sources import source_import
    from kgreview.review.models import Proposal

    line = "Tokens are the units a model reads; the vocabulary maps each one to an id."
    pages = ["\n".join(f"{line} ({n}.{k})" for k in range(32)) for n in range(200)]
    text = "\n\n".join(pages) + "\n"
    starts, at = [], 0
    for page in pages:
        starts.append(at)
        at += len(page) + 2
    sections = [
        {
            "path": [f"Chapter {n + 1}"],
            "start": starts[n],
            "end": starts[n + 10] if n + 10 < 200 else len(text),
            "level": 1,
        }
        for n in range(0, 200, 10)
    ]
    source = source_import(
        slug="long",
        title="Long",
        text=text,
        media_type="application/pdf",
        text_format="plain",
        structure={"sections": sections, "pages": starts},
        original=b"%PDF",
        filename="long.pdf",
        acting_user=None,
    ).source
    quotes = [
        Proposal(
            kind=AddConceptKind.key,
            payload={"name": f"Concept {n}", "aliases": [], "description": ""},
            confidence=0.9,
            status="pending",
            evidence_revision=source.current_revision,
            evidence_start=starts[n % 200] + 10 * (n // 200),
            evidence_end=starts[n % 200] + 10 * (n // 200) + 200,
            evidence_quote=text[starts[n % 200] : starts[n % 200] + 200],
            document=source,
            dedup_key=f"long-{n}",
        )
        for n in range(300)
    ]
    Proposal.objects.bulk_create(quotes)
    return source, text


def bench_render(*, repeat: int = 5, **_: object) -> dict:
    # Everything written and generated first: the measurement starts on a seeded database.
    markup_text, spans = _markup_case()
    raw = pages_pdf(200)
    source, text = long_source()
    characters, quoted = len(text), source.proposals.count()
    user = get_user_model().objects.create_user("bench-viewer", password="x-bench-12345")
    user.groups.add(Group.objects.get(name="viewer"))
    client = Client()
    client.force_login(user)
    measurement_starts()

    markup_s = _median_s(lambda: render_markdown(markup_text, spans), repeat)
    marks = str(render_markdown(markup_text, spans)).count("<mark")
    read_s = _median_s(lambda: read_document(raw, filename="long.pdf", max_bytes=10**9), repeat)
    # Static URLs without a collected manifest; what is measured is the request itself.
    plain = override_settings(
        ALLOWED_HOSTS=["testserver"],
        DEBUG=False,
        STORAGES={
            "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
            "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
        },
    )
    with plain:
        response = client.get("/sources/long/")
        page_s = _median_s(lambda: client.get("/sources/long/"), repeat)

    figures = {
        "markup_200_pages_500_spans_s": round(markup_s, 3),
        "markup_characters": len(markup_text),
        "markup_marks": marks,
        "read_200_page_pdf_s": round(read_s, 3),
        "pdf_bytes": len(raw),
        "source_page_200_pages_300_quotes_s": round(page_s, 3),
        "source_page_status": response.status_code,
        "source_page_characters": characters,
        "source_page_quotes": quoted,
        "source_page_bytes": len(response.content),
        "repeat": repeat,
    }
    within = response.status_code == 200 and all(figures[k] <= v for k, v in BUDGET.items())
    return {
        "benchmark": "render",
        "database": connection.vendor,
        **figures,
        "budget": BUDGET,
        "within_budget": within,
    }
