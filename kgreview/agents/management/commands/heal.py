"""manage.py heal — the self-healing agent: duplicates, cycles, vanished evidence, orphans."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from kgreview.agents import runs, selectors
from kgreview.agents.heal import heal_run
from kgreview.agents.models import AgentRun


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
        report = selectors.run_report(run)
        if as_json:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
        else:
            s = report["run"]
            self.stdout.write(
                self.style.SUCCESS(
                    f"Heal run #{run.pk} {run.status}: {s.get('duplicate_pairs', 0)} duplicate "
                    f"pairs, {s.get('cycles', 0)} cycles, {s.get('evidence_gone', 0)} vanished "
                    f"quotes ({s.get('still_supported', 0)} still supported), "
                    f"{s.get('orphans', 0)} orphan concepts; "
                    f"{len(report['proposals'])} proposals queued."
                )
            )
        if run.status == AgentRun.Status.FAILED:
            raise CommandError(f"Heal run #{run.pk} failed: {run.error}", returncode=1)
