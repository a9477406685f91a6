"""Reading a manual's own back-of-book index into entries, one parser per generator.

Each parser takes the index page's HTML (bytes) and the page's path relative to the manual's
root, and returns ``Entry`` values: the entry's words as printed, the pages it points at
(relative to the root, anchors dropped), its sub-entries, and the names a "see"
reference sends the reader to. Nothing here decides what a term is; ``terms`` does.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from lxml import html


@dataclass
class Entry:
    text: str
    pages: list[str] = field(default_factory=list)
    subentries: list[Entry] = field(default_factory=list)
    see: list[str] = field(default_factory=list)


def _words(text: str) -> str:
    return " ".join(text.replace("\u2013", "--").split())


def _page(href: str, index_path: str) -> str | None:
    """The page a link points at, relative to the manual's root; None for an anchor of
    the index page itself or a link out of the manual."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    base = posixpath.dirname(index_path)
    return posixpath.normpath(posixpath.join(base, unquote(parts.path)))


def _parse(raw: bytes):
    # Bytes, so lxml reads the page's own encoding declaration.
    return html.fromstring(raw)


def _add_page(entry: Entry, href: str | None, index_path: str) -> None:
    page = _page(href or "", index_path)
    if page and page not in entry.pages:
        entry.pages.append(page)


# --- DocBook (the PostgreSQL manual's bookindex.html) -----------------------------------

SEE = re.compile(r"\(see(?: also)?\s+(.*)\)\s*$", re.I)


def docbook_index(text: bytes, index_path: str) -> list[Entry]:
    """``<dt>term, <a class="indexterm">…</a></dt><dd><dl>sub-entries…</dl></dd>``; a
    "(see X)" entry has no page, a "(see also X)" line is a sub-entry of its own."""
    root = _parse(text)
    lists = root.xpath('//div[contains(@class, "index")]/div[contains(@class, "indexdiv")]/dl')
    entries: list[Entry] = []
    for dl in lists:
        entries.extend(_docbook_list(dl, index_path))
    return entries


def _docbook_list(dl, index_path: str) -> list[Entry]:
    entries: list[Entry] = []
    for child in dl:
        if child.tag == "dt":
            entry = _docbook_entry(child, index_path)
            if entry is not None:
                entries.append(entry)
        elif child.tag == "dd" and entries:
            for inner in child.findall("dl"):
                for sub in _docbook_list(inner, index_path):
                    if not sub.text and sub.see:
                        entries[-1].see.extend(sub.see)
                    else:
                        entries[-1].subentries.append(sub)
    return entries


def _docbook_entry(dt, index_path: str) -> Entry | None:
    head = [dt.text or ""]
    links = []
    for node in dt:
        if node.tag == "a" and "indexterm" in (node.get("class") or ""):
            links.append(node)
        elif not links:
            head.append(node.text_content())
            head.append(node.tail or "")
    words = _words("".join(head))
    entry = Entry(text="")
    see = SEE.search(_words(dt.text_content()))
    if see and not links:
        entry.see.append(see.group(1).strip())
        words = _words(SEE.sub("", words))
    entry.text = words.rstrip(", ").strip()
    for link in links:
        _add_page(entry, link.get("href"), index_path)
    if not entry.text and not entry.see:
        return None
    return entry


# --- Sphinx (genindex-all.html) -------------------------------------------------------


def sphinx_index(text: bytes, index_path: str) -> list[Entry]:
    """``<li><a>term</a>, <a>[1]</a><ul><li><a>sub</a></li></ul></li>`` inside the
    index tables; an entry without a page of its own is plain text before its list."""
    root = _parse(text)
    entries: list[Entry] = []
    for ul in root.xpath('//table[contains(@class, "indextable")]//td/ul'):
        for li in ul.findall("li"):
            entries.append(_sphinx_entry(li, index_path))
    return [e for e in entries if e.text]


def _sphinx_entry(li, index_path: str) -> Entry:
    head = [li.text or ""]
    entry = Entry(text="")
    for node in li:
        if node.tag == "ul":
            entry.subentries.extend(_sphinx_entry(sub, index_path) for sub in node.findall("li"))
            continue
        if node.tag == "a":
            label = _words(node.text_content())
            if not re.fullmatch(r"\[\d+\]", label):
                head.append(node.text_content())
            _add_page(entry, node.get("href"), index_path)
        else:
            head.append(node.text_content())
        head.append(node.tail or "")
    entry.text = _words("".join(head)).strip(", ")
    entry.text = re.sub(r"(?:,\s*\[\d+\])+$", "", entry.text).strip(", ")
    see = SEE.search(entry.text)
    if see:
        entry.see.append(see.group(1).strip())
        entry.text = _words(SEE.sub("", entry.text))
    return entry


# --- Texinfo (texi2any's *-Index.html tables) -----------------------------------------


def texinfo_index(text: bytes, index_path: str) -> list[Entry]:
    """One table row per entry: ``<td><a href="Page.html#index-…">term, sub</a></td>``.

    Texinfo writes a sub-entry as "primary, qualifier" on a row of its own; rows are
    grouped by their primary, so "aliases, global" is a sub-entry of "aliases".
    """
    root = _parse(text)
    by_primary: dict[str, Entry] = {}
    for link in root.xpath('//table[starts-with(@class, "index-")]//tr/td[2]/a'):
        words = _words(link.text_content())
        if not words:
            continue
        primary, _, qualifier = words.partition(", ")
        entry = by_primary.setdefault(primary, Entry(text=primary))
        if qualifier:
            sub = next((s for s in entry.subentries if s.text == qualifier), None)
            if sub is None:
                sub = Entry(text=qualifier)
                entry.subentries.append(sub)
            _add_page(sub, link.get("href"), index_path)
        else:
            _add_page(entry, link.get("href"), index_path)
    return list(by_primary.values())


PARSERS = {"docbook": docbook_index, "sphinx": sphinx_index, "texinfo": texinfo_index}
