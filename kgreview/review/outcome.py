"""What a decision did, and the ways a decision is refused.

Shared by the decision services (``decisions``), the kinds that apply a proposal
(``kinds``), and the pages that show the result.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from kgreview.core.errors import DomainError, StateConflict
from kgreview.graph.models import Concept, Edge

from .changes import GraphChanges
from .models import Decision, Proposal


class ProposalStale(DomainError):
    """The graph changed so that the proposal cannot be applied as it stands."""

    code = "stale"


def stale(words: str) -> str:
    """A refusal because the graph changed since the proposal was made: the graph's own
    words (``graph.rules``) behind one prefix, on the single path and the bulk path."""
    return f"Cannot apply it as it stands: {words}"


class AlreadyDecided(StateConflict):
    code = "already_decided"


class VersionChanged(StateConflict):
    code = "version_changed"


class NotAllowed(DomainError):
    code = "not_allowed"


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
