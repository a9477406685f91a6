"""The RDF exports' IRIs, terms and Turtle: one place for what a concept, an edge, a type,
a relation or an attribute is called, and for writing triples out as Turtle text.

Every IRI of the graph's own things lives under ``settings.KG_RDF_BASE`` (default
``https://kgreview.example/``, the JSON-LD export's namespace too, so both name a concept
alike): concepts and edges by id (names change, ids do not), the vocabulary by key. Each
key is percent-encoded whole (``urllib.parse.quote(..., safe="")``), so a key or username
holding spaces, slashes, unicode or control characters still gives one valid, ASCII IRI.
kgreview's own terms (``kg:``, ``vocabulary.KG``) are the format's and do not move with
the base.

The Turtle is written by hand from rdflib terms, triple by triple, so an export streams in
constant memory whatever the graph's size: full IRIs where a prefixed name would need an
escape, literals always on one line with every control character escaped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple
from urllib.parse import quote

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from rdflib import BNode, Literal, URIRef
from rdflib.namespace import DCTERMS, OWL, PROV, RDF, RDFS, SH, SKOS, XSD

from kgreview.graph.attribute_rules import canonical_value

from . import vocabulary as v


class Lex(NamedTuple):
    """A typed literal given by its lexical form, for the provenance's many numbers and
    instants: written as is, without the cost of building an rdflib ``Literal`` (which
    parses its value back) for each of millions."""

    lexical: str
    datatype: URIRef

    def literal(self) -> Literal:
        return Literal(self.lexical, datatype=self.datatype)


Term = URIRef | BNode | Literal | Lex
Triple = tuple[URIRef | BNode, URIRef, Term]

KG = URIRef(v.KG)
FOAF_ACCOUNT = URIRef("http://xmlns.com/foaf/0.1/accountName")


def kg(name: str) -> URIRef:
    """One of kgreview's own terms (``kg:confidence``, ``kg:acyclic``...)."""
    return URIRef(v.KG + name)


def base() -> str:
    return settings.KG_RDF_BASE


def segment(key: int | str) -> str:
    """One path segment of an IRI: the key percent-encoded whole."""
    return quote(str(key), safe="")


def concept(pk: int) -> URIRef:
    return URIRef(f"{base()}id/concepts/{pk}")


def edge(pk: int) -> URIRef:
    return URIRef(f"{base()}id/edges/{pk}")


def attribute_value(pk: int) -> URIRef:
    return URIRef(f"{base()}id/attribute-values/{pk}")


def concept_type(key: str) -> URIRef:
    return URIRef(f"{base()}ns/type/{segment(key)}")


def relation(key: str) -> URIRef:
    return URIRef(f"{base()}ns/relation/{segment(key)}")


def attribute(type_key: str, key: str) -> URIRef:
    """An attribute's property: its key is unique within its type, so the type is in it."""
    return URIRef(f"{base()}ns/attribute/{segment(type_key)}/{segment(key)}")


def shape(*parts: str) -> URIRef:
    return URIRef(f"{base()}ns/shape/" + "/".join(segment(p) for p in parts))


def scheme(name: str) -> URIRef:
    """A SKOS concept scheme: ``graph`` (every concept) or ``type/<key>``."""
    return URIRef(f"{base()}ns/scheme/{name}")


def source(slug: str) -> URIRef:
    return URIRef(f"{base()}id/sources/{segment(slug)}")


def revision(slug: str, number: int) -> URIRef:
    return URIRef(f"{source(slug)}/revisions/{number}")


def proposal(pk: int) -> URIRef:
    return URIRef(f"{base()}id/proposals/{pk}")


def decision(pk: int) -> URIRef:
    return URIRef(f"{base()}id/decisions/{pk}")


def user(username: str) -> URIRef:
    return URIRef(f"{base()}id/users/{segment(username)}")


def concept_id(iri: str) -> int | None:
    """The concept's id from its IRI, ``None`` for any other IRI."""
    prefix = f"{base()}id/concepts/"
    rest = str(iri)[len(prefix) :] if str(iri).startswith(prefix) else ""
    return int(rest) if rest.isdigit() else None


# --- Attribute datatypes -------------------------------------------------------------------

#: An attribute's datatype (``graph.Attribute.Datatype``) as XML Schema's.
XSD_OF = {
    "string": XSD.string,
    "integer": XSD.integer,
    "decimal": XSD.decimal,
    "boolean": XSD.boolean,
    "date": XSD.date,
    "uri": XSD.anyURI,
}


def attribute_literal(datatype: str, value: str) -> Literal:
    """The value typed by its attribute's datatype, in the rule book's canonical form
    (``graph.attribute_rules``, which is also XML Schema's); a value the rule book does
    not take (written past the services) is a plain string, so no file holds an
    ill-typed literal and the shapes' ``sh:datatype`` reports it."""
    if datatype in XSD_OF and datatype != "string":
        try:
            return Literal(canonical_value(datatype, value), datatype=XSD_OF[datatype])
        except ValueError:
            pass
    return Literal(value)


# --- SKOS mapping ----------------------------------------------------------------------------

SKOS_PROPERTIES = {"broader": SKOS.broader, "narrower": SKOS.narrower, "related": SKOS.related}


def skos_mapping() -> dict[str, URIRef]:
    """``settings.KG_SKOS_RELATIONS`` read: relation key → SKOS property."""
    out: dict[str, URIRef] = {}
    for item in filter(None, (p.strip() for p in settings.KG_SKOS_RELATIONS.split(","))):
        key, _, prop = item.partition(":")
        if prop.strip() not in SKOS_PROPERTIES or not key.strip():
            raise ImproperlyConfigured(
                f"KG_SKOS_RELATIONS: {item!r} is not KEY:broader, KEY:narrower or KEY:related"
            )
        out[key.strip()] = SKOS_PROPERTIES[prop.strip()]
    return out


# --- Turtle ------------------------------------------------------------------------------------

PREFIXES: dict[str, str] = {
    "rdf": str(RDF),
    "rdfs": str(RDFS),
    "xsd": str(XSD),
    "owl": str(OWL),
    "skos": str(SKOS),
    "prov": str(PROV),
    "dcterms": str(DCTERMS),
    "foaf": "http://xmlns.com/foaf/0.1/",
    "sh": str(SH),
    "kg": v.KG,
}


def data_prefixes() -> dict[str, str]:
    """The prefixes of the graph's own IRIs, under the configured base."""
    b = base()
    return {
        "kgt": f"{b}ns/type/",
        "rel": f"{b}ns/relation/",
        "concepts": f"{b}id/concepts/",
        "edges": f"{b}id/edges/",
    }


_LOCAL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]*)")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _char(c: str) -> str:
    if c in _ESCAPES:
        return _ESCAPES[c]
    code = ord(c)
    if code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
        return f"\\u{code:04X}"
    return c


def _iri_char(c: str) -> str:
    if 0x20 < ord(c) < 0x7F and c not in '<>"{}|^`\\':
        return c
    return "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))


_PLAIN = re.compile(r'[^"\\\n\r\t\x00-\x1f\x7f\ud800-\udfff\ufffe\uffff]*')


class Turtle:
    """Turns triples into Turtle text, a subject's triples joined with ``;``."""

    def __init__(self, prefixes: dict[str, str]) -> None:
        self.namespaces = {ns: prefix for prefix, ns in prefixes.items()}
        self.head = "".join(f"@prefix {p}: <{ns}> .\n" for p, ns in prefixes.items()) + "\n"
        self._predicates: dict[URIRef, str] = {}

    def iri(self, term: URIRef) -> str:
        text = str(term)
        # Every namespace ends in "/" or "#": the IRI's own one is up to its last of them.
        cut = max(text.rfind("/"), text.rfind("#")) + 1
        prefix = self.namespaces.get(text[:cut])
        if prefix is not None and _LOCAL.fullmatch(text[cut:]):
            return f"{prefix}:{text[cut:]}"
        # Our IRIs are percent-encoded ASCII; anything else is escaped, never written raw.
        return "<" + "".join(map(_iri_char, text)) + ">"

    def literal(self, term: Literal) -> str:
        lexical = str(term)
        body = lexical if _PLAIN.fullmatch(lexical) else "".join(map(_char, lexical))
        if term.language:
            return f'"{body}"@{term.language}'
        if term.datatype is not None and term.datatype != XSD.string:
            return f'"{body}"^^{self.iri(term.datatype)}'
        return f'"{body}"'

    def term(self, term: Term) -> str:
        if isinstance(term, Lex):
            return f'"{term.lexical}"^^{self.iri(term.datatype)}'
        if isinstance(term, Literal):
            return self.literal(term)
        if isinstance(term, BNode):
            return f"_:b{term}"
        return self.iri(term)

    def predicate(self, term: URIRef) -> str:
        """A predicate's text; a graph has few, so each is worked out once."""
        text = self._predicates.get(term)
        if text is None:
            text = self._predicates[term] = "a" if term == RDF.type else self.iri(term)
        return text

    def lines(self, triples: Iterable[Triple]) -> Iterator[str]:
        """Turtle statements: consecutive triples of one subject share it."""
        subject = None
        for s, p, o in triples:
            if s == subject:
                yield f" ;\n    {self.predicate(p)} {self.term(o)}"
            else:
                if subject is not None:
                    yield " .\n"
                subject = s
                yield f"{self.term(s)} {self.predicate(p)} {self.term(o)}"
        if subject is not None:
            yield " .\n"
