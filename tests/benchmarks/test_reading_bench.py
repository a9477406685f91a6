"""``bench reading``: the reader timed on the manuals' own text, memory in a fresh run."""

from __future__ import annotations

from benchmarks import reading


def test_reading_memory_run_reads_the_pages_it_names():
    """A three-page run reads 1,500 words of the manuals as one document, in chunks, and
    reports its peak memory."""
    result = reading.bench_reading_memory(pages=3)
    assert result["pages"] == 3
    assert result["chunks"] >= 1
    assert result["peak_mb"] > 0


def test_the_manuals_documents_and_vocabulary_are_what_the_agents_read():
    """Pages come from evaluation/manuals as imported, and the vocabulary is the
    documentation preset, nine relations."""
    documents = reading._documents(limit=2)
    assert len(documents) == 2 and all(d.text for d in documents)
    keys = {spec.key for spec in reading._vocabulary()}
    assert {"is_a", "part_of", "requires", "uses"} <= keys and len(keys) == 9


def test_reading_a_page_drafts_edges_from_its_chunks():
    """A page read as the agents read it: its chunks and the edges they state."""
    from construction.documents import Document

    page = Document(
        title="tablefunc",
        text="# tablefunc\n\nThe `tablefunc` module includes `crosstab2` and `crosstab3`.\n",
        media_type="text/markdown",
        text_format="markdown",
        sections=(),
        pages=(),
    )
    assert reading._read([page], reading._vocabulary()) == {"chunks": 1, "edges": 2}
