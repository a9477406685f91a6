"""manage.py heal — the self-healing agent: duplicates, cycles, vanished evidence, orphans."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from kgreview.agents import runs
from kgreview.agents.heal import heal_run
from kgreview.agents.management.report import print_run
from kgreview.agents.models import AgentRun

SAYS = (
    "{duplicate_pairs} duplicate pairs, {cycles} cycles, {evidence_gone} vanished quotes "
    "({still_supported} still supported), {orphans} orphan concepts; {queued} proposals queued."
)


class Command(BaseCommand):
    help = (
        "Look for duplicate concepts, cycles in acyclic relations and evidence that vanished "
        "from its source; queue merge and invalidation proposals for people to decide."
    )

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, as_json: bool, **opts):
        run = runs.agent_run_create(agent=AgentRun.Agent.HEAL, trigger=AgentRun.Trigger.CLI)
        run = heal_run(run)
        print_run(self, run, as_json=as_json, name="Heal run", says=SAYS)
