"""The curation log's actions for the agents and a team's graph (``kgreview.core.audit``)."""

from kgreview.core.audit import action

action("agent_run.start", "an agent run started by hand", "agentrun")
action("agent_run.cancel", "an agent run cancelled", "agentrun")
action("schedule.pause", "a schedule paused", "schedule")
action("schedule.resume", "a schedule resumed", "schedule")
action("schedule.run", "a scheduled task run by hand", "schedule")
action("graph.start", "a team's graph started", "graph")
action("user.create", "an account created", "user")
