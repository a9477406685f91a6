"""Why an edge exists: the proposal that made it and every decision about it, in words a
person (or an agent) can quote. Reads only.

The graph's own history (the graph at an instant, the evidence in context) lives in
``kgreview.graph.history``; this module adds what review knows about the same edge.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from kgreview.graph.history import edge_state_at, evidence_context
from kgreview.graph.models import Edge
from kgreview.review import provenance
from kgreview.review.models import Decision, Proposal


def edge_trail(edge: Edge) -> list[dict]:
    """Every decision about the proposal that made the edge, and about its retirement,
    oldest first, in words a person (or an agent) can quote."""
    made = provenance.of(edge)
    ids = {d for d in (made.decision_id, made.invalidation_decision_id) if d}
    qs = Decision.objects.select_related("user", "proposal")
    q = Q(pk__in=ids)
    if made.proposal_id:
        q |= Q(proposal_id=made.proposal_id)
    rows = list(qs.filter(q).order_by("created_at", "id"))
    return [
        {
            "id": d.pk,
            "action": d.action,
            "action_label": d.get_action_display(),
            "by": d.user.get_username() if d.user_id else None,
            "at": d.created_at,
            "note": d.note,
            "reason_code": d.reason_code,
            "proposal": d.proposal_id,
            "proposal_kind": d.proposal.kind,
            "undoes": d.undoes_id,
        }
        for d in rows
    ]


def edge_explain(*, edge: Edge, at: datetime | None = None) -> dict:
    """Why an edge exists: the claim in words, its evidence in context, the agent's reason
    and confidence, who decided and when, and the rows it replaced or was replaced by."""
    proposal_id = provenance.of(edge).proposal_id
    proposal = (
        Proposal.objects.select_related("origin").filter(pk=proposal_id).first()
        if proposal_id
        else None
    )
    origin = proposal.origin if proposal and proposal.origin_id else None
    replaced_by = Edge.objects.filter(supersedes=edge).values_list("pk", flat=True).first()
    return {
        "edge": edge,
        "claim": f"{edge.source.name} {edge.relation.verb} {edge.target.name}",
        "state_at": edge_state_at(edge, at),
        "evidence": evidence_context(edge),
        "proposal": proposal,
        "origin": origin,
        "trail": edge_trail(edge),
        "supersedes": edge.supersedes_id,
        "superseded_by": replaced_by,
    }
