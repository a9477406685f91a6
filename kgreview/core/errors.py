"""Domain errors raised by services. Each carries a message meant for people."""

from __future__ import annotations


class DomainError(Exception):
    """A request the current state of the graph cannot honour; nothing was written."""

    code = "domain_error"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return self.message


class HardDeleteForbidden(DomainError):
    """Rows of this kind are never deleted; retire, invalidate or merge them instead."""

    code = "hard_delete_forbidden"


class ImmutableRecord(DomainError):
    """Append-only rows (decisions, source revisions) cannot be changed once written."""

    code = "immutable_record"


class ValidationFailed(DomainError):
    code = "invalid"


class NotFound(DomainError):
    code = "not_found"


class InactiveRelation(DomainError):
    code = "inactive_relation"


class SelfLoop(DomainError):
    code = "self_loop"


class DuplicateEdge(DomainError):
    code = "duplicate_edge"


class CycleDetected(DomainError):
    code = "cycle"


class CycleUnchecked(DomainError):
    """Whether the edge closes a cycle could not be told within the bounded search."""

    code = "cycle_unchecked"


class EvidenceMismatch(DomainError):
    code = "evidence_mismatch"


class ConceptNotActive(DomainError):
    code = "concept_not_active"


class NameTaken(DomainError):
    code = "name_taken"


class StateConflict(DomainError):
    """The row changed state since the caller looked at it."""

    code = "state_conflict"


class Busy(DomainError):
    """Another decision locked the same rows at the same moment, and retrying did not get
    through; nothing was changed and the person may simply try again."""

    code = "busy"


class DuplicateProposal(DomainError):
    code = "duplicate_proposal"

    @property
    def proposal_id(self) -> int | None:
        """The open proposal asking for the same change; None if it was decided meanwhile."""
        found = self.details.get("proposal_id")
        return found if isinstance(found, int) else None
