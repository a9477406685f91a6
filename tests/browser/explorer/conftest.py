"""The explorer tests' fixtures: a laptop screen, no console error in any test, and the
curriculum around "Vector search" they draw."""

from __future__ import annotations

import pytest

from kgreview.graph.models import Edge
from kgreview.review.decide import decisions
from tests.browser.explorer.support import QUOTE, VIEWPORT, back_in_time


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    """A common laptop screen: the drawing and the panel must fit it side by side."""
    return {**browser_context_args, "viewport": VIEWPORT}


class ConsoleErrors(list):
    """Console errors and uncaught exceptions; a test that provokes a failed request on
    purpose names the browser's own message for it in ``expected``."""

    def __init__(self):
        super().__init__()
        self.expected: list[str] = []

    def unexpected(self) -> list[str]:
        return [m for m in self if not any(e in m for e in self.expected)]


@pytest.fixture(autouse=True)
def console_errors(page):
    """Every test ends with no console error and no page error."""
    seen = ConsoleErrors()

    def on_console(message):
        if message.type == "error":
            seen.append(f"console: {message.text} at {message.location.get('url')}")

    page.on("console", on_console)
    page.on("pageerror", lambda e: seen.append(f"pageerror: {e}"))
    yield seen
    assert seen.unexpected() == [], "the page logged errors"


@pytest.fixture
def curriculum(f):
    """Vector search at the centre of five edges; all recorded ten days ago but one,
    RAG related to Agents, recorded two days ago. The first edge came through review."""
    doc = f.lesson("vectors")
    rev = doc.current_revision
    emb, vs, rag = f.concept("Embeddings"), f.concept("Vector search"), f.concept("RAG")
    kw, tok, ag = f.concept("Keyword search"), f.concept("Tokenization"), f.concept("Agents")
    rita = f.user("rita", role="reviewer")
    p = f.edge_proposal(emb, vs, doc=doc, quote=QUOTE)
    decisions.proposal_accept(proposal_id=p.pk, acting_user=rita, note="Clear cue phrase.")
    reviewed = back_in_time(Edge.objects.get(provenance__proposal=p), 10)
    builds = back_in_time(
        f.edge(
            rag,
            vs,
            "builds_on",
            evidence=f.evidence(
                rev, "Retrieval-augmented generation (RAG) builds on vector search."
            ),
        ),
        10,
    )
    contrast = back_in_time(
        f.edge(
            kw,
            vs,
            "contrasts_with",
            evidence=f.evidence(rev, "Unlike keyword search, dense retrieval compares meanings."),
        ),
        10,
    )
    tokens = back_in_time(f.edge(tok, emb), 10)
    recent = back_in_time(f.edge(rag, ag, "related", reason="Agents often retrieve."), 2)
    return {
        "emb": emb,
        "vs": vs,
        "rag": rag,
        "kw": kw,
        "tok": tok,
        "ag": ag,
        "reviewed": reviewed,
        "builds": builds,
        "contrast": contrast,
        "tokens": tokens,
        "recent": recent,
    }
