"""Reads for the Questions pages. Nothing here writes."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import OuterRef, Q, Subquery

from kgreview.agents.models import AgentRun
from kgreview.review.models import Decision, Proposal

from .models import CompetencyQuestion, CompetencyRun, QuestionResult

HISTORY_SIZE = 50
DECISIONS_PER_CHANGE = 10


def questions_with_latest() -> list[CompetencyQuestion]:
    """Every question (active first), each with ``latest``: its newest result or None.
    Two queries, whatever the number of questions."""
    newest = QuestionResult.objects.filter(question=OuterRef("pk")).order_by("-pk").values("pk")[:1]
    questions = list(
        CompetencyQuestion.objects.annotate(latest_id=Subquery(newest)).order_by("-active", "pk")
    )
    ids = [q.latest_id for q in questions if q.latest_id]
    results = {r.pk: r for r in QuestionResult.objects.filter(pk__in=ids)}
    for question in questions:
        question.latest = results.get(question.latest_id)
    return questions


def run_latest() -> CompetencyRun | None:
    return CompetencyRun.objects.select_related("requested_by", "question").first()


def runs_recent(limit: int = 10) -> list[CompetencyRun]:
    return list(CompetencyRun.objects.select_related("requested_by", "question")[:limit])


@dataclass
class HistoryRow:
    """One result, and (when it passed where the one before failed, or the other way
    round) the decisions made between the two runs that touched its concepts."""

    result: QuestionResult
    changed: bool = False
    decisions: list[Decision] = field(default_factory=list)


def _concepts_of(result: QuestionResult) -> set[int]:
    answer = result.answer or {}
    ids = set(answer.get("answer", {}).get("concept_ids", []) or [])
    for found in (answer.get("plan") or {}).get("concepts", []) or []:
        if isinstance(found, dict) and isinstance(found.get("concept"), int):
            ids.add(found["concept"])
    for gap in result.gaps or []:
        ids.update(int(i) for i in gap.get("ends", []))
    return {i for i in ids if isinstance(i, int)}


def _decisions_between(before: QuestionResult, after: QuestionResult) -> list[Decision]:
    """Decisions made between two results that touched a concept either one involved
    (any decision in the window when neither names a concept)."""
    concepts = _concepts_of(before) | _concepts_of(after)
    window = Decision.objects.filter(
        created_at__gt=before.graph_at, created_at__lte=after.graph_at
    ).select_related("proposal", "user")
    if concepts:
        window = window.filter(
            Q(proposal__source_concept_id__in=concepts)
            | Q(proposal__target_concept_id__in=concepts)
            | Q(proposal__concept_id__in=concepts)
        )
    return list(window.order_by("created_at", "pk")[:DECISIONS_PER_CHANGE])


def question_history(
    question: CompetencyQuestion, *, limit: int = HISTORY_SIZE
) -> list[HistoryRow]:
    """The question's results, newest first; where pass / fail changed from one run to
    the next, the decisions between them that may explain it."""
    results = list(
        QuestionResult.objects.filter(question=question)
        .select_related("run")
        .order_by("-pk")[: limit + 1]
    )
    rows = []
    for index, result in enumerate(results[:limit]):
        row = HistoryRow(result=result)
        older = results[index + 1] if index + 1 < len(results) else None
        if older is not None and older.passed != result.passed:
            row.changed = True
            row.decisions = _decisions_between(older, result)
        rows.append(row)
    return rows


def gap_proposals(question: CompetencyQuestion) -> list[Proposal]:
    return list(
        question.gap_proposals.select_related(
            "source_concept", "target_concept", "relation", "document"
        ).order_by("-pk")[:100]
    )


def gap_searches(question: CompetencyQuestion, limit: int = 20) -> list[AgentRun]:
    return list(
        AgentRun.objects.filter(
            agent=AgentRun.Agent.GAPS, params__question_id=question.pk
        ).order_by("-created_at", "-pk")[:limit]
    )
