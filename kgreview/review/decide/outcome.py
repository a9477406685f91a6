"""What a decision did, and the ways a decision is refused.

Shared by the decision services (``decisions``), the kinds that apply a proposal
(``kinds``), and the pages that show the result.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from kgreview.core.errors import DomainError, StateConflict
from kgreview.graph.models import Concept, Edge
from kgreview.review.decide.changes import GraphChanges
from kgreview.review.models import Decision, Proposal, Vote


class ProposalStale(DomainError):
    """The graph changed so that the proposal cannot be applied as it stands."""

    code = "stale"
    status = 409


def stale(words: str) -> str:
    """A refusal because the graph changed since the proposal was made: the graph's own
    words (``graph.rules``) behind one prefix, on the single path and the bulk path."""
    return f"Cannot apply it as it stands: {words}"


class AlreadyDecided(StateConflict):
    """Someone decided the proposal first; the words say who and when."""

    code = "already_decided"
    status = 409


class VersionChanged(StateConflict):
    """The proposal changed since the card showed it; look again before deciding."""

    code = "version_changed"
    status = 409


class NotAllowed(DomainError):
    """The person's role may not take this decision (a curator's kind, say)."""

    code = "not_allowed"
    status = 403


@dataclass
class Outcome:
    """What one decision did, for the caller to show."""

    proposal: Proposal
    decision: Decision | None
    batch: uuid.UUID
    edges: list[Edge] = field(default_factory=list)
    concepts: list[Concept] = field(default_factory=list)
    also_decided: list[Proposal] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)  # all of this batch, first first
    settled: list[Decision] = field(default_factory=list)  # proposals settled as a consequence
    changes: GraphChanges = field(default_factory=GraphChanges)
    message: str = ""
    # Double review: the reviewer's vote, when the decision was one (``review.team``).
    vote: Vote | None = None
