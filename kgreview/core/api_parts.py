"""Operations a read app adds to the API without the API naming it.

The read apps are peers that never import each other, yet the API is where downstream
agents read everything: the exports' releases (``/api/v1/releases``) among it. So an app
hands a django-ninja ``Router`` to this registry in its ``AppConfig.ready``
(``api_parts.provide("releases", router)``), and the API mounts every router provided
when it is built (``kgreview.api.api``), under its own authentication, rate limits and
refusals. The router's paths are whole (``/v1/releases``).
"""

from __future__ import annotations

from typing import Any

_ROUTERS: dict[str, Any] = {}


def provide(name: str, router: Any) -> None:
    """Mount ``router`` on the API under ``name`` (once; the same again is harmless)."""
    current = _ROUTERS.get(name)
    if current is not None and current is not router:
        raise ValueError(f"The API's part {name!r} is already provided.")
    _ROUTERS[name] = router


def provided() -> list[tuple[str, Any]]:
    """Every router provided, by name, in a stable order."""
    return sorted(_ROUTERS.items())
