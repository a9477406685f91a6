"""Planning an import from an OWL file: its classes as concept types, its object
properties as relations with their patterns, its datatype properties as attributes, and
the statements between its individuals as edges (the rules are in ``vocab_plan``'s
docstring). Pure: no Django."""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from rdflib import OWL, RDF, RDFS, XSD, BNode, URIRef
from rdflib.term import Node

from .vocab_items import (
    AttributePlan,
    PatternPlan,
    RelationPlan,
    TypePlan,
    VocabularyPlan,
    local_name,
    words_of,
)
from .vocab_reader import (
    DCTERMS,
    DESCRIPTION_MAX,
    LABEL_MAX,
    NAME_MAX,
    SKOS,
    Concepts,
    EdgeSet,
    Keys,
    Reader,
    Typing,
    edge_ends,
    is_builtin,
)

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
_CLASS_LABELS = (RDFS.label, SKOS.prefLabel)
_DESCRIPTIONS = (RDFS.comment, SKOS.definition, DCTERMS.description)


def _classes(r: Reader) -> list[URIRef]:
    found: set[URIRef] = set(r.typed(OWL.Class)) | set(r.typed(RDFS.Class))
    for s, o in r.g.subject_objects(RDFS.subClassOf):
        found |= {t for t in (s, o) if isinstance(t, URIRef)}
    return sorted(c for c in found if not is_builtin(c))


def _class_cites(r: Reader, cls: URIRef) -> list[str]:
    cites = [r.cite(cls, RDF.type, t) for t in (OWL.Class, RDFS.Class) if (cls, RDF.type, t) in r.g]
    return cites


def plan_classes(r: Reader, plan: VocabularyPlan, typing: Typing) -> None:
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
    classes: list[URIRef], parents: dict[URIRef, URIRef], plan: VocabularyPlan, typing: Typing
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


def plan_relations(r: Reader, plan: VocabularyPlan, typing: Typing) -> dict[Node, str]:
    """A relation type per object property; returns each property's key."""
    keys = Keys()
    out: dict[Node, str] = {}
    for prop in r.typed(OWL.ObjectProperty):
        if is_builtin(prop):
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
    _plan_inverses(r, plan, out)
    return out


def _plan_inverses(r: Reader, plan: VocabularyPlan, keys_of: dict[Node, str]) -> None:
    """``owl:inverseOf`` between two directed properties of the file: the later relation
    of the plan names the earlier its inverse, citing the line. A symmetric property is
    its own inverse, and a property paired twice keeps its first pair."""
    at = {p.key: i for i, p in enumerate(plan.relations)}
    paired: set[str] = set()
    for a, _, b in sorted(r.g.triples((None, OWL.inverseOf, None))):
        if a not in keys_of or b not in keys_of or a == b:
            continue
        first, later = sorted((keys_of[a], keys_of[b]), key=at.__getitem__)
        i = at[later]
        if first in paired or later in paired or plan.relations[at[first]].symmetric:
            continue
        if plan.relations[i].symmetric:
            continue
        paired |= {first, later}
        plan.relations[i] = dataclasses.replace(
            plan.relations[i],
            inverse=first,
            cites=(*plan.relations[i].cites, r.cite(a, OWL.inverseOf, b)),
        )


def _cites_about(r: Reader, s: Node, p: Node, member: Node) -> list[str]:
    """The line stating (s, p, member), or the line stating (s, p, the union holding it)."""
    if (s, p, member) in r.g:
        return [r.cite(s, p, member)]
    return [r.cite(s, p, o) for o in r.g.objects(s, p) if isinstance(o, BNode)][:1]


def plan_attributes(r: Reader, plan: VocabularyPlan, typing: Typing) -> None:
    keys_by_type: dict[str, Keys] = defaultdict(Keys)
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


def property_edges(
    r: Reader,
    plan: VocabularyPlan,
    concepts: Concepts,
    relations: dict[Node, str],
    edges: EdgeSet,
) -> None:
    for prop, key in relations.items():
        for s, o in sorted(r.g.subject_objects(prop)):
            ends = edge_ends(concepts, s, o)
            if ends is None:
                plan.skip(f"{s} {local_name(prop)} {o}", "an end is not a concept of the file")
                continue
            edges.add(
                (ends[0], key, ends[1]),
                r.cite(s, prop, o),
                f"<{prop}> between individuals.",
                either_way=False,
            )
