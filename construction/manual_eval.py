"""What the proposals drafted from a manual are worth: against the manual's own index,
and on the hand-labelled sample (``construction.manual_gold``).

- **Terms.** Precision: the share of proposed concept names (add_concept names and
  edge ends, one per key) that are index terms. Recall: the share of the index terms
  pointing at an imported page whose name was proposed anywhere.
- **Edge ends.** Of the names that end an edge, the share that are index terms and the
  share that are one word and no index term ("Able", "Holds").
- **Yield.** Edge proposals per imported page and per 1,000 words, and the pages with
  none; fully right edges per page, estimated from the labelled sample's precision
  above and below the gate times the proposals there.
- **Labels.** Of the current proposals the labels find again: quote supports, names are
  terms, relation right, fully right (all three), above the gate, below it and in all;
  the concept-name labels' sensible / generic / junk shares; how much the labels cover.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from .manual_gold import EDGE_JUDGEMENTS, NAME_JUDGEMENTS, EdgeLabel, Labels, NameLabel, TermGold
from .text import name_key, name_keys


@dataclass(frozen=True)
class Page:
    id: str  # the source's slug
    words: int


@dataclass(frozen=True)
class EdgeProposal:
    id: int
    page: str
    quote: str
    source: str
    relation: str
    target: str
    above_gate: bool
    confidence: float

    def label(self) -> EdgeLabel:
        """A blank label for this proposal, with the context a labeller needs."""
        gate = "above" if self.above_gate else "below"
        return EdgeLabel(
            page=self.page,
            quote=self.quote,
            source=self.source,
            relation=self.relation,
            target=self.target,
            extra={"gate": gate, "confidence": self.confidence, "proposal": self.id},
        )


@dataclass(frozen=True)
class NameProposal:
    name: str
    page: str
    quote: str  # where the name was read, for the labeller

    def label(self) -> NameLabel:
        return NameLabel(name=self.name, extra={"page": self.page, "quote": self.quote})


def ratio(part: float, whole: float, digits: int = 3) -> float | None:
    return round(part / whole, digits) if whole else None


def distinct_names(names: Sequence[str]) -> dict[str, str]:
    """One name per key, the first spelling seen."""
    out: dict[str, str] = {}
    for name in names:
        key = name_key(name)
        if key and key not in out:
            out[key] = name
    return out


def term_figures(gold: TermGold, pages: Sequence[Page], names: Sequence[str]) -> dict:
    proposed = distinct_names(names)
    proposed_keys = {k for name in proposed.values() for k in name_keys(name)}
    index_names = sum(1 for name in proposed.values() if gold.is_term(name))
    on_pages = gold.on_pages(p.id for p in pages)
    found = [t for t in on_pages if t.keys & proposed_keys]
    return {
        "proposed_names": len(proposed),
        "index_terms_among_them": index_names,
        "precision": ratio(index_names, len(proposed)),
        "index_terms_on_pages": len(on_pages),
        "found": len(found),
        "recall": ratio(len(found), len(on_pages)),
    }


def end_figures(gold: TermGold, edges: Sequence[EdgeProposal]) -> dict:
    ends = [name for e in edges for name in (e.source, e.target)]
    names = distinct_names(ends)
    terms = [n for n in names.values() if gold.is_term(n)]
    one_word = [n for n in names.values() if len(name_key(n).split()) == 1 and not gold.is_term(n)]
    end_terms = sum(1 for n in ends if gold.is_term(n))
    return {
        "names": len(names),
        "index_terms": len(terms),
        "index_term_share": ratio(len(terms), len(names)),
        "one_word_non_terms": len(one_word),
        "one_word_non_term_share": ratio(len(one_word), len(names)),
        "ends": len(ends),
        "ends_index_term_share": ratio(end_terms, len(ends)),
    }


def judged_figures(labels: Sequence[EdgeLabel]) -> dict:
    judged = [label for label in labels if label.judged]
    row: dict = {"judged": len(judged)}
    for name in EDGE_JUDGEMENTS:
        right = sum(1 for label in judged if getattr(label, name))
        row[name] = right
        row[f"{name}_share"] = ratio(right, len(judged))
    right = sum(1 for label in judged if label.fully_right)
    row["fully_right"] = right
    row["precision"] = ratio(right, len(judged))
    return row


def match_edges(
    edges: Sequence[EdgeProposal], labels: Labels, symmetric: frozenset[str]
) -> tuple[list[tuple[EdgeProposal, EdgeLabel]], int]:
    """Each current proposal with its label, and how many labels find no proposal."""
    by_key = {label.key(symmetric): label for label in labels.edges}
    matched, used = [], set()
    for edge in edges:
        label = by_key.get(edge.label().key(symmetric))
        if label is not None:
            matched.append((edge, label))
            used.add(id(label))
    return matched, sum(1 for label in labels.edges if id(label) not in used)


def label_figures(
    edges: Sequence[EdgeProposal], names: Sequence[str], labels: Labels, symmetric: frozenset[str]
) -> dict:
    matched, stale = match_edges(edges, labels, symmetric)
    above = [label for edge, label in matched if edge.above_gate]
    below = [label for edge, label in matched if not edge.above_gate]
    proposed = distinct_names(names)
    # A name is judged as written: a label counts for the spelling it judged ("Ncurse",
    # junk, says nothing of "Ncurses" though both have one key).
    name_labels = [n for n in labels.names if proposed.get(n.key) == n.name and n.judgement]
    counts = {j: sum(1 for n in name_labels if n.judgement == j) for j in NAME_JUDGEMENTS}
    return {
        "edges": {
            "all": judged_figures([label for _, label in matched]),
            "above_gate": judged_figures(above),
            "below_gate": judged_figures(below),
            "proposals": len(edges),
            "labelled": len(matched),
            "labels_matching_no_proposal": stale,
        },
        "names": {
            "judged": len(name_labels),
            **counts,
            **{f"{j}_share": ratio(counts[j], len(name_labels)) for j in NAME_JUDGEMENTS},
            "proposed_names": len(proposed),
            "labels_matching_no_proposal": sum(
                1 for n in labels.names if proposed.get(n.key) != n.name
            ),
        },
    }


def yield_figures(pages: Sequence[Page], edges: Sequence[EdgeProposal], labelled: dict) -> dict:
    count = len(pages)
    words = sum(p.words for p in pages)
    above = sum(1 for e in edges if e.above_gate)
    below = len(edges) - above
    with_edges = {e.page for e in edges} & {p.id for p in pages}
    overall = labelled["all"]["precision"]
    # Stratified by the gate: each side's precision times its proposals; a side with no
    # judged label borrows the overall precision.
    p_above = labelled["above_gate"]["precision"]
    p_below = labelled["below_gate"]["precision"]
    right = right_above = None
    if overall is not None:
        right_above = (p_above if p_above is not None else overall) * above
        right = right_above + (p_below if p_below is not None else overall) * below
    return {
        "pages": count,
        "words": words,
        "pages_without_edges": count - len(with_edges),
        "edges": len(edges),
        "above_gate": above,
        "below_gate": below,
        "edges_per_page": ratio(len(edges), count, 2),
        "above_gate_per_page": ratio(above, count, 2),
        "edges_per_1000_words": ratio(len(edges) * 1000, words, 2),
        "fully_right_per_page": None if right is None else ratio(right, count, 2),
        "fully_right_above_gate_per_page": (
            None if right_above is None else ratio(right_above, count, 2)
        ),
    }


def measure(
    gold: TermGold,
    pages: Sequence[Page],
    edges: Sequence[EdgeProposal],
    concept_names: Sequence[str],
    labels: Labels,
    *,
    symmetric: frozenset[str],
) -> dict:
    """Every figure for one manual; ``concept_names`` are the add_concept proposals'
    names (the edges' ends are added here)."""
    names = [*concept_names, *(n for e in edges for n in (e.source, e.target))]
    labelled = label_figures(edges, names, labels, symmetric)
    return {
        "terms": term_figures(gold, pages, names),
        "edge_ends": end_figures(gold, edges),
        "yield": yield_figures(pages, edges, labelled["edges"]),
        "labels": labelled,
    }


# --- A sample to label ------------------------------------------------------------------


def _shuffled(items: list, seed: int) -> list:
    """A seeded order in which a larger sample extends a smaller one."""
    out = list(items)
    random.Random(seed).shuffle(out)
    return out


def draw_sample(
    edges: Sequence[EdgeProposal],
    names: Sequence[NameProposal],
    labels: Labels,
    *,
    edge_count: int,
    name_count: int,
    seed: int,
    symmetric: frozenset[str],
) -> tuple[Labels, int]:
    """Every label given so far, plus a blank one for each sampled proposal that has
    none; and how many blanks there are. Proposals are ordered by their keys before the
    seeded shuffle, so the same proposals and seed draw the same sample."""
    given = {label.key(symmetric) for label in labels.edges}
    ordered = sorted(edges, key=lambda e: e.label().key(symmetric))
    out = Labels(edges=list(labels.edges), names=list(labels.names))
    blanks = 0
    for edge in _shuffled(ordered, seed)[:edge_count]:
        blank = edge.label()
        if blank.key(symmetric) not in given:
            out.edges.append(blank)
            blanks += 1
    named = {label.name for label in labels.names}
    unique = {name_key(n.name): n for n in reversed(names) if name_key(n.name)}
    for key in _shuffled(sorted(unique), seed)[:name_count]:
        if unique[key].name not in named:
            out.names.append(unique[key].label())
            blanks += 1
    return out, blanks


# --- The report in words ----------------------------------------------------------------


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


COLUMNS = ("quote supports", "names are terms", "relation right", "fully right")


def _judged_line(title: str, row: dict) -> str:
    counts = [(row[j], row[f"{j}_share"]) for j in EDGE_JUDGEMENTS]
    counts.append((row["fully_right"], row["precision"]))
    cells = [
        f"{f'{n} ({_share(share)})':>{len(head)}}"
        for (n, share), head in zip(counts, COLUMNS, strict=True)
    ]
    return f"  {title:<11}{row['judged']:>6}  " + "  ".join(cells)


def report_lines(report: dict) -> list[str]:
    """The figures of ``measure`` as a reader wants them, one topic per block."""
    terms, ends, yields, labels = (
        report["terms"],
        report["edge_ends"],
        report["yield"],
        report["labels"],
    )
    edges, names = labels["edges"], labels["names"]
    lines = [
        f"Manual {report.get('manual', '')}: {yields['pages']} pages imported "
        f"({yields['words']:,} words), {yields['edges']} edge proposals "
        f"({yields['above_gate']} above the gate), {terms['proposed_names']} concept names",
        "Terms, against the manual's index",
        f"  term precision  {_share(terms['precision'])}  ({terms['index_terms_among_them']} "
        f"of {terms['proposed_names']} proposed names are index terms)",
        f"  term recall     {_share(terms['recall'])}  ({terms['found']} of "
        f"{terms['index_terms_on_pages']} index terms of the imported pages were proposed)",
        f"Names that end an edge ({ends['names']})",
        f"  index terms         {_share(ends['index_term_share'])}  ({ends['index_terms']})",
        f"  one-word non-terms  {_share(ends['one_word_non_term_share'])}  "
        f"({ends['one_word_non_terms']})",
        "Yield",
        f"  edges per page {_num(yields['edges_per_page'])} (above the gate "
        f"{_num(yields['above_gate_per_page'])}), per 1,000 words "
        f"{_num(yields['edges_per_1000_words'])}; {yields['pages_without_edges']} of "
        f"{yields['pages']} pages without an edge",
        f"  fully right per page {_num(yields['fully_right_per_page'])} (above the gate "
        f"{_num(yields['fully_right_above_gate_per_page'])}), estimated from the labels",
        f"Labelled edges: {edges['labelled']} of {edges['proposals']} proposals "
        f"({edges['labels_matching_no_proposal']} labels match no current proposal)",
        f"  {'':<11}{'judged':>6}  " + "  ".join(COLUMNS),
        _judged_line("above gate", edges["above_gate"]),
        _judged_line("below gate", edges["below_gate"]),
        _judged_line("all", edges["all"]),
        f"Concept names judged: {names['judged']} of {names['proposed_names']} "
        f"({names['labels_matching_no_proposal']} labels match no current name): sensible "
        f"{_share(names['sensible_share'])}, generic {_share(names['generic_share'])}, junk "
        f"{_share(names['junk_share'])}",
    ]
    return lines
