"""Reading a manual's gold: index terms with their keys, compounds and pages, and hand
labels that find their proposal again after a re-run; bad lines refused in words."""

from __future__ import annotations

import json

import pytest

from construction.manual_gold import GoldError, edge_key, parse_labels, parse_terms

SYMMETRIC = frozenset({"related", "contrasts_with"})


def lines(*rows) -> list[str]:
    return [json.dumps(r) for r in rows]


def test_terms_answer_to_their_names_compounds_and_pages():
    """A term is found by any of its names (as the app compares names); a compound counts
    as an index term; pages are turned into page ids."""
    gold = parse_terms(
        lines(
            {
                "term": "work_mem configuration parameter",
                "names": ["work_mem"],
                "pages": ["a.html"],
            },
            {"term": "index", "compounds": ["B-Tree index"], "pages": ["b.html"]},
            {"term": "serial"},
        ),
        page_id=lambda name: name.removesuffix(".html"),
    )
    assert gold.is_term("Work_mem") and gold.is_term("b-tree indexes") and gold.is_term("Serial")
    assert not gold.is_term("B-Tree")
    assert [t.term for t in gold.on_pages(["b"])] == ["index"]
    assert gold.terms[0].pages == frozenset({"a"})


def test_a_name_is_labelled_once_as_written_and_other_spellings_apart():
    """ "Ncurse" and "Ncurses" share a key but are two names to judge; the same spelling
    twice is refused."""
    first = {"kind": "name", "name": "Ncurse", "judgement": "junk"}
    other = {"kind": "name", "name": "Ncurses", "judgement": "sensible"}
    labels = parse_labels(lines(first, other), symmetric=SYMMETRIC)
    assert [n.judgement for n in labels.names] == ["junk", "sensible"]
    with pytest.raises(GoldError, match="labels the same name as line 1"):
        parse_labels(lines(first, first), symmetric=SYMMETRIC)


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ({"names": ["x"]}, "non-empty 'term'"),
        ({"term": "x", "pages": "a.html"}, "'pages' must be a list of strings"),
        ({"term": "..."}, "no name to match on"),
    ],
)
def test_bad_term_lines_are_refused_with_their_line(row, words):
    """A term line without a term, with pages that are not a list, or with no name to
    match on is refused, naming the file and line."""
    with pytest.raises(GoldError, match=words) as caught:
        parse_terms(lines({"term": "ok"}, row), where="terms.jsonl")
    assert "terms.jsonl:2" in str(caught.value)


def test_an_edge_key_ignores_spelling_and_reads_symmetric_relations_both_ways():
    """Case, plural and quote formatting do not change the key; a symmetric relation's ends
    may come in either order, a directed one's may not."""
    a = edge_key(
        "p", "“VACUUM” reclaims storage.", "VACUUM", "uses", "Dead tuples", symmetric=False
    )
    b = edge_key("p", '"VACUUM" reclaims storage', "vacuum", "uses", "dead tuple", symmetric=False)
    assert a == b
    assert edge_key("p", "q", "A", "related", "B", symmetric=True) == edge_key(
        "p", "q", "B", "related", "A", symmetric=True
    )
    assert edge_key("p", "q", "A", "uses", "B", symmetric=False) != edge_key(
        "p", "q", "B", "uses", "A", symmetric=False
    )


EDGE = {"kind": "edge", "page": "p", "quote": "A uses B.", "source": "A", "relation": "uses",
        "target": "B", "quote_supports": True, "names_are_terms": None, "relation_right": True,
        "note": "", "gate": "above"}  # fmt: skip


def test_labels_keep_judgements_and_context():
    """Edge and name labels are read with their judgements; a half-judged edge is not
    judged; context fields the labeller needs are written back unchanged."""
    labels = parse_labels(
        lines(EDGE, {"kind": "name", "name": "Twice", "judgement": "junk", "page": "p"}),
        symmetric=SYMMETRIC,
    )
    edge, name = labels.edges[0], labels.names[0]
    assert edge.quote_supports is True and not edge.judged
    assert name.judgement == "junk"
    assert labels.rows()[0] == EDGE
    assert labels.rows()[1]["page"] == "p"


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ({"kind": "vertex"}, "'kind' must be"),
        ({**EDGE, "quote": ""}, "non-empty 'quote'"),
        ({**EDGE, "relation_right": "yes"}, "true, false or null"),
        ({"kind": "name", "name": "X", "judgement": "bad"}, "sensible, generic, junk"),
        ({**EDGE, "source": "a", "quote": "A uses B"}, "labels the same edge as line 1"),
    ],
)
def test_bad_label_lines_are_refused_in_words(row, words):
    """A wrong kind, a missing field, a judgement that is no judgement and a second label
    for the same edge are refused with the line number."""
    with pytest.raises(GoldError, match=words) as caught:
        parse_labels(lines(EDGE, row), symmetric=SYMMETRIC, where="labels.jsonl")
    assert "labels.jsonl:2" in str(caught.value)
