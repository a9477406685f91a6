"""The figures of one manual on a small in-memory example: terms against the index, the
names that end edges, yield per page, precision on the labels above and below the gate,
the junk rate; and the sample to label, which keeps labels given and grows stably."""

from __future__ import annotations

import json

from construction.manual_eval import EdgeProposal, NameProposal, Page, draw_sample, measure
from construction.manual_gold import EdgeLabel, Labels, NameLabel, parse_terms

SYMMETRIC = frozenset({"related"})
GOLD = parse_terms(
    [
        json.dumps(r)
        for r in (
            {"term": "VACUUM", "pages": ["p1"]},
            {"term": "dead tuples", "pages": ["p1"]},
            {"term": "autovacuum", "pages": ["p2"]},
            {"term": "WAL", "pages": ["elsewhere"]},
            {"term": "index", "compounds": ["B-tree index"]},
        )
    ]
)
PAGES = [Page("p1", 1000), Page("p2", 500), Page("p3", 500)]


def edge(i, source, target, *, above=True, page="p1", relation="uses"):
    return EdgeProposal(
        id=i,
        page=page,
        quote=f"Quote {i}.",
        source=source,
        relation=relation,
        target=target,
        above_gate=above,
        confidence=0.7 if above else 0.5,
    )


EDGES = [
    edge(1, "VACUUM", "Dead tuples"),
    edge(2, "Twice", "B-tree indexes"),
    edge(3, "Server", "WAL", above=False, page="p2"),
    edge(4, "Able", "Vacuum", above=False, page="p2", relation="related"),
]


def judged(e: EdgeProposal, supports: bool, terms: bool, relation: bool) -> EdgeLabel:
    label = e.label()
    label.quote_supports, label.names_are_terms, label.relation_right = supports, terms, relation
    return label


LABELS = Labels(
    edges=[
        judged(EDGES[0], True, True, True),
        judged(EDGES[1], False, False, False),
        judged(EDGES[2], True, False, True),
        # a stale label: no current proposal has this quote
        EdgeLabel("p1", "Gone.", "A", "uses", "B", True, True, True),
    ],
    names=[
        NameLabel("Twice", "junk"),
        NameLabel("Server", "generic"),
        NameLabel("Dead tuples", "sensible"),
        NameLabel("Never proposed", "junk"),
        NameLabel("vacuum", "junk"),  # another spelling of a proposed name: not counted
    ],
)


def report():
    return measure(GOLD, PAGES, EDGES, ["Checkpoints"], LABELS, symmetric=SYMMETRIC)


def test_terms_against_the_index():
    """Names are counted once per key; an edge end that is a compound counts as an index
    term; recall is over the terms of the imported pages only."""
    terms = report()["terms"]
    # VACUUM, Dead tuples, Twice, B-tree indexes, Server, WAL, Able, Checkpoints
    assert terms["proposed_names"] == 8
    assert terms["index_terms_among_them"] == 4
    assert terms["precision"] == 0.5
    # VACUUM and dead tuples found; autovacuum not; WAL points at no imported page
    assert (terms["index_terms_on_pages"], terms["found"]) == (3, 2)


def test_names_that_end_edges():
    """Of seven distinct end names, four are index terms and three are one word and none;
    of the eight ends, five are index terms."""
    ends = report()["edge_ends"]
    assert (ends["names"], ends["index_terms"], ends["one_word_non_terms"]) == (7, 4, 3)
    assert ends["ends"] == 8 and ends["ends_index_term_share"] == round(5 / 8, 3)


def test_precision_on_the_labels_above_and_below_the_gate():
    """Labels find their proposals; fully right needs all three judgements; a label that
    finds no proposal is counted apart."""
    edges = report()["labels"]["edges"]
    assert edges["labelled"] == 3 and edges["labels_matching_no_proposal"] == 1
    assert edges["above_gate"]["judged"] == 2 and edges["above_gate"]["fully_right"] == 1
    assert edges["below_gate"]["judged"] == 1 and edges["below_gate"]["fully_right"] == 0
    assert edges["all"]["quote_supports"] == 2 and edges["all"]["precision"] == round(1 / 3, 3)


def test_yield_per_page_estimates_fully_right_edges_by_gate():
    """Two above-gate proposals at precision 1/2 and two below at 0 make one fully right
    edge over three pages; a page with no proposal is counted."""
    y = report()["yield"]
    assert (y["edges"], y["above_gate"], y["pages_without_edges"]) == (4, 2, 1)
    assert y["edges_per_page"] == 1.33 and y["edges_per_1000_words"] == 2.0
    assert y["fully_right_per_page"] == 0.33 and y["fully_right_above_gate_per_page"] == 0.33


def test_junk_rate_over_judged_names_that_were_proposed():
    """A name label counts when its name, as written, is among the proposed names: a
    label of another spelling of the same key ("vacuum" for "VACUUM") judged a different
    name."""
    names = report()["labels"]["names"]
    assert names["judged"] == 3 and names["junk"] == 1
    assert names["junk_share"] == round(1 / 3, 3)
    assert names["labels_matching_no_proposal"] == 2


def test_a_sample_keeps_given_labels_and_grows_stably():
    """Sampling adds blanks only for unlabelled proposals; a larger sample with the same
    seed contains the smaller one."""
    names = [NameProposal(n, "p1", "q") for n in ("VACUUM", "vacuum", "Twice", "WAL", "Able")]
    small, blanks = draw_sample(
        EDGES, names, LABELS, edge_count=2, name_count=2, seed=7, symmetric=SYMMETRIC
    )
    assert small.edges[:4] == LABELS.edges and small.names[:5] == LABELS.names
    large, _ = draw_sample(
        EDGES, names, LABELS, edge_count=4, name_count=4, seed=7, symmetric=SYMMETRIC
    )
    assert {e.quote for e in small.edges} <= {e.quote for e in large.edges}
    assert {n.name for n in small.names} <= {n.name for n in large.names}
    # every current proposal is in the large sample: edge 4 is the only unlabelled one
    assert [e.quote for e in large.edges[4:]] == ["Quote 4."]
    assert large.edges[4].quote_supports is None and large.edges[4].extra["gate"] == "below"
    # VACUUM and vacuum are one name, proposed as "VACUUM": the label of "vacuum" does
    # not judge it; Twice is labelled already
    assert sorted(n.name for n in large.names[5:]) == ["Able", "VACUUM", "WAL"]
    assert blanks == len(small.edges) + len(small.names) - 9
