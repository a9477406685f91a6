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
from dataclasses import dataclass

from rdflib import OWL, RDF, RDFS, Literal, URIRef
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
    words_of,
)
from .vocab_owl import plan_attributes, plan_classes, plan_relations, property_edges
from .vocab_read import Statements
from .vocab_reader import DESCRIPTION_MAX, NAME_MAX, SKOS, Concepts, EdgeSet, Reader, Typing
from .vocab_skos import concept_type_keys, plan_schemes, plan_top_types, skos_edges

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

_NAME_LABELS = (SKOS.prefLabel, RDFS.label)
_ALIAS_LABELS = (SKOS.prefLabel, SKOS.altLabel, SKOS.hiddenLabel, RDFS.label)


def _concept_subjects(r: Reader, typing: Typing) -> list[URIRef]:
    found = set(r.typed(SKOS.Concept)) | set(r.typed(OWL.NamedIndividual))
    for cls in typing.classes:
        found |= set(r.typed(cls))
    found |= {c for c in r.g.subjects(SKOS.topConceptOf, None) if isinstance(c, URIRef)}
    found |= {c for c in r.g.objects(None, SKOS.hasTopConcept) if isinstance(c, URIRef)}
    return sorted(found - typing.schemes - typing.classes)


def _name_of(r: Reader, s: URIRef) -> tuple[str, str, str] | None:
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


def _name_concepts(r: Reader, plan: VocabularyPlan, subjects: list[URIRef]) -> Concepts:
    concepts = Concepts()
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


def _in_language(r: Reader, lit: Literal, name_lang: str) -> bool:
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
    r: Reader, plan: VocabularyPlan, s: Node, owner: Node, name_lang: str, names: _Names
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


def _plan_concepts(
    r: Reader, plan: VocabularyPlan, concepts: Concepts, type_keys: dict[Node, str]
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


def _skip_other_languages(r: Reader, plan: VocabularyPlan, concepts: Concepts) -> None:
    for s in concepts.names:
        for p in _ALIAS_LABELS:
            for lit in r.literals(s, p):
                if not _in_language(r, lit, concepts.langs[s]):
                    plan.skip(
                        f'"{lit}"@{lit.language}', f"a label in another language than {r.lang}"
                    )


def plan_vocabulary(
    statements: Statements, *, relation_map: dict[str, str] | None = None, lang: str = "en"
) -> VocabularyPlan:
    """What importing ``statements`` would add, each item citing its lines (see the
    module's docstring for the rules)."""
    r = Reader(statements, lang or "en")
    plan = VocabularyPlan()
    typing = Typing()
    plan_classes(r, plan, typing)
    schemes = plan_schemes(r, plan, typing)
    concepts = _name_concepts(r, plan, _concept_subjects(r, typing))
    plan_top_types(r, plan, typing, schemes, concepts.names)
    relations = plan_relations(r, plan, typing)
    plan_attributes(r, plan, typing)
    _plan_concepts(r, plan, concepts, concept_type_keys(r, concepts, typing, schemes))
    edges = EdgeSet()
    skos_edges(r, plan, concepts, dict(relation_map or {}), edges)
    property_edges(r, plan, concepts, relations, edges)
    plan.edges = list(edges.plans())
    return plan
