"""Screening a bulk decision before anything is decided: the ids that name no proposal,
the proposals already decided (by whom and when) and the kinds the reviewer does not
decide are refused in words; the rest go on, in the order given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.utils import timezone

from kgreview.review.decide.decisions import can_decide_kind
from kgreview.review.decide.outcome import (
    stale as stale,  # re-exported: the prefix of a stale refusal
)
from kgreview.review.models import Proposal

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _already(proposal: Proposal, names: dict[int, str]) -> str:
    when = timezone.localtime(proposal.decided_at).strftime("%Y-%m-%d %H:%M")
    who = "the system"
    if proposal.decided_by_id is not None:
        who = names.get(proposal.decided_by_id, who)
    return f"Proposal #{proposal.pk} was already {proposal.status} by {who} at {when}."


def _user_names(proposals) -> dict[int, str]:
    ids = {p.decided_by_id for p in proposals if p.decided_by_id}
    if not ids:
        return {}
    User = get_user_model()
    return dict(User.objects.filter(pk__in=ids).values_list("pk", User.USERNAME_FIELD))


def screen(ids, proposals, result, *, acting_user: User) -> list[Proposal]:
    """Refuse what cannot be decided at all; return the open proposals, in the given order."""
    closed = [p for p in proposals.values() if not p.is_open]
    names = _user_names(closed)
    out = []
    for pid in ids:
        p = proposals.get(pid)
        if p is None:
            result.refuse(pid, f"There is no proposal #{pid}.")
        elif not p.is_open:
            result.refuse(pid, _already(p, names))
        elif not can_decide_kind(acting_user, p.kind):
            result.refuse(pid, f"Only curators decide {p.get_kind_display().lower()} proposals.")
        else:
            out.append(p)
    return out
