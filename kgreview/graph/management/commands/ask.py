"""manage.py ask "QUESTION" — answer a question from the graph, with the path's evidence,
the plan and the critique."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from kgreview.core.errors import DomainError
from kgreview.core.instants import parse_instant
from kgreview.graph.asking import PROVIDERS, ask_graph


def answer_lines(data: dict) -> list[str]:
    """The answer (``Answer.as_json``) as lines of text: the message, the concepts, each
    hop with its quote and source, then the plan and the critique."""
    lines = [data["message"]]
    concepts = data["answer"]["concepts"]
    if concepts:
        lines += ["", "Concepts:"] + [f"  {i}. {name}" for i, name in enumerate(concepts, 1)]
    for number, path in enumerate(data["answer"]["paths"], 1):
        lines += ["", f"Path {number}:" if len(data["answer"]["paths"]) > 1 else "Path:"]
        for hop in path:
            cited = hop["source_slug"] + (f" r{hop['revision']}" if hop["revision"] else "")
            lines.append(
                f"  {hop['source']} —{hop['relation']}→ {hop['target']}  (edge {hop['edge']})"
            )
            if hop["quote"]:
                lines.append(f"      “{hop['quote']}” — {cited}")
    plan = data["plan"]
    found = ", ".join(f"{c['said']} → {c['name']} ({c['match']})" for c in plan["concepts"])
    walks = ", ".join(f"{w['relation']} {w['direction']}" for w in plan["walks"])
    lines += [
        "",
        f"Plan ({plan['planner']}): family {plan['family'] or 'none'}"
        + (f"; concepts {found}" if found else "")
        + (f"; unknown {', '.join(plan['unknown'])}" if plan["unknown"] else "")
        + (f"; walks {walks}" if walks else "")
        + f"; hops {plan['hops']}",
    ]
    if plan["note"]:
        lines.append(f"  {plan['note']}")
    lines.append(f"Critique ({data['iterations']} round{'s' if data['iterations'] != 1 else ''}):")
    lines += [f"  - {c}" for c in data["critique"]] or ["  (none)"]
    return lines


class Command(BaseCommand):
    help = (
        "Ask the graph a question: what to learn before X, what depends on X, what is "
        "part of X, what X is part of, contrasts with or is used for, how X is connected "
        "to Y, or whether X is a <relation> of Y. Prints the answer with each hop's "
        "evidence, the plan and the critique (--json: the stable JSON shape)."
    )

    def add_arguments(self, parser):
        parser.add_argument("question")
        parser.add_argument(
            "--provider",
            choices=PROVIDERS,
            default=None,
            help="planner and critic (default KG_ASK_PROVIDER, else offline)",
        )
        parser.add_argument(
            "--as-of", default=None, help="answer from the graph as it stood then (ISO 8601)"
        )
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, question: str, provider, as_of, as_json: bool, **opts):
        try:
            at = parse_instant(as_of) if as_of is not None else None
            answer = ask_graph(question, at=at, provider=provider)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        data = answer.as_json()
        if as_json:
            self.stdout.write(json.dumps(data, indent=2, ensure_ascii=False))
            return
        self.stdout.write("\n".join(answer_lines(data)))
