"""How the agents' commands end a run: its report as one JSON document or one line of
words, and a failed run failing the command (exit status 1) with the run's error."""

from __future__ import annotations

import json
from collections import defaultdict

from django.core.management.base import BaseCommand, CommandError

from kgreview.agents import selectors
from kgreview.agents.models import AgentRun


def print_run(command: BaseCommand, run: AgentRun, *, as_json: bool, name: str, says: str) -> None:
    """Print ``run``'s report: as JSON, or "``name`` #id status: " and ``says`` with the
    run's figures filled in (``{cycles}``; ``{queued}`` is how many proposals it queued;
    a figure the run did not count is 0). Raise ``CommandError`` when the run failed."""
    report = selectors.run_report(run)
    if as_json:
        command.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        figures = defaultdict(int, report["run"], queued=len(report["proposals"]))
        line = f"{name} #{run.pk} {run.status}: {says.format_map(figures)}"
        command.stdout.write(command.style.SUCCESS(line))
    if run.status == AgentRun.Status.FAILED:
        raise CommandError(f"{name} #{run.pk} failed: {run.error}", returncode=1)
