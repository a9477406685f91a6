"""A curator decides one annotator's imported work in a real browser: the Label Studio
file is imported by the command, the Queue's origin badge filters to that annotator,
the bulk bar previews then accepts all of it, and the edges carry the annotation's
quote at its offsets (``manage.py import_annotations``; server side:
tests/agents/test_annotations.py)."""

from __future__ import annotations

import io
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.management import CommandError, call_command
from playwright.sync_api import expect

from kgreview.graph.models import Edge
from kgreview.review.models import Proposal
from tests.browser.test_review import VIEWPORT, assert_no_reload, mark_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "annotations"
ALICE = "annotator:labelstudio:alice@example.org"


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": VIEWPORT}


def test_curator_accepts_one_annotators_label_studio_work_in_bulk_with_the_preview(
    page, live_server, login, shot
):
    """Import, then by keyboard: the annotator's badge filters the Queue to her five
    proposals (her flag's facet fits the filters), b reaches the bulk bar, the preview
    says all five go through and decides nothing, Apply accepts them; the other
    annotator's stays open, and each edge quotes the characters she marked."""
    _import()
    others = list(Proposal.objects.exclude(flag_rows__flag=ALICE))
    assert others and all(p.status == "pending" for p in others)

    login("curator")
    page.goto(f"{live_server.url}/review/")
    mark_page(page)
    badge = page.locator("a.flag-origin", has_text=ALICE).first
    badge.focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"flag=" + re.escape(quote(ALICE, safe=""))))
    expect(page.locator("#result-count")).to_have_text("5")
    expect(page.locator(".queue-row")).to_have_count(5)
    # The annotator's long flag wraps inside the filters: its count once spilled over the
    # results and lay on top of the bulk preview's confirm button.
    filters = page.locator("#filters").bounding_box()
    facet = page.locator("label.facet", has_text="alice@example.org").bounding_box()
    assert filters and facet and facet["x"] + facet["width"] <= filters["x"] + filters["width"]
    mark_page(page)

    page.keyboard.press("b")
    expect(page.locator("#bulk-action")).to_be_focused()
    page.select_option("#bulk-action", "accept")
    page.locator("#bulk-controls button[value=filter]").click()
    panel = page.locator("#bulk-panel")
    expect(panel).to_contain_text("5 would go through")
    shot("annotations-bulk-preview")
    assert not Proposal.objects.filter(status="accepted").exists()

    page.locator("#bulk-confirm").click()
    expect(panel).to_contain_text("Accepted 5 proposals")
    assert_no_reload(page)
    alice = Proposal.objects.filter(flag_rows__flag=ALICE)
    assert set(alice.values_list("status", flat=True)) == {"accepted"}
    assert {p.status for p in Proposal.objects.filter(pk__in=[p.pk for p in others])} == {"pending"}
    edges = {
        (e.source.name, e.relation.key, e.target.name): e
        for e in Edge.objects.select_related("source", "target", "relation", "evidence_revision")
    }
    needed = edges[("Embeddings", "prerequisite", "Vector search")]
    builds = edges[("Retrieval-augmented generation", "builds_on", "Vector search")]
    assert needed.evidence_quote == "Embeddings are needed before vector search"
    assert builds.evidence_quote == "Retrieval-augmented generation builds on vector search"
    for edge in (needed, builds):
        text = edge.evidence_revision.text
        assert text[edge.evidence_start : edge.evidence_end] == edge.evidence_quote
    assert (needed.evidence_start, needed.evidence_end) == (0, 42)
    assert builds.evidence_start == 44  # 45 in the export's CRLF text, 44 once stored


def _import() -> None:
    """The command as a curator runs it; exit status 1 (one region runs past its text,
    one relation label has no mapping) with the rest imported."""
    with pytest.raises(CommandError) as left_out:
        call_command(
            "import_annotations",
            str(FIXTURES / "labelstudio.json"),
            "--format",
            "labelstudio",
            "--map",
            str(FIXTURES / "mapping.json"),
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
    assert left_out.value.returncode == 1
