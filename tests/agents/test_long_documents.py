"""A long document through the real openai client and a local chat-completions server
that answers each chunk with the stated edges whose quotes it contains."""

from __future__ import annotations

import io
import json
import re
import threading
import time
from functools import partial
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from django.core.management import CommandError, call_command

from benchmarks.synthetic_documents import handbook_markdown, handbook_pdf
from construction.chunks import estimate_tokens
from construction.documents import parse_front_matter
from construction.quotes import find_quote
from construction.sentences import sentences
from construction.text import name_key, name_keys
from kgreview.agents.models import AgentRun, AgentRunItem, ChunkExtraction
from kgreview.graph.importing import read_upload, store_document
from kgreview.graph.sources import place_of
from kgreview.review.models import Proposal
from tests.construction.fake_llm import InFlight, reply

pytestmark = pytest.mark.django_db

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
DOCUMENT = re.compile(
    r"<<<(DOCUMENT-[0-9a-f]+)>>>\nTitle: [^\n]*\n(?:Section: [^\n]*\n)?\n(.*)\n<<<END-\1>>>",
    re.S,
)


def lessons() -> list[tuple[str, str, str]]:
    out = []
    for path in sorted(CORPUS.glob("*.md")):
        meta, body = parse_front_matter(path.read_text(encoding="utf-8"))
        out.append((meta["slug"], meta.get("title", path.stem), body))
    return out


def stated_edges() -> list[dict]:
    """Gold edges of the sample lessons with a sentence of their lesson naming both ends:
    the statements a perfect model would draft, each with its verbatim quote."""
    bodies = {slug: body for slug, _, body in lessons()}
    found = []
    for line in (CORPUS / "gold.jsonl").read_text().splitlines():
        row = json.loads(line)
        body = bodies[row["lesson"]]
        for start, end, heading in sentences(body):
            text = body[start:end]
            lowered = text.casefold().replace("*", "")
            if not heading and all(
                re.search(r"\b" + re.escape(row[k].casefold()), lowered)
                for k in ("source", "target")
            ):
                found.append({**row, "evidence": text})
                break
    return found


def answerer(edges: list[dict], calls: list):
    """The fake model: for each chunk, the stated edges whose quote it contains."""

    def answer(body):
        prompt = body["messages"][1]["content"]
        match = DOCUMENT.search(prompt)
        text = match.group(2) if match else ""
        calls.append((time.monotonic(), text))
        chosen = [e for e in edges if find_quote(text, e["evidence"]) is not None][:8]
        return reply(
            {
                "concepts": [],
                "edges": [
                    {
                        "source": e["source"],
                        "target": e["target"],
                        "relation": e["relation"],
                        "confidence": 0.9,
                        "reason": "The handbook says so.",
                        "evidence": e["evidence"],
                    }
                    for e in chosen
                ],
            },
            prompt_tokens=estimate_tokens(prompt),
            completion_tokens=40 * len(chosen) + 10,
        )

    return answer


def construct(*args) -> dict:
    out = io.StringIO()
    call_command("construct", "--provider", "openai", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def upload(name: str, raw: bytes):
    slug, document = read_upload(raw, filename=name, max_bytes=50_000_000)
    return store_document(
        slug=slug, document=document, raw=raw, filename=name, origin=name, acting_user=None
    )


def handbook_lessons() -> list[tuple[str, str]]:
    return [(title, body) for _, title, body in lessons()]


def queued_edges() -> set[tuple[str, str, str]]:
    """The queued edges by every name of their ends: a concept proposal's aliases too
    (the handbook defines "Low-Rank Adaptation (LoRA)", so "LoRA" is queued by its long
    form with the abbreviation as an alias)."""
    names: dict[str, set[str]] = {}
    for p in Proposal.objects.filter(kind="add_concept"):
        keys = {name_key(n) for n in [p.payload["name"], *p.payload.get("aliases", [])]}
        names[name_key(p.payload["name"])] = keys
    out = set()
    for p in Proposal.objects.filter(kind="add_edge"):
        source, target = (name_key(p.payload[end]["name"]) for end in ("source", "target"))
        for a in names.get(source, {source}):
            for b in names.get(target, {target}):
                out.add((a, p.payload["relation"], b))
    return out


def key_of(edge: dict, symmetric=("related", "contrasts_with")) -> set[tuple[str, str, str]]:
    """Every way the queue may name the edge: "Retrieval-augmented generation (RAG)" is
    kept as "Retrieval-augmented generation" with the alias "RAG"; and as its inverse
    twin, the same fact ("A is a prerequisite for B" is "B builds on A"), which the queue
    keeps once, as whichever form was drafted first."""
    from kgreview.graph.models import RelationType

    inverse = dict(
        RelationType.objects.filter(inverse__isnull=False).values_list("key", "inverse__key")
    )
    keys = set()
    for a in name_keys(edge["source"]):
        for b in name_keys(edge["target"]):
            keys.add((a, edge["relation"], b))
            if edge["relation"] in symmetric:
                keys.add((b, edge["relation"], a))
            if edge["relation"] in inverse:
                keys.add((b, inverse[edge["relation"]], a))
    return keys


@pytest.fixture
def stated():
    edges = stated_edges()
    assert len(edges) >= 50  # the sample curriculum states most of its gold edges in one sentence
    return edges


def test_every_stated_edge_of_a_handbook_reaches_the_queue(openai_settings, stated):
    """34 lessons as one 12,600-word handbook: each chunk is one prompt within the bound,
    and every edge the model drafts from any chunk becomes a proposal."""
    calls: list = []
    openai_settings.fallback = answerer(stated, calls)
    upload("handbook.md", handbook_markdown(handbook_lessons()).encode())
    report = construct("--all")
    assert report["run"]["processed"] == 1, report["run"]["errors"]
    queued = queued_edges()
    missing = [e for e in stated if not (key_of(e) & queued)]
    assert missing == []
    assert len(calls) >= 30
    bound = 1200
    assert max(estimate_tokens(text) for _, text in calls) <= bound
    item = AgentRunItem.objects.get()
    assert item.chunks_total == item.chunks_done == len(calls)


def test_editing_one_section_rereads_only_its_chunk(openai_settings, stated, settings):
    """Next month's revision changes one paragraph: one or two model calls, not 34; the
    unchanged chunks' edges are found in the new revision's text."""
    calls: list = []
    openai_settings.fallback = answerer(stated, calls)
    book = handbook_lessons()
    upload("handbook.md", handbook_markdown(book).encode())
    construct("--all")
    first = len(calls)
    title, body = book[10]
    book[10] = (
        title,
        body.replace("\n\n", "\n\nThis paragraph was added in the new revision.\n\n", 1),
    )
    result = upload("handbook.md", handbook_markdown(book).encode())
    assert result.outcome == "revised"
    calls.clear()
    report = construct("--all")
    assert report["run"]["processed"] == 1
    assert 1 <= len(calls) <= 2
    item = AgentRunItem.objects.filter(run_id=report["run"]["id"]).get()
    assert item.stats["chunks_cached"] >= item.stats["chunks"] - 2
    assert ChunkExtraction.objects.count() <= first + 2


def test_chunks_are_read_at_most_the_concurrency_bound_at_once(openai_settings, stated, settings):
    """With KG_LLM_CONCURRENCY=2, never more than two calls are in flight, and two are (the
    document is not read one chunk at a time). Counted, not timed: the first call waits
    until a second one arrives, so a reader that reads one chunk at a time fails."""
    settings.KG_LLM_CONCURRENCY = 2
    calls: list = []
    answer = answerer(stated, calls)
    lock = threading.Lock()
    two_at_once = threading.Event()
    flight = {"now": 0, "peak": 0}

    def in_flight(then):
        with lock:
            flight["now"] += 1
            flight["peak"] = max(flight["peak"], flight["now"])
            if flight["now"] == 2:
                two_at_once.set()
        two_at_once.wait(timeout=0.8)  # under the client's 1 s timeout
        time.sleep(0.05)  # long enough for a third call, were one allowed, to arrive
        with lock:
            flight["now"] -= 1
        return then

    openai_settings.fallback = lambda body: InFlight(partial(in_flight, answer(body)))
    book = handbook_lessons()[:6]
    upload("handbook.md", handbook_markdown(book).encode())
    construct("--all")
    assert len(calls) >= 5
    assert two_at_once.is_set() and flight["peak"] == 2


def test_a_token_budget_stops_the_run_in_words_before_it_overspends(
    openai_settings, stated, settings
):
    """A budget for about three chunks: the run stops, says why, spends no more than the
    budget, keeps what it read; a second run with more budget pays only for the rest."""
    settings.KG_LLM_MAX_TOKENS_PER_RUN = 8_000
    settings.KG_LLM_CONCURRENCY = 1
    calls: list = []
    openai_settings.fallback = answerer(stated, calls)
    upload("handbook.md", handbook_markdown(handbook_lessons()[:12]).encode())
    upload("second.md", b"# Second\n\nTokenization is a prerequisite for embeddings.\n")
    out = io.StringIO()
    call_command("construct", "--provider", "openai", "--json", stdout=out)
    run = AgentRun.objects.get()
    item = run.items.get(source__slug="handbook")
    assert item.status == AgentRunItem.Status.FAILED
    assert "Stopped before overspending" in item.error
    assert "KG_LLM_MAX_TOKENS_PER_RUN" in item.error and "KG_LLM_MAX_TOKENS_PER_RUN" in run.error
    later = run.items.get(source__slug="second")
    assert later.status == AgentRunItem.Status.CANCELLED and "overspending" in later.error
    assert run.status == AgentRun.Status.CANCELLED
    assert 1 <= len(calls) < item.chunks_total
    assert run.tokens_reserved <= 8_000
    assert run.llm_usage["calls"] == len(calls) == item.llm_usage["calls"]
    assert 0 < run.llm_usage["total_tokens"] <= 8_000
    assert ChunkExtraction.objects.count() == len(calls) == item.chunks_done
    paid = len(calls)
    settings.KG_LLM_MAX_TOKENS_PER_RUN = 0
    calls.clear()
    construct("--source", "handbook")
    assert len(calls) == item.chunks_total - paid


def test_pdf_evidence_names_the_page_whose_own_text_holds_the_quote(openai_settings, stated):
    """The handbook as a PDF: each proposal's page is the page where PDFium finds the quote."""
    calls: list = []
    openai_settings.fallback = answerer(stated, calls)
    raw = handbook_pdf(handbook_lessons()[:8])
    upload("handbook.pdf", raw)
    construct("--all")
    proposals = list(Proposal.objects.filter(kind="add_edge").select_related("evidence_revision"))
    assert len(proposals) >= 10
    pdf = pdfium.PdfDocument(raw)
    pages = [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    for proposal in proposals:
        place = place_of(proposal.evidence_revision, proposal.evidence_start)
        assert place.page is not None
        words = proposal.evidence_quote.split()[:4]
        page_text = " ".join(pages[place.page - 1].split())
        assert " ".join(words) in page_text, (place.page, words)
        assert place.section, proposal.evidence_quote


def test_a_vanished_quote_in_a_long_document_proposes_retiring_its_edge(openai_settings, stated):
    """An accepted edge's sentence is cut from one section of the handbook: the re-run
    reads that chunk again and asks to retire the edge; every other chunk comes from
    the cache and no other edge is touched."""
    from kgreview.review.decide.decisions import proposal_accept
    from tests import factories

    calls: list = []
    openai_settings.fallback = answerer(stated, calls)
    book = handbook_lessons()
    upload("handbook.md", handbook_markdown(book).encode())
    construct("--all")
    reviewer = factories.user("rita", role="reviewer")
    proposal = (
        Proposal.objects.filter(kind="add_edge", status="pending")
        .select_related("evidence_revision")
        .order_by("evidence_start")
        .last()
    )
    proposal_accept(proposal_id=proposal.pk, acting_user=reviewer)
    quote = proposal.evidence_quote
    changed = [(title, body.replace(quote, "")) for title, body in book]
    assert changed != book
    upload("handbook.md", handbook_markdown(changed).encode())
    calls.clear()
    construct("--all")
    assert 1 <= len(calls) <= 2
    retire = Proposal.objects.filter(kind="invalidate_edge", status="pending").get()
    assert retire.payload["reason_code"] == "evidence_gone"
    assert "no longer appears" in retire.reason


def test_a_failed_chunk_fails_the_source_in_words_and_keeps_the_chunks_paid_for(
    openai_settings, stated, settings
):
    """The model refuses the fourth chunk: the source fails with the endpoint's words,
    the three chunks read before it are kept and counted, and the next run pays only
    for the rest."""
    from tests.construction.fake_llm import status

    settings.KG_LLM_CONCURRENCY = 1
    calls: list = []
    answer = answerer(stated, calls)
    seen = {"n": 0}

    def flaky(body):
        seen["n"] += 1
        if seen["n"] == 4:
            return status(401, "Incorrect API key provided")
        return answer(body)

    openai_settings.fallback = flaky
    upload("handbook.md", handbook_markdown(handbook_lessons()[:8]).encode())
    with pytest.raises(CommandError, match="Incorrect API key"):
        construct("--all")
    item = AgentRunItem.objects.get()
    assert item.status == AgentRunItem.Status.FAILED
    assert "Incorrect API key" in item.error
    assert ChunkExtraction.objects.count() == 3 == item.chunks_done
    assert item.llm_usage["calls"] == 3
    openai_settings.fallback = answer
    calls.clear()
    construct("--all")
    assert len(calls) == item.chunks_total - 3


def test_a_worker_that_lost_its_claim_stops_and_writes_nothing(openai_settings, stated):
    """Another worker took the source over (this one outlived its lease): after its
    chunk in flight is kept, this one stops without proposals and without finishing the
    item for the other."""
    from kgreview.agents import adapters, reading
    from kgreview.agents.items import item_claim

    calls: list = []
    openai_settings.fallback = answerer(stated, calls)
    source = upload("handbook.md", handbook_markdown(handbook_lessons()[:4]).encode()).source
    from kgreview.agents.construct import construct_run_create

    run = construct_run_create(sources=[source], provider="openai")
    item = item_claim(run.items.get().pk, "worker-a")
    AgentRunItem.objects.filter(pk=item.pk).update(claimed_by="worker-b")
    extractor = adapters.extractor_for("openai")
    revision = source.current_revision
    doc = adapters.source_doc(revision)
    xkey = adapters.extractor_key(extractor)
    plans = reading.plans_for(revision, doc, xkey)
    with pytest.raises(reading.ClaimLost):
        reading.read_remote(
            item=item,
            run=run,
            plans=plans,
            extractor=extractor,
            xkey=xkey,
            vocabulary=adapters.vocabulary(),
            lexicon=adapters.INDEX_CACHE.get(),
        )
    assert ChunkExtraction.objects.count() >= 1
    assert not Proposal.objects.exists()
    assert AgentRunItem.objects.get(pk=item.pk).claimed_by == "worker-b"
