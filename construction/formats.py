"""The document formats kgreview reads, in one table: each format's media type, the file
name suffixes it is known by, its reader, the word the source page shows for it, and
whether it is read in the sandboxed child process.

Everything else reads this table: ``documents.read_document`` (which reader, and whether
the paragraphs are counted), ``doc_sandbox`` (which files go to the child), the import
and upload pages (which suffixes are accepted and named in refusals) and the source page
(the format's word, a download's suffix). Adding a format is one row here and its reader.

A reader is named by its module and function, and imported when a file of its format is
first read, so reading a Markdown file does not pay for loading PDFium or trafilatura.
Every reader is called as ``reader(raw, filename=..., limits=...)`` and returns a
``documents.Document``, or raises ``documents.BadDocument`` in words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from construction.doc_limits import ReadLimits
    from construction.documents import Document

__all__ = [
    "DOCX",
    "FORMATS",
    "HTML",
    "MARKDOWN",
    "PDF",
    "PLAIN",
    "READABLE",
    "SUFFIXES",
    "VOCABULARY_MEDIA_TYPES",
    "SUBMITTED_MEDIA_TYPE",
    "DocumentFormat",
    "format_for",
    "format_label",
    "format_of",
]

MARKDOWN = "text/markdown"
PLAIN = "text/plain"
HTML = "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@dataclass(frozen=True)
class DocumentFormat:
    """One format kgreview reads.

    ``suffixes`` are named wherever kgreview says what it reads (the first is the one a
    downloaded original gets); ``also_reads`` are suffixes accepted too but never named.
    ``sandboxed``: a file of this format can expand into far more than its bytes (a
    bomb), so it is read in the child process whose memory and processor time are
    capped, and its paragraphs are counted against the limit.
    """

    media_type: str
    suffixes: tuple[str, ...]
    label: str
    reader: str  # "module:function"
    sandboxed: bool
    also_reads: tuple[str, ...] = ()

    def read(self, raw: bytes, *, filename: str, limits: ReadLimits) -> Document:
        """The file read by this format's reader (imported on first use)."""
        module, _, function = self.reader.partition(":")
        reader = getattr(import_module(module), function)
        return reader(raw, filename=filename, limits=limits)


FORMATS: tuple[DocumentFormat, ...] = (
    DocumentFormat(
        MARKDOWN,
        (".md", ".markdown"),
        "Markdown",
        "construction.documents:read_markdown",
        sandboxed=False,
    ),
    DocumentFormat(
        PLAIN,
        (".txt",),
        "Text",
        "construction.documents:read_plain",
        sandboxed=False,
        also_reads=(".text",),
    ),
    DocumentFormat(
        HTML, (".html", ".htm"), "HTML", "construction.doc_html:read_html", sandboxed=True
    ),
    DocumentFormat(PDF, (".pdf",), "PDF", "construction.doc_pdf:read_pdf", sandboxed=True),
    DocumentFormat(DOCX, (".docx",), "Word", "construction.doc_word:read_docx", sandboxed=True),
)

# The media types a vocabulary kept by an import is stored under (Turtle, RDF/XML,
# N-Triples, JSON-LD; ``construction.vocab_read``): statements, not a document, so no
# reader here, and construction never reads such a source.
VOCABULARY_MEDIA_TYPES = (
    "text/turtle",
    "application/rdf+xml",
    "application/n-triples",
    "application/ld+json",
)

# The media type a text submitted with a proposal is kept under (``agents.submissions``):
# evidence for the proposals submitted with it, never mined by the agents' every-source
# readings (construct, bootstrap, discover, gap searches); a curator may name it for one.
SUBMITTED_MEDIA_TYPE = "text/x-kgreview-submitted"

# Suffix (lower case, with its dot) -> media type, for every suffix kgreview reads.
SUFFIXES: dict[str, str] = {
    suffix: f.media_type for f in FORMATS for suffix in (*f.suffixes, *f.also_reads)
}
# The suffixes named in a refusal: ".md, .markdown, .txt, ...".
READABLE = ", ".join(suffix for f in FORMATS for suffix in f.suffixes)
_BY_MEDIA_TYPE = {f.media_type: f for f in FORMATS}


def format_for(filename: str) -> DocumentFormat | None:
    """The format a file is read as, from its name's suffix; None if kgreview cannot."""
    name = re.split(r"[\\/]", filename)[-1].lower()
    dot = name.rfind(".")
    media_type = SUFFIXES.get(name[dot:]) if dot > 0 else None
    return _BY_MEDIA_TYPE[media_type] if media_type else None


def format_of(media_type: str) -> DocumentFormat | None:
    """The format of a stored media type; None for one kgreview does not read."""
    return _BY_MEDIA_TYPE.get(media_type)


def format_label(media_type: str) -> str:
    """What a person calls a stored revision's format ("PDF", "Word", "Markdown", ...);
    a revision stored without one is Markdown, an unknown one shows its media type."""
    found = _BY_MEDIA_TYPE.get(media_type or MARKDOWN)
    return found.label if found is not None else media_type
