"""Planning an import from a vocabulary's statements (``vocab_read``): what it would add to
the graph, each item citing the statements it came from.

SKOS:

- A ``skos:Concept`` is a concept. Its name is its ``skos:prefLabel`` in the chosen
  language (``lang``, English by default: a tag equal to it or starting with it, such as
  ``en-GB``), else one with no language tag, else ``rdfs:label`` the same way, else the
  preferred label with the first language tag in alphabetical order. Its aliases are its
  ``altLabel``, ``hiddenLabel`` and other labels in the name's language (or untagged);
  labels in other languages are left out and counted. ``skos:definition`` is its
  description. Two concepts whose names mean the same (``construction.text.name_key``)
  are one concept: the first by IRI keeps the name, the other's names join it, and the
  report says so.
- ``broader``, ``narrower`` and ``related`` become edges only of the relations the curator
  maps (``relation_map``: ``{"broader": "part_of"}``); an unmapped one is counted and
  reported, never guessed. ``A narrower B`` is read as ``B broader A`` when only broader
  is mapped (and the other way round), so both spellings of one fact make one edge.
- Types, the rule: each concept scheme is a concept type; each top concept of a scheme
  (``topConceptOf`` / ``hasTopConcept``) is a type too, a subtype of its scheme's. A
  concept under a top concept (following ``broader``, and ``narrower`` backwards) has
  that top concept's type, the nearest one (the first by name on a tie); a top concept
  itself, or a concept of a scheme under no top concept, has its scheme's type; a
  concept of no scheme has no type.

OWL:

- A named ``owl:Class`` (or ``rdfs:Class``, or either end of ``rdfs:subClassOf``) is a
  concept type; its first named superclass (by key) is its parent, others are reported.
- An ``owl:ObjectProperty`` is a relation type (``owl:SymmetricProperty`` symmetric);
  every (domain, range) pair of named classes (``owl:unionOf`` read as its members) is
  one of its patterns.
- An ``owl:DatatypeProperty`` is an attribute of each class of its domain, its datatype
  read from its XSD range (string when there is none or it is another).
- An individual (``owl:NamedIndividual``, or anything typed with a class of the file) is
  a concept of that class's type; a statement between two of them through an object
  property of the file is an edge of that relation.

Every item cites its statements as N-Triples lines: the first is its evidence; the rest
support it. Nothing here knows the graph: the Django side resolves the plan against the
names, types and relations the graph already has.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from rdflib import OWL, RDF, RDFS, XSD, BNode, Literal, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from .text import name_key
from .vocab_items import (
    MAPPABLE,
    AliasPlan,
    AttributePlan,
    ConceptPlan,
    EdgePlan,
    PatternPlan,
    RelationPlan,
    Skip,
    TypePlan,
    VocabularyPlan,
    clean,
    local_name,
    parse_map,
    slug,
    words_of,
)
from .vocab_read import Statements

__all__ = [
    "MAPPABLE",
    "AliasPlan",
    "AttributePlan",
    "ConceptPlan",
    "EdgePlan",
    "PatternPlan",
    "RelationPlan",
    "Skip",
    "TypePlan",
    "VocabularyPlan",
    "parse_map",
    "plan_vocabulary",
]

SKOS = Namespace("http://www.w3.org/2004/02/skos/core#")
DCTERMS = Namespace("http://purl.org/dc/terms/")
DC = Namespace("http://purl.org/dc/elements/1.1/")
_BUILTIN = (str(RDF), str(RDFS), str(OWL), str(XSD), str(SKOS))
#: XSD datatypes -> the attribute datatypes kgreview has.
DATATYPES = {
    **{str(XSD[t]): "string" for t in ("string", "normalizedString", "token", "language")},
    **{
        str(XSD[t]): "integer"
        for t in (
            "integer",
            "int",
            "long",
            "short",
            "byte",
            "nonNegativeInteger",
            "positiveInteger",
            "nonPositiveInteger",
            "negativeInteger",
            "unsignedInt",
            "unsignedLong",
            "unsignedShort",
            "unsignedByte",
        )
    },
    **{str(XSD[t]): "decimal" for t in ("decimal", "float", "double")},
    str(XSD.boolean): "boolean",
    **{str(XSD[t]): "date" for t in ("date", "dateTime", "dateTimeStamp")},
    str(XSD.anyURI): "uri",
}
NAME_MAX = 200
LABEL_MAX = 100
DESCRIPTION_MAX = 5000


def _is_builtin(term: Node) -> bool:
    return str(term).startswith(_BUILTIN)


class _Keys:
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


# --- Reading the graph -------------------------------------------------------------------


class _Reader:
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


# --- Types: OWL classes and SKOS schemes -------------------------------------------------

_CLASS_LABELS = (RDFS.label, SKOS.prefLabel)
_DESCRIPTIONS = (RDFS.comment, SKOS.definition, DCTERMS.description)


@dataclass
class _Typing:
    """Each class, scheme or top concept's type key, and the types planned."""

    keys: _Keys = field(default_factory=_Keys)
    of: dict[Node, str] = field(default_factory=dict)
    classes: set[Node] = field(default_factory=set)
    schemes: set[Node] = field(default_factory=set)


def _classes(r: _Reader) -> list[URIRef]:
    found: set[URIRef] = set(r.typed(OWL.Class)) | set(r.typed(RDFS.Class))
    for s, o in r.g.subject_objects(RDFS.subClassOf):
        found |= {t for t in (s, o) if isinstance(t, URIRef)}
    return sorted(c for c in found if not _is_builtin(c))


def _class_cites(r: _Reader, cls: URIRef) -> list[str]:
    cites = [r.cite(cls, RDF.type, t) for t in (OWL.Class, RDFS.Class) if (cls, RDF.type, t) in r.g]
    return cites


def _plan_classes(r: _Reader, plan: VocabularyPlan, typing: _Typing) -> None:
    classes = _classes(r)
    labels: dict[URIRef, tuple[str, list[str]]] = {}
    for cls in classes:
        found = r.label(cls, _CLASS_LABELS)
        label = found[0] if found else words_of(local_name(cls))
        cites = ([found[1]] if found else []) + _class_cites(r, cls)
        typing.of[cls] = typing.keys.make(label, local_name(cls))
        typing.classes.add(cls)
        labels[cls] = (label[:LABEL_MAX] or typing.of[cls], cites)
    parents: dict[URIRef, URIRef] = {}
    for cls in classes:
        supers = sorted(
            (
                o
                for o in r.g.objects(cls, RDFS.subClassOf)
                if isinstance(o, URIRef) and o in typing.of and o != cls
            ),
            key=lambda o: typing.of[o],
        )
        if supers:
            parents[cls] = supers[0]
            labels[cls][1].append(r.cite(cls, RDFS.subClassOf, supers[0]))
        for other in supers[1:]:
            plan.skip(
                f"{typing.of[cls]} subClassOf {typing.of[other]}",
                f'a concept type has one parent; "{typing.of[cls]}" keeps "{typing.of[supers[0]]}"',
            )
    for cls in _parents_first(classes, parents, plan, typing):
        label, cites = labels[cls]
        parent = parents.get(cls)
        plan.types.append(
            TypePlan(
                key=typing.of[cls],
                label=label,
                description=r.text(cls, _DESCRIPTIONS, DESCRIPTION_MAX),
                parent_key=typing.of[parent] if parent is not None else "",
                cites=tuple(cites) or (r.cite(*next(iter(r.g.triples((cls, None, None))))),),
                why=f"The vocabulary declares the class <{cls}>.",
            )
        )


def _parents_first(
    classes: list[URIRef], parents: dict[URIRef, URIRef], plan: VocabularyPlan, typing: _Typing
) -> list[URIRef]:
    """The classes with every parent before its subtypes; a loop of subClassOf is cut
    where it closes (that class keeps no parent, and the report says so)."""
    order: list[URIRef] = []
    placed: set[URIRef] = set()
    for cls in classes:
        chain: list[URIRef] = []
        node: URIRef | None = cls
        while node is not None and node not in placed and node not in chain:
            chain.append(node)
            node = parents.get(node)
        if node is not None and node in chain:  # a loop: cut it at its last link
            plan.skip(
                f"{typing.of[chain[-1]]} subClassOf {typing.of[node]}",
                "it closes a loop of subclasses; the type is kept without that parent",
            )
            parents.pop(chain[-1])
        for item in reversed(chain):
            placed.add(item)
            order.append(item)
    return order


@dataclass
class _Schemes:
    """SKOS schemes and top concepts, with their types."""

    of_concept: dict[Node, list[Node]] = field(default_factory=lambda: defaultdict(list))
    top: dict[Node, tuple[Node, str]] = field(default_factory=dict)  # concept -> scheme, cite


def _plan_schemes(r: _Reader, plan: VocabularyPlan, typing: _Typing) -> _Schemes:
    schemes = _Schemes()
    found: set[Node] = set(r.typed(SKOS.ConceptScheme))
    for c, s in r.g.subject_objects(SKOS.inScheme):
        schemes.of_concept[c].append(s)
        found.add(s)
    for c, s in r.g.subject_objects(SKOS.topConceptOf):
        schemes.top.setdefault(c, (s, r.cite(c, SKOS.topConceptOf, s)))
        found.add(s)
    for s, c in r.g.subject_objects(SKOS.hasTopConcept):
        schemes.top.setdefault(c, (s, r.cite(s, SKOS.hasTopConcept, c)))
        found.add(s)
    for scheme in sorted(s for s in found if isinstance(s, URIRef)):
        label = r.label(scheme, (SKOS.prefLabel, DCTERMS.title, DC.title, RDFS.label))
        words = label[0] if label else words_of(local_name(scheme))
        key = typing.keys.make(words, local_name(scheme))
        typing.of[scheme] = key
        typing.schemes.add(scheme)
        cites = [label[1]] if label else []
        if (scheme, RDF.type, SKOS.ConceptScheme) in r.g:
            cites.append(r.cite(scheme, RDF.type, SKOS.ConceptScheme))
        if not cites:
            cites.append(r.cite(*next(iter(r.g.triples((None, None, scheme))))))
        plan.types.append(
            TypePlan(
                key=key,
                label=words[:LABEL_MAX] or key,
                description=r.text(
                    scheme, (SKOS.definition, DCTERMS.description, RDFS.comment), 5000
                ),
                parent_key="",
                cites=tuple(cites),
                why=f"The vocabulary's concept scheme <{scheme}>.",
            )
        )
    return schemes


def _plan_top_types(
    r: _Reader, plan: VocabularyPlan, typing: _Typing, schemes: _Schemes, names: dict
) -> None:
    """A type under its scheme's for each top concept (named as the concept is)."""
    for concept in sorted(schemes.top, key=str):
        scheme, cite = schemes.top[concept]
        if concept not in names or scheme not in typing.of:
            continue
        name, name_cite = names[concept]
        key = slug(name)
        if key == typing.of[scheme]:  # the top concept is named as its scheme: one type
            typing.of[concept] = key
            continue
        key = typing.keys.make(name, local_name(concept))
        typing.of[concept] = key
        plan.types.append(
            TypePlan(
                key=key,
                label=name[:LABEL_MAX],
                description=r.text(concept, (SKOS.definition,), DESCRIPTION_MAX),
                parent_key=typing.of[scheme],
                cites=(cite, name_cite),
                why=f'"{name}" is a top concept of the scheme typed {typing.of[scheme]}.',
            )
        )


# --- Concepts ----------------------------------------------------------------------------

_NAME_LABELS = (SKOS.prefLabel, RDFS.label)
_ALIAS_LABELS = (SKOS.prefLabel, SKOS.altLabel, SKOS.hiddenLabel, RDFS.label)


def _concept_subjects(r: _Reader, typing: _Typing) -> list[URIRef]:
    found = set(r.typed(SKOS.Concept)) | set(r.typed(OWL.NamedIndividual))
    for cls in typing.classes:
        found |= set(r.typed(cls))
    found |= {c for c in r.g.subjects(SKOS.topConceptOf, None) if isinstance(c, URIRef)}
    found |= {c for c in r.g.objects(None, SKOS.hasTopConcept) if isinstance(c, URIRef)}
    return sorted(found - typing.schemes - typing.classes)


def _name_of(r: _Reader, s: URIRef) -> tuple[str, str, str] | None:
    """(name, cited line, its language tag) of a concept."""
    for p in _NAME_LABELS:
        found = r.literals(s, p)
        if found:
            return clean(found[0], NAME_MAX + 1), r.cite(s, p, found[0]), found[0].language or ""
    if (s, RDF.type, SKOS.Concept) in r.g:
        return None  # a SKOS concept is named by its labels
    words = words_of(local_name(s))
    if not words:
        return None
    cite = sorted(r.st.line(*t) for t in r.g.triples((s, RDF.type, None)))[0]
    return clean(words, NAME_MAX + 1), cite, ""


@dataclass
class _Concepts:
    """Each concept's IRI -> (name, cited line), and names by key (the first keeps it)."""

    names: dict[Node, tuple[str, str]] = field(default_factory=dict)
    langs: dict[Node, str] = field(default_factory=dict)  # the language of each name
    by_key: dict[str, Node] = field(default_factory=dict)
    same: dict[Node, Node] = field(default_factory=dict)  # an IRI -> the one named first


def _name_concepts(r: _Reader, plan: VocabularyPlan, subjects: list[URIRef]) -> _Concepts:
    concepts = _Concepts()
    for s in subjects:
        found = _name_of(r, s)
        if found is None:
            plan.skip(str(s), "a concept with no skos:prefLabel or rdfs:label")
            continue
        name, cite, lang = found
        if len(name) > NAME_MAX or not name_key(name):
            plan.skip(str(s), f"its name is not a concept name ({NAME_MAX} characters at most)")
            continue
        key = name_key(name)
        first = concepts.by_key.get(key)
        if first is not None:
            concepts.same[s] = first
            plan.skip(
                str(s), f'its name "{name}" is the name of <{first}>; imported as one concept'
            )
            continue
        concepts.by_key[key] = s
        concepts.names[s] = (name, cite)
        concepts.langs[s] = lang
    return concepts


def _in_language(r: _Reader, lit: Literal, name_lang: str) -> bool:
    """An alias is in the chosen language or untagged; when the name itself had to be
    taken in another language, in that one."""
    return r.rank(lit)[0] < 2 or (lit.language or "").lower() == name_lang.lower()


@dataclass
class _Names:
    """The name keys taken in the file: whose each is (a concept's IRI)."""

    owner: dict[str, Node]

    def claim(self, key: str, s: Node) -> Node | None:
        """Take ``key`` for ``s``; the other concept that has it, if any."""
        other = self.owner.setdefault(key, s)
        return None if other == s else other


def _aliases(
    r: _Reader, plan: VocabularyPlan, s: Node, owner: Node, name_lang: str, names: _Names
) -> list[AliasPlan]:
    """The aliases of ``s`` (for the concept ``owner``), in the name's language; a name of
    another concept of the file is left out and said."""
    out: list[AliasPlan] = []
    for p in _ALIAS_LABELS:
        for lit in r.literals(s, p):
            alias = clean(lit, NAME_MAX + 1)
            key = name_key(alias)
            if not _in_language(r, lit, name_lang) or not key or len(alias) > NAME_MAX:
                continue
            taken = key in names.owner
            other = names.claim(key, owner)
            if other is not None:
                plan.skip(f'"{alias}" of <{owner}>', "a name of another concept of the file")
            elif not taken:
                out.append(AliasPlan(alias, r.cite(s, p, lit)))
    return out


def _type_keys(
    r: _Reader, concepts: _Concepts, typing: _Typing, schemes: _Schemes
) -> dict[Node, str]:
    """Each concept's type key by the rule in this module's docstring."""
    parents: dict[Node, set[Node]] = defaultdict(set)
    for s, o in r.g.subject_objects(SKOS.broader):
        parents[s].add(o)
    for s, o in r.g.subject_objects(SKOS.narrower):
        parents[o].add(s)
    out: dict[Node, str] = {}
    for s in concepts.names:
        explicit = sorted(typing.of[t] for t in r.g.objects(s, RDF.type) if t in typing.of)
        if explicit:
            out[s] = explicit[0]
        elif s in schemes.top:
            out[s] = typing.of.get(schemes.top[s][0], "")
        else:
            out[s] = _nearest_top(s, parents, schemes, typing, concepts) or _scheme_type(
                s, schemes, typing
            )
    return out


def _nearest_top(s, parents, schemes: _Schemes, typing: _Typing, concepts: _Concepts) -> str:
    seen = {s}
    level = [s]
    for _ in range(100):
        nxt = sorted({p for node in level for p in parents.get(node, ()) if p not in seen}, key=str)
        if not nxt:
            return ""
        tops = [p for p in nxt if p in schemes.top and p in typing.of]
        if tops:
            return min((concepts.names.get(t, ("", ""))[0], typing.of[t]) for t in tops)[1]
        seen.update(nxt)
        level = nxt
    return ""


def _scheme_type(s, schemes: _Schemes, typing: _Typing) -> str:
    keys = sorted(typing.of[x] for x in schemes.of_concept.get(s, ()) if x in typing.of)
    return keys[0] if keys else ""


def _plan_concepts(
    r: _Reader, plan: VocabularyPlan, concepts: _Concepts, type_keys: dict[Node, str]
) -> None:
    names = _Names(owner=dict(concepts.by_key))
    merged: dict[Node, list[Node]] = defaultdict(list)
    for other, first in concepts.same.items():
        merged[first].append(other)
    for s, (name, cite) in concepts.names.items():
        aliases: list[AliasPlan] = []
        for node in (s, *merged.get(s, ())):
            aliases += _aliases(r, plan, node, s, concepts.langs[s], names)
        cites = [cite] + sorted(r.cite(s, RDF.type, t) for t in r.g.objects(s, RDF.type))[:3]
        type_key = type_keys.get(s, "")
        plan.concepts.append(
            ConceptPlan(
                name=name,
                aliases=tuple(aliases[:50]),
                description=r.text(s, (SKOS.definition, RDFS.comment), DESCRIPTION_MAX),
                type_key=type_key,
                cites=tuple(dict.fromkeys(cites)),
                why=f"<{s}> is a concept of the imported vocabulary"
                + (f", of the type {type_key}." if type_key else "."),
            )
        )
        for dropped in aliases[50:]:
            plan.skip(f'"{dropped.name}" of "{name}"', "a concept takes 50 aliases at most")
    _skip_other_languages(r, plan, concepts)


def _skip_other_languages(r: _Reader, plan: VocabularyPlan, concepts: _Concepts) -> None:
    for s in concepts.names:
        for p in _ALIAS_LABELS:
            for lit in r.literals(s, p):
                if not _in_language(r, lit, concepts.langs[s]):
                    plan.skip(
                        f'"{lit}"@{lit.language}', f"a label in another language than {r.lang}"
                    )


# --- Relations, attributes, edges --------------------------------------------------------


def _plan_relations(r: _Reader, plan: VocabularyPlan, typing: _Typing) -> dict[Node, str]:
    """A relation type per object property; returns each property's key."""
    keys = _Keys()
    out: dict[Node, str] = {}
    for prop in r.typed(OWL.ObjectProperty):
        if _is_builtin(prop):
            continue
        found = r.label(prop, (RDFS.label, SKOS.prefLabel))
        words = found[0] if found else words_of(local_name(prop))
        key = keys.make(words, local_name(prop))
        out[prop] = key
        verb = words.lower()[:NAME_MAX] or key.replace("_", " ")
        domains = [d for d in r.named(r.g.objects(prop, RDFS.domain)) if d in typing.of]
        ranges = [d for d in r.named(r.g.objects(prop, RDFS.range)) if d in typing.of]
        patterns = tuple(
            PatternPlan(
                relation_key=key,
                domain_key=typing.of[d],
                range_key=typing.of[g],
                cites=tuple(
                    _cites_about(r, prop, RDFS.domain, d) + _cites_about(r, prop, RDFS.range, g)
                ),
            )
            for d in domains
            for g in ranges
        )
        symmetric = (prop, RDF.type, OWL.SymmetricProperty) in r.g
        cites = [r.cite(prop, RDF.type, OWL.ObjectProperty)] + ([found[1]] if found else [])
        plan.relations.append(
            RelationPlan(
                key=key,
                label=(words[:1].upper() + words[1:])[:NAME_MAX] or key,
                verb=verb,
                description=r.text(prop, _DESCRIPTIONS, DESCRIPTION_MAX),
                symmetric=symmetric,
                patterns=patterns,
                cites=tuple(cites),
                why=f"The vocabulary declares the object property <{prop}>.",
            )
        )
    return out


def _cites_about(r: _Reader, s: Node, p: Node, member: Node) -> list[str]:
    """The line stating (s, p, member), or the line stating (s, p, the union holding it)."""
    if (s, p, member) in r.g:
        return [r.cite(s, p, member)]
    return [r.cite(s, p, o) for o in r.g.objects(s, p) if isinstance(o, BNode)][:1]


def _plan_attributes(r: _Reader, plan: VocabularyPlan, typing: _Typing) -> None:
    keys_by_type: dict[str, _Keys] = defaultdict(_Keys)
    for prop in r.typed(OWL.DatatypeProperty):
        found = r.label(prop, (RDFS.label, SKOS.prefLabel))
        words = found[0] if found else words_of(local_name(prop))
        domains = [d for d in r.named(r.g.objects(prop, RDFS.domain)) if d in typing.of]
        if not domains:
            plan.skip(str(prop), "a datatype property with no class of the file as its domain")
            continue
        ranges = [str(o) for o in r.g.objects(prop, RDFS.range)]
        datatype = next((DATATYPES[t] for t in sorted(ranges) if t in DATATYPES), "string")
        if ranges and not any(t in DATATYPES for t in ranges):
            plan.skip(
                f"{prop} range {sorted(ranges)[0]}", "not a datatype kgreview has; read as string"
            )
        base = [r.cite(prop, RDF.type, OWL.DatatypeProperty)] + ([found[1]] if found else [])
        for d in domains:
            type_key = typing.of[d]
            plan.attributes.append(
                AttributePlan(
                    type_key=type_key,
                    key=keys_by_type[type_key].make(words, local_name(prop)),
                    label=(words[:1].upper() + words[1:])[:LABEL_MAX],
                    datatype=datatype,
                    description=r.text(prop, _DESCRIPTIONS, DESCRIPTION_MAX),
                    cites=tuple(base + _cites_about(r, prop, RDFS.domain, d)),
                    why=f"The vocabulary declares the datatype property <{prop}> of {type_key}.",
                )
            )
    for prop in r.typed(OWL.DatatypeProperty):
        for s, o in r.g.subject_objects(prop):
            plan.skip(f"{s} {local_name(prop)} {o}"[:200], "attribute values are not imported")


def _ends(concepts: _Concepts, s: Node, o: Node) -> tuple[str, str] | None:
    s, o = concepts.same.get(s, s), concepts.same.get(o, o)
    if s not in concepts.names or o not in concepts.names or s == o:
        return None
    return concepts.names[s][0], concepts.names[o][0]


class _EdgeSet:
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


def _skos_edges(
    r: _Reader, plan: VocabularyPlan, concepts: _Concepts, mapping: dict[str, str], edges: _EdgeSet
) -> None:
    reading = {
        "broader": ("broader", False),
        "narrower": ("narrower", False),
        "related": ("related", False),
    }
    if "broader" in mapping and "narrower" not in mapping:
        reading["narrower"] = ("broader", True)
    if "narrower" in mapping and "broader" not in mapping:
        reading["broader"] = ("narrower", True)
    unmapped: dict[str, int] = defaultdict(int)
    for predicate, (mapped, inverse) in reading.items():
        relation = mapping.get(mapped)
        for s, o in sorted(r.g.subject_objects(SKOS[predicate])):
            if relation is None:
                unmapped[predicate] += 1
                continue
            ends = _ends(concepts, s, o)
            if ends is None:
                plan.skip(f"{s} skos:{predicate} {o}", "an end is not a concept of the file")
                continue
            source, target = (ends[1], ends[0]) if inverse else ends
            edges.add(
                (source, relation, target),
                r.cite(s, SKOS[predicate], o),
                f"skos:{predicate}, mapped to {relation}.",
                either_way=mapped == "related",
            )
    for predicate, count in sorted(unmapped.items()):
        plan.skip(
            f"{count} skos:{predicate} statement{'s' if count != 1 else ''}",
            f"not mapped to a relation (map it: --map {predicate}=RELATION)",
        )


def _property_edges(
    r: _Reader,
    plan: VocabularyPlan,
    concepts: _Concepts,
    relations: dict[Node, str],
    edges: _EdgeSet,
) -> None:
    for prop, key in relations.items():
        for s, o in sorted(r.g.subject_objects(prop)):
            ends = _ends(concepts, s, o)
            if ends is None:
                plan.skip(f"{s} {local_name(prop)} {o}", "an end is not a concept of the file")
                continue
            edges.add(
                (ends[0], key, ends[1]),
                r.cite(s, prop, o),
                f"<{prop}> between individuals.",
                either_way=False,
            )


# --- The plan ----------------------------------------------------------------------------


def plan_vocabulary(
    statements: Statements, *, relation_map: dict[str, str] | None = None, lang: str = "en"
) -> VocabularyPlan:
    """What importing ``statements`` would add, each item citing its lines (see the
    module's docstring for the rules)."""
    r = _Reader(statements, lang or "en")
    plan = VocabularyPlan()
    typing = _Typing()
    _plan_classes(r, plan, typing)
    schemes = _plan_schemes(r, plan, typing)
    concepts = _name_concepts(r, plan, _concept_subjects(r, typing))
    _plan_top_types(r, plan, typing, schemes, concepts.names)
    relations = _plan_relations(r, plan, typing)
    _plan_attributes(r, plan, typing)
    _plan_concepts(r, plan, concepts, _type_keys(r, concepts, typing, schemes))
    edges = _EdgeSet()
    _skos_edges(r, plan, concepts, dict(relation_map or {}), edges)
    _property_edges(r, plan, concepts, relations, edges)
    plan.edges = list(edges.plans())
    return plan
