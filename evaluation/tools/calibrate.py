"""Refit the offline reader's confidence (``construction/linguistic/confidence.py``).

Reads the curriculum lessons in ``corpus/`` (the tuning set; the held-out lessons in
``evaluation/heldout`` are never read here) with the curriculum vocabulary, labels each
candidate right when the lesson's gold holds the same edge, and fits a logistic model of
rightness on the cue's strength and the two sides' termhood, with a little L2 shrinkage
(few examples). Prints the weights to paste into ``WEIGHTS`` and a reliability table.

    .venv/bin/python evaluation/tools/calibrate.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from construction.documents import parse_front_matter  # noqa: E402
from construction.evaluate import GoldEdge, ProposedEdge, matches  # noqa: E402
from construction.linguistic import reader as reading  # noqa: E402
from construction.types import RelationSpec, SourceDoc  # noqa: E402

CURRICULUM = [
    RelationSpec("prerequisite", "prerequisite", "is a prerequisite for", "", False, True),
    RelationSpec("builds_on", "builds on", "builds on", "", False, True),
    RelationSpec("part_of", "part of", "is part of", "", False, True),
    RelationSpec("contrasts_with", "contrasts with", "contrasts with", "", True, False),
    RelationSpec("applies_to", "applies to", "applies to", "", False, False),
    RelationSpec("related", "related to", "is related to", "", True, False),
]


class NoNames:
    max_words = 6

    def lookup(self, key):
        return None


def examples(folder: Path) -> list[tuple[list[float], int]]:
    """(features, right) for every edge the reader drafts from the gold's lessons."""
    gold = [json.loads(line) for line in (folder / "gold.jsonl").read_text().splitlines() if line]
    lessons = {g["lesson"] for g in gold}
    rows: list[tuple[list[float], int]] = []
    seen: list = []

    def keep(terms, index, doc, found, places):
        draft = original(terms, index, doc, found, places)
        if draft is not None:
            seen.append((found.confidence, draft))
        return draft

    original = reading._draft
    reading._draft = keep
    try:
        for path in sorted(folder.glob("*.md")):
            meta, body = parse_front_matter(path.read_text())
            slug = meta.get("slug") or path.stem
            if slug not in lessons:
                continue
            seen.clear()
            doc = SourceDoc(slug, 1, 1, meta.get("title", slug), body)
            reading.LinguisticExtractor().extract(
                doc, vocabulary=CURRICULUM, lexicon=NoNames(), max_edges=100
            )
            for cue, draft in seen:
                edge = ProposedEdge(
                    0, slug, (draft.source.name,), draft.relation, (draft.target.name,)
                )
                right = any(g["lesson"] == slug and matches(GoldEdge(**g), edge) for g in gold)
                low, high = sorted((draft.source.score, draft.target.score))
                rows.append(([1.0, cue, low, high], int(right)))
    finally:
        reading._draft = original
    return rows


def fit(rows, shrink: float = 1.0) -> np.ndarray:
    x = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows], dtype=float)
    w = np.zeros(x.shape[1])
    penalty = np.diag([0.0] + [shrink] * (x.shape[1] - 1))
    for _ in range(50):
        p = 1 / (1 + np.exp(-x @ w))
        gradient = x.T @ (p - y) + penalty @ w
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + penalty
        w -= np.linalg.solve(hessian, gradient)
    return w


def main() -> None:
    rows = examples(ROOT / "corpus")
    w = fit(rows)
    print(f"{len(rows)} drafted edges, {sum(r[1] for r in rows)} right")
    print("WEIGHTS =", tuple(round(float(v), 2) for v in w))
    x = np.array([r[0] for r in rows])
    p = 1 / (1 + np.exp(-x @ w))
    for lo, hi in ((0, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)):
        inside = [(pi, r[1]) for pi, r in zip(p, rows, strict=True) if lo <= pi < hi]
        if inside:
            right = sum(y for _, y in inside) / len(inside)
            print(f"  confidence {lo:.1f}-{hi:.1f}: {len(inside)} edges, {right:.2f} right")


if __name__ == "__main__":
    main()
