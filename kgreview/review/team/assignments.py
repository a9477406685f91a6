"""Assignments: a curator gives part of the queue (a Queue filter) to a person or a group.

A reviewer's focus queue serves their open assignments first, oldest first, then the
shared pool (``workspace.views.serve``). Progress is what the assignees decided of the
assignment's proposals since it was made (decisions, and votes on doubled proposals),
against the target when there is one; an assignment is done when it reaches its target
or nothing of it is left open, and a curator closes it (closed, never deleted).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import Q
from django.http import QueryDict
from django.utils import timezone

from kgreview.core import audit
from kgreview.core.errors import NotFound, StateConflict, ValidationFailed
from kgreview.core.permissions import ROLES, is_curator
from kgreview.review.decide.outcome import NotAllowed
from kgreview.review.models import Assignment, Decision, Vote

if TYPE_CHECKING:
    from django.contrib.auth.models import User

NAME_MAX = 120
QUERY_MAX = 1000


def parse(query: str):
    """The assignment's Queue filter, and the words for what in it could not be read."""
    from kgreview.review.workspace.selectors import QueueFilter  # noqa: PLC0415 - a cycle

    return QueueFilter.from_query(QueryDict(query or ""))


@transaction.atomic
def assignment_create(
    *,
    acting_user: User,
    name: str,
    query: str = "",
    user_id: int | None = None,
    group_id: int | None = None,
    target: int | None = None,
) -> Assignment:
    """Give the part of the queue ``query`` selects to one person or one role group."""
    if not is_curator(acting_user):
        raise NotAllowed("Only curators assign work.")
    name = (name or "").replace("\x00", "").strip()
    if not name:
        raise ValidationFailed("Name the assignment, e.g. “Prerequisites of chapter 3”.")
    if len(name) > NAME_MAX:
        raise ValidationFailed(f"An assignment's name is at most {NAME_MAX} characters.")
    query = (query or "").replace("\x00", "").strip().lstrip("?")
    if len(query) > QUERY_MAX:
        raise ValidationFailed(f"The filter is at most {QUERY_MAX} characters.")
    f, errors = parse(query)
    if errors:
        raise ValidationFailed("The filter cannot be read: " + " ".join(errors))
    if f.stage:
        raise ValidationFailed("Adjudication is the curators' own queue; it is not assigned.")
    if (user_id is None) == (group_id is None):
        raise ValidationFailed("Assign it to one person or to one group.")
    person = group = None
    if user_id is not None:
        person = get_user_model().objects.filter(pk=user_id, is_active=True).first()
        if person is None:
            raise ValidationFailed(f"There is no active user #{user_id}.")
    else:
        group = Group.objects.filter(pk=group_id, name__in=ROLES).first()
        if group is None:
            raise ValidationFailed("Assign to the reviewer or curator group, or to a person.")
    if target is not None and not 1 <= target <= 1_000_000:
        raise ValidationFailed("The target is a number of proposals, from 1 to 1,000,000.")
    assignment = Assignment.objects.create(
        name=name,
        query=f.query(),
        user=person,
        group=group,
        target=target,
        created_by=acting_user,
    )
    audit.record(
        acting_user=acting_user,
        action="assignment.create",
        subject=assignment,
        summary=f"“{name}” to {assignee_words(assignment)}",
        after={"query": assignment.query, "target": target},
    )
    return assignment


@transaction.atomic
def assignment_close(*, acting_user: User, assignment_id: int) -> Assignment:
    if not is_curator(acting_user):
        raise NotAllowed("Only curators close assignments.")
    assignment = Assignment.objects.select_for_update().filter(pk=assignment_id).first()
    if assignment is None:
        raise NotFound(f"There is no assignment #{assignment_id}.")
    if assignment.closed_at is not None:
        raise StateConflict(f"“{assignment.name}” is already closed.")
    assignment.closed_at = timezone.now()
    assignment.save(update_fields=["closed_at"])
    audit.record(
        acting_user=acting_user,
        action="assignment.close",
        subject=assignment,
        summary=f"“{assignment.name}” closed",
    )
    return assignment


def assignee_words(assignment: Assignment) -> str:
    if assignment.user_id:
        return assignment.user.get_username()
    return f"everyone in {assignment.group.name}s" if assignment.group_id else "nobody"


def open_for(user: User) -> list[Assignment]:
    """The user's open assignments (their own and their groups'), oldest first."""
    return list(
        Assignment.objects.filter(closed_at__isnull=True)
        .filter(Q(user=user) | Q(group__in=user.groups.all()))
        .select_related("user", "group")
        .order_by("id")
    )


def assignees(assignment: Assignment) -> list[int]:
    if assignment.user_id:
        return [assignment.user_id]
    return list(
        get_user_model().objects.filter(groups=assignment.group_id).values_list("pk", flat=True)
    )


@dataclass
class Progress:
    assignment: Assignment
    done: int
    left: int  # proposals its filter still serves (pending ones, unless it says)

    @property
    def target(self) -> int | None:
        return self.assignment.target

    @property
    def finished(self) -> bool:
        return self.left == 0 or (self.target is not None and self.done >= self.target)

    @property
    def words(self) -> str:
        of = f" of {self.target}" if self.target else ""
        return f"{self.done}{of} decided, {self.left} open"

    @property
    def percent(self) -> int | None:
        if not self.target:
            return None
        return min(100, round(100 * self.done / self.target))


def progress(assignment: Assignment, *, only_user: User | None = None) -> Progress:
    """What the assignees (or one of them) decided of the assignment since it was made."""
    from kgreview.review.workspace.selectors import queue_queryset  # noqa: PLC0415 - a cycle

    f, _ = parse(assignment.query)
    people = [only_user.pk] if only_user is not None else assignees(assignment)
    every = queue_queryset(replace(f, status="all")).values("pk")
    decided = set(
        Decision.objects.filter(
            user__in=people,
            created_at__gte=assignment.created_at,
            caused_by__isnull=True,
            undone_by__isnull=True,
            action__in=("accept", "reject", "edit_accept"),
            proposal__in=every,
        ).values_list("proposal_id", flat=True)
    )
    decided |= set(
        Vote.objects.filter(
            user__in=people,
            created_at__gte=assignment.created_at,
            withdrawn_at__isnull=True,
            proposal__in=every,
        ).values_list("proposal_id", flat=True)
    )
    left = queue_queryset(f).count()  # what its filter still serves
    return Progress(assignment=assignment, done=len(decided), left=left)


def with_work(user: User, *, skip=()) -> tuple[Assignment, Progress] | None:
    """The user's first open assignment with work left for them, and its progress."""
    for assignment in open_for(user):
        if assignment.pk in skip:
            continue
        state = progress(assignment)
        if not state.finished:
            return assignment, state
    return None
