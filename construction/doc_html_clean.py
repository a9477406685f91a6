"""Taking the page around a document's text away: what documentation generators add.

Documentation is rarely a lone article: DocBook puts a "Prev | Up | Home | Next" table
above and below every page, Sphinx a "related" bar, a sidebar and "¶" links in every
heading, MkDocs a header, tabs, sidebars and an "Edit this page" button, Javadoc navigation
bars and "Skip navigation links", GitHub an anchor in every heading and a title in every
alert. A note's label ("Note", "Tip", "Warning") is set as a heading inside the note, and
would otherwise become a section of its own.

``prune`` removes all of it from a parsed page, in place, by the roles, classes and
link texts these generators use; ``main_part`` finds the element that holds the text when
the page says where it is (``role="main"``, ``<main>``, the generators' own containers),
else returns None so that trafilatura decides.
"""

from __future__ import annotations

import re

from construction.doc_labels import EDIT_LINK, is_admonition_label, navigation_lines

__all__ = ["generator", "main_part", "prune"]

# Never text: code, presentation, page furniture and form controls.
DROP_TAGS = frozenset(
    {
        *("script", "style", "noscript", "template", "head", "nav", "footer", "aside"),
        *("form", "iframe", "object", "embed", "svg", "math", "canvas", "button", "select"),
        *("option", "textarea", "input", "label", "dialog", "menu"),
    }
)
_FURNITURE_ROLES = frozenset(
    {
        *("navigation", "banner", "contentinfo", "search", "complementary", "menubar"),
        *("toolbar", "tablist", "tab"),
    }
)
# Class and id tokens (exact, case-insensitive) of page furniture, by generator.
FURNITURE_CLASSES = frozenset(
    {
        # DocBook XSL: the navigation tables, and tables of contents (links to other pages)
        *("navheader", "navfooter", "toc", "list-of-tables", "list-of-figures"),
        *("list-of-examples", "breadcrumbs", "breadcrumb"),
        # Sphinx and its themes (classic, alabaster, Read the Docs, pydata, furo, book)
        *("related", "sphinxsidebar", "sphinxsidebarwrapper", "headerlink", "footer"),
        *("mobile-nav", "toctree-wrapper", "rst-footer-buttons", "wy-nav-side", "wy-nav-top"),
        *("wy-breadcrumbs", "prev-next-area", "prev-next-footer", "bd-sidebar", "bd-header"),
        *("bd-footer", "bd-sidebar-primary", "bd-sidebar-secondary", "edit-this-page"),
        *("viewcode-link", "sidebar-drawer", "toc-drawer", "related-pages", "skip-to-content"),
        *("header-article", "article-header-buttons"),
        # MkDocs (mkdocs, readthedocs and Material themes)
        *("md-header", "md-tabs", "md-sidebar", "md-footer", "md-source", "md-search"),
        *("md-content__button", "md-top", "md-skip", "md-dialog", "md-banner", "md-nav"),
        *("navbar", "bs-sidebar", "md-source-file"),
        # Javadoc, old and new
        *("topnav", "bottomnav", "subnav", "top-nav", "sub-nav", "bottom-nav", "skipnav"),
        *("skip-nav", "navlist", "nav-list", "fixednav", "legalcopy", "legal-copy"),
        *("navpadding", "nav-padding", "flex-header", "table-tabs", "tabend"),
        *("activetabletab", "tabletab"),
        # GitHub's rendering of Markdown: heading anchors
        *("anchor", "octicon", "octicon-link"),
        # Any site
        *("pagination", "pager", "skip-link", "skiplink", "sr-only", "visually-hidden"),
        *("screen-reader-text", "edit-link", "edit-page", "page-nav", "prev-next"),
        *("footer-nav", "permalink", "anchor-link", "heading-anchor", "cookie-banner"),
    }
)
# A note, tip or warning, whose first words are its label.
ADMONITION_CLASSES = frozenset(
    {
        *("note", "tip", "warning", "caution", "important", "admonition", "attention"),
        *("danger", "error", "hint", "seealso", "todo", "markdown-alert", "callout"),
        *("notice", "alert"),
    }
)
_LABEL_CLASSES = frozenset(
    {"title", "admonition-title", "markdown-alert-title", "callout-title", "alert-title"}
)
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_GFM_ALERT = re.compile(r"^\s*\[!(?:note|tip|important|warning|caution)\]\s*", re.IGNORECASE)
_BAR_TAGS = frozenset({"table", "tr", "div", "p", "ul", "ol", "span"})
_BAR_WORDS = 24


def _tag(element) -> str | None:
    tag = element.tag
    if not isinstance(tag, str):
        return None  # a comment or processing instruction
    return tag.rsplit("}", 1)[-1].lower()


def _tokens(element) -> set[str]:
    return {*element.get("class", "").lower().split(), element.get("id", "").lower()}


def _text(element) -> str:
    return " ".join(" ".join(element.itertext()).split())


# Classes only one generator uses, for pages that do not name their generator.
_SIGNATURES = (
    ("navheader", "docbook"),
    ("navfooter", "docbook"),
    ("topnav", "javadoc"),
    ("bottomnav", "javadoc"),
    ("top-nav", "javadoc"),
    ("sphinxsidebar", "sphinx"),
    ("md-header", "mkdocs"),
)


def generator(root) -> str:
    """The page's generator, lower-case: ``<meta name="generator">`` ("docbook xsl
    stylesheets", "docutils 0.19", "mkdocs-1.4"), javadoc's comment, or a class only one
    generator uses. Read it before ``prune``, which removes those classes."""
    for meta in root.iter("meta"):
        if (meta.get("name") or "").lower() == "generator":
            return (meta.get("content") or "").lower()
    for node in root.iter():
        if _tag(node) is None:
            if "generated by javadoc" in (node.text or "").lower():
                return "javadoc"
            continue
        tokens = _tokens(node)
        for token, name in _SIGNATURES:
            if token in tokens:
                return name
    return ""


def prune(root) -> None:
    """Remove page furniture from ``root`` in place (see the module)."""
    _drop_furniture(root)
    for element in list(root.iter()):
        if element.getparent() is None or _tag(element) is None:
            continue
        if _ADMONITION(element) or _tag(element) == "blockquote":
            _unlabel(element)
    _drop_bars(root)


def _ADMONITION(element) -> bool:  # noqa: N802 (reads as the constant it stands for)
    classes = set(element.get("class", "").lower().split())
    return bool(classes & ADMONITION_CLASSES) or any(
        c.startswith(("admonition-", "markdown-alert-")) for c in classes
    )


def _drop_furniture(root) -> None:
    h1s = sum(1 for _ in root.iter("h1"))
    for element in list(root.iter()):
        parent = element.getparent()
        if parent is None:
            continue
        tag = _tag(element)
        if tag is None or _is_furniture(element, tag, h1s):
            element.drop_tree()  # keeps the tail, which belongs to the parent


def _is_furniture(element, tag: str, h1s: int) -> bool:
    if tag in DROP_TAGS or element.get("hidden") is not None:
        return True
    if tag == "header":
        return not _header_kept(element, h1s)
    if (element.get("role") or "").lower() in _FURNITURE_ROLES:
        return True
    if "breadcrumb" in (element.get("aria-label") or "").lower():
        return True
    if _tokens(element) & FURNITURE_CLASSES:
        return True
    if tag == "a":
        text = _text(element)
        return bool(EDIT_LINK.match(text)) or (
            bool(text) and not re.search(r"\w", text) and len(text) <= 3
        )
    return False


def _header_kept(element, h1s: int) -> bool:
    """A ``<header>`` is the page's banner unless it heads the article itself: inside
    ``<main>`` or ``<article>``, or holding the page's only ``<h1>`` (pandoc's title)."""
    for ancestor in element.iterancestors():
        if _tag(ancestor) in {"main", "article"} or ancestor.get("role") == "main":
            return True
    return h1s == 1 and element.find(".//h1") is not None


def _unlabel(box) -> None:
    """Take a note's generic label ("Note", "Tip") away; a title of its own stays, but
    as a paragraph, never as a heading. The label is the first element with words of
    its own (a table or a row holding the label cell has none)."""
    for element in box.iter():
        tag = _tag(element)
        if element is box or tag is None or not _text(element):
            continue
        labelled = (
            tag in _HEADINGS or tag in {"th", "strong", "b"} or (_tokens(element) & _LABEL_CLASSES)
        )
        if labelled and is_admonition_label(_text(element)):
            element.drop_tree()
        elif labelled and tag in _HEADINGS:
            element.tag = "p"
        elif not labelled and not (element.text or "").strip():
            continue  # its words are its children's: look inside
        elif element.text and _GFM_ALERT.match(element.text):
            element.text = _GFM_ALERT.sub("", element.text)
        return


def _drop_bars(root) -> None:
    """A small block whose words are a navigation bar ("Prev | Up | Home | Next")."""
    for element in list(root.iter()):
        if element.getparent() is None or _tag(element) not in _BAR_TAGS:
            continue
        text = _text(element)
        if text and len(text.split()) <= _BAR_WORDS and navigation_lines([text]):
            element.drop_tree()


# Where the text is, by generator: Sphinx and MkDocs themes mark it role="main"; Material
# uses an article; GitHub a "markdown-body"; docutils a "document"; Javadoc a <main>.
_MAIN_PATHS = (
    ".//*[@role='main']",
    ".//article[contains(concat(' ', normalize-space(@class), ' '), ' md-content__inner ')]",
    ".//*[contains(concat(' ', normalize-space(@class), ' '), ' markdown-body ')]",
    ".//main",
)
_BODY_GENERATORS = ("docbook", "javadoc", "docutils", "pandoc", "mkdocs", "sphinx")
_MAIN_SHARE = 0.2  # a main part holding less of the page's text than this is not it


def main_part(root, made_by: str = ""):
    """The element holding the page's text when the page says which it is, else None;
    ``made_by`` is the page's ``generator``."""
    body = root.find("body")
    if body is None:
        return None
    whole = len(_text(body))
    for path in _MAIN_PATHS:
        found = [e for e in root.xpath(path) if e.getparent() is not None]
        if len(found) == 1 and len(_text(found[0])) >= _MAIN_SHARE * whole:
            main = found[0]
            articles = main.findall(".//article")
            if _tag(main) == "main" and len(articles) == 1:
                return articles[0]
            return main
    if any(name in made_by for name in _BODY_GENERATORS):
        return body  # the furniture is pruned; the rest of the body is the text
    return None
