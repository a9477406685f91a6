"""manage.py construct — run the construction agent over sources."""

from __future__ import annotations

import json
import os

from django.core.management.base import BaseCommand, CommandError

from kgreview.agents import construct, selectors
from kgreview.agents.models import AgentRun
from kgreview.agents.tasks import construct_run
from kgreview.core.progress import progress_bar
from kgreview.graph.models import Source


class Command(BaseCommand):
    help = (
        "Read sources, draft edges with evidence, and queue what survives verification as "
        "proposals. Unchanged revisions already read by the same extractor cost nothing."
    )

    def add_arguments(self, parser):
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--source", action="append", metavar="SLUG", dest="slugs")
        which.add_argument("--all", action="store_true", help="every active source (default)")
        parser.add_argument("--provider", choices=["offline", "rules", "openai"], default=None)
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print one JSON document"
        )
        parser.add_argument(
            "--reverify",
            action="store_true",
            help="re-run search/verify/construct on revisions already read (no new LLM calls)",
        )
        parser.add_argument(
            "--queue",
            action="store_true",
            help="hand the run to the Celery workers instead of running it here",
        )

    def handle(self, *args, slugs, provider, as_json: bool, reverify, queue, **opts):
        sources = None
        if slugs:
            found = {s.slug: s for s in Source.objects.filter(slug__in=slugs)}
            missing = [s for s in slugs if s not in found]
            if missing:
                raise CommandError(f"No source with slug: {', '.join(missing)}")
            sources = [found[s] for s in dict.fromkeys(slugs)]
        try:
            run = construct.construct_run_create(
                sources=sources,
                provider=provider,
                trigger=AgentRun.Trigger.CLI,
                params={"reverify": reverify, "slugs": slugs or []},
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if queue:
            construct_run.delay(run_id=run.pk)
            self._print(run, json_out=as_json, queued=True)
            return
        claim = f"cli:{os.getpid()}:{run.pk}"
        item_ids = list(run.items.order_by("pk").values_list("pk", flat=True))
        with progress_bar(self.stdout, "Reading", enabled=not as_json) as advance:
            for done, item_id in enumerate(item_ids, start=1):
                item = construct.construct_item_run(item_id=item_id, claim=claim, reverify=reverify)
                advance(done, len(item_ids), item.source.slug)
                if not as_json:
                    chunks = (item.stats or {}).get("chunks")
                    read = f" ({chunks} chunks)" if chunks and chunks > 1 else ""
                    self.stdout.write(f"{item.status:>9}  {item.source.slug}{read}")
        run.refresh_from_db()
        self._print(run, json_out=as_json)
        if run.status == AgentRun.Status.FAILED:
            raise CommandError(f"Run #{run.pk} failed: {run.error}", returncode=1)

    def _print(self, run, *, json_out: bool, queued: bool = False) -> None:
        report = selectors.run_report(run)
        if json_out:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        if queued:
            self.stdout.write(
                f"Run #{run.pk} queued for the workers ({run.progress_total} sources)."
            )
            return
        stats = report["run"]
        kinds = ", ".join(
            f"{n} {kind}"
            for kind, by_status in stats.get("proposals", {}).items()
            for n in [sum(by_status.values())]
        )
        dropped = ", ".join(f"{n} {r}" for r, n in sorted(stats.get("dropped", {}).items()))
        self.stdout.write(
            self.style.SUCCESS(
                f"Run #{run.pk} {run.status}: {stats['processed']} read, "
                f"{stats['unchanged']} unchanged, {stats['failed']} failed; "
                f"proposals: {kinds or 'none'}; dropped: {dropped or 'none'}; "
                f"LLM calls: {stats['llm']['calls']}, tokens: {stats['llm']['total_tokens']}."
            )
        )
        for error in stats["errors"]:
            self.stderr.write(self.style.ERROR(f"  {error['source']}: {error['error']}"))
