"""The API for downstream agents and the explorer: /api/v1/.

Every operation reads, but one: ``POST /v1/proposals`` submits proposals to the review
queue (a token with the ``propose`` scope), where they wait for a reviewer like the
agents' own; nothing here writes the graph. Agents send
``Authorization: Bearer <token>``; the browser uses its session. Every graph read takes
``as_of`` (ISO 8601; a naive time is read in the server's time zone) and then answers
from the graph as it stood at that instant.

This module gathers the API: ``app`` holds the NinjaAPI object, its authentication and
its refusals; ``endpoints/`` the operations by subject; ``serializers`` builds each
answer, in the shapes of ``schemas``.
"""

from __future__ import annotations

from importlib import import_module

from kgreview.core import api_parts

from .app import api

# Importing a subject registers its operations; the OpenAPI document lists them in this
# order (an import sorter would reorder plain imports).
SUBJECTS = (
    "ontology",
    "concepts",
    "traversal",
    "edges",
    "changes",
    "ask",
    "agreement",
    "proposals",
)
for _subject in SUBJECTS:
    import_module(f"{__package__}.endpoints.{_subject}")

# Operations the read apps add (the exports' releases), which the API cannot name: they
# are its peers (``core.api_parts``).
for _name, _router in api_parts.provided():
    api.add_router("", _router, tags=[_name])

__all__ = ["api"]
