"""Asking the graph a question in words: a concept set, a cited path or a yes/no."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from kgreview.core.permissions import is_curator
from kgreview.graph.asking import PROVIDERS, ask_graph

from .. import schemas as s
from ..app import ApiError, answers, api, served
from ..params import Text, instant
from ..throttle import EVERY, HEAVY


@api.get(
    "/v1/ask",
    response=answers(s.AskOut, 403, 503),
    tags=["ask"],
    throttle=[EVERY, HEAVY],
)
@served
def ask(
    request,
    q: Text = "",
    as_of: datetime | None = None,
    provider: Text = "",
):
    """Answer a question from the graph: "What should I learn before LoRA?", "How is RAG
    connected to embeddings?", "Is attention a prerequisite for positional encoding?".

    ``status`` is ``answered``, ``no_path`` (the graph was searched and holds no chain or
    member: a checked absence) or ``not_understood`` (no question family, or a concept
    the graph does not know). Each hop of ``answer.paths`` cites its edge, the quote and
    the source; ``plan`` and ``critique`` say how the answer was found. ``provider``:
    ``offline`` (the default, deterministic) or ``openai``; only curators may choose one
    other than the server's (``KG_ASK_PROVIDER``): a model call is paid for. An ask
    spends at most ``KG_ASK_MAX_TOKENS`` model tokens.
    """
    chosen = provider.strip()
    other = chosen in PROVIDERS and chosen != settings.KG_ASK_PROVIDER
    if other and not is_curator(request.user):
        raise ApiError(
            403,
            f"Only curators may choose the provider per request: this server asks with "
            f"{settings.KG_ASK_PROVIDER}. Leave out provider (or send "
            f"provider={settings.KG_ASK_PROVIDER}); nothing was asked.",
        )
    # A question the graph cannot take is a 400, an unusable model a 503, in words
    # (the API's handler for ``DomainError``).
    answer = ask_graph(q, at=instant(as_of), provider=provider or None)
    return answer.as_json()
