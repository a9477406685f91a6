"""From a manual's index entries to the gold of terms (``terms.jsonl``).

One row per index term: the entry's words (``term``); the other names a proposal may use
for it (``names``: the words without a qualifier the index adds, such as
"(built-in function)" or " configuration parameter"; left out when there are none); the
names its sub-entries compose with it (``compounds``: "expression" / "lambda" gives
"lambda expression" and "expression lambda"; a compound is an index term for precision,
never a term to find); its sub-entries as printed (``qualifiers``, on terms of the
selected pages); the names a "see" entry sends to; and the copied pages it points at
(``pages``, left out when it points at no selected page). Entries whose names share a key
(``construction.text.name_key``: "vacuum" and "VACUUM") are one term. The keys are
computed again when the gold is read, so a change to ``name_key`` leaves no stale file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from construction.text import name_key

from .indexes import Entry

# A trailing "(…)" the index adds to tell two entries apart: "(built-in function)",
# "(in module os)", "(data type)". One level of nested parentheses is allowed.
QUALIFIER = re.compile(r"\s*\((?:[^()]|\([^()]*\))*\)\s*$")
# A sub-entry longer than this is a note ("expanding in function definition"), not a name.
MAX_COMPOUND_WORDS = 3


def names_for(text: str, suffixes: Iterable[str] = ()) -> list[str]:
    """The entry's words, then each shorter form without an index-added qualifier."""
    names = [text]
    bare = QUALIFIER.sub("", text).strip()
    if bare and bare != text:
        names.append(bare)
    for suffix in suffixes:
        for name in list(names):
            if name.lower().endswith(suffix.lower()) and len(name) > len(suffix):
                short = name[: -len(suffix)].strip()
                if short not in names:
                    names.append(short)
    return names


def compounds_for(primary: str, sub: str) -> list[str]:
    """ "index" / "B-Tree" composes to "B-Tree index" and "index B-Tree"; a sub-entry
    that is only a qualifier ("(bytes method)", "see also …") or a long note composes
    nothing."""
    sub = QUALIFIER.sub("", sub).strip()
    if not sub or sub.lower().startswith("see ") or len(sub.split()) > MAX_COMPOUND_WORDS:
        return []
    return [f"{sub} {primary}", f"{primary} {sub}"]


def _all_pages(entry: Entry) -> list[str]:
    pages = list(entry.pages)
    for sub in entry.subentries:
        pages.extend(p for p in _all_pages(sub) if p not in pages)
    return pages


def _add(values: list[str], more: Iterable[str]) -> None:
    values.extend(v for v in more if v not in values)


def term_rows(
    entries: Iterable[Entry], copied: Mapping[str, str], *, suffixes: Iterable[str] = ()
) -> list[dict]:
    """The gold rows, in index order; ``copied`` maps a page of the manual to the name of
    its copy among the selected pages."""
    suffixes = tuple(suffixes)
    rows: dict[str, dict] = {}
    for entry in entries:
        names = names_for(entry.text, suffixes)
        key = name_key(names[-1])
        if not key:
            continue
        row = rows.setdefault(
            key,
            {"term": entry.text, "names": [], "compounds": [], "qualifiers": [], "see": []},
        )
        row.setdefault("_pages", [])
        _add(row["names"], names)
        _add(row["see"], entry.see)
        for sub in entry.subentries:
            _add(row["qualifiers"], [sub.text])
            for base in names[-1:]:
                _add(row["compounds"], compounds_for(base, sub.text))
        _add(row["_pages"], [copied[p] for p in _all_pages(entry) if p in copied])
    out = []
    for row in rows.values():
        pages = sorted(row.pop("_pages"))
        row["names"] = [n for n in row["names"] if n != row["term"]]
        if not pages:
            row.pop("qualifiers")  # only read by people checking a term of the pages
        compact = {k: v for k, v in row.items() if v}
        if pages:
            compact["pages"] = pages
        out.append(compact)
    return out
