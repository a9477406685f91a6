"""manage.py bootstrap — draft an ontology from the corpus, as proposals."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from kgreview.agents import runs
from kgreview.agents.bootstrap import DEFAULT_SAMPLE, bootstrap_run
from kgreview.agents.management.report import print_run
from kgreview.agents.models import AgentRun
from kgreview.graph.models import Source

SAYS = (
    "{chunks} chunks of {sources} sources read; drafted {drafted_types} types, "
    "{drafted_relation_types} relation types, {drafted_patterns} patterns, "
    "{drafted_attributes} attributes; {queued} new proposals."
)


class Command(BaseCommand):
    help = (
        "Draft an ontology (concept types with their parents, relation types with their "
        "patterns, patterns, attributes) from the sources' chunks and queue what the graph "
        "lacks as proposals, each with its quotes. Nothing is applied until accepted."
    )

    def add_arguments(self, parser):
        parser.add_argument("--sources", nargs="+", metavar="SLUG", default=None)
        parser.add_argument(
            "--sample-chunks",
            type=int,
            default=DEFAULT_SAMPLE,
            dest="sample_chunks",
            help=f"chunks read per document, spread over it (default {DEFAULT_SAMPLE}; 0: all)",
        )
        parser.add_argument("--provider", choices=["offline", "openai"], default="offline")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, sources, sample_chunks: int, provider: str, as_json: bool, **opts):
        if sample_chunks < 0:
            raise CommandError("--sample-chunks cannot be negative (0 reads every chunk).")
        if sources:
            found = set(Source.objects.filter(slug__in=sources).values_list("slug", flat=True))
            missing = [s for s in sources if s not in found]
            if missing:
                raise CommandError(f"No source with the slug {', '.join(missing)}.")
        run = runs.agent_run_create(
            agent=AgentRun.Agent.BOOTSTRAP,
            trigger=AgentRun.Trigger.CLI,
            provider=provider,
            model=settings.KG_LLM_MODEL if provider == "openai" else "",
            params={"sources": sources or [], "sample_chunks": sample_chunks or None},
        )
        run = bootstrap_run(run)
        print_run(self, run, as_json=as_json, name="Bootstrap run", says=SAYS)
