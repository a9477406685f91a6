"""Uploading documents in a real browser: several files at once, each with its own row and
result in words, a bad one beside good ones, drag and drop, the size limit checked before
sending, the form without script; then the PDF's own page with its outline and pages."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from kgreview.graph.models import Source, SourceRevision
from tests.browser.axe import axe_violations, report

pytestmark = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
CHAPTERS = ["Tokens", "Vocabulary", "Embeddings"]
MARKDOWN = (
    "# Notes on retrieval\n\nDense retrieval compares **meanings**.\n\n## Ranking\n\nThen rank.\n"
)


def make_pdf(path: Path, pages: int = 3) -> Path:
    """A PDF with a text layer, a bookmark per page and a few lines on each."""
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, invariant=True)
    for number in range(1, pages + 1):
        title = f"Chapter {number}: {CHAPTERS[(number - 1) % len(CHAPTERS)]}"
        pdf.bookmarkPage(f"c{number}")
        pdf.addOutlineEntry(title, f"c{number}", level=0)
        pdf.drawString(72, 740, title)
        pdf.drawString(
            72, 710, f"Page {number} explains <script>alert({number})</script> and **stars**."
        )
        pdf.drawString(72, 695, "A model reads text as tokens, one id each.")
        pdf.drawString(72, 660, f"A second paragraph closes page {number}.")
        pdf.showPage()
    pdf.save()
    path.write_bytes(buffer.getvalue())
    return path


def shoot(page, output_path: str, name: str) -> Path:
    """A full-page screenshot in the test's output folder, for a person to look at."""
    folder = Path(output_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def page_width(page) -> int:
    return page.evaluate("document.scrollingElement.scrollWidth")


def assert_accessible(page, where: str) -> None:
    found = axe_violations(page)
    assert not found, report(found, where)


def test_three_files_upload_each_with_its_result_then_the_pdf_reads_by_page(
    page, live_server, login, tmp_path, output_path, dialogs
):
    """A PDF, a Markdown file and a broken file: two created, one refused in words, the
    others unharmed; the list gains them; the PDF's page has its outline and page marks."""
    pdf = make_pdf(tmp_path / "tokenization.pdf")
    notes = tmp_path / "notes.md"
    notes.write_text(MARKDOWN)
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 this is not really a PDF")
    page.set_viewport_size(LAPTOP)
    login("curator")
    expect(page.locator("#upload-submit")).to_be_hidden()  # choosing the files sends them
    expect(page.locator("#drop-zone")).to_contain_text("or drop them here")
    assert_accessible(page, "the curriculum with the upload form")

    page.set_input_files("#upload-files", [str(pdf), str(notes), str(broken)])
    rows = page.locator("#upload-rows > li")
    expect(rows).to_have_count(3)
    expect(rows.nth(0).locator(".upload-name")).to_have_text("tokenization.pdf")
    expect(rows.nth(0).locator(".upload-size")).to_have_text(re.compile(r"^\d+(\.\d)? kB$"))
    expect(rows.nth(0).locator(".upload-result")).to_have_text(
        "created tokenization, revision 1, 3 pages"
    )
    expect(rows.nth(1).locator(".upload-result")).to_have_text(
        re.compile(r"^created notes, revision 1, \d+ words$")
    )
    expect(rows.nth(2).locator(".upload-result")).to_have_text(
        "not a readable PDF (it is damaged, or not a PDF at all)"
    )
    expect(rows.nth(2)).to_have_class(re.compile(r"\bbad\b"))
    expect(rows.nth(0)).to_have_class(re.compile(r"\bok\b"))
    expect(page.locator("#upload-rows progress")).to_have_count(0)
    expect(page.locator("#upload-status")).to_contain_text(
        "broken.pdf: not saved, not a readable PDF"
    )

    # What happens next, in words, with the form that does it.
    next_step = page.locator("#upload-next")
    expect(next_step).to_be_visible()
    expect(next_step.locator("button")).to_have_text("Read the new sources now")
    expect(next_step.locator("form")).to_have_attribute(
        "action", reverse("agents:run-now", args=["construct"])
    )
    expect(next_step).to_contain_text("nothing enters the graph until someone accepts it")
    # The list below was fetched again and holds both new sources with their type.
    table = page.locator("#source-list")
    expect(table).to_contain_text("tokenization")
    expect(table.locator("tr", has_text="tokenization")).to_contain_text("PDF")
    expect(table.locator("tr", has_text="tokenization")).to_contain_text("3 pages")
    expect(table.locator("tr", has_text="notes")).to_contain_text("Markdown")
    expect(page.locator("#totals .total").first).to_have_text("2sources")  # out of band
    assert Source.objects.count() == 2
    assert_accessible(page, "the curriculum after an upload")
    shoot(page, output_path, "upload-1366")

    page.set_viewport_size(PHONE)
    assert page_width(page) <= PHONE["width"] + 1
    shoot(page, output_path, "upload-390")
    page.set_viewport_size(LAPTOP)

    # The PDF's own page.
    rows.nth(0).get_by_role("link").click()
    expect(page).to_have_url(f"{live_server.url}/sources/tokenization/")
    outline = page.locator("#outline")
    expect(outline).to_have_attribute("open", "")  # open beside the text on a laptop
    links = outline.locator(".outline-list a")
    expect(links).to_have_text([f"Chapter {n}: {c}" for n, c in enumerate(CHAPTERS, 1)])
    marks = page.locator("#source-text .page-mark")
    expect(marks).to_have_count(3)
    assert (
        page.evaluate("getComputedStyle(document.getElementById('page-2'), '::after').content")
        == '"p. 2"'
    )
    text = page.locator("#source-text")
    expect(text).to_contain_text("Page 1 explains <script>alert(1)</script> and **stars**.")
    assert text.locator("script, strong").count() == 0
    expect(page.locator("#original-file")).to_contain_text("tokenization.pdf")
    expect(page.locator("#download-original")).to_have_attribute(
        "href", "/sources/tokenization/original/"
    )
    assert_accessible(page, "the PDF's source page")
    shoot(page, output_path, "source-pdf-1366")

    # The outline and "Go to page" move through the text.
    links.nth(2).click()
    expect(page).to_have_url(re.compile(r"#s-\d+$"))
    page.fill("#page-number", "2")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/sources/tokenization/#page-2$"))
    expect(page.locator("#page-2")).to_be_in_viewport()

    with page.expect_download() as download:
        page.click("#download-original")
    assert download.value.suggested_filename == "tokenization.pdf"
    assert Path(download.value.path()).read_bytes() == pdf.read_bytes()

    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/sources/tokenization/")
    expect(page.locator("#outline")).not_to_have_attribute("open", "")  # folded on a phone
    assert page_width(page) <= PHONE["width"] + 1
    shoot(page, output_path, "source-pdf-390")
    page.locator("#outline summary").click()
    expect(page.locator("#outline .outline-list a").first).to_be_visible()
    assert_accessible(page, "the PDF's source page at 390 px")
    shoot(page, output_path, "source-pdf-390-outline")
    assert dialogs == []


def test_dropped_files_upload_too(page, live_server, login):
    """Files dropped on the zone go the same way as chosen ones."""
    page.set_viewport_size(LAPTOP)
    login("curator")
    transfer = page.evaluate_handle(
        """(files) => {
            const data = new DataTransfer();
            for (const [name, text] of files) data.items.add(new File([text], name));
            return data;
        }""",
        [["dropped.md", "# Dropped\n\nDropped words.\n"], ["also.txt", "Plain words.\n"]],
    )
    page.dispatch_event("#drop-zone", "dragenter", {"dataTransfer": transfer})
    expect(page.locator("#drop-zone")).to_have_class(re.compile(r"\bdragging\b"))
    page.dispatch_event("#drop-zone", "drop", {"dataTransfer": transfer})
    expect(page.locator("#drop-zone")).not_to_have_class(re.compile(r"\bdragging\b"))
    results = page.locator("#upload-rows .upload-result")
    expect(results).to_have_text(
        [re.compile(r"^created dropped, revision 1, "), re.compile(r"^created also, revision 1, ")]
    )
    assert SourceRevision.objects.get(source__slug="also").text_format == "plain"


def test_files_over_the_limit_or_of_unknown_type_are_refused_before_sending(
    page, live_server, login, settings, tmp_path
):
    """The browser says why and sends nothing for them; the good file still goes."""
    settings.KG_MAX_SOURCE_BYTES = 1_000
    big = tmp_path / "big.txt"
    big.write_text("word " * 400)
    exe = tmp_path / "tool.exe"
    exe.write_bytes(b"MZ")
    small = tmp_path / "small.md"
    small.write_text("# Small\n\nWords.\n")
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.set_viewport_size(LAPTOP)
    login("curator")
    posts.clear()
    page.set_input_files("#upload-files", [str(big), str(exe), str(small)])
    results = page.locator("#upload-rows .upload-result")
    expect(results).to_have_text(
        [
            "file is 2 kB, over the limit of 1 kB for one file (KG_MAX_SOURCE_BYTES); not sent",
            re.compile(r"^unsupported file type '\.exe': kgreview reads .*\.pdf.*; not sent$"),
            re.compile(r"^created small, revision 1, "),
        ]
    )
    assert posts == [f"{live_server.url}/sources/"]


def test_without_script_the_form_posts_every_file_and_shows_each_result(
    browser, browser_context_args, live_server, f, tmp_path, output_path
):
    """JavaScript off: the plain multipart form, a page back with a row per file."""
    f.user("curator", role="curator", password="browser-pass-1")
    context = browser.new_context(
        **{**browser_context_args, "viewport": LAPTOP, "java_script_enabled": False}
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "curator")
    page.fill("#id_password", "browser-pass-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    pdf = make_pdf(tmp_path / "tokenization.pdf", pages=2)
    empty = tmp_path / "empty.md"
    empty.write_text("")
    expect(page.locator("#upload-submit")).to_be_visible()
    page.set_input_files("#upload-files", [str(pdf), str(empty)])
    page.click("#upload-submit")
    rows = page.locator("#upload-results .upload-row")
    expect(rows.locator(".upload-result")).to_have_text(
        ["created tokenization, revision 1, 2 pages", "file has no text"]
    )
    expect(page.locator("#upload-next")).to_be_visible()
    expect(page.locator("#source-list")).to_contain_text("tokenization")
    shoot(page, output_path, "upload-no-script-1366")
    context.close()


def test_reviewers_see_no_upload_form(page, live_server, login):
    """Only curators add documents."""
    login("reviewer")
    expect(page.locator("#upload-form")).to_have_count(0)
