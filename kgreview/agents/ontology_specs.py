"""Turning a vocabulary's plan (``construction.vocab_plan``) into proposal specs,
resolved against what the graph has, so nothing is proposed twice (the rules are in
``agents.ontology_import``'s docstring): each spec quotes the N-Triples lines of the kept
file it came from. ``agents.ontology_import`` queues them."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from construction import keys
from construction.vocab_items import ConceptPlan, EdgePlan, Skip, VocabularyPlan
from kgreview.graph import selectors as graph_selectors
from kgreview.graph.models import (
    Attribute,
    Concept,
    ConceptType,
    Edge,
    RelationPattern,
    RelationType,
    SourceRevision,
)
from kgreview.graph.services import Evidence
from kgreview.review.kinds.add_alias import AddAliasKind
from kgreview.review.kinds.add_attribute import AddAttributeKind
from kgreview.review.kinds.add_concept import AddConceptKind
from kgreview.review.kinds.add_concept_type import AddConceptTypeKind
from kgreview.review.kinds.add_edge import AddEdgeKind
from kgreview.review.kinds.add_relation_pattern import AddRelationPatternKind
from kgreview.review.kinds.add_relation_type import AddRelationTypeKind
from kgreview.review.kinds.update_concept import UpdateConceptKind
from kgreview.review.models import ProposalOrigin
from kgreview.review.services import ProposalSpec

__all__ = ["Batch", "Quotes", "edge_specs", "vocabulary_specs"]

CONFIDENCE = 1.0
QUOTE_MAX = 2000
# The queue's priority order is the order a bulk decision goes one by one in: the
# vocabulary first (parents before subtypes), then concepts, names, and edges last.
PRIORITY = {"type": 300, "relation": 280, "pattern": 270, "attribute": 270}
PRIORITY.update({"concept": 200, "alias": 190, "retype": 190, "edge": 150})


# --- Quoting the kept text ---------------------------------------------------------------


class Quotes:
    """Where each N-Triples line sits in the revision's text."""

    def __init__(self, revision: SourceRevision) -> None:
        self.revision = revision
        self.slug = revision.source.slug
        self.at: dict[str, int] = {}
        offset = 0
        for line in revision.text.split("\n"):
            self.at.setdefault(line, offset)
            offset += len(line) + 1

    def span(self, line: str) -> tuple[int, int, str]:
        start = self.at[line]
        quote = line[:QUOTE_MAX]
        return start, start + len(quote), quote

    def evidence(self, line: str) -> Evidence:
        start, end, quote = self.span(line)
        return Evidence(revision=self.revision, start=start, end=end, quote=quote)

    def examples(self, lines: Sequence[str], **extra) -> list[dict]:
        out = []
        for line in list(lines)[:50]:
            start, end, quote = self.span(line)
            out.append(
                {
                    "quote": quote,
                    "source_slug": self.slug,
                    "revision_id": self.revision.pk,
                    "start": start,
                    "end": end,
                    **extra,
                }
            )
        return out


# --- Resolving the plan against the graph ------------------------------------------------


@dataclass
class Batch:
    """The specs to queue (vocabulary and concepts first, then edges), and what was left
    out."""

    quotes: Quotes
    origin: ProposalOrigin
    filename: str
    specs: list[ProposalSpec] = field(default_factory=list)
    edge_specs: list[ProposalSpec] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    type_key: dict[str, str] = field(default_factory=dict)  # planned -> the graph's
    new_relations: set[str] = field(default_factory=set)
    concept_of: dict[str, int] = field(default_factory=dict)  # name -> concept in the graph
    concept_spec: dict[str, int] = field(default_factory=dict)  # name -> index in specs
    type_keys: dict[int, str] = field(default_factory=dict)  # the graph's types, by id

    def skip(self, what: str, reason: str) -> None:
        self.skipped.append(Skip(what[:300], reason))

    def spec(self, kind: str, payload: dict, *, cites: Sequence[str], why: str, priority: str):
        return ProposalSpec(
            kind=kind,
            payload=payload,
            confidence=CONFIDENCE,
            reason=f"{why} (Imported from {self.filename}.)",
            evidence=self.quotes.evidence(cites[0]),
            priority=PRIORITY[priority],
            origin=self.origin,
            document=self.quotes.revision.source,
        )

    def key(self, planned: str) -> str:
        return self.type_key.get(planned, planned)


def vocabulary_specs(batch: Batch, plan: VocabularyPlan) -> None:
    """The specs of the plan's types, relations (and the patterns an existing relation
    lacks), attributes and concepts (and the names and types a known concept lacks), in
    that order, into ``batch.specs``."""
    _types(batch, plan)
    _relations(batch, plan)
    _attributes(batch, plan)
    _concepts(batch, plan)


def _types(batch: Batch, plan: VocabularyPlan) -> None:
    existing = {t.key: t for t in ConceptType.objects.all()}
    batch.type_keys = {t.pk: t.key for t in existing.values()}
    by_label = {t.label.casefold(): t.key for t in existing.values()}
    depth: dict[str, int] = {}
    for t in plan.types:  # parents come first
        if t.key in existing:
            batch.skip(f"concept type {t.key}", "the graph has this concept type already")
            continue
        if t.label.casefold() in by_label:
            batch.type_key[t.key] = by_label[t.label.casefold()]
            batch.skip(
                f"concept type {t.key}",
                "the graph has a concept type with this label already; its key is used",
            )
            continue
        parent = batch.key(t.parent_key) if t.parent_key else ""
        depth[t.key] = depth.get(t.parent_key, -1) + 1
        payload = {
            "key": t.key,
            "label": t.label,
            "description": t.description,
            "parent_key": parent,
            "examples": batch.quotes.examples(t.cites),
        }
        spec = batch.spec(
            AddConceptTypeKind.key, payload, cites=t.cites, why=t.why, priority="type"
        )
        batch.specs.append(
            dataclasses.replace(spec, priority=spec.priority + 9 - min(depth[t.key], 9))
        )


def _relations(batch: Batch, plan: VocabularyPlan) -> None:
    existing = {r.key: r for r in RelationType.objects.all()}
    allowed = {
        (p.relation.key, p.domain.key, p.range.key)
        for p in RelationPattern.objects.filter(active=True).select_related(
            "relation", "domain", "range"
        )
    }
    for r in plan.relations:
        patterns = [(batch.key(p.domain_key), batch.key(p.range_key), p.cites) for p in r.patterns]
        if r.key not in existing:
            batch.new_relations.add(r.key)
            payload = {
                "key": r.key,
                "label": r.label,
                "verb": r.verb,
                "description": r.description,
                "directed": not r.symmetric,
                "symmetric": r.symmetric,
                "examples": batch.quotes.examples(r.cites),
                "patterns": [{"domain_key": d, "range_key": g} for d, g, _ in patterns],
            }
            if r.inverse:  # declared on acceptance (``owl:inverseOf``)
                payload["inverse"] = r.inverse
            batch.specs.append(
                batch.spec(
                    AddRelationTypeKind.key, payload, cites=r.cites, why=r.why, priority="relation"
                )
            )
            continue
        batch.skip(f"relation {r.key}", "the graph has this relation already")
        for domain, range_, cites in patterns:
            symmetric = existing[r.key].symmetric
            if (r.key, domain, range_) in allowed or (
                symmetric and (r.key, range_, domain) in allowed
            ):
                batch.skip(f"{r.key}: {domain} → {range_}", "the relation allows it already")
                continue
            payload = {
                "relation_key": r.key,
                "domain_key": domain,
                "range_key": range_,
                "description": r.description,
                "examples": batch.quotes.examples(cites),
            }
            why = f"The vocabulary gives {r.key} the domain {domain} and the range {range_}."
            batch.specs.append(
                batch.spec(
                    AddRelationPatternKind.key, payload, cites=cites, why=why, priority="pattern"
                )
            )


def _attributes(batch: Batch, plan: VocabularyPlan) -> None:
    existing = set(Attribute.objects.values_list("concept_type__key", "key"))
    for a in plan.attributes:
        type_key = batch.key(a.type_key)
        if (type_key, a.key) in existing:
            batch.skip(f"attribute {type_key}.{a.key}", "the type declares it already")
            continue
        payload = {
            "type_key": type_key,
            "key": a.key,
            "label": a.label,
            "datatype": a.datatype,
            "description": a.description,
            "examples": batch.quotes.examples(a.cites),
        }
        batch.specs.append(
            batch.spec(
                AddAttributeKind.key, payload, cites=a.cites, why=a.why, priority="attribute"
            )
        )


def _known(names: list[str]) -> dict[str, Concept]:
    """The concepts the graph has for these names (by the resolver's rule), in chunks."""
    out: dict[str, Concept] = {}
    for i in range(0, len(names), 2000):
        out.update(graph_selectors.concepts_for_names(names[i : i + 2000]))
    return out


def _concepts(batch: Batch, plan: VocabularyPlan) -> None:
    names = [c.name for c in plan.concepts]
    aliases = [a.name for c in plan.concepts for a in c.aliases]
    known = _known(names)
    owners = _known(aliases)
    for c in plan.concepts:
        concept = known.get(c.name)
        if concept is not None:
            batch.concept_of[c.name] = concept.pk
            _onto_known(batch, c, concept, owners)
            continue
        free = []
        for a in c.aliases:
            owner = owners.get(a.name)
            if owner is None:
                free.append(a)
            else:
                batch.skip(f'"{a.name}" of "{c.name}"', f'the name belongs to "{owner.name}"')
        payload = {
            "name": c.name,
            "aliases": [a.name for a in free],
            "description": c.description,
            "type_key": batch.key(c.type_key),
            "defined": [{"alias": a.name, **_defined(batch.quotes, a.cite)} for a in free],
        }
        batch.concept_spec[c.name] = len(batch.specs)
        batch.specs.append(
            batch.spec(AddConceptKind.key, payload, cites=c.cites, why=c.why, priority="concept")
        )


def _defined(quotes: Quotes, line: str) -> dict:
    start, end, quote = quotes.span(line)
    return {"quote": quote, "start": start, "end": end, "revision_id": quotes.revision.pk}


def _onto_known(batch: Batch, c: ConceptPlan, concept: Concept, owners: dict) -> None:
    """An imported concept the graph knows: the names it lacks, and its type if it has
    none."""
    for a in c.aliases:
        owner = owners.get(a.name)
        if owner is not None:
            if owner.pk != concept.pk:
                batch.skip(f'"{a.name}" of "{c.name}"', f'the name belongs to "{owner.name}"')
            continue
        payload = {"concept_id": concept.pk, "alias": a.name, "name": concept.name}
        why = f'"{concept.name}" is "{c.name}" of the vocabulary, which also calls it "{a.name}".'
        batch.specs.append(
            batch.spec(AddAliasKind.key, payload, cites=(a.cite,), why=why, priority="alias")
        )
    type_key = batch.key(c.type_key)
    if not type_key or concept.type_id is not None:
        has = batch.type_keys.get(concept.type_id or 0, "")
        if type_key and has and has != type_key:
            batch.skip(f'type of "{concept.name}"', f"it has the type {has} already")
        return
    payload = {"concept_id": concept.pk, "type_key": type_key}
    why = f'The vocabulary gives "{concept.name}" the type {type_key}.'
    batch.specs.append(
        batch.spec(UpdateConceptKind.key, payload, cites=c.cites, why=why, priority="retype")
    )


def _end(batch: Batch, name: str, created: list) -> dict | None:
    if name in batch.concept_of:
        return {"name": name, "concept_id": batch.concept_of[name], "match": "exact"}
    proposal = created[batch.concept_spec[name]] if name in batch.concept_spec else None
    if proposal is None:
        return None
    return {"name": name, "proposal_id": proposal.pk, "match": "new"}


def edge_specs(batch: Batch, plan: VocabularyPlan, created: list) -> None:
    relations = {r.key: r for r in RelationType.objects.filter(active=True)}
    ids = set(batch.concept_of.values())
    held: set[tuple[int, str, int]] = set()
    if ids:
        held = {
            (s, rel, t)
            for s, rel, t in Edge.objects.filter(
                status=Edge.Status.ACTIVE, source_id__in=ids, target_id__in=ids
            ).values_list("source_id", "relation__key", "target_id")
        }
    for e in plan.edges:
        _edge(batch, e, relations, held, created)


def _edge(batch: Batch, e: EdgePlan, relations: dict, held: set, created: list) -> None:
    relation = relations.get(e.relation)
    what = f"{e.source} {e.relation} {e.target}"
    if relation is None and e.relation not in batch.new_relations:
        batch.skip(what, f'the graph has no active relation "{e.relation}"')
        return
    source, target = _end(batch, e.source, created), _end(batch, e.target, created)
    if source is None or target is None:
        batch.skip(what, "an end was not proposed (see its own line)")
        return
    symmetric = bool(relation and relation.symmetric)
    if source.get("concept_id") and target.get("concept_id"):
        s, t = source["concept_id"], target["concept_id"]
        if s == t:
            batch.skip(what, "both ends are one concept of the graph")
            return
        if (s, e.relation, t) in held or (symmetric and (t, e.relation, s) in held):
            batch.skip(what, "the graph holds this edge already")
            return
    payload = {"source": source, "target": target, "relation": e.relation, "weight": 1.0}
    payload["support"] = [
        dict(zip(("start", "end", "quote"), batch.quotes.span(line), strict=True))
        for line in e.cites[1:11]
    ]
    spec = batch.spec(AddEdgeKind.key, payload, cites=e.cites, why=e.why, priority="edge")
    dedup = keys.edge_dedup_key(_node(source), e.relation, _node(target), symmetric=symmetric)
    batch.edge_specs.append(dataclasses.replace(spec, dedup_key=dedup))


def _node(end: dict) -> str:
    if end.get("concept_id"):
        return keys.concept_key(end["concept_id"])
    return keys.new_concept_key(end["name"])
