"""What planning a vocabulary import asks of its statements (``vocab_read``), shared by
its SKOS half (``vocab_skos``) and its OWL half (``vocab_owl``): labels in a language,
subjects of a type, the members of a union, unique keys, and what the planning holds on
the way (each class or scheme's type key, the concepts by name, the edges). The rules are
in ``vocab_plan``'s docstring. Pure: no Django."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from rdflib import OWL, RDF, RDFS, XSD, BNode, Literal, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from .vocab_items import EdgePlan, clean, slug
from .vocab_read import Statements

SKOS = Namespace("http://www.w3.org/2004/02/skos/core#")
DCTERMS = Namespace("http://purl.org/dc/terms/")
DC = Namespace("http://purl.org/dc/elements/1.1/")
_BUILTIN = (str(RDF), str(RDFS), str(OWL), str(XSD), str(SKOS))
NAME_MAX = 200
LABEL_MAX = 100
DESCRIPTION_MAX = 5000


def is_builtin(term: Node) -> bool:
    return str(term).startswith(_BUILTIN)


class Keys:
    """Unique keys: a second thing with the same slug gets ``_2``, ``_3``, ..."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken = set(taken)

    def make(self, words: str, fallback: str) -> str:
        base = slug(words) or slug(fallback) or "type"
        key, n = base, 2
        while key in self.taken:
            suffix = f"_{n}"
            key, n = base[: 64 - len(suffix)] + suffix, n + 1
        self.taken.add(key)
        return key


class Reader:
    """The statements, asked the questions planning needs, in one language."""

    def __init__(self, statements: Statements, lang: str) -> None:
        self.st = statements
        self.g = statements.graph
        self.lang = lang.lower()
        self._literals: dict[Node, dict[Node, list[Literal]]] = {}

    def cite(self, s: Node, p: Node, o: Node) -> str:
        return self.st.line(s, p, o)

    def rank(self, literal: Literal) -> tuple[int, str]:
        tag = (literal.language or "").lower()
        if tag == self.lang or tag.startswith(self.lang + "-"):
            return (0, tag)
        if not tag:
            return (1, tag)
        return (2, tag)

    def literals(self, s: Node, p: Node) -> list[Literal]:
        """The literals of ``s`` through ``p``, the chosen language first (each predicate
        read once, in one pass over its statements)."""
        by_subject = self._literals.get(p)
        if by_subject is None:
            by_subject = defaultdict(list)
            for subject, o in self.g.subject_objects(p):
                if isinstance(o, Literal):
                    by_subject[subject].append(o)
            for found in by_subject.values():
                found.sort(key=lambda lit: (*self.rank(lit), str(lit)))
            self._literals[p] = by_subject
        return by_subject.get(s, [])

    def label(self, s: Node, preds: Iterable[Node]) -> tuple[str, str] | None:
        """The best label of ``s`` (first predicate that has one): (text, cited line)."""
        for p in preds:
            found = self.literals(s, p)
            if found:
                return clean(found[0], NAME_MAX + 1), self.cite(s, p, found[0])
        return None

    def text(self, s: Node, preds: Iterable[Node], limit: int) -> str:
        for p in preds:
            found = self.literals(s, p)
            if found and self.rank(found[0])[0] < 2:
                return clean(found[0], limit)
        return ""

    def typed(self, cls: Node) -> list[URIRef]:
        return sorted(s for s in self.g.subjects(RDF.type, cls) if isinstance(s, URIRef))

    def named(self, nodes: Iterable[Node]) -> list[URIRef]:
        """IRIs among ``nodes``, an ``owl:unionOf`` read as its members."""
        out: list[URIRef] = []
        for node in nodes:
            if isinstance(node, URIRef):
                out.append(node)
            elif isinstance(node, BNode):
                for members in self.g.objects(node, OWL.unionOf):
                    out += [m for m in Collection(self.g, members) if isinstance(m, URIRef)]
        return sorted(set(out))


@dataclass
class Typing:
    """Each class, scheme or top concept's type key, and the types planned."""

    keys: Keys = field(default_factory=Keys)
    of: dict[Node, str] = field(default_factory=dict)
    classes: set[Node] = field(default_factory=set)
    schemes: set[Node] = field(default_factory=set)


@dataclass
class Concepts:
    """Each concept's IRI -> (name, cited line), and names by key (the first keeps it)."""

    names: dict[Node, tuple[str, str]] = field(default_factory=dict)
    langs: dict[Node, str] = field(default_factory=dict)  # the language of each name
    by_key: dict[str, Node] = field(default_factory=dict)
    same: dict[Node, Node] = field(default_factory=dict)  # an IRI -> the one named first


def edge_ends(concepts: Concepts, s: Node, o: Node) -> tuple[str, str] | None:
    s, o = concepts.same.get(s, s), concepts.same.get(o, o)
    if s not in concepts.names or o not in concepts.names or s == o:
        return None
    return concepts.names[s][0], concepts.names[o][0]


class EdgeSet:
    """Edges by (source, relation, target), each with every line that states it."""

    def __init__(self) -> None:
        self.cites: dict[tuple[str, str, str], list[str]] = {}
        self.why: dict[tuple[str, str, str], str] = {}

    def add(self, key: tuple[str, str, str], cite: str, why: str, *, either_way: bool) -> None:
        if either_way and (key[2], key[1], key[0]) in self.cites:
            key = (key[2], key[1], key[0])
        self.cites.setdefault(key, []).append(cite)
        self.why.setdefault(key, why)

    def plans(self) -> Iterator[EdgePlan]:
        for key, cites in self.cites.items():
            yield EdgePlan(key[0], key[1], key[2], tuple(cites), self.why[key])
