"""Competency questions: create, edit, retire and reactivate them.

Each service is one transaction, takes the acting curator (``acting_user``; ``None`` is
the system, e.g. a command loading a question file) and writes one curation-log row
(``kgreview.core.audit.record``). Bad input is refused with ``ValidationFailed`` in
words, before anything is written. A question is never deleted: it is retired.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from construction.text import name_key
from kgreview.core import audit
from kgreview.core.errors import NotFound, StateConflict, ValidationFailed
from kgreview.graph.asking import question_max
from kgreview.graph.models import Concept
from kgreview.graph.selectors import clean_name, concepts_for_names

from .models import CompetencyQuestion

if TYPE_CHECKING:
    from django.contrib.auth.models import User

Expect = CompetencyQuestion.Expect
MAX_NAMES = 50


@dataclass(frozen=True)
class QuestionSpec:
    """What a curator typed: the question, the kind of answer, and the answer."""

    text: str
    expect: str
    names: tuple[str, ...] = ()
    yes: bool | None = None
    note: str = ""


def _clean_names(names: Iterable[str]) -> list[str]:
    """Names as stored: trimmed, none empty, no spelling of one name twice (by key)."""
    out: list[str] = []
    seen: set[str] = set()
    for raw in names:
        name = clean_name(str(raw))
        key = name_key(name) or name.casefold()
        if name and key not in seen:
            seen.add(key)
            out.append(name)
    return out


def unknown_names(names: Sequence[str]) -> tuple[dict[str, Concept], list[str]]:
    """The active concept each name means (by name, alias or key), and the names the
    graph does not know (or knows only as a retired concept), in the order given."""
    found = concepts_for_names(names)
    known: dict[str, Concept] = {}
    unknown: list[str] = []
    for name in names:
        concept = found.get(name)
        if concept is None or concept.status != Concept.Status.ACTIVE:
            unknown.append(name)
        else:
            known[name] = concept
    return known, unknown


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(f"“{n}”" for n in names)


def _check_text(text: str) -> None:
    if not text:
        raise ValidationFailed("Write the question.")
    limit = question_max()
    if len(text) > limit:
        raise ValidationFailed(
            f"The question is {len(text)} characters long; at most {limit} fit "
            "(KG_ASK_QUESTION_MAX)."
        )


def _check_names(expect: str, names: list[str], yes: bool | None) -> None:
    if expect == Expect.CONCEPTS and not names:
        raise ValidationFailed("Name at least one concept the answer must hold.")
    if expect == Expect.PATH and len(names) != 2:
        raise ValidationFailed(
            f"A path has two ends: name exactly two concepts (you named {len(names)})."
        )
    if expect == Expect.YES_NO:
        if yes is None:
            raise ValidationFailed("Say whether the expected answer is yes or no.")
        if len(names) not in (0, 2):
            raise ValidationFailed(
                "A yes/no question names its two concepts, or none (they are read from "
                f"the question); you named {len(names)}."
            )
    if len(names) > MAX_NAMES:
        raise ValidationFailed(f"At most {MAX_NAMES} expected concepts, not {len(names)}.")
    _, unknown = unknown_names(names)
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        raise ValidationFailed(
            f"The graph does not know the concept{plural} {_quoted(unknown)}: name concepts "
            "it holds (by name or alias), or accept them into the graph first.",
            unknown=unknown,
        )


def question_validate(spec: QuestionSpec) -> QuestionSpec:
    """The spec as stored (text and names tidied), or ``ValidationFailed`` in words."""
    text = " ".join(str(spec.text or "").split())
    _check_text(text)
    if spec.expect not in Expect.values:
        raise ValidationFailed(
            f"“{spec.expect}” is not a kind of answer: choose concepts, path or yes_no."
        )
    names = _clean_names(spec.names)
    yes = spec.yes if spec.expect == Expect.YES_NO else None
    _check_names(spec.expect, names, yes)
    return QuestionSpec(
        text=text, expect=spec.expect, names=tuple(names), yes=yes, note=spec.note.strip()
    )


def _state(question: CompetencyQuestion) -> dict:
    return {
        "text": question.text,
        "expect": question.expect,
        "expected_names": list(question.expected_names),
        "expected_yes": question.expected_yes,
        "note": question.note,
        "active": question.active,
    }


def _active_twin(text: str, *, other_than: int | None = None) -> CompetencyQuestion | None:
    twins = CompetencyQuestion.objects.filter(active=True, text__iexact=text)
    if other_than is not None:
        twins = twins.exclude(pk=other_than)
    return twins.first()


@transaction.atomic
def question_create(*, spec: QuestionSpec, acting_user: User | None) -> CompetencyQuestion:
    """Store a new competency question (active). Refuses, in words, a question already
    asked by an active one, and expected names the graph does not know."""
    clean = question_validate(spec)
    twin = _active_twin(clean.text)
    if twin is not None:
        raise ValidationFailed(f"Question #{twin.pk} already asks exactly this.")
    question = CompetencyQuestion.objects.create(
        text=clean.text,
        expect=clean.expect,
        expected_names=list(clean.names),
        expected_yes=clean.yes,
        note=clean.note,
        created_by=acting_user if getattr(acting_user, "is_authenticated", False) else None,
    )
    audit.record(
        acting_user=acting_user,
        action="competency_question.create",
        subject=question,
        summary=(
            f"Added the competency question “{question.text}” (expects {question.expected_words})."
        ),
        after=_state(question),
    )
    return question


def _locked(question_id: int) -> CompetencyQuestion:
    question = CompetencyQuestion.objects.select_for_update().filter(pk=question_id).first()
    if question is None:
        raise NotFound(f"There is no competency question #{question_id}.")
    return question


@transaction.atomic
def question_update(
    *, question_id: int, spec: QuestionSpec, acting_user: User | None
) -> CompetencyQuestion:
    """Change a question's words, kind of answer, expected answer or note. Its earlier
    results stay as they were (they say what was expected then, in their words)."""
    question = _locked(question_id)
    clean = question_validate(spec)
    if question.active:
        twin = _active_twin(clean.text, other_than=question.pk)
        if twin is not None:
            raise ValidationFailed(f"Question #{twin.pk} already asks exactly this.")
    before = _state(question)
    question.text = clean.text
    question.expect = clean.expect
    question.expected_names = list(clean.names)
    question.expected_yes = clean.yes
    question.note = clean.note
    after = _state(question)
    if after == before:
        return question
    question.save()
    changed = sorted(k for k in after if after[k] != before[k])
    audit.record(
        acting_user=acting_user,
        action="competency_question.edit",
        subject=question,
        summary=f"Edited competency question #{question.pk} ({', '.join(changed)}).",
        before={k: before[k] for k in changed},
        after={k: after[k] for k in changed},
    )
    return question


@transaction.atomic
def question_retire(*, question_id: int, acting_user: User | None) -> CompetencyQuestion:
    """Stop asking a question; it and its history stay (reactivate it to ask again)."""
    question = _locked(question_id)
    if not question.active:
        raise StateConflict(f"Question #{question.pk} is already retired.")
    question.active = False
    question.retired_at = timezone.now()
    question.save(update_fields=["active", "retired_at", "updated_at"])
    audit.record(
        acting_user=acting_user,
        action="competency_question.retire",
        subject=question,
        summary=f"Retired the competency question “{question.text}”.",
        before={"active": True},
        after={"active": False},
    )
    return question


@transaction.atomic
def question_reactivate(*, question_id: int, acting_user: User | None) -> CompetencyQuestion:
    """Ask a retired question again. Refused if an active question asks the same."""
    question = _locked(question_id)
    if question.active:
        raise StateConflict(f"Question #{question.pk} is already active.")
    twin = _active_twin(question.text, other_than=question.pk)
    if twin is not None:
        raise StateConflict(f"Question #{twin.pk} already asks exactly this; retire it first.")
    question.active = True
    question.retired_at = None
    question.save(update_fields=["active", "retired_at", "updated_at"])
    audit.record(
        acting_user=acting_user,
        action="competency_question.reactivate",
        subject=question,
        summary=f"Reactivated the competency question “{question.text}”.",
        before={"active": False},
        after={"active": True},
    )
    return question
