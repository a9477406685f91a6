"""Planning an import from a SKOS file: its concept schemes and top concepts as concept
types, each concept's type by the rule in ``vocab_plan``'s docstring, and its broader,
narrower and related statements as edges of the relations the curator maps. Pure: no
Django."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from rdflib import RDF, RDFS, URIRef
from rdflib.term import Node

from .vocab_items import TypePlan, VocabularyPlan, local_name, slug, words_of
from .vocab_reader import (
    DC,
    DCTERMS,
    DESCRIPTION_MAX,
    LABEL_MAX,
    SKOS,
    Concepts,
    EdgeSet,
    Reader,
    Typing,
    edge_ends,
)


@dataclass
class Schemes:
    """SKOS schemes and top concepts, with their types."""

    of_concept: dict[Node, list[Node]] = field(default_factory=lambda: defaultdict(list))
    top: dict[Node, tuple[Node, str]] = field(default_factory=dict)  # concept -> scheme, cite


def plan_schemes(r: Reader, plan: VocabularyPlan, typing: Typing) -> Schemes:
    schemes = Schemes()
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


def plan_top_types(
    r: Reader, plan: VocabularyPlan, typing: Typing, schemes: Schemes, names: dict
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


def concept_type_keys(
    r: Reader, concepts: Concepts, typing: Typing, schemes: Schemes
) -> dict[Node, str]:
    """Each concept's type key by the rule in ``vocab_plan``'s docstring (Types)."""
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


def _nearest_top(s, parents, schemes: Schemes, typing: Typing, concepts: Concepts) -> str:
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


def _scheme_type(s, schemes: Schemes, typing: Typing) -> str:
    keys = sorted(typing.of[x] for x in schemes.of_concept.get(s, ()) if x in typing.of)
    return keys[0] if keys else ""


def skos_edges(
    r: Reader, plan: VocabularyPlan, concepts: Concepts, mapping: dict[str, str], edges: EdgeSet
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
            ends = edge_ends(concepts, s, o)
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
