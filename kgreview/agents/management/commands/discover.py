"""manage.py discover — ontology discovery from relations the vocabulary lacks."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from kgreview.agents import runs
from kgreview.agents.discover import discover_run
from kgreview.agents.management.report import print_run
from kgreview.agents.models import AgentRun

SAYS = (
    "{dropped_unknown} dropped candidates with unknown relations, {drafts} recurring, "
    "{relation_proposals} new relation-type proposals."
)


class Command(BaseCommand):
    help = (
        "Aggregate candidates dropped for an unknown relation; when one recurs across "
        "sources, queue an add_relation_type proposal (named by a model with --provider "
        "openai)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--provider", choices=["offline", "openai"], default="offline")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, provider: str, as_json: bool, **opts):
        run = runs.agent_run_create(
            agent=AgentRun.Agent.DISCOVER, trigger=AgentRun.Trigger.CLI, provider=provider
        )
        run = discover_run(run, provider=provider)
        print_run(self, run, as_json=as_json, name="Discover run", says=SAYS)
