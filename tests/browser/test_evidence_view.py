"""Real documents in a real browser: a page Chromium prints to PDF reads back without its
running header and footer, and a quote from a long PDF paragraph is wholly in view when
its review card opens, on a laptop and on a phone."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import expect

from benchmarks.synthetic_print import printed_pdf
from construction.documents import page_of, read_document
from kgreview.graph.importing import read_upload, store_document
from tests.conftest import require

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

FIXTURES = Path(__file__).resolve().parents[1] / "construction" / "fixtures" / "html"
LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}


def chromium_print(html_file: Path, out: Path) -> bytes:
    """What a user does: Chromium's own "print to PDF" of a page on disk."""
    path = shutil.which("chromium") or "/usr/bin/chromium"
    require(os.path.exists(path), "Chromium is not installed (apt-get install -y chromium)")
    subprocess.run(
        [
            path,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            f"--print-to-pdf={out}",
            html_file.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out.read_bytes()


def test_a_page_printed_by_chromium_reads_without_its_header_footer_or_navigation(tmp_path):
    """Chromium's date, title, file URL and "n/m" are not text; the DocBook page's own
    navigation bar is not either; its headings are sections; pages keep their offsets."""
    page = (FIXTURES / "docbook-postgresql-vacuum.html").read_text()
    large = tmp_path / "vacuum.html"  # set large, so that it prints on several pages
    large.write_text(page.replace("<head>", "<head><style>body { font-size: 30px }</style>", 1))
    raw = chromium_print(large, tmp_path / "out.pdf")
    document = read_document(raw, filename="vacuum.pdf", max_bytes=10**7)
    text = document.text
    assert "file://" not in text and "vacuum.html" not in text
    assert not re.search(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{1,2}:\d{2}\s*[AP]M\b|\b\d+/\d+\b", text)
    assert not re.search(r"\b(?:Prev|Home|Next)\b", text)
    assert text.count("25.1. Routine Vacuuming") == 1
    titles = [s.path[-1] for s in document.sections]
    assert titles[:1] == ["25.1. Routine Vacuuming"]
    assert "25.1.1. Vacuuming Basics" in titles and "Tip" not in titles
    assert "25.1.1. Vacuuming Basics\n\nPostgreSQL's VACUUM command" in text
    assert len(document.pages) >= 2
    assert page_of(document.pages, len(text) - 2) == len(document.pages)


# --- the quote in view ------------------------------------------------------------------

FILLER = "Step {i} checks drafted token number {i} against the target model before it is kept."
CLAIM = (
    "The guarantee we offer is that the target model's distribution is kept exactly, "
    "because every drafted token the target would not have sampled itself is rejected "
    "and sampled again from the residual distribution, which costs one extra forward pass "
    "only when a rejection happens."
)


@pytest.fixture
def deep_quote(f):
    """An edge proposal quoting a long sentence in the middle of a long PDF paragraph."""
    paragraph = " ".join(
        [*(FILLER.format(i=i) for i in range(14)), CLAIM]
        + [FILLER.format(i=i) for i in range(14, 30)]
    )
    raw = printed_pdf(
        [("h1", "Speculative Sampling"), ("p", paragraph), ("p", "Closing words.")],
        title="Speculative Sampling",
    )
    slug, document = read_upload(raw, filename="speculative.pdf", max_bytes=10**7)
    source = store_document(
        slug=slug,
        document=document,
        raw=raw,
        filename="speculative.pdf",
        origin="t",
        acting_user=None,
    ).source
    text = source.current_revision.text
    quote = re.search(r"The\s+guarantee.*?happens\.", text, re.S).group()
    return f.edge_proposal("Rejection sampling", "Target model", doc=source, quote=quote)


def assert_quote_in_view(page) -> None:
    """Every line of the highlighted quote is inside the viewport, below the top bar,
    above the sticky decision bar, inside the evidence box's visible area, on top."""
    found = page.evaluate(
        """() => {
            const box = document.querySelector('#evidence-text');
            const top = document.querySelector('.topbar').getBoundingClientRect().bottom;
            const bar = document.querySelector('#card .actions').getBoundingClientRect().top;
            const low = Math.min(window.innerHeight, bar);
            const clip = box.getBoundingClientRect();
            const bad = [];
            for (const mark of box.querySelectorAll('mark')) {
                for (const r of mark.getClientRects()) {
                    const inside = r.top >= Math.max(top, clip.top) - 1
                        && r.bottom <= Math.min(low, clip.bottom) + 1;
                    const at = document.elementFromPoint(r.left + 2, (r.top + r.bottom) / 2);
                    if (!inside || !(at === mark || mark.contains(at)))
                        bad.push([Math.round(r.top), Math.round(r.bottom), top, low,
                                  Math.round(clip.top), Math.round(clip.bottom)]);
                }
            }
            return {bad: bad, marks: box.querySelectorAll('mark').length};
        }"""
    )
    assert found["marks"] >= 1
    assert not found["bad"], f"quote lines out of view (top, bottom, band, box): {found['bad']}"


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1366x768", "390x844"])
def test_a_long_pdf_quote_is_wholly_in_view_when_its_card_opens(
    page, live_server, login, deep_quote, shot, viewport
):
    """The card opens with the whole quote visible: no scrolling by the reviewer, at
    1366x768 and at 390 px, and its context starts at a sentence."""
    page.set_viewport_size(viewport)
    login("reviewer")
    page.goto(f"{live_server.url}/review/focus/?id={deep_quote.pk}")
    expect(page.locator("#card")).to_have_attribute("data-proposal", str(deep_quote.pk))
    page.wait_for_timeout(100)  # the reveal runs when the document is ready
    assert_quote_in_view(page)
    shown = " ".join(page.locator("#evidence-text").inner_text().split())
    assert re.match(r"^Step \d+ checks", shown) and "…" not in shown
    shot(f"evidence-long-pdf-quote-{viewport['width']}")


def test_the_quote_is_in_view_after_the_card_arrives_by_htmx(
    page, live_server, login, deep_quote, f
):
    """Moving on from another card (no page load: htmx swaps the card in) reveals the
    quote the same way."""
    page.set_viewport_size(LAPTOP)
    other = f.edge_proposal(f.concept("Alpha"), f.concept("Beta"))
    login("reviewer")
    page.goto(f"{live_server.url}/review/focus/?id={other.pk}")
    expect(page.locator("#card")).to_have_attribute("data-proposal", str(other.pk))
    page.evaluate("window.__kgNoReload = 'still here'")
    page.keyboard.press("s")  # newest first: the quote's card is next
    expect(page.locator("#card")).to_have_attribute("data-proposal", str(deep_quote.pk))
    assert page.evaluate("window.__kgNoReload") == "still here"
    page.wait_for_timeout(100)
    assert_quote_in_view(page)
