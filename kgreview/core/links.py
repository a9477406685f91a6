"""Pages a lower app links to without naming a higher app's URL.

A review card links to a concept's page, an agent run to a source's page, the focus
card to the competency question that asked for a proposal. Those pages belong to apps
above the one that renders the link (``web``, ``questions``), and a lower app never
names a higher app's page. So the lower app asks for a page by its role ("concept",
"source", "question"), and the app that owns the page provides the role in its
``AppConfig.ready``: ``links.provide("concept", "concept-detail")``.

``url`` raises ``NoReverseMatch`` for a role nobody provides, like ``reverse``; the
``{% page_url %}`` tag renders nothing for one, so an optional link (the questions app
may be absent) is written ``{% page_url "questions" as href %}{% if href %}…``.
``tests/test_architecture.py`` checks that every role a template or a module asks for is
provided.
"""

from __future__ import annotations

from django.urls import NoReverseMatch, reverse

_PAGES: dict[str, str] = {}


def provide(role: str, url_name: str) -> None:
    """The page of ``role`` is the URL named ``url_name``; called by the owning app."""
    current = _PAGES.get(role)
    if current is not None and current != url_name:
        raise ValueError(f"The page of {role!r} is already {current!r}, not {url_name!r}.")
    _PAGES[role] = url_name


def provided() -> dict[str, str]:
    """Every role with the URL name that provides it."""
    return dict(_PAGES)


def url(role: str, *args: object) -> str:
    """The path of the page of ``role`` for ``args``."""
    name = _PAGES.get(role)
    if name is None:
        raise NoReverseMatch(f"No installed app provides a page for {role!r}.")
    return reverse(name, args=list(args))
