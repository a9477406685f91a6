"""manage.py evaluate --gold FILE — precision and recall of proposals against gold edges;
manage.py evaluate --questions FILE — the ask loop against labelled questions;
manage.py evaluate --manual DIR — the proposals drafted from a manual, against its index
and its hand labels (``--sample N --out FILE`` writes a sample to label)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from construction.ask.evaluate import Outcome, evaluate_answers, parse_questions
from construction.evaluate import GoldEdge, ProposedEdge, evaluate
from construction.manual_eval import NameProposal, draw_sample, measure, report_lines
from construction.text import name_key
from kgreview.agents.manual_evaluation import (
    concept_proposals,
    edge_proposals,
    imported_pages,
    load_manual,
)
from kgreview.agents.selectors import concept_names_for_evaluation
from kgreview.core.errors import DomainError
from kgreview.core.instants import parse_instant
from kgreview.graph.asking import PROVIDERS, ask_graph
from kgreview.graph.selectors import concepts_for_names
from kgreview.review.kinds.add_concept import AddConceptKind
from kgreview.review.kinds.add_edge import AddEdgeKind
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


def ask_outcomes(labels, *, at, provider: str) -> list[Outcome]:
    """Ask every labelled question twice (determinism), timing each answer."""
    outcomes = []
    for label in labels:
        runs, times = [], []
        for _ in range(2):
            started = time.perf_counter()
            try:
                runs.append(ask_graph(label.question, at=at, provider=provider).as_json())
            except DomainError as exc:
                raise CommandError(f"{label.question!r}: {exc.message}") from None
            times.append((time.perf_counter() - started) * 1000)
        outcomes.append(Outcome(label=label, answer=runs[0], again=runs[1], ms=tuple(times)))
    return outcomes


def canonical_names(outcomes: list[Outcome]):
    """Every name the labels and answers use, mapped to its concept (names, aliases and
    merged-away names alike); a name the graph does not know keeps its own key."""
    names = set()
    for o in outcomes:
        names.update(o.label.concepts or ())
        names.update(o.label.path or ())
        names.update(o.answer["answer"]["concepts"])
        for path in o.answer["answer"]["paths"]:
            names.update(step[end] for step in path for end in ("from", "to"))
    found = concepts_for_names(sorted(names))
    table = {n: (found[n].name if n in found else n) for n in names}
    return lambda name: name_key(table.get(name, name))


class Command(BaseCommand):
    help = (
        "Precision and recall of proposed edges against hand-labelled gold edges (--gold "
        "FILE, JSONL), or the ask loop against labelled questions (--questions FILE, JSONL: "
        "answer-set recall and precision, path recall, yes/no accuracy, refiner rounds, "
        "determinism over two runs, latency), or the proposals drafted from a manual of "
        "evaluation/manuals/ (--manual DIR: term precision and recall against its index, "
        "edge ends, yield per page, precision on its hand labels above and below the gate; "
        "with --sample N --out FILE, a random sample of the proposals to label by hand)."
    )

    def add_arguments(self, parser):
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--gold", type=Path)
        what.add_argument("--questions", type=Path)
        what.add_argument("--manual", type=Path, help="a folder of evaluation/manuals/")
        parser.add_argument("--run", type=int, action="append", help="only these agent runs")
        parser.add_argument("--json", action="store_true", dest="as_json")
        parser.add_argument(
            "--above-gate", action="store_true", help="only proposals that passed the gate"
        )
        parser.add_argument(
            "--provider", choices=PROVIDERS, default="offline", help="questions: the planner"
        )
        parser.add_argument("--as-of", default=None, help="questions: the graph at this instant")
        parser.add_argument(
            "--sample", type=int, default=None, help="manual: edge proposals to sample"
        )
        parser.add_argument(
            "--names",
            type=int,
            default=None,
            help="manual: concept names to sample (default: one and a half times --sample)",
        )
        parser.add_argument("--seed", type=int, default=24, help="manual: the sample's seed")
        parser.add_argument(
            "--out", type=Path, default=None, help="manual: where the sample's labels go"
        )
        parser.add_argument(
            "--labels", type=Path, default=None, help="manual: labels (default DIR/labels.jsonl)"
        )

    def handle(self, *args, gold: Path | None, questions: Path | None, manual=None, **opts):
        if manual is not None:
            return self.handle_manual(manual, **opts)
        if questions is not None:
            return self.handle_questions(questions, **opts)
        return self.handle_gold(gold, **opts)

    def handle_questions(self, path: Path, *, as_json: bool, provider: str, as_of, **opts):
        try:
            labels = parse_questions(path.read_text(encoding="utf-8").splitlines())
            at = parse_instant(as_of) if as_of else None
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}") from None
        except ValueError as exc:
            raise CommandError(f"{path}: {exc}") from None
        except DomainError as exc:
            raise CommandError(f"--as-of: {exc.message}") from None
        if not labels:
            raise CommandError(f"{path} holds no labelled questions")
        outcomes = ask_outcomes(labels, at=at, provider=provider)
        report = evaluate_answers(outcomes, canonical=canonical_names(outcomes))
        if as_json:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        self.stdout.write("\n".join(question_lines(report)))

    def handle_gold(self, gold: Path, *, run, as_json: bool, above_gate: bool, **opts):
        gold_edges = load_gold(gold)
        qs = Proposal.objects.filter(kind=AddEdgeKind.key).exclude(status="superseded")
        if run:
            qs = qs.filter(origin__agent_run__in=run)
        if above_gate:
            qs = qs.exclude(status="held")
        rows = list(qs.select_related("document").order_by("pk"))
        concepts = concept_names_for_evaluation()
        concept_proposals = dict(
            Proposal.objects.filter(kind=AddConceptKind.key).values_list("pk", "payload")
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

    def handle_manual(
        self, folder: Path, *, as_json: bool, sample, names, seed, out, labels, **opts
    ):
        try:
            manual = load_manual(folder, labels_path=labels)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        edges = edge_proposals(manual)
        concepts = concept_proposals(manual)
        if sample is not None or out is not None:
            return self.write_sample(manual, edges, concepts, sample, names, seed, out)
        pages = imported_pages(manual)
        if not pages:
            raise CommandError(
                f"None of the pages of {folder} is imported in this database: run "
                f"`manage.py import_sources {folder / 'pages'}` and `construct` first."
            )
        report = measure(
            manual.gold,
            pages,
            edges,
            [c.name for c in concepts],
            manual.labels,
            symmetric=manual.symmetric,
        )
        report = {"manual": str(folder), **report}
        if as_json:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        self.stdout.write("\n".join(report_lines(report)))

    def write_sample(self, manual, edges, concepts, sample, names, seed, out):
        if sample is None or out is None:
            raise CommandError("--sample N and --out FILE go together.")
        if sample < 0 or (names is not None and names < 0):
            raise CommandError("--sample and --names cannot be negative.")
        ends = [
            NameProposal(name=n, page=e.page, quote=e.quote)
            for e in edges
            for n in (e.source, e.target)
        ]
        merged, blanks = draw_sample(
            edges,
            [*concepts, *ends],
            manual.labels,
            edge_count=sample,
            name_count=names if names is not None else sample * 3 // 2,
            seed=seed,
            symmetric=manual.symmetric,
        )
        try:
            with open(out, "w", encoding="utf-8") as fh:
                for row in merged.rows():
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        except OSError as exc:
            raise CommandError(f"Cannot write {out}: {exc.strerror}") from None
        self.stdout.write(
            f"Wrote {out}: {len(merged.edges)} edge and {len(merged.names)} name labels, "
            f"{blanks} of them new and waiting for a judgement (see evaluation/LABELLING.md)."
        )


def question_lines(report: dict) -> list[str]:
    fmt = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
    lat = report["latency_ms"]
    hops = report["hop_efficiency"]
    lines = [
        f"questions {report['questions']}  passed {report['passed']}",
        f"set recall {fmt(report['set_recall'])}  set precision {fmt(report['set_precision'])}"
        f"  path recall {fmt(report['path_recall'])}  yes/no accuracy "
        f"{fmt(report['yes_no_accuracy'])}  status accuracy {fmt(report['status_accuracy'])}",
        f"refiner rounds mean {hops['iterations_mean']} max {hops['iterations_max']}"
        f" (refined {hops['refined']})  deterministic {fmt(report['deterministic'])}"
        f"  latency p50 {lat['p50']} ms p95 {lat['p95']} ms",
    ]
    for name, row in report["families"].items():
        lines.append(
            f"  {name:<14} {row['passed']}/{row['questions']} passed  set recall "
            f"{fmt(row['set_recall'])} precision {fmt(row['set_precision'])}  path recall "
            f"{fmt(row['path_recall'])}  yes/no {fmt(row['yes_no_accuracy'])}"
        )
    for miss in report["misses"]:
        lines.append(f"  miss: {miss['question']} — {'; '.join(miss['misses'])}")
    return lines
