"""From index entries to terms.jsonl rows, and the seeded choice of pages of prose."""

from __future__ import annotations

from dataclasses import replace

from evaluation.tools.indexes import Entry
from evaluation.tools.manual import PROFILES, copy_name, is_prose, select
from evaluation.tools.terms import compounds_for, names_for, term_rows


def test_names_drop_the_qualifiers_an_index_adds():
    """ "(built-in function)" and a profile's suffix give shorter names; the printed words
    stay first."""
    assert names_for("abs() (built-in function)") == ["abs() (built-in function)", "abs()"]
    assert names_for("work_mem configuration parameter", [" configuration parameter"]) == [
        "work_mem configuration parameter",
        "work_mem",
    ]
    assert names_for("VACUUM") == ["VACUUM"]


def test_compounds_read_a_sub_entry_both_ways_and_skip_notes():
    """ "expression" / "lambda" composes both ways; a qualifier-only or long sub-entry
    composes nothing."""
    assert compounds_for("expression", "lambda") == ["lambda expression", "expression lambda"]
    assert compounds_for("copy", "(dict method)") == []
    assert compounds_for("aliases", "expanding in function definition") == []


def test_rows_merge_spellings_keep_selected_pages_and_stay_compact():
    """ "vacuum" and "VACUUM" are one term; only copied pages are kept, by their copied
    names; a term of no selected page keeps no qualifiers; empty fields are left out."""
    entries = [
        Entry("vacuum", pages=["routine-vacuuming.html"]),
        Entry("VACUUM", pages=["sql-vacuum.html"]),
        Entry("index", subentries=[Entry("B-Tree", pages=["lib/btree.html"])]),
        Entry("serial", see=["auto-increment"]),
    ]
    copied = {
        "routine-vacuuming.html": "routine-vacuuming.html",
        "lib/btree.html": "lib-btree.html",
    }
    rows = term_rows(entries, copied)
    assert rows == [
        {"term": "vacuum", "names": ["VACUUM"], "pages": ["routine-vacuuming.html"]},
        {
            "term": "index",
            "compounds": ["B-Tree index", "index B-Tree"],
            "qualifiers": ["B-Tree"],
            "pages": ["lib-btree.html"],
        },
        {"term": "serial", "see": ["auto-increment"]},
    ]


def test_prose_is_paragraphs_not_tables():
    """A page of paragraphs is prose; the same words in a table are not."""
    words = " ".join(["word"] * 300)
    assert is_prose(f"<html><body><p>{words}</p></body></html>".encode())
    table = f"<html><body><table><tr><td>{words}</td></tr></table><p>short</p></body></html>"
    assert not is_prose(table.encode())


def test_selection_is_seeded_by_strata_and_names_are_flat():
    """The same pool and seed choose the same pages; each stratum gives its count; a page
    in a folder is copied under a flat name."""
    profile = replace(PROFILES["python"], extra=())
    pool = [f"library/m{i}.html" for i in range(60)] + [f"tutorial/t{i}.html" for i in range(60)]
    chosen = select(profile, pool)
    assert chosen == select(profile, list(pool))
    assert sum(p.startswith("library/") for p in chosen) == 20
    assert sum(p.startswith("tutorial/") for p in chosen) == 20
    assert copy_name("library/os.path.html") == "library-os.path.html"


def test_a_second_draw_adds_pages_and_keeps_the_first_draws():
    """The extra draw comes from the pages the first left, with the next seed: the first
    draw's pages (and their labels) stay, each extra stratum gives its count."""
    first = replace(PROFILES["python"], extra=())
    both = replace(PROFILES["python"], extra=((r"^library/", 15), (r".*", 5)))
    pool = [f"library/m{i}.html" for i in range(60)] + [f"tutorial/t{i}.html" for i in range(60)]
    before, after = select(first, pool), select(both, pool)
    assert set(before) < set(after)
    added = set(after) - set(before)
    assert sum(p.startswith("library/") for p in added) == 15
    assert sum(p.startswith("tutorial/") for p in added) == 5
