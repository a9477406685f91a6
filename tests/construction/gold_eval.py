"""Score the offline extractor against the hand-labelled edges in corpus/gold.jsonl.

Run with ``.venv/bin/python -m tests.construction.gold_eval``. Lessons are read in file
order and each one sees, as its lexicon, the concepts that earlier lessons produced, the
way a run over the whole curriculum would. Only lessons that have gold edges are scored,
and only candidates whose relation is in the vocabulary (the others never reach the
queue: they are dropped as unknown relations and feed ontology discovery).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from construction.evaluate import GoldEdge, ProposedEdge
from construction.evaluate import matches as gold_matches
from construction.offline import OfflineExtractor
from construction.text import name_key, split_abbreviation
from construction.types import Candidate, IndexEntry, RelationSpec, SourceDoc

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
MAX_EDGES = 8
VOCABULARY = (
    RelationSpec("prerequisite", "Prerequisite", "is a prerequisite for", "", False, True),
    RelationSpec("builds_on", "Builds on", "builds on", "", False, True),
    RelationSpec("part_of", "Part of", "is part of", "", False, True),
    RelationSpec("contrasts_with", "Contrasts with", "contrasts with", "", True, False),
    RelationSpec("applies_to", "Applies to", "applies to", "", False, False),
    RelationSpec("related", "Related", "is related to", "", True, False),
)


@dataclass
class GrowingLexicon:
    """Names of concepts proposed by earlier lessons, keyed like the real index."""

    entries: dict[str, IndexEntry] = field(default_factory=dict)
    longest: int = 0

    def lookup(self, key: str) -> IndexEntry | None:
        return self.entries.get(key)

    @property
    def max_words(self) -> int:
        return self.longest

    def add(self, name: str, aliases: tuple[str, ...]) -> None:
        long, short = split_abbreviation(name)
        for alias in {name, long, *(a for a in (short,) if a), *aliases}:
            key = name_key(alias)
            if key and key not in self.entries:
                self.entries[key] = IndexEntry(name=alias, canonical=name, key=f"n:{key}")
                self.longest = max(self.longest, len(key.split()))


def read_lesson(path: Path) -> SourceDoc:
    """Front matter between ``---`` lines gives the slug; the body is the text."""
    raw = path.read_text()
    lines = raw.splitlines()
    slug, title, body = path.stem, path.stem, raw
    if lines and lines[0].strip() == "---":
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        for line in lines[1:end]:
            if line.startswith("slug:"):
                slug = line.split(":", 1)[1].strip()
            elif line.startswith("title:"):
                title = line.split(":", 1)[1].strip()
        body = "\n".join(lines[end + 1 :]).strip() + "\n"
    return SourceDoc(slug=slug, revision_id=0, revision_number=1, title=title, text=body)


def matches(candidate: Candidate, gold: dict) -> bool:
    """The project's own matching rule (construction.evaluate), on one candidate."""
    return gold_matches(
        GoldEdge(gold["lesson"], gold["source"], gold["relation"], gold["target"]),
        ProposedEdge(
            0, gold["lesson"], (candidate.source,), candidate.relation, (candidate.target,)
        ),
    )


def evaluate(verbose: bool = True) -> dict:
    gold: dict[str, list[dict]] = defaultdict(list)
    for line in (CORPUS / "gold.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            gold[row["lesson"]].append(row)
    extractor = OfflineExtractor()
    lexicon = GrowingLexicon()
    vocab = {spec.key for spec in VOCABULARY}
    totals = {"tp": 0, "fp": 0, "fn": 0, "discovery": 0}
    per_relation: dict[str, dict[str, int]] = defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0})
    for path in sorted(CORPUS.glob("*.md")):
        doc = read_lesson(path)
        result = extractor.extract(doc, vocabulary=VOCABULARY, lexicon=lexicon, max_edges=MAX_EDGES)
        for concept in result.concepts:
            lexicon.add(concept.name, concept.aliases)
        if doc.slug not in gold:
            continue
        proposals = [c for c in result.candidates if c.relation in vocab]
        totals["discovery"] += len(result.candidates) - len(proposals)
        expected = gold[doc.slug]
        hit = [any(matches(c, g) for g in expected) for c in proposals]
        found = [any(matches(c, g) for c in proposals) for g in expected]
        for c, ok in zip(proposals, hit, strict=True):
            per_relation[c.relation]["tp" if ok else "fp"] += 1
        for g, ok in zip(expected, found, strict=True):
            if not ok:
                per_relation[g["relation"]]["fn"] += 1
        totals["tp"] += sum(hit)
        totals["fp"] += len(hit) - sum(hit)
        totals["fn"] += len(found) - sum(found)
        if verbose:
            print(
                f"\n== {doc.slug}: {sum(hit)}/{len(proposals)} correct, "
                f"{sum(found)}/{len(expected)} found"
            )
            for c, ok in zip(proposals, hit, strict=True):
                if not ok:
                    print(f"  FP {c.source} -[{c.relation}]-> {c.target}  ({c.confidence})")
            for g, ok in zip(expected, found, strict=True):
                if not ok:
                    print(f"  MISS {g['source']} -[{g['relation']}]-> {g['target']}")
            for c in result.candidates:
                if c.relation not in vocab:
                    print(f"  (discovery) {c.source} -[{c.relation}]-> {c.target}")
    precision = totals["tp"] / max(1, totals["tp"] + totals["fp"])
    recall = totals["tp"] / max(1, totals["tp"] + totals["fn"])
    if verbose:
        print(
            f"\nprecision {precision:.3f}  recall {recall:.3f}  "
            f"(tp {totals['tp']}, fp {totals['fp']}, fn {totals['fn']})"
        )
        strict = totals["tp"] / max(1, totals["tp"] + totals["fp"] + totals["discovery"])
        print(
            f"  counting the {totals['discovery']} discovery-label candidates as wrong too: "
            f"precision {strict:.3f}"
        )
        for relation in sorted(per_relation):
            n = per_relation[relation]
            p = n["tp"] / max(1, n["tp"] + n["fp"])
            r = n["tp"] / max(1, n["tp"] + n["fn"])
            print(
                f"  {relation:15} precision {p:.2f}  recall {r:.2f}  "
                f"(tp {n['tp']}, fp {n['fp']}, fn {n['fn']})"
            )
    return {"precision": precision, "recall": recall, **totals}


if __name__ == "__main__":
    evaluate(verbose="-q" not in sys.argv)
