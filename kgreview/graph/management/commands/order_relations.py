"""manage.py order_relations [KEY...] — rebuild the topological order of acyclic relations."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from kgreview.graph.models import RelationType
from kgreview.graph.order import edges_out_of_order, rebuild_orders


class Command(BaseCommand):
    help = (
        "Rebuild the topological order of the acyclic relations (all, or those named by "
        "key) from their active edges. The cycle check of a new edge leans on it; a "
        "relation whose edges were written past the graph services, or held a cycle, is "
        "checked without it until rebuilt. Each relation is rebuilt holding its row lock, "
        "so its edges wait meanwhile (seconds for a million edges). A relation that still "
        "holds a cycle stays unordered: `manage.py heal` proposes what to invalidate."
    )

    def add_arguments(self, parser):
        parser.add_argument("keys", nargs="*", metavar="KEY")
        parser.add_argument("--json", action="store_true", help="print one JSON document")
        parser.add_argument(
            "--check",
            action="store_true",
            help="only report the edges of ordered relations that run against their order "
            "(none, unless edges were written past the services); exit status 1 if any",
        )

    def handle(self, *args, keys, **opts):
        ids = None
        if keys:
            found = dict(RelationType.objects.filter(key__in=keys).values_list("key", "pk"))
            unknown = sorted(set(keys) - set(found))
            if unknown:
                raise CommandError(f"No relation type {', '.join(unknown)}.")
            ids = list(found.values())
        if opts["check"]:
            return self._check(ids, as_json=opts["json"])
        result = rebuild_orders(ids)
        if opts["json"]:
            self.stdout.write(json.dumps({"ordered": result}))
            return
        if not result:
            self.stdout.write("No acyclic relation to order.")
        for key, ordered in sorted(result.items()):
            words = "ordered" if ordered else "holds a cycle: checked without an order"
            self.stdout.write(f"{key}: {words}")

    def _check(self, ids, *, as_json: bool) -> None:
        relations = RelationType.objects.filter(acyclic=True).order_by("key")
        if ids is not None:
            relations = relations.filter(pk__in=ids)
        found = {r.key: edges_out_of_order(r.pk) if r.ordered else None for r in relations}
        if as_json:
            self.stdout.write(json.dumps({"out_of_order": found}))
        else:
            for key, edges in found.items():
                words = (
                    "unordered (checked without an order)"
                    if edges is None
                    else f"{len(edges)} edge(s) out of order"
                    if edges
                    else "in order"
                )
                self.stdout.write(f"{key}: {words}")
        if any(found.values()):
            raise SystemExit(1)
