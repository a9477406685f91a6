"""Reading an uploaded file into the one text kgreview stores and quotes as evidence.

Every reader turns raw bytes into a ``Document``: the extracted text, its headings as
``Section`` offsets into that text, and for PDFs where each page starts. Evidence offsets
point into the stored text, so each reader settles on one canonical form here (newlines
only, no control characters, Unicode NFC) and computes offsets *after* that, never before.

Bad input raises ``BadDocument`` with a sentence a curator can act on; library errors are
wrapped, so a caller catches one exception type. Which reader reads which file is the
table of ``formats``; the Markdown and plain text readers are here, the PDF, HTML and Word
ones in ``doc_pdf``, ``doc_html`` and ``doc_word``, imported when first needed.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from construction.doc_limits import ReadLimits
from construction.formats import MARKDOWN, PLAIN, READABLE, format_for
from construction.types import Section

__all__ = [
    "BadDocument",
    "Document",
    "clean_text",
    "control_notes",
    "decode_text",
    "finish_text",
    "markdown_sections",
    "nest_sections",
    "media_type_for",
    "page_of",
    "parse_front_matter",
    "paragraph_count",
    "read_document",
    "read_markdown",
    "read_plain",
    "section_at",
    "short_line",
    "stem_title",
]

SHORT_TITLE = 120  # a first line longer than this is a sentence, not a title


class BadDocument(Exception):
    """A file kgreview cannot read; the message is a sentence for the curator."""


@dataclass(frozen=True)
class Document:
    """One file as kgreview stores it.

    ``text`` is what evidence quotes and offsets refer to; ``text_format`` says how to
    show it ("markdown" for Markdown, HTML and Word, which are emitted as light Markdown;
    "plain" for text and PDF). ``sections`` are the headings in document order and
    ``pages`` the start offset of each PDF page (empty for other formats).
    """

    title: str
    text: str
    media_type: str
    text_format: str
    sections: tuple[Section, ...]
    pages: tuple[int, ...]
    slug: str = ""
    notes: tuple[str, ...] = ()  # what reading changed that the curator should know

    def as_structure(self) -> dict:
        return {"sections": [s.as_json() for s in self.sections], "pages": list(self.pages)}


# --- Text normalisation -----------------------------------------------------------------

# C0 controls but \t and \n, DEL and C1 controls; \v and \f (and \r) become newlines
# first, so words they separated stay apart. PostgreSQL text cannot hold NUL at all.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_LINE_BREAKS = re.compile(r"\r\n?|[\x0b\x0c]")
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")


def clean_text(text: str) -> str:
    """The canonical form of stored text: ``\\n`` line ends, no control characters, NFC."""
    text = _LINE_BREAKS.sub("\n", text)
    text = _CONTROL.sub("", text)
    return unicodedata.normalize("NFC", text)


def control_notes(text: str) -> tuple[str, ...]:
    """The note for a decoded file whose text held control characters, which
    ``clean_text`` removes (empty when it held none): how many, and which."""
    found = _CONTROL.findall(_LINE_BREAKS.sub("\n", text))
    if not found:
        return ()
    nul = found.count("\x00")
    kinds = [f"{nul} NUL byte{'s' if nul != 1 else ''}"] if nul else []
    if len(found) > nul:
        other = len(found) - nul
        kinds.append(f"{other} other control character{'s' if other != 1 else ''}")
    return (
        f"removed {' and '.join(kinds)} from the text (no stored text may hold them); "
        "the rest was imported",
    )


def finish_text(text: str) -> str:
    """Blank lines trimmed from both ends and one closing newline; raises when empty."""
    text = _LEADING_BLANK_LINES.sub("", text).rstrip()
    if not text:
        raise BadDocument("file has no text")
    return text + "\n"


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Western documents are the common case; on short texts charset-normalizer often ranks a
# sibling code page (cp1250, cp775) first when it explains the bytes barely better than
# Windows-1252 does ("na’ve cafķ" for "naïve café"), so Windows-1252 wins near-ties.
_PREFERRED_LEGACY = "cp1252"
_CHAOS_TIE = 0.1


def decode_text(raw: bytes, *, declared: str | None = None) -> str:
    """Decode a text file: BOM, else strict UTF-8, else ``declared``, else a guess.

    Raises ``BadDocument`` for bytes that are not text (see ``looks_binary``, or no
    encoding that charset-normalizer believes in).
    """
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return raw[len(bom) :].decode(encoding)
            except UnicodeDecodeError as exc:
                raise BadDocument(
                    f"file starts with a {encoding.upper()} byte order mark but is not "
                    f"{encoding.upper()} text (undecodable byte at offset {exc.start})"
                ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if looks_binary(raw, utf8=text is not None):
        raise BadDocument("file looks binary, not text")
    if text is not None:
        return text
    if declared:
        try:
            return raw.decode(declared)
        except (LookupError, UnicodeDecodeError):
            pass
    return _guess(raw)


SNIFF = 8192  # bytes looked at to tell text from binary


_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0e-\x1f]")


def looks_binary(raw: bytes, *, utf8: bool) -> bool:
    """Whether the file's first ``SNIFF`` bytes are binary rather than text.

    A NUL byte is the mark, but a stray one in a text is not: bytes that are valid UTF-8
    count as binary only when control bytes are more than one in ten (UTF-16 without a
    byte order mark, say); other bytes with any NUL are binary. (A single NUL used to
    decide it within the first 8 KB, and to pass unnoticed after them.)
    """
    sample = raw[:SNIFF]
    if 0 not in sample:
        return False
    return not utf8 or len(_CONTROL_BYTES.findall(sample)) * 10 > len(sample)


def _guess(raw: bytes) -> str:
    """charset-normalizer's best explanation of the bytes, or ``BadDocument`` if none.

    Its fallback (plain ASCII or UTF-8 when no code page passes) is off: strict UTF-8
    has been tried already, and "nothing passes" is exactly what binary looks like.
    """
    from charset_normalizer import from_bytes

    matches = list(from_bytes(raw, enable_fallback=False))
    if not matches:
        raise BadDocument("file looks binary, not text")
    least = min(m.chaos for m in matches)
    plausible = [m for m in matches if m.chaos <= least + _CHAOS_TIE]
    encodings = [
        _PREFERRED_LEGACY
        for m in plausible
        if _PREFERRED_LEGACY in (m.encoding, *m.could_be_from_charset)
    ][:1] + [m.encoding for m in plausible]
    for encoding in encodings:
        try:
            return raw.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            continue
    raise BadDocument("file looks binary, not text")


def stem_title(filename: str) -> str:
    """A title made from a file name: "ospf-areas.md" becomes "Ospf Areas"."""
    name = re.split(r"[\\/]", filename)[-1]
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return re.sub(r"[-_\s]+", " ", stem).strip().title() or "Untitled"


def short_line(text: str) -> str:
    """The first non-empty line when it is short enough to be a title, else ""."""
    for line in text.split("\n"):
        line = " ".join(line.split())
        if line:
            return line if len(line) <= SHORT_TITLE else ""
    return ""


# --- Front matter -----------------------------------------------------------------------

FRONT_MATTER_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*)$")


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in {'"', "'"}:
        return value[1:-1]
    return value


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Split ``---`` front matter (simple ``key: value`` lines) from the body.

    Returns the metadata (keys lower-cased) and the body. Text that does not start with
    ``---`` has no front matter. An opening ``---`` without a closing one is an error,
    not body text: the curator meant metadata and would otherwise see it quoted.
    """
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in {"---", "..."}), None)
    if end is None:
        raise BadDocument("front matter opened with '---' on line 1 is never closed")
    meta: dict[str, str] = {}
    for index in range(1, end):
        line = lines[index]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = FRONT_MATTER_KEY.match(line)
        if match is None:
            raise BadDocument(
                f"front matter line {index + 1} is not a 'key: value' pair: {line.strip()[:60]!r}"
            )
        meta[match.group(1).lower()] = _unquote(match.group(2))
    return meta, "\n".join(lines[end + 1 :])


# --- Sections and pages -----------------------------------------------------------------

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def markdown_sections(text: str) -> tuple[Section, ...]:
    """Every ATX heading (``#`` to ``######``) outside fenced code, in document order.

    A section runs from its heading to the next heading of the same or a higher level
    (fewer ``#``), or to the end of the text; its path is the chain of headings above it.
    Headings with no words are skipped: they name nothing a curator could look for.
    """
    found: list[tuple[int, int, str]] = []  # (start, level, title)
    fence: str | None = None
    offset = 0
    for line in text.split("\n"):
        start, offset = offset, offset + len(line) + 1
        opener = _FENCE.match(line)
        if fence is not None:
            if (
                opener is not None
                and not opener.group(2).strip()
                and opener.group(1)[0] == fence[0]
                and len(opener.group(1)) >= len(fence)
            ):
                fence = None
            continue
        if opener and not (opener.group(1)[0] == "`" and "`" in opener.group(2)):
            fence = opener.group(1)
            continue
        heading = _ATX.match(line)
        if heading and (title := (heading.group(2) or "").strip()):
            found.append((start, len(heading.group(1)), title))
    return nest_sections(found, len(text))


def nest_sections(found: Sequence[tuple[int, int, str]], length: int) -> tuple[Section, ...]:
    """Sections from (start, level, title) in order: paths from nesting, ends from levels.

    One pass with a stack of open sections: a heading closes every open section of its
    level or deeper, so a document with many headings costs no more than a short one.
    """
    paths: list[tuple[str, ...]] = []
    ends: list[int] = [length] * len(found)
    stack: list[tuple[int, int, str]] = []  # (level, index, title) of the open sections
    for index, (start, level, title) in enumerate(found):
        while stack and stack[-1][0] >= level:
            ends[stack.pop()[1]] = start
        stack.append((level, index, title))
        paths.append(tuple(t for _, _, t in stack))
    return tuple(
        Section(path=path, start=start, end=end, level=level)
        for path, end, (start, level, _) in zip(paths, ends, found, strict=True)
    )


def page_of(pages: Sequence[int], offset: int) -> int | None:
    """The 1-based page holding ``offset``, or None when the text has no pages."""
    index = bisect_right(pages, offset)
    return index or None


def section_at(sections: Sequence[Section], offset: int) -> tuple[str, ...]:
    """The heading path of the innermost section containing ``offset``, () if none.

    Sections nest (each ends where a heading of its level or higher begins), so walking
    back from the last one starting at or before ``offset``, the first that still covers
    it is the innermost.
    """
    index = bisect_right(sections, offset, key=lambda s: s.start) - 1
    while index >= 0:
        section = sections[index]
        if offset < section.end:
            return section.path
        index -= 1
    return ()


# --- Reading ----------------------------------------------------------------------------


def media_type_for(filename: str) -> str | None:
    """The media type kgreview reads a file as, from its extension; None if unreadable."""
    found = format_for(filename)
    return found.media_type if found is not None else None


def read_document(
    raw: bytes, *, filename: str, max_bytes: int, limits: ReadLimits | None = None
) -> Document:
    """Read one uploaded or imported file; raises ``BadDocument`` saying what is wrong.

    ``limits`` (the defaults when None) bound the document: its pages, characters,
    paragraphs and how far it inflates; each refusal names the limit it hit. This reads
    in the calling process: ``doc_sandbox.read_bounded`` is the same in a child process
    whose memory and processor time are capped too.
    """
    limits = limits or ReadLimits()
    file_format = format_for(filename)
    if file_format is None:
        name = re.split(r"[\\/]", filename)[-1]
        suffix = name[name.rfind(".") :].lower() if name.rfind(".") > 0 else ""
        what = f"'{suffix}'" if suffix else "without an extension"
        raise BadDocument(f"unsupported file type {what}: kgreview reads {READABLE}")
    if len(raw) > max_bytes:
        raise BadDocument(
            f"file is {len(raw):,} bytes, over the limit of {max_bytes:,} (KG_MAX_SOURCE_BYTES)"
        )
    if not raw.strip():
        raise BadDocument("file has no text")
    document = file_format.read(raw, filename=filename, limits=limits)
    if len(document.text) > limits.max_chars:
        raise BadDocument(limits.chars())
    # Markdown and plain text are no larger than their file; the blocks of the formats
    # that can inflate (the sandboxed ones) each cost a reader's objects, so they are counted.
    if file_format.sandboxed and paragraph_count(document.text) > limits.max_paragraphs:
        raise BadDocument(limits.paragraphs())
    return document


def paragraph_count(text: str) -> int:
    """The blocks of a stored text: runs of lines between blank lines."""
    return text.count("\n\n") + 1


def read_markdown(raw: bytes, *, filename: str, limits: ReadLimits | None = None) -> Document:
    """A Markdown file: its front matter's title and slug, its headings as sections."""
    decoded = decode_text(raw)
    meta, body = parse_front_matter(clean_text(decoded))
    try:
        text = finish_text(body)
    except BadDocument:
        raise BadDocument(
            "file has no text" + (" after its front matter" if meta else "")
        ) from None
    sections = markdown_sections(text)
    title = meta.get("title", "").strip()
    if not title:
        title = next((s.path[-1] for s in sections if s.level == 1), "") or stem_title(filename)
    return Document(
        title=title,
        text=text,
        media_type=MARKDOWN,
        text_format="markdown",
        sections=sections,
        pages=(),
        slug=meta.get("slug", "").strip(),
        notes=control_notes(decoded),
    )


def read_plain(raw: bytes, *, filename: str, limits: ReadLimits | None = None) -> Document:
    """A plain text file: its first short line as the title, no sections."""
    decoded = decode_text(raw)
    text = finish_text(clean_text(decoded))
    return Document(
        title=short_line(text) or stem_title(filename),
        text=text,
        media_type=PLAIN,
        text_format="plain",
        sections=(),
        pages=(),
        notes=control_notes(decoded),
    )
