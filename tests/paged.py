"""A small "PDF" revision for tests of evidence places: three pages of PAGE characters,
sections Networks (page 1) and Routing › OSPF / Routing › BGP (pages 2 and 3), and a
Markdown lesson stored before revisions kept their structure."""

from __future__ import annotations

from kgreview.graph.models import SourceRevision
from kgreview.graph.sources import source_import

PAGE = 500


def page(text: str) -> str:
    """One page of PAGE characters: the text, then blanks."""
    assert len(text) < PAGE
    return text + " " * (PAGE - len(text) - 1) + "\n"


HANDBOOK = (
    page("Networks\n\nRouters forward packets between networks.")
    + page("OSPF\n\nLink-state routing is a prerequisite for OSPF.")
    + page("BGP\n\nBGP joins autonomous systems.")
)
STRUCTURE = {
    "sections": [
        {"path": ["Networks"], "start": 0, "end": PAGE, "level": 1},
        {"path": ["Routing"], "start": PAGE, "end": 3 * PAGE, "level": 1},
        {"path": ["Routing", "OSPF"], "start": PAGE, "end": 2 * PAGE, "level": 2},
        {"path": ["Routing", "BGP"], "start": 2 * PAGE, "end": 3 * PAGE, "level": 2},
    ],
    "pages": [0, PAGE, 2 * PAGE],
}
MARKDOWN = (
    "# Retrieval\n\nIntro.\n\n## Vector search\n\n"
    "Before learning vector search you should understand embeddings.\n"
)
OSPF_QUOTE = "Link-state routing is a prerequisite for OSPF."
MD_QUOTE = "Before learning vector search you should understand embeddings."


def pdf(slug: str = "handbook", text: str = HANDBOOK) -> SourceRevision:
    """The three pages imported as a PDF's text with its structure."""
    return source_import(
        slug=slug,
        title="Networking handbook",
        text=text,
        media_type="application/pdf",
        text_format="plain",
        structure=STRUCTURE,
        acting_user=None,
    ).revision
