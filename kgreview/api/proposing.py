"""The one door for proposals from outside kgreview: ``proposals_submit``.

A script, another annotation tool or an agent (through ``POST /api/v1/proposals``, or
MCP's "propose" tool) hands over a batch of items; each goes through the pipeline
the construct agent's candidates go through (``agents.submissions``) and comes back
queued, merged into an open proposal, or dropped with the reason in words. The batch is
kept with its answer (``ProposalBatch``), so a retry with the same idempotency key is
answered again and never queued twice.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction
from pydantic import TypeAdapter, ValidationError

from kgreview.agents.submission_items import Outcome
from kgreview.agents.submissions import Submission, SubmittedEvidence, submissions_queue
from kgreview.core import audit
from kgreview.core.errors import NotAllowed, StateConflict, ValidationFailed
from kgreview.review.models import Proposal, ProposalOrigin
from kgreview.review.services import proposal_origin

from .models import ApiToken, ProposalBatch, SubmittedProposal
from .proposal_schemas import (
    BATCH_MAX,
    AliasItem,
    ConceptItem,
    EdgeItem,
    ProposalItem,
    RetireItem,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User

#: The origin keys of submitted proposals (``ProposalOrigin.agent``), by door: with a
#: token (its id the origin's number, its name and account the label the card shows), or
#: an account proposing without one (MCP over stdio; the account's id).
ORIGIN_AGENTS = {
    ProposalBatch.Via.API: ("api", "api-user"),
    ProposalBatch.Via.MCP: ("mcp", "mcp-user"),
}
assert {k for pair in ORIGIN_AGENTS.values() for k in pair} == set(ProposalOrigin.SUBMITTED)
KEY_MAX = 255
DOOR_WORDS = {ProposalBatch.Via.API: "through the API", ProposalBatch.Via.MCP: "through MCP"}

_ITEMS = TypeAdapter(list[ProposalItem])


@dataclass(frozen=True)
class SubmitAnswer:
    """The answer to a batch: its number, whether it is an earlier answer given again,
    and one result per item (``{"index", "kind", "result", …}``)."""

    batch: int
    replayed: bool
    results: list[dict]

    def counts(self) -> dict[str, int]:
        tally = Counter(r["result"] for r in self.results)
        return {k: tally.get(k, 0) for k in ("queued", "merged", "dropped")}

    def as_json(self) -> dict:
        return {
            "batch": self.batch,
            "replayed": self.replayed,
            "counts": self.counts(),
            "results": self.results,
        }


def submitter_label(*, acting_user: User, token: ApiToken | None) -> str:
    """The submitter in words: "tutor-bot (ada)", or the account alone."""
    who = acting_user.get_username()
    return f"{token.name} ({who})" if token is not None else who


def submitter_origin(
    *, acting_user: User, token: ApiToken | None, via: str = ProposalBatch.Via.API
) -> ProposalOrigin:
    """The origin the review card shows for this submitter's proposals ("Submitted by
    tutor-bot (ada) via MCP"): one per token and door (a token's name and account never
    change), or one per account and door proposing without a token."""
    with_token, without = ORIGIN_AGENTS[ProposalBatch.Via(via)]
    if token is not None:
        label = submitter_label(acting_user=acting_user, token=token)
        return proposal_origin(agent=with_token, agent_label=label[:100], run=token.pk)
    return proposal_origin(
        agent=without, agent_label=acting_user.get_username(), run=acting_user.pk
    )


def _validated(items: Sequence[Any]) -> list[EdgeItem | ConceptItem | AliasItem | RetireItem]:
    if not isinstance(items, list | tuple):
        raise ValidationFailed("Send the proposals as a list.")
    if not items:
        raise ValidationFailed("Send at least one proposal.")
    if len(items) > BATCH_MAX:
        raise ValidationFailed(
            f"A batch holds at most {BATCH_MAX:,} proposals; this one has {len(items):,}. "
            "Send the rest in another batch, under another Idempotency-Key."
        )
    plain = [i.model_dump(mode="json") if hasattr(i, "model_dump") else i for i in items]
    try:
        return _ITEMS.validate_python(plain)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValidationFailed(
            f"proposals.{where}: {first['msg']} ({exc.error_count()} problem(s) in all); "
            "nothing was queued."
        ) from None


def _submission(item: EdgeItem | ConceptItem | AliasItem | RetireItem) -> Submission:
    evidence = None
    if item.evidence is not None:
        e = item.evidence
        evidence = SubmittedEvidence(
            quote=e.quote,
            source=e.source or "",
            revision=e.revision,
            text=e.text or "",
            title=e.title or "",
            url=e.url or "",
        )
    common: dict[str, Any] = {
        "kind": item.kind,
        "confidence": item.confidence,
        "reason": item.reason,
        "evidence": evidence,
    }
    if isinstance(item, EdgeItem):
        return Submission(**common, source=item.source, relation=item.relation, target=item.target)
    if isinstance(item, ConceptItem):
        return Submission(
            **common, name=item.name, aliases=tuple(item.aliases), description=item.description
        )
    if isinstance(item, AliasItem):
        return Submission(**common, concept=item.concept, alias=item.alias)
    return Submission(**common, edge_id=item.edge)


def _body_sha256(items: list) -> str:
    body = json.dumps(
        [i.model_dump(mode="json") for i in items], sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _scope(*, acting_user: User, token: ApiToken | None) -> str:
    return f"token-{token.pk}" if token is not None else f"user-{acting_user.pk}"


def _replay(batch: ProposalBatch, digest: str, key: str) -> SubmitAnswer:
    if batch.body_sha256 != digest:
        raise StateConflict(
            f'The Idempotency-Key "{key}" was used for a different batch (batch '
            f"#{batch.pk}, {batch.items} proposal(s)); nothing was queued. Use a new key for "
            "a new batch, and the same key only to send the same batch again."
        )
    return SubmitAnswer(batch=batch.pk, replayed=True, results=list(batch.answer["results"]))


def _link(batch: ProposalBatch, proposer: ProposalOrigin, outcomes: Sequence[Outcome]) -> None:
    """Link each proposal this batch queued to it: its items' and the concept proposals
    they wait for that it queued too (of its origin, not linked to an earlier batch)."""
    ids: set[int] = set()
    for outcome in outcomes:
        if outcome.result == "queued" and outcome.proposal_id is not None:
            ids.add(outcome.proposal_id)
            ids.update(outcome.waits_for)
    if not ids:
        return
    taken = SubmittedProposal.objects.filter(proposal_id__in=ids).values("proposal_id")
    mine = Proposal.objects.filter(pk__in=ids, origin=proposer).exclude(pk__in=taken)
    SubmittedProposal.objects.bulk_create(
        [
            SubmittedProposal(proposal_id=pk, batch=batch)
            for pk in sorted(mine.values_list("pk", flat=True))
        ]
    )


def proposals_submit(
    *,
    acting_user: User,
    token: ApiToken | None,
    items: Sequence[Any],
    idempotency_key: str | None = None,
    via: str = ProposalBatch.Via.API,
) -> SubmitAnswer:
    """Queue a batch of proposals from outside kgreview, each checked as the construct
    agent's candidates are; one result per item: ``queued`` (its id, status, flags),
    ``merged`` into an open proposal (its id), or ``dropped`` (reason code and words).

    ``items`` are dicts in the shape of ``POST /api/v1/proposals``'s ``proposals`` (or
    their schema objects, ``api.proposal_schemas``): at most ``BATCH_MAX``; a malformed
    one refuses the whole batch in words (``ValidationFailed``), nothing queued.
    ``acting_user`` is the submitter, named on each proposal (``created_by``) and its
    card, with ``token`` (its name; ``None`` when the account proposes without one).
    A token must have the ``propose`` scope (``NotAllowed``, 403, otherwise).

    ``idempotency_key``: a batch sent again under the same key (for the same token, or
    the same account without one) is answered with the first answer and never queued
    twice; a different batch under a used key is refused (``StateConflict``, 409).
    One transaction: the batch row is inserted first, so a concurrent retry waits on
    its unique key and then finds the answer. Writes one curation-log row per batch.

    ``via``: the door the batch came through (``ProposalBatch.Via``: the writing API or
    MCP's propose tool), named on the card and kept with the batch; each proposal the
    batch queued is linked to it (``SubmittedProposal``), so an edge made from one says
    who submitted it, how, and in which batch.
    """
    via = ProposalBatch.Via(via)
    if token is not None and token.scope != ApiToken.Scope.PROPOSE:
        raise NotAllowed(
            f'The API token "{token.name}" may only read (scope read); proposing needs a '
            "token with the propose scope: manage.py api_token create --user "
            f"{acting_user.get_username()} --name NAME --scope propose."
        )
    if idempotency_key is not None:
        if not idempotency_key.strip() or len(idempotency_key) > KEY_MAX:
            raise ValidationFailed(f"An Idempotency-Key is 1 to {KEY_MAX} characters.")
        if not idempotency_key.isprintable() or not idempotency_key.isascii():
            raise ValidationFailed("An Idempotency-Key is printable ASCII.")
    validated = _validated(items)
    digest = _body_sha256(validated)
    scope = _scope(acting_user=acting_user, token=token)
    if idempotency_key is not None:
        earlier = ProposalBatch.objects.filter(scope=scope, key=idempotency_key).first()
        if earlier is not None:
            return _replay(earlier, digest, idempotency_key)
    try:
        with transaction.atomic():
            batch = ProposalBatch.objects.create(
                scope=scope,
                key=idempotency_key,
                body_sha256=digest,
                token=token,
                user=acting_user,
                items=len(validated),
                via=via,
            )
            proposer = submitter_origin(acting_user=acting_user, token=token, via=via)
            outcomes = submissions_queue(
                acting_user=acting_user,
                proposer=proposer,
                label=submitter_label(acting_user=acting_user, token=token),
                items=[_submission(i) for i in validated],
            )
            results = [
                {"index": n, "kind": item.kind, **outcome.as_json()}
                for n, (item, outcome) in enumerate(zip(validated, outcomes, strict=True))
            ]
            batch.answer = {"results": results}
            batch.save(update_fields=["answer"])
            _link(batch, proposer, outcomes)
            answer = SubmitAnswer(batch=batch.pk, replayed=False, results=results)
            counts = answer.counts()
            audit.record(
                acting_user=acting_user,
                action="api.propose",
                subject=batch,
                summary=(
                    f"Submitted {len(results)} proposal(s) {DOOR_WORDS[via]} as "
                    f"{submitter_label(acting_user=acting_user, token=token)}: "
                    f"{counts['queued']} queued, {counts['merged']} merged, "
                    f"{counts['dropped']} dropped."
                ),
                after={"batch": batch.pk, "key": idempotency_key, "via": via.value, **counts},
            )
            return answer
    except IntegrityError:
        if idempotency_key is None:
            raise
        # The same key was taken by a concurrent request that has committed since.
        earlier = ProposalBatch.objects.filter(scope=scope, key=idempotency_key).first()
        if earlier is None:
            raise
        return _replay(earlier, digest, idempotency_key)
