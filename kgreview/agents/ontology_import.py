"""Importing a vocabulary (SKOS, OWL), Django side: the file kept as a source, its plan
(``construction.vocab_plan``) resolved against the graph, and every proposal in one batch.

The file is stored like a source (``graph.sources.source_import``): the original bytes
as its file, and its statements as sorted N-Triples lines as the revision's text, so each
proposal quotes the lines it came from verbatim (its evidence; further lines are an edge's
support, a concept's defined names, a type's or relation's examples). The proposals are
one agent run (agent ``import``) with one origin, so the queue filters them by run and the
bulk preview decides them together.

Resolved against what the graph has, so nothing is proposed twice:

- a concept whose name (or alias) the graph knows is not proposed again: the names it
  lacks become ``add_alias`` proposals, and a type for an untyped concept an
  ``update_concept`` proposal (a concept with another type keeps it; the report says so);
- a type, relation, pattern or attribute that exists is left out; a type with the same
  label as an existing one is that one; a relation that exists gets the patterns it
  lacks as ``add_relation_pattern`` proposals;
- an edge the graph holds already is left out; one between two imported concepts names
  their proposals, so it is accepted with them;
- anything open in the queue or rejected before (by its dedup key) is left out.

Importing the same file again therefore proposes nothing. A refused file (its words from
``construction.vocab_read``) writes nothing at all.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction

from construction import keys
from construction.vocab_items import (
    ConceptPlan,
    EdgePlan,
    Skip,
    VocabularyPlan,
    parse_map,
    slug,
)
from construction.vocab_plan import plan_vocabulary
from construction.vocab_read import BadVocabulary, VocabLimits, read_vocabulary
from kgreview.core.errors import DuplicateProposal, ValidationFailed
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
from kgreview.graph.sources import source_import
from kgreview.review.kinds import kind_of
from kgreview.review.kinds.add_alias import AddAliasKind
from kgreview.review.kinds.add_attribute import AddAttributeKind
from kgreview.review.kinds.add_concept import AddConceptKind
from kgreview.review.kinds.add_concept_type import AddConceptTypeKind
from kgreview.review.kinds.add_edge import AddEdgeKind
from kgreview.review.kinds.add_relation_pattern import AddRelationPatternKind
from kgreview.review.kinds.add_relation_type import AddRelationTypeKind
from kgreview.review.kinds.update_concept import UpdateConceptKind
from kgreview.review.models import OPEN_STATUSES, Proposal, ProposalOrigin
from kgreview.review.services import ProposalSpec, proposal_add_names, proposals_create_many

from .models import AgentRun
from .runs import agent_run_create, agent_run_finish, construct_mutex_hold, run_origin

if TYPE_CHECKING:
    from django.contrib.auth.models import User

__all__ = ["ImportSummary", "ontology_import"]

CONFIDENCE = 1.0
QUOTE_MAX = 2000
# The queue's priority order is the order a bulk decision goes one by one in: the
# vocabulary first (parents before subtypes), then concepts, names, and edges last.
PRIORITY = {"type": 300, "relation": 280, "pattern": 270, "attribute": 270}
PRIORITY.update({"concept": 200, "alias": 190, "retype": 190, "edge": 150})


@dataclass
class ImportSummary:
    """What an import did: the source, the run, counts of proposals by kind, and what it
    left out with the reasons."""

    source_slug: str
    revision: int
    source_outcome: str
    run_id: int
    syntax: str
    planned: dict[str, int]
    proposed: dict[str, int] = field(default_factory=dict)
    skipped: list[Skip] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.proposed.values())

    def skipped_by_reason(self) -> list[dict]:
        """Each reason once, with its count and the first five things it covers."""
        grouped: dict[str, list[str]] = {}
        for item in self.skipped:
            grouped.setdefault(item.reason, []).append(item.what)
        return [
            {"reason": reason, "count": len(whats), "examples": whats[:5]}
            for reason, whats in grouped.items()
        ]

    def as_json(self) -> dict:
        return {
            "source": self.source_slug,
            "revision": self.revision,
            "source_outcome": self.source_outcome,
            "run": self.run_id,
            "syntax": self.syntax,
            "planned": self.planned,
            "proposed": self.proposed,
            "proposals": self.total,
            "skipped": self.skipped_by_reason(),
            "seconds": round(self.seconds, 3),
        }


# --- Quoting the kept text ---------------------------------------------------------------


class _Quotes:
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
class _Batch:
    """The specs to queue (vocabulary and concepts first, then edges), and what was left
    out."""

    quotes: _Quotes
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


def _types(batch: _Batch, plan: VocabularyPlan) -> None:
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


def _relations(batch: _Batch, plan: VocabularyPlan) -> None:
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


def _attributes(batch: _Batch, plan: VocabularyPlan) -> None:
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


def _concepts(batch: _Batch, plan: VocabularyPlan) -> None:
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


def _defined(quotes: _Quotes, line: str) -> dict:
    start, end, quote = quotes.span(line)
    return {"quote": quote, "start": start, "end": end, "revision_id": quotes.revision.pk}


def _onto_known(batch: _Batch, c: ConceptPlan, concept: Concept, owners: dict) -> None:
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


def _end(batch: _Batch, name: str, created: list) -> dict | None:
    if name in batch.concept_of:
        return {"name": name, "concept_id": batch.concept_of[name], "match": "exact"}
    proposal = created[batch.concept_spec[name]] if name in batch.concept_spec else None
    if proposal is None:
        return None
    return {"name": name, "proposal_id": proposal.pk, "match": "new"}


def _edges(batch: _Batch, plan: VocabularyPlan, created: list) -> None:
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


def _edge(batch: _Batch, e: EdgePlan, relations: dict, held: set, created: list) -> None:
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


# --- Nothing twice -----------------------------------------------------------------------


def _spec_key(spec: ProposalSpec) -> str:
    return spec.dedup_key or kind_of(spec.kind).dedup_key(spec.payload, symmetric=False)


def _queued_before(specs: list[ProposalSpec]) -> tuple[set[str], dict[str, int]]:
    """Among the specs' dedup keys, those rejected and not open again (such a change is
    not proposed again without new evidence), and the open proposals of the others (a
    twin stands for the spec: an edge names it)."""
    wanted = list({_spec_key(s) for s in specs})
    rejected: set[str] = set()
    waiting: dict[str, int] = {}
    for i in range(0, len(wanted), 2000):
        found = Proposal.objects.filter(
            dedup_key__in=wanted[i : i + 2000],
            status__in=(*OPEN_STATUSES, Proposal.Status.REJECTED),
        ).values_list("dedup_key", "status", "pk")
        for key, status, pk in found:
            if status == Proposal.Status.REJECTED:
                rejected.add(key)
            else:
                waiting[key] = pk
    return rejected - set(waiting), waiting


def _what(spec: ProposalSpec) -> str:
    p = spec.payload
    label = Proposal.KindChoice(spec.kind).label.lower()
    named = [p.get(k) for k in ("name", "alias", "key", "relation_key", "type_key")]
    if spec.kind == AddEdgeKind.key:
        named = [f"{p['source']['name']} {p['relation']} {p['target']['name']}"]
    return f"{label}: " + next((str(n) for n in named if n), "")


def _queue(batch: _Batch, specs: list[ProposalSpec], proposed: dict[str, int]) -> list:
    """Queue the specs in one insert, in their order: for each, the proposal made, the
    open twin that stands for it (counted as left out), or ``None`` for one rejected
    before."""
    rejected, waiting = _queued_before(specs)
    fresh = [s for s in specs if _spec_key(s) not in rejected and _spec_key(s) not in waiting]
    made = iter(proposals_create_many(fresh))
    outcomes: list = []
    for spec in specs:
        key = _spec_key(spec)
        if key in rejected:
            batch.skip(_what(spec), "rejected before; not proposed again")
            outcomes.append(None)
        elif key in waiting:
            batch.skip(_what(spec), "already waiting in the queue")
            outcomes.append(waiting[key])
        else:
            outcome = next(made)
            if isinstance(outcome, DuplicateProposal):  # queued a moment ago by another
                batch.skip(_what(spec), "already waiting in the queue")
                outcomes.append(outcome.proposal_id)
                continue
            proposed[spec.kind] = proposed.get(spec.kind, 0) + 1
            outcomes.append(outcome)
    twins = Proposal.objects.in_bulk([o for o in outcomes if isinstance(o, int)])
    return [twins.get(o) if isinstance(o, int) else o for o in outcomes]


def _names_for_twins(batch: _Batch, created: list) -> None:
    """An imported concept already waiting in the queue (proposed from a document, say)
    gets the names the vocabulary gives it, each with its statement, as a document's
    defined names join a waiting proposal (``review.services.proposal_add_names``)."""
    for index in batch.concept_spec.values():
        proposal = created[index]
        spec = batch.specs[index]
        defined = spec.payload.get("defined") or []
        if proposal is None or not defined or proposal.origin_id == batch.origin.pk:
            continue
        proposal_add_names(proposal_id=proposal.pk, defined=defined)


# --- The service -------------------------------------------------------------------------


def source_slug_for(filename: str) -> str:
    stem = PurePath(filename.replace("\\", "/")).name or "vocabulary"
    words = slug(re.sub(r"\.[A-Za-z0-9]+$", "", stem)).replace("_", "-")
    return f"vocabulary-{words or 'file'}"[:200]


def vocabulary_limits() -> VocabLimits:
    """The settings' limits of a vocabulary file (``KG_VOCABULARY_MAX_*``)."""
    return VocabLimits(
        max_bytes=settings.KG_VOCABULARY_MAX_BYTES,
        max_statements=settings.KG_VOCABULARY_MAX_STATEMENTS,
    )


def _plan(raw, *, filename, syntax, mapping, lang, limits):
    try:
        relation_map = parse_map(mapping or ())
        statements = read_vocabulary(raw, filename=filename, syntax=syntax, limits=limits)
    except (BadVocabulary, ValueError) as exc:
        raise ValidationFailed(str(exc)) from None
    active = set(RelationType.objects.filter(active=True).values_list("key", flat=True))
    for skos, relation in relation_map.items():
        if relation not in active:
            raise ValidationFailed(
                f'There is no active relation "{relation[:64]}" to map skos:{skos} to; '
                f"the graph's relations are {', '.join(sorted(active)) or 'none yet'}."
            )
    return statements, plan_vocabulary(statements, relation_map=relation_map, lang=lang)


def ontology_import(
    *,
    raw: bytes,
    filename: str,
    acting_user: User | None,
    syntax: str | None = None,
    relation_map: Sequence[str] = (),
    lang: str = "en",
    trigger: str = AgentRun.Trigger.CLI,
    limits: VocabLimits | None = None,
) -> ImportSummary:
    """Import a vocabulary file: keep it as a source and queue what it adds as one batch
    of proposals (one ``import`` run). ``relation_map`` holds "broader=part_of" pairs.

    ``acting_user`` is the curator who imported it (the source's import and the run's
    start are audited), or ``None`` for the command line. A bad file, an unknown syntax
    or a mapping to a relation the graph lacks is refused in words (``ValidationFailed``)
    before anything is written.
    """
    started = time.perf_counter()
    filename = PurePath((filename or "vocabulary").replace("\\", "/")).name[:255]
    statements, plan = _plan(
        raw,
        filename=filename,
        syntax=syntax,
        mapping=relation_map,
        lang=lang,
        limits=limits or vocabulary_limits(),
    )
    with transaction.atomic():
        construct_mutex_hold()  # the queue's writers take turns (``agents.persist``)
        stored = source_import(
            slug=source_slug_for(filename),
            title=f"Vocabulary: {filename}",
            text=statements.text(),
            media_type=statements.media_type,
            text_format=SourceRevision.TextFormat.PLAIN,
            original=raw,
            filename=filename,
            acting_user=acting_user,
        )
        run = agent_run_create(
            agent=AgentRun.Agent.IMPORT,
            trigger=trigger,
            acting_user=acting_user,
            params={"file": filename, "map": list(relation_map), "lang": lang},
        )
        batch = _Batch(quotes=_Quotes(stored.revision), origin=run_origin(run), filename=filename)
        batch.skipped = list(plan.skipped)
        _types(batch, plan)
        _relations(batch, plan)
        _attributes(batch, plan)
        _concepts(batch, plan)
        proposed: dict[str, int] = {}
        created = _queue(batch, batch.specs, proposed)
        _names_for_twins(batch, created)
        _edges(batch, plan, created)
        _queue(batch, batch.edge_specs, proposed)
        summary = ImportSummary(
            source_slug=stored.source.slug,
            revision=stored.revision.number,
            source_outcome=stored.outcome,
            run_id=run.pk,
            syntax=statements.syntax_label,
            planned=plan.counts(),
            proposed=proposed,
            skipped=batch.skipped,
        )
        summary.seconds = time.perf_counter() - started
        agent_run_finish(
            run,
            status=AgentRun.Status.SUCCEEDED,
            stats={
                "proposals": summary.total,
                "by_kind": proposed,
                "skipped": len(batch.skipped),
                "source": stored.source.slug,
            },
        )
    return summary
