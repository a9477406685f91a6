"""What the Agents page tests share: clients by role, reading messages off a page, and
runs in each state."""

from __future__ import annotations

import html as htmllib
import re

from django.test import Client
from django_celery_beat.models import PeriodicTask

from kgreview.agents.models import AgentRun
from kgreview.agents.runs import agent_run_create, agent_run_finish, agent_run_step

HX = {"HX-Request": "true"}
HOSTILE = "<script>alert(1)</script>"
TASKS = {
    "construct": "agents.construct_scheduled",
    "heal": "agents.heal",
    "discover": "agents.discover",
}


def client_for(f, role: str | None) -> Client:
    """A client signed in with ``role`` ("anonymous": not signed in; None: no role)."""
    client = Client()
    if role != "anonymous":
        client.force_login(f.user(role=role))
    return client


def page(response) -> str:
    return response.content.decode()


def flashes(response) -> list[tuple[str, str]]:
    """The messages shown on a page, as (level, text) with the HTML entities decoded."""
    found = re.findall(r'<li class="msg-(\w+)">(.*?)</li>', page(response), re.S)
    return [(level, htmllib.unescape(text)) for level, text in found]


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
