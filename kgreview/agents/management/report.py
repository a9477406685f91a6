"""How the agents' commands end a run: its report as one JSON document or one line of
words, and a failed run failing the command (exit status 1) with the run's error."""

from __future__ import annotations

import json
from collections.abc import Callable

from django.core.management.base import BaseCommand, CommandError

from kgreview.agents import selectors
from kgreview.agents.models import AgentRun


def print_run(
    command: BaseCommand,
    run: AgentRun,
    *,
    as_json: bool,
    words: Callable[[dict], str],
    name: str = "Run",
) -> None:
    """Print ``run``'s report (``words(report)`` unless ``as_json``); raise ``CommandError``
    when the run failed, naming it "``name`` #id"."""
    report = selectors.run_report(run)
    if as_json:
        command.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        command.stdout.write(command.style.SUCCESS(words(report)))
    if run.status == AgentRun.Status.FAILED:
        raise CommandError(f"{name} #{run.pk} failed: {run.error}", returncode=1)
