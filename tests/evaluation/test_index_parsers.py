"""The index parsers of evaluation/tools read the three generators' index pages: entries,
the pages they point at (anchors dropped, relative to the manual's root), sub-entries and
"see" references."""

from __future__ import annotations

from evaluation.tools.indexes import docbook_index, sphinx_index, texinfo_index

DOCBOOK = b"""<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<html><body><div class="index"><div class="indexdiv"><h3>A</h3><dl>
<dt id="ientry-1">ANALYZE, <a class="indexterm" href="routine-vacuuming.html#STATS">Updating
Planner Statistics</a>, <a class="indexterm" href="sql-analyze.html">ANALYZE</a></dt>
<dt id="ientry-2">auto-increment (see <a href="#ientry-9">serial</a>)</dt>
<dt id="ientry-3">autocommit</dt><dd><dl>
<dt>bulk-loading data, <a class="indexterm" href="populate.html#X">Disable Autocommit</a></dt>
<dt>psql, <a class="indexterm" href="app-psql.html#V">Variables</a></dt>
</dl></dd>
<dt id="ientry-4">transition tables, <a class="indexterm" href="sql-createtrigger.html">CREATE
TRIGGER</a></dt><dd><dl><dt>(see also <a href="#ientry-8">ephemeral named relation</a>)</dt>
</dl></dd>
</dl></div></div></body></html>"""

SPHINX = b"""<html><body><table class="indextable genindextable"><tr><td><ul>
<li><a href="library/functions.html#abs">abs() (built-in function)</a></li>
<li><a href="glossary.html#term-expression"><strong>expression</strong></a>,
<a href="reference/expressions.html#index-0">[1]</a>
<ul><li><a href="reference/expressions.html#index-90">lambda</a>,
<a href="reference/compound_stmts.html#index-35">[1]</a></li>
<li><a href="reference/expressions.html#index-23">yield</a></li></ul></li>
<li>asyncio<ul><li><a href="library/asyncio.html#module-asyncio">module</a></li></ul></li>
<li><a href="library/stdtypes.html#bytearray.expandtabs">expandtabs() (bytearray method)</a>
<ul><li><a href="library/stdtypes.html#str.expandtabs">(str method)</a></li></ul></li>
</ul></td></tr></table></body></html>"""

TEXINFO = b"""<html><body><table class="index-cp" border="0">
<tr><td></td><th align="left">Index Entry</th><td>&nbsp;</td><th align="left">Section</th></tr>
<tr><td></td><td valign="top"><a href="Shell-Grammar.html#index-aliases_002c-global">aliases,
global</a></td><td>&nbsp;</td><td valign="top"><a href="Shell-Grammar.html#A">6.8</a></td></tr>
<tr><td></td><td valign="top"><a href="Options.html#index-aliases_002c-expansion">aliases,
expansion</a></td><td>&nbsp;</td><td valign="top"><a href="Options.html#IO">16.2.6</a></td></tr>
<tr><td></td><td valign="top"><a href="Invocation.html#index-_002d_002dhelp">&ndash;help</a></td>
<td>&nbsp;</td><td valign="top"><a href="Invocation.html#Invocation-2">4.1</a></td></tr>
<tr><td></td><td valign="top"><a href="Shell-Grammar.html#index-aliasing">aliasing</a></td>
<td>&nbsp;</td><td valign="top"><a href="Shell-Grammar.html#Aliasing">6.8 Aliasing</a></td></tr>
</table></body></html>"""


def by_text(entries):
    return {e.text: e for e in entries}


def test_docbook_entries_pages_subentries_and_see():
    """A DocBook entry keeps every page it links (anchors dropped); "(see X)" has no page;
    sub-entries hang under their entry; "(see also X)" joins the entry's references."""
    entries = by_text(docbook_index(DOCBOOK, "bookindex.html"))
    assert list(entries) == ["ANALYZE", "auto-increment", "autocommit", "transition tables"]
    assert entries["ANALYZE"].pages == ["routine-vacuuming.html", "sql-analyze.html"]
    assert entries["auto-increment"].see == ["serial"] and entries["auto-increment"].pages == []
    subs = entries["autocommit"].subentries
    assert [(s.text, s.pages) for s in subs] == [
        ("bulk-loading data", ["populate.html"]),
        ("psql", ["app-psql.html"]),
    ]
    assert entries["transition tables"].see == ["ephemeral named relation"]
    assert entries["transition tables"].subentries == []


def test_sphinx_entries_resolve_folders_and_drop_numbered_links():
    """A Sphinx entry's "[1]" links add pages, not words; an entry without a link of its
    own is the text before its list; a "(str method)" sub-entry stays a sub-entry."""
    entries = by_text(sphinx_index(SPHINX, "genindex-all.html"))
    assert entries["abs() (built-in function)"].pages == ["library/functions.html"]
    expression = entries["expression"]
    assert expression.pages == ["glossary.html", "reference/expressions.html"]
    lam = expression.subentries[0]
    assert lam.text == "lambda"
    assert lam.pages == ["reference/expressions.html", "reference/compound_stmts.html"]
    assert entries["asyncio"].pages == []
    assert entries["asyncio"].subentries[0].pages == ["library/asyncio.html"]
    assert entries["expandtabs() (bytearray method)"].subentries[0].text == "(str method)"


def test_sphinx_links_are_resolved_against_the_index_page_folder():
    """An index page in a folder points at pages relative to that folder."""
    entries = sphinx_index(SPHINX, "docs/genindex-all.html")
    assert entries[0].pages == ["docs/library/functions.html"]


def test_texinfo_rows_group_by_primary():
    """Texinfo's "aliases, global" rows are sub-entries of "aliases"; an en dash written
    for "--" is read back as two hyphens; the section column is not an entry."""
    entries = by_text(texinfo_index(TEXINFO, "Concept-Index.html"))
    assert list(entries) == ["aliases", "--help", "aliasing"]
    aliases = entries["aliases"]
    assert aliases.pages == []
    assert [(s.text, s.pages) for s in aliases.subentries] == [
        ("global", ["Shell-Grammar.html"]),
        ("expansion", ["Options.html"]),
    ]
    assert entries["--help"].pages == ["Invocation.html"]
