"""manage.py competency — ask every active competency question (or one) now.

Prints pass / fail per question in words, or with ``--json`` one document:
``{"run": {"id", "status", "total", "passed", "failed"}, "results": [{"question", "text",
"passed", "status", "words", "missing", "extra", "latency_ms"}], "gap_searches": [...]}``.
``--gaps`` also searches the sources for the missing links of failing questions.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from kgreview.agents.models import AgentRun
from kgreview.core.errors import DomainError
from kgreview.questions import gaps, runs
from kgreview.questions.models import CompetencyRun


class Command(BaseCommand):
    help = "Ask the competency questions now and say which pass."

    def add_arguments(self, parser):
        parser.add_argument("--question", type=int, help="Ask only this question (its number).")
        parser.add_argument(
            "--gaps", action="store_true", help="Search the sources for failing questions' gaps."
        )
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, question: int | None, gaps: bool, as_json: bool, **opts):
        try:
            run = runs.competency_run_create(
                trigger=CompetencyRun.Trigger.CLI, question_id=question
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from None
        run = runs.competency_run_execute(run_id=run.pk, claim="cli")
        searches = self._searches(run) if gaps else []
        results = list(run.results.select_related("question").order_by("question_id"))
        if as_json:
            self.stdout.write(json.dumps(_document(run, results, searches), ensure_ascii=False))
            return
        for r in results:
            mark = "pass" if r.passed else "FAIL"
            self.stdout.write(f"{mark}  #{r.question_id} {r.question.text}\n      {r.words}")
        for s in searches:
            self.stdout.write(f"gap search #{s.pk}: {s.stats.get('words') or s.error}")
        self.stdout.write(
            f"Run #{run.pk}: {run.passed} of {run.total} passed, {run.failed} failed."
        )

    @staticmethod
    def _searches(run: CompetencyRun) -> list[AgentRun]:
        found = []
        for result in runs.failing_results(run):
            search = gaps.gap_run_for(result, trigger=AgentRun.Trigger.CLI)
            if search is not None:
                found.append(gaps.gap_search(run=search))
        return found


def _document(run, results, searches) -> dict:
    return {
        "run": {
            "id": run.pk,
            "status": run.status,
            "total": run.total,
            "passed": run.passed,
            "failed": run.failed,
        },
        "results": [
            {
                "question": r.question_id,
                "text": r.question.text,
                "passed": r.passed,
                "status": r.status,
                "words": r.words,
                "missing": r.missing,
                "extra": r.extra,
                "latency_ms": r.latency_ms,
            }
            for r in results
        ],
        "gap_searches": [
            {"run": s.pk, "status": s.status, "stats": s.stats, "error": s.error} for s in searches
        ],
    }
