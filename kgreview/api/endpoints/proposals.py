"""The writing API: submit proposals for review (/v1/proposals), and follow one to its
decision (/v1/proposals/{id}). Nothing here writes the graph: a proposal waits in the
review queue like the agents' own, and only a reviewer's decision changes the graph."""

from __future__ import annotations

from ninja import Header

from kgreview.core.forms import BIGGEST_INT
from kgreview.review.models import Proposal

from .. import proposal_schemas as ps
from ..app import ApiError, BearerToken, answers, api, served
from ..proposing import proposals_submit
from ..serializers import submitter_out
from ..throttle import EVERY, PROPOSE


@api.post(
    "/v1/proposals",
    response=answers(ps.ProposalsOut, 403, 409, 415),
    tags=["proposals"],
    auth=[BearerToken()],
    throttle=[EVERY, PROPOSE],
)
@served
def proposals_create(
    request,
    body: ps.ProposalsIn,
    idempotency_key: str | None = Header(
        default=None,
        alias="Idempotency-Key",
        max_length=255,
        description="Any string (a UUID) naming this batch: sent again with the same key "
        "(same token), the batch is not queued again; the first answer is answered again "
        "(replayed: true). A different batch under a used key is refused (409).",
    ),
):
    """Submit one proposal or a batch of up to 1,000 for review: concepts
    (`add_concept`), edges (`add_edge`), edge retirements (`invalidate_edge`) and aliases
    (`add_alias`), each with a confidence, a reason and, optionally, evidence (a quote in
    a source the graph holds, in a text sent along, or from a URL; without one the
    proposal is flagged `no_evidence`).

    Each item goes through the construct agent's checks: its names resolved to concepts
    or open concept proposals (a new name becomes a concept proposal the edge waits
    for), the relation in the vocabulary, the quote found in its source, the confidence
    gate (held below it), dedup against open and rejected proposals, contradictions
    flagged. The answer says per item, in order: `queued` (its id), `merged` into an open
    proposal (its id), or `dropped` (the reason in words). Needs a token with the
    `propose` scope; the token's name and account are shown on the review card. Limited
    per token by `KG_API_PROPOSE_RATE`.
    """
    answer = proposals_submit(
        acting_user=request.user,
        token=getattr(request, "api_token", None),
        items=body.proposals,
        idempotency_key=idempotency_key,
    )
    response = api.create_response(request, answer.as_json(), status=200)
    if answer.replayed:
        response["Idempotent-Replayed"] = "true"
    return response


@api.get("/v1/proposals/{proposal_id}", response=answers(ps.ProposalOut, 404), tags=["proposals"])
@served
def proposal_detail(request, proposal_id: int):
    """One proposal and where it stands: its status (pending, held, accepted, rejected,
    superseded), its flags, who submitted it (for one submitted through the API or MCP:
    the token's name, its account, the door and the batch), and the decisions taken on
    it, newest first."""
    in_range = 1 <= proposal_id <= BIGGEST_INT
    proposal = (
        Proposal.objects.select_related("origin", "created_by", "decided_by")
        .filter(pk=proposal_id)
        .first()
        if in_range
        else None
    )
    if proposal is None:
        raise ApiError(404, f"There is no proposal with id {proposal_id}.")
    decisions = proposal.decisions.select_related("user").order_by("-created_at", "-id")
    return {
        "id": proposal.pk,
        "kind": proposal.kind,
        "status": proposal.status,
        "stage": proposal.stage,
        "flags": list(proposal.flags or ()),
        "confidence": proposal.confidence,
        "reason": proposal.reason,
        "payload": proposal.payload,
        "created_at": proposal.created_at,
        "decided_at": proposal.decided_at,
        "decided_by": proposal.decided_by.get_username() if proposal.decided_by else None,
        "submitter": submitter_out(proposal),
        "decisions": [
            {
                "action": d.action,
                "by": d.user.get_username() if d.user else None,
                "at": d.created_at,
                "reason_code": d.reason_code,
                "note": d.note,
            }
            for d in decisions
        ],
    }
