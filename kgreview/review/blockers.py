"""What stands in the way of accepting an open proposal, in the words a refusal would use.

The card shows these before a key is pressed; ``reconcile`` keeps the queue free of them,
and the tests use them to check that it did.
"""

from __future__ import annotations

from construction.keys import concept_dedup_key
from kgreview.graph.models import Concept, ConceptAlias, Edge, RelationType
from kgreview.graph.selectors import active_edge_between, name_owner
from kgreview.graph.services import inactive_words

from .ends import retired_name_words
from .models import OPEN_STATUSES, Proposal


def _end_blocker(role: str, end: dict, concepts: dict, needed: dict) -> str:
    if end.get("concept_id"):
        concept = concepts.get(end["concept_id"])
        if concept is None:
            return f"Its {role} (concept #{end['concept_id']}) does not exist."
        return "" if concept.is_active else inactive_words(concept)
    if end.get("proposal_id"):
        p = needed.get(end["proposal_id"])
        if p is None:
            return f'The proposal for its {role} "{end["name"]}" does not exist.'
        if p.is_open:
            return ""
        if p.concept_id:
            concept = concepts.get(p.concept_id) or Concept.objects.get(pk=p.concept_id)
            return "" if concept.is_active else inactive_words(concept)
        return f'Its {role} "{end["name"]}" was {p.status} (proposal #{p.pk}).'
    return ""


def proposal_blockers(proposal: Proposal) -> list[str]:
    """Why this open proposal cannot be accepted as it stands, in words (none: it can).

    The card shows these, and accepting refuses with the same words. The queue is kept
    free of them by ``reconcile``; this is the check that it worked.
    """
    return open_proposal_blockers([proposal]).get(proposal.pk, [])


def open_proposal_blockers(proposals) -> dict[int, list[str]]:
    """``proposal_blockers`` for many open proposals, in a handful of queries."""
    proposals = [p for p in proposals if p.is_open]
    concept_ids: set[int] = set()
    needed_ids: set[int] = set()
    edge_ids: set[int] = set()
    for p in proposals:
        payload = p.payload
        if p.kind == "add_edge":
            for role in ("source", "target"):
                if payload[role].get("concept_id"):
                    concept_ids.add(payload[role]["concept_id"])
                elif payload[role].get("proposal_id"):
                    needed_ids.add(payload[role]["proposal_id"])
        elif p.kind == "merge_concepts":
            concept_ids |= {payload["survivor_id"], payload["loser_id"]}
        elif p.kind == "update_concept":
            concept_ids.add(payload["concept_id"])
        elif p.kind in ("invalidate_edge", "update_edge"):
            edge_ids.add(payload["edge_id"])
    needed = Proposal.objects.in_bulk(needed_ids) if needed_ids else {}
    concept_ids |= {n.concept_id for n in needed.values() if n.concept_id}
    # Concepts and relations a card loaded with its proposal are not read again.
    concepts: dict[int, Concept] = {}
    relations: dict[str, RelationType] = {}
    for p in proposals:
        for attr in ("source_concept", "target_concept"):
            if Proposal._meta.get_field(attr).is_cached(p) and getattr(p, attr) is not None:
                concepts[getattr(p, attr).pk] = getattr(p, attr)
        if Proposal._meta.get_field("relation").is_cached(p) and p.relation is not None:
            relations[p.relation.key] = p.relation
    missing = concept_ids - set(concepts)
    if missing:
        concepts.update(Concept.objects.in_bulk(missing))
    wanted_relations = {p.payload["relation"] for p in proposals if p.kind == "add_edge"}
    if wanted_relations - set(relations):
        relations.update({r.key: r for r in RelationType.objects.filter(key__in=wanted_relations)})
    edges = Edge.objects.in_bulk(edge_ids) if edge_ids else {}
    out: dict[int, list[str]] = {}
    for p in proposals:
        words: list[str] = []
        payload = p.payload
        if p.kind == "add_edge":
            ends = {}
            for role in ("source", "target"):
                blocker = _end_blocker(role, payload[role], concepts, needed)
                if blocker:
                    words.append(blocker)
                end = payload[role]
                cid = end.get("concept_id")
                if not cid and end.get("proposal_id") in needed:
                    cid = needed[end["proposal_id"]].concept_id
                ends[role] = cid
            relation = relations.get(payload["relation"])
            if relation is None:
                words.append(f'The relation "{payload["relation"]}" does not exist.')
            elif not relation.active:
                words.append(f'The relation "{relation.key}" was retired; edit it to another.')
            if relation is not None and ends["source"] and ends["target"]:
                if ends["source"] == ends["target"]:
                    words.append("Both ends are the same concept; an edge cannot loop.")
                else:
                    found = active_edge_between(
                        source_id=ends["source"], target_id=ends["target"], relation=relation
                    )
                    if found is not None:
                        words.append(f"The same edge is already in the graph (edge #{found.pk}).")
        elif p.kind == "add_concept":
            owner = name_owner(name=payload["name"])
            retired = owner is not None and owner.concept.status == Concept.Status.RETIRED
            if retired and p.concept_id != owner.concept_id:
                words.append(retired_name_words(payload["name"], owner.concept))
        elif p.kind == "merge_concepts":
            for key in ("survivor_id", "loser_id"):
                concept = concepts.get(payload[key])
                if concept is None:
                    words.append(f"Concept #{payload[key]} does not exist.")
                elif not concept.is_active:
                    words.append(inactive_words(concept))
        elif p.kind in ("invalidate_edge", "update_edge"):
            edge = edges.get(payload["edge_id"])
            if edge is None:
                words.append(f"Edge #{payload['edge_id']} does not exist.")
            elif not edge.is_active:
                words.append(f"Edge #{edge.pk} is no longer active ({edge.status}).")
        if words:
            out[p.pk] = words
    return out


def twin_concept_proposals() -> list[Proposal]:
    """Open add_concept proposals whose name already belongs to an active concept: the
    twins ``reconcile`` supersedes when a concept comes into being (should be none)."""
    keys = {
        concept_dedup_key(name)
        for name in ConceptAlias.objects.filter(concept__status="active").values_list(
            "name", flat=True
        )
    }
    return [
        p
        for p in Proposal.objects.filter(kind="add_concept", status__in=OPEN_STATUSES)
        if p.dedup_key in keys
    ]
