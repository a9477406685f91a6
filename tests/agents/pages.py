"""What the Agents page tests share: clients by role, reading messages off a page, and
runs in each state."""

from __future__ import annotations

import re

from django_celery_beat.models import PeriodicTask

from kgreview.agents.models import AgentRun
from kgreview.agents.runs import agent_run_create, agent_run_finish, agent_run_step
from tests.pages import HOSTILE, HX, client_for, flashes, page

__all__ = ["HOSTILE", "HX", "client_for", "flashes", "page"]

TASKS = {
    "construct": "agents.construct_scheduled",
    "heal": "agents.heal",
    "discover": "agents.discover",
}


def schedule(agent: str) -> PeriodicTask:
    return PeriodicTask.objects.get(task=TASKS[agent])


def heal_run(**kwargs) -> AgentRun:
    return agent_run_create(agent=AgentRun.Agent.HEAL, **kwargs)


def running(run: AgentRun, *, done: int = 1, total: int = 4, **stats) -> AgentRun:
    agent_run_step(run, done=done, total=total, stats=stats or None)
    run.refresh_from_db()
    assert run.status == "running"
    return run


def finished(run: AgentRun, **stats) -> AgentRun:
    return agent_run_finish(run, status=AgentRun.Status.SUCCEEDED, stats=stats)


def run_table_ids(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<td><a href="/agents/runs/\d+/">#(\d+)</a></td>', html)]
