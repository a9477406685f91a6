"""manage.py evaluate --gold FILE — precision and recall of proposals against gold edges."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from construction.evaluate import GoldEdge, ProposedEdge, evaluate
from kgreview.agents.selectors import concept_names_for_evaluation
from kgreview.review.models import Proposal

RELATIONS = {"prerequisite", "builds_on", "part_of", "contrasts_with", "applies_to", "related"}


def load_gold(path: Path) -> list[GoldEdge]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CommandError(f"Cannot read {path}: {exc.strerror}") from None
    gold = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            edge = GoldEdge(
                lesson=row.get("lesson", ""),
                source=row["source"],
                relation=row["relation"],
                target=row["target"],
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise CommandError(f"{path}:{number}: not a gold edge ({exc})") from None
        gold.append(edge)
    if not gold:
        raise CommandError(f"{path} holds no gold edges")
    return gold


def endpoint_names(endpoint: dict, concepts: dict[int, tuple[str, ...]], proposals) -> tuple:
    names = [endpoint.get("name", "")]
    if endpoint.get("concept_id"):
        names += concepts.get(endpoint["concept_id"], ())
    if endpoint.get("proposal_id") and endpoint["proposal_id"] in proposals:
        payload = proposals[endpoint["proposal_id"]]
        names += [payload.get("name", ""), *(payload.get("aliases") or [])]
    if endpoint.get("matched_name"):
        names.append(endpoint["matched_name"])
    return tuple(n for n in names if n)


class Command(BaseCommand):
    help = "Precision and recall of proposed edges against hand-labelled gold edges (JSONL)."

    def add_arguments(self, parser):
        parser.add_argument("--gold", required=True, type=Path)
        parser.add_argument("--run", type=int, action="append", help="only these agent runs")
        parser.add_argument("--json", action="store_true", dest="as_json")
        parser.add_argument(
            "--above-gate", action="store_true", help="only proposals that passed the gate"
        )

    def handle(self, *args, gold: Path, run, as_json: bool, above_gate: bool, **opts):
        gold_edges = load_gold(gold)
        qs = Proposal.objects.filter(kind="add_edge").exclude(status="superseded")
        if run:
            qs = qs.filter(agent_run_id__in=run)
        if above_gate:
            qs = qs.exclude(status="held")
        rows = list(qs.select_related("document").order_by("pk"))
        concepts = concept_names_for_evaluation()
        concept_proposals = dict(
            Proposal.objects.filter(kind="add_concept").values_list("pk", "payload")
        )
        proposed = [
            ProposedEdge(
                id=p.pk,
                lesson=p.document.slug if p.document else "",
                source_names=endpoint_names(p.payload["source"], concepts, concept_proposals),
                relation=p.payload["relation"],
                target_names=endpoint_names(p.payload["target"], concepts, concept_proposals),
                status=p.status,
            )
            for p in rows
        ]
        report = evaluate(gold_edges, proposed).as_json()
        if as_json:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        fmt = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
        self.stdout.write(
            f"precision {fmt(report['precision'])} ({report['correct']}/{report['proposals']})"
            f"  recall {fmt(report['recall'])} ({report['found']}/{report['gold']})"
        )
        for rel, row in report["per_relation"].items():
            self.stdout.write(
                f"  {rel:<16} precision {fmt(row['precision'])} ({row['correct']}/"
                f"{row['proposals']})  recall {fmt(row['recall'])} ({row['found']}/{row['gold']})"
            )
