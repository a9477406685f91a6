"""Importing a vocabulary (SKOS, OWL), Django side: the file kept as a source, its plan
(``construction.vocab_plan``) resolved against the graph, and every proposal in one batch.

The file is stored like a source (``graph.sources.source_import``): the original bytes
as its file, and its statements as sorted N-Triples lines as the revision's text, so each
proposal quotes the lines it came from verbatim (its evidence; further lines are an edge's
support, a concept's defined names, a type's or relation's examples). The proposals are
one agent run (agent ``import``) with one origin, so the queue filters them by run and the
bulk preview decides them together. Turning the plan into proposal specs, resolved as
below, is ``agents.ontology_specs``; this module keeps the file, queues the specs and
records the run.

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

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction

from construction.vocab_items import Skip, parse_map, slug
from construction.vocab_plan import plan_vocabulary
from construction.vocab_read import BadVocabulary, VocabLimits, read_vocabulary
from kgreview.core.errors import DuplicateProposal, ValidationFailed
from kgreview.graph.models import RelationType, SourceRevision
from kgreview.graph.sources import source_import
from kgreview.review.kinds import kind_of
from kgreview.review.kinds.add_edge import AddEdgeKind
from kgreview.review.models import OPEN_STATUSES, Proposal
from kgreview.review.services import ProposalSpec, proposal_add_names, proposals_create_many

from .models import AgentRun
from .ontology_specs import Batch, Quotes, edge_specs, vocabulary_specs
from .runs import agent_run_create, agent_run_finish, construct_mutex_hold, run_origin

if TYPE_CHECKING:
    from django.contrib.auth.models import User

__all__ = ["ImportSummary", "ontology_import"]


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


def _queue(batch: Batch, specs: list[ProposalSpec], proposed: dict[str, int]) -> list:
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


def _names_for_twins(batch: Batch, created: list) -> None:
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
        batch = Batch(quotes=Quotes(stored.revision), origin=run_origin(run), filename=filename)
        batch.skipped = list(plan.skipped)
        vocabulary_specs(batch, plan)
        proposed: dict[str, int] = {}
        created = _queue(batch, batch.specs, proposed)
        _names_for_twins(batch, created)
        edge_specs(batch, plan, created)
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
