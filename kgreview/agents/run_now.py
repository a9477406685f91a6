"""Run an agent now, by hand: the one service behind the Agents page's "Run now" and the
admin's "Run selected tasks" on an agent's schedule.

The run is recorded as triggered by hand (``manual``) and requested by the person, with a
curation-log row (``runs.run_start_record``); then its task is queued. A broker that
refuses the task leaves the run failed with the reason in words, never queued forever.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import tasks
from .adapters import extractor_for
from .construct import construct_run_create, sources_to_construct
from .models import AgentRun
from .runs import agent_run_create, agent_run_not_queued

if TYPE_CHECKING:
    from django.contrib.auth.models import User

log = logging.getLogger(__name__)

#: The task each agent's schedule runs, and back.
SCHEDULE_TASKS = {
    AgentRun.Agent.CONSTRUCT: "agents.construct_scheduled",
    AgentRun.Agent.HEAL: "agents.heal",
    AgentRun.Agent.DISCOVER: "agents.discover",
}
AGENT_OF_TASK = {task: agent for agent, task in SCHEDULE_TASKS.items()}


@dataclass(frozen=True)
class RunNow:
    """What "Run now" did: the run (None when there was nothing to do), whether its task
    was queued, and the words to tell the person."""

    run: AgentRun | None
    queued: bool
    words: str


def agent_run_now(*, agent: str, acting_user: User | None, every_source: bool = False) -> RunNow:
    """Start a run of ``agent`` by hand for ``acting_user`` (a curator: the run is theirs
    and the curation log says so). Construction reads the sources no agent has read yet,
    or ``every_source``; with nothing new it starts no run."""
    label = AgentRun.Agent(agent).label
    if agent == AgentRun.Agent.CONSTRUCT:
        sources = sources_to_construct(extractor_for(None))
        if not sources and not every_source:
            return RunNow(
                None, False, "Nothing new to read: every source's current revision was read."
            )
        run = construct_run_create(
            sources=None if every_source else sources,
            trigger=AgentRun.Trigger.MANUAL,
            acting_user=acting_user,
        )
        task = tasks.construct_run
    else:
        run = agent_run_create(
            agent=agent, trigger=AgentRun.Trigger.MANUAL, acting_user=acting_user
        )
        task = tasks.heal if agent == AgentRun.Agent.HEAL else tasks.discover
    try:
        task.delay(run_id=run.pk)
    except Exception as exc:  # any broker failure: said in words, the run not left queued
        log.exception("run now: the broker refused %s run #%s", agent, run.pk)
        reason = f"the task queue refused it ({exc.__class__.__name__}: {exc})."
        agent_run_not_queued(run_id=run.pk, reason=reason)
        return RunNow(
            run,
            False,
            f"{label} run #{run.pk} could not be started: {reason} The run is marked "
            "failed; try again once the worker's broker is reachable.",
        )
    return RunNow(run, True, f"{label} run #{run.pk} queued.")


def bootstrap_now(*, acting_user: User | None, sample_chunks: int | None) -> RunNow:
    """Start an ontology bootstrap by hand for ``acting_user`` (a curator: audited), over
    every active source, ``sample_chunks`` chunks of each (None: every chunk)."""
    run = agent_run_create(
        agent=AgentRun.Agent.BOOTSTRAP,
        trigger=AgentRun.Trigger.MANUAL,
        acting_user=acting_user,
        provider="offline",
        params={"sample_chunks": sample_chunks},
    )
    try:
        tasks.bootstrap.delay(run_id=run.pk)
    except Exception as exc:  # any broker failure: said in words, the run not left queued
        log.exception("bootstrap: the broker refused run #%s", run.pk)
        reason = f"the task queue refused it ({exc.__class__.__name__}: {exc})."
        agent_run_not_queued(run_id=run.pk, reason=reason)
        return RunNow(run, False, f"Bootstrap run #{run.pk} could not be started: {reason}")
    return RunNow(run, True, f"Bootstrap run #{run.pk} queued.")
