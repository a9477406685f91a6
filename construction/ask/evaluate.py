"""Measuring the ask loop against labelled questions (``manage.py evaluate --questions``).

A question file is JSONL, one labelled question a line::

    {"question": "What should I learn before LoRA?", "family": "prerequisites",
     "concepts": ["Fine-tuning", "Pretraining", ...]}
    {"question": "How is RAG connected to embeddings?", "path": ["RAG", "Embeddings"]}
    {"question": "Is attention a prerequisite for positional encoding?", "yes": false}
    {"question": "What is quantum networking part of?", "status": "not_understood"}

``concepts`` is the answer set a curriculum expert expects, ``path`` the two ends a
found path must join, ``yes`` the answer to a yes/no question, ``status`` the status
expected (``not_understood`` for unknown concepts, ``no_path`` for a checked absence);
``family`` is optional and only groups the report. Names are compared through
``canonical`` (the command maps every name and alias to its concept), so labels may use
any name the graph knows.

Measured: answer-set recall and precision (micro, over set questions), path recall
(expected ends joined by a found path), yes/no accuracy, status accuracy, hop efficiency
(refiner rounds used), determinism (two runs give the same JSON) and latency.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..text import name_key

STATUSES = ("answered", "no_path", "not_understood")


@dataclass(frozen=True)
class LabelledQuestion:
    question: str
    family: str | None = None
    concepts: tuple[str, ...] | None = None
    path: tuple[str, str] | None = None
    yes: bool | None = None
    status: str | None = None

    def as_json(self) -> dict:
        out: dict = {"question": self.question}
        for key in ("family", "concepts", "path", "yes", "status"):
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        return out


def _row(row: dict) -> LabelledQuestion:
    question = row["question"]
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be words")
    concepts = row.get("concepts")
    path = row.get("path")
    yes = row.get("yes")
    status = row.get("status")
    if concepts is not None and not (
        isinstance(concepts, list) and all(isinstance(c, str) for c in concepts)
    ):
        raise ValueError("concepts must be a list of names")
    if path is not None and not (
        isinstance(path, list) and len(path) == 2 and all(isinstance(p, str) for p in path)
    ):
        raise ValueError("path must be two names [start, goal]")
    if yes is not None and not isinstance(yes, bool):
        raise ValueError("yes must be true or false")
    if status is not None and status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}")
    if concepts is None and path is None and yes is None and status is None:
        raise ValueError("label the question with concepts, path, yes or status")
    return LabelledQuestion(
        question=question,
        family=row.get("family"),
        concepts=tuple(concepts) if concepts is not None else None,
        path=(path[0], path[1]) if path is not None else None,
        yes=yes,
        status=status,
    )


def parse_questions(lines: Iterable[str]) -> list[LabelledQuestion]:
    """Labelled questions from JSONL lines; ``ValueError`` naming the line otherwise."""
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("each line is a JSON object")
            out.append(_row(row))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"line {number}: not a labelled question ({exc})") from None
    return out


@dataclass(frozen=True)
class Outcome:
    """One labelled question asked twice: both answers (``Answer.as_json``) and the
    time each took."""

    label: LabelledQuestion
    answer: dict
    again: dict
    ms: tuple[float, ...]


@dataclass
class Tally:
    expected: int = 0
    found: int = 0
    answered: int = 0
    correct: int = 0

    def recall(self) -> float | None:
        return round(self.correct / self.expected, 4) if self.expected else None

    def precision(self) -> float | None:
        return round(self.correct / self.answered, 4) if self.answered else None


@dataclass
class Family:
    questions: int = 0
    passed: int = 0
    sets: Tally = field(default_factory=Tally)
    paths: Tally = field(default_factory=Tally)
    yes: Tally = field(default_factory=Tally)
    status: Tally = field(default_factory=Tally)
    iterations: list[int] = field(default_factory=list)

    def as_json(self) -> dict:
        return {
            "questions": self.questions,
            "passed": self.passed,
            "set_recall": self.sets.recall(),
            "set_precision": self.sets.precision(),
            "path_recall": self.paths.recall(),
            "yes_no_accuracy": self.yes.recall(),
            "status_accuracy": self.status.recall(),
            "iterations_mean": round(sum(self.iterations) / len(self.iterations), 3)
            if self.iterations
            else None,
        }


def _path_joins(answer: dict, ends: tuple[str, str], canonical: Callable[[str], str]) -> bool:
    want = (canonical(ends[0]), canonical(ends[1]))
    for path in answer["answer"]["paths"]:
        if not path:
            continue
        got = (canonical(path[0]["from"]), canonical(path[-1]["to"]))
        if got == want or got == want[::-1]:
            return True
    return False


def _judge(
    outcome: Outcome, family: Family, overall: Family, canonical: Callable[[str], str]
) -> list[str]:
    """Count one outcome into its family and the total; the ways it missed, in words."""
    label, answer = outcome.label, outcome.answer
    misses: list[str] = []
    for tally_of in (family, overall):
        tally_of.questions += 1
        tally_of.iterations.append(int(answer.get("iterations", 0)))
    if label.concepts is not None:
        want = {canonical(c) for c in label.concepts}
        got = {canonical(c) for c in answer["answer"]["concepts"]}
        for t in (family.sets, overall.sets):
            t.expected += len(want)
            t.answered += len(got)
            t.correct += len(want & got)
        if want - got:
            misses.append("missing " + ", ".join(sorted(want - got)))
        if got - want:
            misses.append("not expected " + ", ".join(sorted(got - want)))
    if label.path is not None:
        joined = _path_joins(answer, label.path, canonical)
        for t in (family.paths, overall.paths):
            t.expected += 1
            t.correct += int(joined)
        if not joined:
            misses.append(f"no path joins {label.path[0]} and {label.path[1]}")
    checks = (
        (label.yes, answer.get("yes"), "yes", (family.yes, overall.yes)),
        (label.status, answer.get("status"), "status", (family.status, overall.status)),
    )
    for want_value, got_value, what, tallies in checks:
        if want_value is None:
            continue
        for t in tallies:
            t.expected += 1
            t.correct += int(want_value == got_value)
        if want_value != got_value:
            misses.append(f"{what} {got_value!r}, expected {want_value!r}")
    if not misses:
        family.passed += 1
        overall.passed += 1
    return misses


def _percentile(ordered: Sequence[float], p: float) -> float | None:
    if not ordered:
        return None
    return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 3)


def evaluate_answers(
    outcomes: Sequence[Outcome], *, canonical: Callable[[str], str] = name_key
) -> dict:
    """The report: totals, per family, latency, determinism, and each miss in words."""
    overall = Family()
    families: dict[str, Family] = {}
    misses = []
    deterministic = 0
    for outcome in outcomes:
        name = outcome.label.family or outcome.answer["plan"].get("family") or "none"
        family = families.setdefault(name, Family())
        missed = _judge(outcome, family, overall, canonical)
        if missed:
            misses.append(
                {
                    "question": outcome.label.question,
                    "status": outcome.answer["status"],
                    "message": outcome.answer["message"],
                    "misses": missed,
                }
            )
        same = json.dumps(outcome.answer, sort_keys=True) == json.dumps(
            outcome.again, sort_keys=True
        )
        deterministic += int(same)
    times = sorted(ms for o in outcomes for ms in o.ms)
    rounds = overall.iterations
    return {
        **overall.as_json(),
        "deterministic": round(deterministic / len(outcomes), 4) if outcomes else None,
        "hop_efficiency": {
            "iterations_mean": round(sum(rounds) / len(rounds), 3) if rounds else None,
            "iterations_max": max(rounds, default=0),
            "refined": sum(1 for r in rounds if r > 0),
        },
        "latency_ms": {
            "p50": _percentile(times, 0.50),
            "p95": _percentile(times, 0.95),
            "max": round(times[-1], 3) if times else None,
        },
        "families": {k: families[k].as_json() for k in sorted(families)},
        "misses": misses,
    }
