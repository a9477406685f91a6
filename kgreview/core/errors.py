"""Domain errors raised by services. Each carries a message meant for people.

Every class says what it means (its docstring), a ``code`` the API's callers can read and
the HTTP ``status`` it is answered with. ``kgreview.core.refusals`` is the one place that
turns a ``DomainError`` into an answer: the words on the page, a fragment and a toast for
htmx, JSON with the status under ``/api/``.
"""

from __future__ import annotations


class DomainError(Exception):
    """A request the current state of the graph cannot honour; nothing was written."""

    code = "domain_error"
    status = 400

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return self.message


class HardDeleteForbidden(DomainError):
    """Rows of this kind are never deleted; retire, invalidate or merge them instead."""

    code = "hard_delete_forbidden"
    status = 409


class ImmutableRecord(DomainError):
    """Append-only rows (decisions, source revisions) cannot be changed once written."""

    code = "immutable_record"
    status = 409


class ValidationFailed(DomainError):
    """What was sent cannot be taken as it is (a missing, malformed or out-of-range
    value); the words say which and why."""

    code = "invalid"
    status = 400


class NotAllowed(DomainError):
    """The caller is who they say, but what they hold does not allow this (a read-only
    API token asked to propose)."""

    code = "not_allowed"
    status = 403


class NotFound(DomainError):
    """The row the request names does not exist (never deleted: it never was)."""

    code = "not_found"
    status = 404


class InactiveRelation(DomainError):
    """The relation named is retired from the vocabulary; no new edge may use it."""

    code = "inactive_relation"
    status = 400


class InactiveType(DomainError):
    """The concept type was retired; a concept cannot be given it, nor a type be put
    under it, until a curator reactivates it."""

    code = "inactive_type"
    status = 400


class PatternViolation(DomainError):
    """The edge joins concepts of types its relation does not allow: the relation has
    patterns (domain type, range type) and the ends' types fit none of them. The words
    name the relation, the patterns it allows and the ends' types."""

    code = "pattern_violation"
    status = 400


class SelfLoop(DomainError):
    """An edge from a concept to itself; no relation of the graph allows one."""

    code = "self_loop"
    status = 400


class DuplicateEdge(DomainError):
    """The same fact is already an active edge of the graph."""

    code = "duplicate_edge"
    status = 400


class CycleDetected(DomainError):
    """The edge would close a cycle in an acyclic relation; the words name the chain."""

    code = "cycle"
    status = 400


class CycleUnchecked(DomainError):
    """Whether the edge closes a cycle could not be told within the bounded search."""

    code = "cycle_unchecked"
    status = 400


class EvidenceMismatch(DomainError):
    """The quote is not where the evidence says it is in its source revision."""

    code = "evidence_mismatch"
    status = 400


class ConceptNotActive(DomainError):
    """The concept is retired or merged away; the words say where it lives now."""

    code = "concept_not_active"
    status = 400


class NameTaken(DomainError):
    """Another concept already answers to the name (as its name or an alias)."""

    code = "name_taken"
    status = 400


class StateConflict(DomainError):
    """The row changed state since the caller looked at it."""

    code = "state_conflict"
    status = 409


class Busy(DomainError):
    """Another decision locked the same rows at the same moment, and retrying did not get
    through; nothing was changed and the person may simply try again (``Retry-After``)."""

    code = "busy"
    status = 409
    retry_after = "1"


class DuplicateProposal(DomainError):
    """The same change is already waiting in the queue as an open proposal."""

    code = "duplicate_proposal"
    status = 409

    @property
    def proposal_id(self) -> int | None:
        """The open proposal asking for the same change; None if it was decided meanwhile."""
        found = self.details.get("proposal_id")
        return found if isinstance(found, int) else None
