"""Refit the offline reader's confidence (``construction/linguistic/confidence.py``).

Labelled edges come from the tuning material only: the curriculum lessons in ``corpus/``
(read with the curriculum vocabulary; an edge is right when the lesson's gold holds it)
and the hand labels of the tuning manuals (``evaluation/manuals/{postgresql,python}``,
read with the documentation vocabulary; right when judged fully right). The held-out
lessons and the held-out manual are never read here. Each edge the reader drafts is
matched to its label; the signs it was drafted with (``confidence.SIGNS``) and the label
fit a logistic model, shrunk a little towards no effect. Prints the weights to paste into
``WEIGHTS`` and how right each confidence band was.

    .venv/bin/python -m evaluation.tools.calibrate
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
TUNING_MANUALS = ("postgresql", "python")


def _setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgreview.settings")
    import django

    django.setup()


class NoNames:
    max_words = 6

    def lookup(self, key):
        return None


def _specs(preset: str):
    from construction.types import RelationSpec
    from kgreview.graph.vocabulary_files import load_preset

    return [
        RelationSpec(r.key, r.label, r.verb, r.description, r.symmetric, r.acyclic)
        for r in load_preset(preset).relations
    ]


def _drafted(doc, vocabulary, sections=()) -> list:
    """(candidate, signs) for every edge the reader keeps from one document."""
    from construction.linguistic import reader
    from construction.reading import plan_chunks, read_in_order
    from construction.resolve import InMemoryConceptIndex

    kept: list = []
    original = reader._select

    def select(doc, sentences, drafted, vocabulary, max_edges):
        candidates, used = original(doc, sentences, drafted, vocabulary, max_edges)
        by_edge = {(d.source.name, d.relation, d.target.name): d.signs for d in drafted}
        kept.extend((c, by_edge.get((c.source, c.relation, c.target))) for c in candidates)
        return candidates, used

    reader._select = select
    try:
        extractor = reader.LinguisticExtractor()
        plans = plan_chunks(
            doc, sections=sections, max_tokens=1200, overlap_tokens=60, extractor_key="calibrate"
        )
        read_in_order(
            plans,
            lambda part, known: extractor.extract(
                part, vocabulary=vocabulary, lexicon=known, max_edges=8
            ),
            InMemoryConceptIndex(),
        )
    finally:
        reader._select = original
    return [(c, s) for c, s in kept if s is not None]


def curriculum_rows() -> list[tuple[tuple[float, ...], int]]:
    from construction.documents import parse_front_matter
    from construction.evaluate import GoldEdge, ProposedEdge, matches
    from construction.types import SourceDoc

    folder = ROOT / "corpus"
    gold = [json.loads(x) for x in (folder / "gold.jsonl").read_text().splitlines() if x]
    lessons = {g["lesson"] for g in gold}
    rows = []
    for path in sorted(folder.glob("*.md")):
        meta, body = parse_front_matter(path.read_text())
        slug = meta.get("slug") or path.stem
        if slug not in lessons:
            continue
        doc = SourceDoc(slug, 1, 1, meta.get("title", slug), body)
        for c, values in _drafted(doc, _specs("curriculum")):
            edge = ProposedEdge(0, slug, (c.source,), c.relation, (c.target,))
            right = any(g["lesson"] == slug and matches(GoldEdge(**g), edge) for g in gold)
            rows.append((values, int(right)))
    return rows


def manual_rows(name: str) -> list[tuple[tuple[float, ...], int]]:
    from construction.documents import read_document
    from construction.manual_gold import edge_key, parse_labels
    from construction.types import SourceDoc

    vocabulary = _specs("documentation")
    symmetric = frozenset(s.key for s in vocabulary if s.symmetric)
    folder = ROOT / "evaluation" / "manuals" / name
    labels = parse_labels((folder / "labels.jsonl").read_text().splitlines(), symmetric=symmetric)
    judged = {e.key(symmetric): e for e in labels.edges if e.judged}
    rows = []
    for path in sorted((folder / "pages").iterdir()):
        document = read_document(path.read_bytes(), filename=path.name, max_bytes=10**8)
        from kgreview.graph.importing import slug_for

        doc = SourceDoc(slug_for(document, path.name), 1, 1, document.title, document.text)
        for c, values in _drafted(doc, vocabulary, document.sections):
            key = edge_key(
                path.stem,
                c.evidence,
                c.source,
                c.relation,
                c.target,
                symmetric=c.relation in symmetric,
            )
            if key in judged:
                rows.append((values, int(judged[key].fully_right)))
    return rows


def fit(rows, shrink: float = 1.0) -> np.ndarray:
    x = np.array([[1.0, *r[0]] for r in rows])
    y = np.array([r[1] for r in rows], dtype=float)
    w = np.zeros(x.shape[1])
    penalty = np.diag([0.0] + [shrink] * (x.shape[1] - 1))
    for _ in range(100):
        p = 1 / (1 + np.exp(-x @ w))
        gradient = x.T @ (p - y) + penalty @ w
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + penalty
        w -= np.linalg.solve(hessian, gradient)
    return w


def main() -> None:
    _setup()
    from construction.linguistic.confidence import SIGNS, edge_confidence

    rows = curriculum_rows()
    print(f"curriculum: {len(rows)} labelled edges, {sum(r[1] for r in rows)} right")
    for name in TUNING_MANUALS:
        found = manual_rows(name)
        print(f"{name}: {len(found)} labelled edges, {sum(r[1] for r in found)} right")
        rows += found
    w = fit(rows)
    print("SIGNS =", SIGNS)
    print("WEIGHTS =", tuple(round(float(v), 2) for v in w))
    weights = tuple(float(v) for v in w)
    for lo, hi in ((0.0, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)):
        inside = [r[1] for r in rows if lo <= edge_confidence(r[0], weights) < hi]
        if inside:
            print(
                f"  {lo:.1f}-{hi:.1f}: {len(inside)} edges, {sum(inside) / len(inside):.2f} right"
            )


if __name__ == "__main__":
    main()
