"""Reading a vocabulary file (SKOS, OWL) into RDF statements, safely, in words.

Four syntaxes through rdflib's own parsers: Turtle, RDF/XML, N-Triples and JSON-LD. The
syntax is the one asked for, else the file name's suffix says it, else the first
characters do (``syntax_for``). Everything a bad file can do is refused before or while
parsing, in a sentence naming what is wrong: too many bytes or statements (``VocabLimits``),
a NUL byte, text that is not UTF-8, a syntax error (its first line), a file with no
statements.

Nothing is ever fetched. A JSON-LD ``@context`` given by address (or an ``@import``) is
refused before parsing, an RDF/XML external entity too, and while rdflib parses, an audit
hook refuses any URL it opens or socket it connects (``no_network``): ``owl:imports`` and
remote contexts are left as statements, never followed.

The statements come back as sorted N-Triples lines (``Statements``): that text is what the
import keeps as the vocabulary's revision, so every planned item can quote the lines it
came from verbatim.
"""

from __future__ import annotations

import contextvars
import json
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.term import Node

from .formats import VOCABULARY_MEDIA_TYPES

__all__ = [
    "SYNTAXES",
    "BadVocabulary",
    "Statements",
    "VocabLimits",
    "nt_line",
    "read_vocabulary",
    "syntax_for",
]

MB = 1024 * 1024

#: rdflib's format name -> (the word for it, the suffixes it is known by).
SYNTAXES: dict[str, tuple[str, tuple[str, ...]]] = {
    "turtle": ("Turtle", (".ttl", ".turtle")),
    "xml": ("RDF/XML", (".rdf", ".owl", ".xml")),
    "nt": ("N-Triples", (".nt", ".ntriples")),
    "json-ld": ("JSON-LD", (".jsonld", ".json")),
}
#: What a person may call a syntax (``--format``), -> rdflib's name.
_ASKED = {
    "turtle": "turtle",
    "ttl": "turtle",
    "xml": "xml",
    "rdfxml": "xml",
    "rdf/xml": "xml",
    "rdf-xml": "xml",
    "owl": "xml",
    "nt": "nt",
    "ntriples": "nt",
    "n-triples": "nt",
    "json-ld": "json-ld",
    "jsonld": "json-ld",
}
#: The media type a kept vocabulary file is stored under, by syntax.
MEDIA_TYPES = dict(zip(SYNTAXES, VOCABULARY_MEDIA_TYPES, strict=True))
READABLE = ", ".join(s for _, suffixes in SYNTAXES.values() for s in suffixes)


class BadVocabulary(ValueError):
    """A vocabulary file that cannot be read; the message says why, in words."""


@dataclass(frozen=True)
class VocabLimits:
    """How big a vocabulary may be: its file's bytes and its statements."""

    max_bytes: int = 20 * MB
    max_statements: int = 500_000


# --- Which syntax ------------------------------------------------------------------------

_NT_LINE = re.compile(r"^\s*(#.*)?$|^\s*(<[^>]*>|_:\S+)\s+<[^>]*>\s+.+\.\s*(#.*)?$")


def _sniff(text: str) -> str:
    head = text.lstrip()[:2000]
    if head.startswith("<?xml") or head.startswith("<rdf:RDF") or head.startswith("<!DOCTYPE"):
        return "xml"
    if head[:1] in ("{", "["):
        return "json-ld"
    lines = text.splitlines()[:200]
    if lines and all(_NT_LINE.match(line) for line in lines):
        return "nt"
    return "turtle"


def syntax_for(*, filename: str, asked: str | None, text: str) -> str:
    """rdflib's format name for the file: as asked, else by suffix, else by its first
    characters. An unknown ``asked`` is refused in words."""
    if asked:
        found = _ASKED.get(asked.strip().lower())
        if found is None:
            raise BadVocabulary(
                f'"{asked[:40]}" is not a vocabulary syntax kgreview reads; use one of '
                "turtle, xml (RDF/XML), nt (N-Triples) or json-ld."
            )
        return found
    name = re.split(r"[\\/]", filename)[-1].lower()
    for syntax, (_, suffixes) in SYNTAXES.items():
        if name.endswith(suffixes):
            return syntax
    return _sniff(text)


# --- No network --------------------------------------------------------------------------

_GUARDED: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "kg_vocab_no_network", default=None
)
_NETWORK_EVENTS = frozenset({"urllib.Request", "socket.connect", "socket.getaddrinfo"})
_HOOKED = False


class NetworkRefused(RuntimeError):
    """Raised inside the parser when it tries to reach the network."""


def _audit(event: str, args: tuple) -> None:
    attempts = _GUARDED.get()
    if attempts is None or event not in _NETWORK_EVENTS:
        return
    target = str(args[0])[:200] if args else event
    attempts.append(target)
    raise NetworkRefused(f"kgreview reads vocabularies offline; refused to reach {target}")


@contextmanager
def no_network() -> Iterator[list[str]]:
    """While inside, this thread's (context's) attempts to open a URL or a socket raise
    ``NetworkRefused``; the list collects what was attempted."""
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)  # once per process; it does nothing outside the block
        _HOOKED = True
    attempts: list[str] = []
    token = _GUARDED.set(attempts)
    try:
        yield attempts
    finally:
        _GUARDED.reset(token)


# --- Checks before parsing ---------------------------------------------------------------


def _remote_contexts(value: object, found: list[str], depth: int = 0) -> None:
    """Every ``@context`` given by address, and every ``@import``, anywhere in a JSON-LD
    document (bounded in depth)."""
    if depth > 200 or len(found) > 5:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "@context":
                for ctx in item if isinstance(item, list) else [item]:
                    if isinstance(ctx, str):
                        found.append(ctx)
                    elif isinstance(ctx, dict) and isinstance(ctx.get("@import"), str):
                        found.append(ctx["@import"])
            _remote_contexts(item, found, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _remote_contexts(item, found, depth + 1)


def _check_json_ld(text: str) -> None:
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise BadVocabulary(f"The file is not valid JSON-LD: {_first_line(exc)}") from None
    found: list[str] = []
    _remote_contexts(document, found)
    if found:
        raise BadVocabulary(
            f'The JSON-LD names its @context by address ("{found[0][:120]}"); kgreview '
            "never fetches one. Put the context itself in the file and import it again."
        )


_EXTERNAL_ENTITY = re.compile(r"<!ENTITY\s+%?\s*[^\s>]+\s+(SYSTEM|PUBLIC)\b", re.IGNORECASE)


_ENTITY = re.compile(r"""<!ENTITY\s+(%\s*)?([^\s>]+)\s+(["'])(.*?)\3\s*>""", re.S)


def _check_xml(text: str, limits: VocabLimits) -> None:
    """External entities are refused, and so is an internal one that names another
    (the "billion laughs") or whose uses would spell out more than the file may hold
    (OWL files declare entities for namespaces: ``<!ENTITY owl "http://...#">``)."""
    if _EXTERNAL_ENTITY.search(text):
        raise BadVocabulary(
            "The RDF/XML declares an external entity (SYSTEM or PUBLIC); kgreview never "
            "reads files or addresses an entity points at."
        )
    spelt = 0
    for match in _ENTITY.finditer(text):
        name, value = match.group(2), match.group(4)
        if "&" in value or "%" in value:
            raise BadVocabulary(
                f'The RDF/XML\'s entity "{name[:40]}" is made of other entities; kgreview '
                "reads only entities that stand for plain text."
            )
        spelt += text.count(f"&{name};") * len(value)
    if spelt > limits.max_bytes:
        raise BadVocabulary(
            f"The RDF/XML's entities would spell out {spelt / MB:.0f} MB; a vocabulary is "
            f"{limits.max_bytes // MB} MB at most."
        )


def _text_of(raw: bytes, limits: VocabLimits) -> str:
    if len(raw) > limits.max_bytes:
        raise BadVocabulary(
            f"The file is {len(raw) / MB:.1f} MB; a vocabulary is {limits.max_bytes // MB} MB "
            "at most."
        )
    if not raw.strip():
        raise BadVocabulary("The file is empty.")
    if b"\x00" in raw:
        raise BadVocabulary(
            "The file holds a NUL byte: it is not an RDF text file (Turtle, RDF/XML, "
            "N-Triples or JSON-LD in UTF-8)."
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadVocabulary(
            f"The file is not UTF-8 text (an invalid byte at position {exc.start})."
        ) from None


def _first_line(exc: BaseException) -> str:
    words = " ".join(str(exc).split())[:300]
    return words or exc.__class__.__name__


# --- N-Triples lines ---------------------------------------------------------------------

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPE = re.compile(r'[\\"\n\r\t]')
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _literal(term: Literal) -> str:
    value = _ESCAPE.sub(lambda m: _ESCAPES[m.group()], str(term))
    value = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04X}", value)
    if term.language:
        return f'"{value}"@{term.language}'
    if term.datatype is not None:
        return f'"{value}"^^<{term.datatype}>'
    return f'"{value}"'


def nt_line(s: Node, p: Node, o: Node, blank: dict[BNode, str]) -> str:
    """One statement as an N-Triples line (``blank`` names the blank nodes)."""

    def term(t: Node) -> str:
        if isinstance(t, Literal):
            return _literal(t)
        if isinstance(t, BNode):
            return blank[t]
        return f"<{t}>"

    return f"{term(s)} {term(p)} {term(o)} ."


@dataclass
class Statements:
    """A parsed vocabulary: its graph, its syntax, and its statements as sorted N-Triples
    lines (blank nodes named in order of first appearance, so the same file gives the
    same text)."""

    graph: Graph
    syntax: str
    lines: dict[tuple[Node, Node, Node], str] = field(default_factory=dict)

    @property
    def syntax_label(self) -> str:
        return SYNTAXES[self.syntax][0]

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES[self.syntax]

    def text(self) -> str:
        """The N-Triples document: every line once, sorted, each ending in a newline."""
        return "".join(line + "\n" for line in sorted(set(self.lines.values())))

    def line(self, s: Node, p: Node, o: Node) -> str:
        return self.lines[(s, p, o)]


def _lines(graph: Graph) -> dict[tuple[Node, Node, Node], str]:
    def provisional(t: Node) -> str:
        return "_:" if isinstance(t, BNode) else str(t)

    triples = sorted(graph, key=lambda t: tuple(provisional(x) for x in t))
    blank: dict[BNode, str] = {}
    for triple in triples:
        for t in triple:
            if isinstance(t, BNode) and t not in blank:
                blank[t] = f"_:b{len(blank)}"
    return {triple: nt_line(*triple, blank) for triple in triples}


# --- Reading -----------------------------------------------------------------------------

BASE = "http://vocabulary.invalid/"  # relative IRIs resolve here; never fetched


def read_vocabulary(
    raw: bytes, *, filename: str = "", syntax: str | None = None, limits: VocabLimits | None = None
) -> Statements:
    """The file's statements, or ``BadVocabulary`` saying in words why not."""
    limits = limits or VocabLimits()
    text = _text_of(raw, limits)
    fmt = syntax_for(filename=filename, asked=syntax, text=text)
    if fmt == "json-ld":
        _check_json_ld(text)
    if fmt == "xml":
        _check_xml(text, limits)
    graph = Graph()
    label = SYNTAXES[fmt][0]
    with no_network() as attempts, warnings.catch_warnings():
        # rdflib's JSON-LD parser warns of its own use of ConjunctiveGraph.
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            graph.parse(data=text, format=fmt, publicID=BASE)
        except NetworkRefused:
            pass  # said below, whatever the parser made of it
        except RecursionError:
            raise BadVocabulary(f"The {label} nests too deeply to read.") from None
        except Exception as exc:  # rdflib's parsers raise many kinds; each is said in words
            if not attempts:
                raise BadVocabulary(f"The file is not valid {label}: {_first_line(exc)}") from None
    if attempts:
        raise BadVocabulary(
            f"Reading the {label} would fetch {attempts[0]}; kgreview reads vocabularies "
            "offline. Put what it names in the file itself."
        )
    if len(graph) == 0:
        raise BadVocabulary(f"The file holds no statements (read as {label}).")
    if len(graph) > limits.max_statements:
        raise BadVocabulary(
            f"The file holds {len(graph):,} statements; a vocabulary is "
            f"{limits.max_statements:,} at most."
        )
    return Statements(graph=graph, syntax=fmt, lines=_lines(graph))


def is_iri(term: Node) -> bool:
    return isinstance(term, URIRef)
