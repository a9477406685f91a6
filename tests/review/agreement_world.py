"""Votes and decisions planted for the agreement tests, dated as the tests need.

Votes are written directly (the voting services are review.team's); decisions through
the model with a held clock, since their ``created_at`` is stamped on insert.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.utils import timezone

from kgreview.review.models import Decision, Vote
from tests.insights.planting import plant

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
EDIT_A = {"source": {"name": "A"}, "target": {"name": "B"}, "relation": "builds_on"}
EDIT_B = {"source": {"name": "B"}, "target": {"name": "A"}, "relation": "builds_on"}


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def vote(proposal, user, label: str, when: datetime, *, decision=None, withdrawn=False, **kw):
    """A vote of ``label`` (accept, reject:<reason>, edit:<anything>) cast at ``when``."""
    head, _, rest = label.partition(":")
    action = {"accept": "accept", "reject": "reject", "edit": "edit_accept"}[head]
    return Vote.objects.create(
        proposal=proposal,
        user=user,
        action=action,
        reason_code=rest if action == "reject" else "",
        label=label,
        kind=proposal.kind,
        relation_key=proposal.relation_key,
        proposal_version=proposal.version,
        created_at=when,
        withdrawn_at=when + timedelta(seconds=5) if withdrawn else None,
        decision=decision,
        payload=kw.get("payload", {}),
        confidence=kw.get("confidence"),
    )


def decide(monkeypatch, proposal, user, action: str, when: datetime, **fields) -> Decision:
    """A decision row stamped at ``when``."""
    with monkeypatch.context() as m:
        m.setattr(timezone, "now", lambda: when)
        return Decision.objects.create(
            proposal=proposal, user=user, action=action, proposal_version=1, **fields
        )


# The scripted session: two reviewers, twenty proposals of one relation, in this order.
# (ana's label, ben's label, the decision's action and reason, or the adjudicator's).
SESSION = (
    [("accept", "accept", "accept", "")] * 10
    + [("reject:vague", "reject:vague", "reject", "vague")] * 4
    + [("accept", "reject:vague", "accept", "")] * 2
    + [("accept", "reject:vague", "reject", "vague")]
    + [("reject:vague", "accept", "reject", "vague")] * 2
    + [("edit:aaa", "edit:bbb", "edit_accept", "")]
)


def session(monkeypatch, ana, ben, cora, rel: str = "prerequisite"):
    """Twenty proposals double-reviewed by ana then ben (ten seconds later), thirty
    seconds apart, with a twenty-minute pause after the tenth; agreements applied by
    ben's decision, disagreements adjudicated by cora a minute apart afterwards.
    Returns ben's accept decisions, in order."""
    bens_accepts = []
    clock = 0.0
    adjudicated = 0
    for i, (a, b, action, reason) in enumerate(SESSION):
        if i == 10:
            clock += 1200 - 30
        p = plant(confidence=0.8, rel=rel)
        edit = {"payload": EDIT_A, "confidence": 0.9} if a.startswith("edit") else {}
        va = vote(p, ana, a, at(clock), **edit)
        vb = vote(p, ben, b, at(clock + 10), payload=EDIT_B if b.startswith("edit") else {})
        if a == b:
            d = decide(monkeypatch, p, ben, action, at(clock + 10), reason_code=reason)
            if action == "accept":
                bens_accepts.append(d)
        else:
            after = {"payload": EDIT_A, "confidence": 0.9} if action == "edit_accept" else {}
            when = at(4000 + 60 * adjudicated)
            adjudicated += 1
            d = decide(monkeypatch, p, cora, action, when, reason_code=reason, after=after)
        Vote.objects.filter(pk__in=[va.pk, vb.pk]).update(decision=d)
        clock += 30
    return bens_accepts
