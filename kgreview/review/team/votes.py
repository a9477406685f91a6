"""Double review's votes: what a reviewer's decision on a doubled proposal does.

Every decision service asks ``ballot`` first, on the locked, open proposal, before it
changes anything. For a proposal that is not doubled it answers ``DECIDE`` (decide as
always). On a doubled proposal the reviewer's decision is a ``Vote`` instead:

- the first vote is cast and the proposal waits for a second, different reviewer
  (``WAIT``; stage ``second``); the graph does not change;
- a second vote alike (same action, same reject reason, same edit) is ``APPLY``: the
  caller applies the decision once, as usual, and ``settle`` has both votes name it;
- a second vote that differs sends the proposal to the curators (``WAIT``; stage
  ``adjudicate``), with both votes kept for them to read;
- in adjudication only a curator decides (``ADJUDICATE``): the decision is final, and
  ``settle`` has the votes name it.

Neither reviewer is told the proposal was doubled, or what the other decided: the card,
the toast and the undo bar read the same as for any decision. A reviewer's vote that is
not settled yet is undone by withdrawing it (``withdraw``).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from kgreview.core.errors import NotFound, StateConflict
from kgreview.core.permissions import is_curator
from kgreview.review.decide.outcome import AlreadyDecided, NotAllowed
from kgreview.review.models import Lease, Proposal, Vote
from kgreview.review.team import doubling

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from kgreview.review.models import Decision


class Route(Enum):
    DECIDE = "decide"
    WAIT = "wait"
    APPLY = "apply"
    ADJUDICATE = "adjudicate"


@dataclass
class Ballot:
    route: Route
    vote: Vote | None = None
    votes: list[Vote] = field(default_factory=list)  # what the decision will settle
    note: str = ""  # the words the decision that applies it carries


def label_of(action: str, reason_code: str = "", payload=None, confidence=None) -> str:
    """What agreement compares: accept, reject:<reason>, or edit:<digest of the edit>."""
    if action == Vote.Action.REJECT:
        return f"reject:{reason_code}"
    if action == Vote.Action.EDIT_ACCEPT:
        text = json.dumps({"payload": payload, "confidence": confidence}, sort_keys=True)
        return "edit:" + hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
    return "accept"


def open_votes(proposal: Proposal) -> list[Vote]:
    """The votes on the proposal not yet settled nor withdrawn, oldest first."""
    return list(
        Vote.objects.filter(proposal=proposal, withdrawn_at__isnull=True, decision__isnull=True)
        .select_related("user")
        .order_by("id")
    )


def round_votes(proposal: Proposal) -> list[Vote]:
    """The votes a curator adjudicates: those not settled yet, and those whose settling
    decision was undone (undoing an adjudication puts the proposal back before a curator,
    with the two votes it had)."""
    return list(
        Vote.objects.filter(proposal=proposal, withdrawn_at__isnull=True)
        .filter(Q(decision__isnull=True) | Q(decision__undone_by__isnull=False))
        .select_related("user")
        .order_by("id")
    )


def ballot(
    proposal: Proposal,
    *,
    acting_user: User,
    action: str,
    reason_code: str = "",
    note: str = "",
    payload=None,
    confidence=None,
    batch: uuid.UUID | None = None,
) -> Ballot:
    """Route a reviewer's decision on a locked, open proposal (see the module's words)."""
    if proposal.stage == Proposal.Stage.ADJUDICATE:
        if not is_curator(acting_user):
            raise NotAllowed(
                f"Proposal #{proposal.pk} waits for a curator: the two reviewers who "
                "decided it differ."
            )
        votes = round_votes(proposal)
        return Ballot(Route.ADJUDICATE, votes=votes, note=_adjudication_words(votes))
    if not doubled_now(proposal):
        return Ballot(Route.DECIDE)
    votes = open_votes(proposal)
    if any(v.user_id == acting_user.pk for v in votes):
        raise AlreadyDecided(
            f"You have already decided proposal #{proposal.pk}; it waits for another reviewer.",
            proposal_id=proposal.pk,
            status=proposal.status,
        )
    vote = _cast(
        proposal,
        acting_user=acting_user,
        action=action,
        reason_code=reason_code,
        note=note,
        payload=payload,
        confidence=confidence,
        batch=batch or uuid.uuid4(),
    )
    # The card goes on to another reviewer: nobody holds it any more (``leases``).
    Lease.objects.filter(proposal=proposal).update(expires_at=vote.created_at)
    if not votes:
        _stage(proposal, Proposal.Stage.SECOND)
        return Ballot(Route.WAIT, vote=vote)
    first = votes[0]
    doubling.refresh_agreement(proposal)  # one more unit of agreement
    if first.label == vote.label:
        names = f"{first.user.get_username()} and {acting_user.get_username()}"
        notes = "; ".join(n for n in (first.note.strip(), note.strip()) if n)
        words = f"Two reviewers agreed ({names})." + (f" {notes}" if notes else "")
        return Ballot(Route.APPLY, vote=vote, votes=[first, vote], note=words)
    _stage(proposal, Proposal.Stage.ADJUDICATE)
    return Ballot(Route.WAIT, vote=vote)


def doubled_now(proposal: Proposal) -> bool:
    return doubling.doubled(proposal)


def _cast(proposal: Proposal, *, acting_user: User, action: str, **details) -> Vote:
    payload, confidence = details.pop("payload"), details.pop("confidence")
    try:
        with transaction.atomic():
            return Vote.objects.create(
                proposal=proposal,
                user=acting_user,
                action=action,
                reason_code=details["reason_code"] if action == Vote.Action.REJECT else "",
                note=details["note"].replace("\x00", "").strip(),
                payload=payload if action == Vote.Action.EDIT_ACCEPT else {},
                confidence=confidence if action == Vote.Action.EDIT_ACCEPT else None,
                label=label_of(action, details["reason_code"], payload, confidence),
                kind=proposal.kind,
                relation_key=proposal.relation_key,
                proposal_version=proposal.version,
                created_at=timezone.now(),
                batch=details["batch"],
            )
    except IntegrityError as exc:  # the proposal row is locked: only a bug gets here
        raise StateConflict(f"Your decision on proposal #{proposal.pk} is already in.") from exc


def _stage(proposal: Proposal, stage: str) -> None:
    """Move the proposal to a stage of its review. Its version stays: the version is what
    a reviewer saw, and a stage changes nothing the card says (review is blind: the
    second reviewer, holding the card since before the first vote, decides it as seen
    instead of being told it "changed", which would say a colleague voted)."""
    proposal.stage = stage
    proposal.save(update_fields=["stage", "updated_at"])


def _adjudication_words(votes: list[Vote]) -> str:
    said = "; ".join(f"{v.user.get_username()}: {describe(v)}" for v in votes)
    return f"Adjudicated ({said})." if said else ""


def describe(vote: Vote) -> str:
    """A vote in words, as the adjudication card and the decision note say it."""
    from kgreview.review.decide.decisions import REJECT_REASONS  # noqa: PLC0415 - a cycle

    if vote.action == Vote.Action.REJECT:
        return f"rejected, {REJECT_REASONS.get(vote.reason_code, vote.reason_code).lower()}"
    if vote.action == Vote.Action.EDIT_ACCEPT:
        return "edited and accepted"
    return "accepted"


def settle(ballot_: Ballot, decision: Decision | None) -> None:
    """Have the votes a decision settles name it (agreement or adjudication)."""
    if decision is None or not ballot_.votes:
        return
    Vote.objects.filter(pk__in=[v.pk for v in ballot_.votes]).update(decision=decision)


def withdraw(*, acting_user: User, batch: uuid.UUID, quietly: bool = False) -> list[Vote]:
    """Undo the reviewer's votes of one batch that are not settled yet: each is withdrawn
    (kept, marked), and its proposal goes back to the stage the remaining votes make.
    ``quietly`` (a bulk batch's votes, undone with its decisions) leaves out what can no
    longer be taken back instead of refusing the undo."""
    votes = list(
        Vote.objects.filter(batch=batch, user=acting_user, withdrawn_at__isnull=True)
        .select_related("proposal")
        .order_by("id")
    )
    if quietly:
        votes = [v for v in votes if v.decision_id is None and v.proposal.is_open]
        if not votes:
            return []
    if not votes:
        raise NotFound("There is nothing to undo in that batch.")
    with transaction.atomic():
        return _withdraw(votes)


def _withdraw(votes: list[Vote]) -> list[Vote]:
    settled = [v for v in votes if v.decision_id is not None]
    if settled:
        raise StateConflict(
            f"Proposal #{settled[0].proposal_id} was already decided with your decision: "
            "undo it from the decision log's proposal, or propose the change anew."
        )
    proposals = {
        p.pk: p
        for p in Proposal.objects.select_for_update()
        .filter(pk__in=[v.proposal_id for v in votes])
        .order_by("pk")
    }
    now = timezone.now()
    for vote in votes:
        proposal = proposals[vote.proposal_id]
        if not proposal.is_open:
            raise StateConflict(
                f"Proposal #{proposal.pk} was {proposal.status} meanwhile; your decision "
                "on it can no longer be undone."
            )
        vote.withdrawn_at = now
        vote.save(update_fields=["withdrawn_at"])
        left = Vote.objects.filter(
            proposal=proposal, withdrawn_at__isnull=True, decision__isnull=True
        ).count()
        _stage(proposal, Proposal.Stage.SECOND if left else Proposal.Stage.REVIEW)
    return votes


def newest_open_vote(user: User) -> Vote | None:
    """The reviewer's newest vote they can still take back (the undo bar's)."""
    return (
        Vote.objects.filter(
            user=user,
            withdrawn_at__isnull=True,
            decision__isnull=True,
            proposal__status__in=("pending", "held"),
        )
        .order_by("-created_at", "-id")
        .first()
    )


@dataclass
class BallotView:
    """One reviewer's vote as the adjudication card shows it."""

    username: str
    words: str
    note: str
    changes: list[tuple[str, str]]  # (field, value as edited) for an edit
    at: object


def _shown(value) -> str:
    if isinstance(value, dict):
        return str(value.get("name") or value.get("key") or json.dumps(value, sort_keys=True))
    if isinstance(value, list):
        return ", ".join(_shown(v) for v in value)
    return str(value)


def ballots(proposal: Proposal) -> list[BallotView]:
    """The open votes on a proposal in adjudication, each with what its edit changed."""
    out = []
    for vote in round_votes(proposal):
        changes: list[tuple[str, str]] = []
        if vote.action == Vote.Action.EDIT_ACCEPT:
            drafted = proposal.payload or {}
            for key, value in sorted((vote.payload or {}).items()):
                if key not in ("conflicts",) and drafted.get(key) != value:
                    changes.append((key.replace("_", " "), _shown(value)))
            if vote.confidence is not None and vote.confidence != proposal.confidence:
                changes.append(("confidence", f"{vote.confidence:.2f}"))
        out.append(
            BallotView(
                username=vote.user.get_username(),
                words=describe(vote),
                note=vote.note,
                changes=changes,
                at=vote.created_at,
            )
        )
    return out
