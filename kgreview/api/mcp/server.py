"""The MCP server: tools that read the graph and resources that name its vocabulary.

Every tool answers with the read API's own answer for the same question (the functions
``api.endpoints`` serve ``/api/v1/`` with) or the graph's service (``ask_graph``), so a
tool never has a query of its own. The tools differ from the HTTP operations in one way
only: a concept may be named (a canonical name or an alias, resolved by the graph's name
search, exact matches only) as well as given by id, because an agent knows names.

**Who reads.** The transport says who the caller is before a tool runs (``reading_as``):
the account behind the bearer token for ``/api/mcp``, the account named by ``manage.py
mcp --user`` (or none: the operator at the machine) for stdio. The per-account rate
limits of the API apply: every HTTP request counts against ``KG_API_RATE`` where it
arrives (``http``), a stdio call counts there in the tool, and the walks and ask count
against ``KG_API_HEAVY_RATE`` too, as their HTTP operations do.

**Refusals.** What a caller sent that the graph cannot answer (a NUL byte, a number out
of range, a concept that does not exist, an unknown relation) is a tool error in words
(``ToolError``: the call's result has ``isError`` and the words), never a traceback. A
failure of the server itself is logged here and said in words too.

**Proposing.** The ``propose`` tool is the writing API's door (``POST
/api/v1/proposals``): it calls that API's service (``api.proposing.proposals_submit``)
for the caller's account and token (which must have the ``propose`` scope; over stdio,
the account ``--user`` names, without a token) and answers its per-item answer (queued,
merged, dropped), counted against ``KG_API_PROPOSE_RATE`` as the HTTP operation is.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from asgiref.sync import sync_to_async
from django.core.serializers.json import DjangoJSONEncoder
from django.db import close_old_connections
from django.utils.dateparse import parse_datetime
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import Field

from kgreview.core.errors import DomainError
from kgreview.core.forms import BIGGEST_INT
from kgreview.graph import learning, search, traversal
from kgreview.graph.asking import ask_graph
from kgreview.graph.models import Concept, RelationType
from kgreview.graph.type_selectors import concept_type_overview

from ..app import ApiError
from ..endpoints.concepts import concept_detail_answer, concept_search_answer
from ..endpoints.edges import edge_explain_answer
from ..endpoints.traversal import (
    STEPS_PAGE_MAX,
    learning_path_answer,
    neighbours_answer,
    path_answer,
)
from ..models import ProposalBatch
from ..params import concept_or_404, instant
from ..proposal_schemas import BATCH_MAX
from ..proposing import proposals_submit
from ..serializers import relation_out
from ..throttle import EVERY, HEAVY, PROPOSE

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
kgreview holds a reviewed knowledge graph: concepts joined by typed edges (the relation
vocabulary is the resource kgreview://vocabulary/relations), each edge with the quote,
source and decision that made it. Find a concept with search_concepts, read it with
get_concept, walk with neighbours, find_path and learning_path, ask a question in words
with ask (its answer cites an edge and a quote for every hop), and say why an edge exists
with explain_edge. Concepts may be named (a canonical name or an alias) or given by id.
Every read takes as_of (ISO 8601) to read the graph as it stood then. propose submits
concepts, edges, aliases and edge retirements, each with its evidence, for people to
review: nothing enters the graph until a reviewer accepts it.
"""

SERVER = MCPServer(
    "kgreview",
    title="kgreview knowledge graph",
    instructions=INSTRUCTIONS,
    version="1",
)

# --- Who reads ------------------------------------------------------------------------


@dataclass(frozen=True)
class Caller:
    """Who a tool reads for, in the shape the API's throttles read a request in
    (``user``, ``api_token``). ``counted``: the transport already counted this call
    against ``KG_API_RATE`` (HTTP counts each request where it arrives). ``own_thread``:
    a long-lived process (stdio) whose database connections the tool must keep fresh,
    as Django's request cycle does for the web."""

    user: Any = None
    api_token: Any = None
    counted: bool = False
    own_thread: bool = False


_CALLER: ContextVar[Caller | None] = ContextVar("kgreview_mcp_caller", default=None)


def reading_as(caller: Caller):
    """Set who the next tool calls read for (in this context); returns the reset token."""
    return _CALLER.set(caller)


def _caller() -> Caller:
    found = _CALLER.get()
    if found is None:  # an unauthenticated transport is a programming error, not a read
        raise ToolError("This MCP connection has no caller; nothing was read.")
    return found


def _throttled(throttle, caller: Caller) -> str | None:
    """Why the account may not read now, in words, or None."""
    if throttle.allow_request(caller):
        return None
    wait = throttle.wait()
    after = f" Try again in {max(1, math.ceil(wait))} seconds." if wait else ""
    rate = "KG_API_HEAVY_RATE" if throttle is HEAVY else "KG_API_RATE"
    return (
        f"Too many requests from this account: the API's rate limit ({rate}, counted per "
        f"account across all its tokens, its browser session and MCP) is spent for now.{after}"
    )


FAILED = "The server failed to answer this call; the failure is logged. Try again."


def _json_safe(answer: Any) -> Any:
    """The answer as JSON values (instants as ISO 8601 text), as the API writes it."""
    return json.loads(json.dumps(answer, cls=DjangoJSONEncoder))


def _guarded(read: Callable[[], Any], heavy: bool, proposing: bool = False) -> Any:
    """Run one read (or a proposing batch) for the current caller: count it, call it,
    and turn every refusal into a ``ToolError`` in words."""
    caller = _caller()
    if caller.own_thread:
        close_old_connections()
    try:
        limits = (
            ([] if caller.counted else [EVERY])
            + ([HEAVY] if heavy else [])
            + ([PROPOSE] if proposing else [])
        )
        for throttle in limits:
            refusal = _throttled(throttle, caller)
            if refusal:
                raise ToolError(refusal)
        return _json_safe(read())
    except ToolError:
        raise
    except ApiError as exc:
        raise ToolError(exc.detail) from None
    except DomainError as exc:
        raise ToolError(exc.message) from None
    except Exception:
        log.exception("An MCP tool failed.")
        raise ToolError(FAILED) from None


async def _read(read: Callable[[], Any], *, heavy: bool = False, proposing: bool = False) -> Any:
    """Run a read on the thread that owns the caller's database connection (the web
    request's, or the one thread of a stdio server): the ORM is synchronous."""
    return await sync_to_async(_guarded, thread_sensitive=True)(read, heavy, proposing)


# --- Reading the arguments ------------------------------------------------------------

CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: The longest name or search text a tool takes (the API's ``q`` takes as much).
MAX_TEXT = 200


def _text(value: str, field: str, *, most: int = MAX_TEXT) -> str:
    """``value`` stripped, refused in words when empty, too long or holding control
    characters (a NUL byte and its kind: no name or text of the graph holds one)."""
    if CONTROL.search(value):
        raise ToolError(f"{field} holds a control character (such as a NUL byte); send plain text.")
    text = value.strip()
    if not text:
        raise ToolError(f"{field} is empty; give a name or words.")
    if len(text) > most:
        raise ToolError(f"{field} has {len(text):,} characters; at most {most:,} are read.")
    return text


def _number(value: int, field: str, least: int, most: int) -> int:
    if isinstance(value, bool) or not least <= value <= most:
        # A number of thousands of digits cannot even be printed (int_max_str_digits).
        digits = math.floor(abs(value).bit_length() * math.log10(2)) + 1
        shown = str(value) if abs(value) < 10**30 else f"a number of about {digits:,} digits"
        raise ToolError(f"{field} must be a whole number from {least} to {most:,}; {shown} is not.")
    return value


def _instant(value: str | None) -> datetime | None:
    """``as_of`` read as the API reads it: ISO 8601, naive in the server's time zone."""
    if value is None or not value.strip():
        return None
    text = _text(value, "as_of", most=64)
    try:
        parsed = parse_datetime(text)
    except ValueError:
        parsed = None
    if parsed is None:
        raise ToolError(
            f"as_of “{text}” is not an instant; send ISO 8601, such as 2026-01-31T12:00:00Z."
        )
    return instant(parsed)


def _relations(keys: list[str] | None, field: str) -> list[str] | None:
    if not keys:
        return None
    if len(keys) > 50:
        raise ToolError(f"{field} names {len(keys)} relations; the vocabulary has fewer.")
    return [_text(k, field, most=100) for k in keys]


def _concept(value: int | str, field: str, at: datetime | None) -> Concept:
    """The concept given by id or named by its canonical name or an alias (an exact
    match of the graph's name search at ``at``); refused in words, with the nearest
    names, when none is."""
    if isinstance(value, int):
        return concept_or_404(_number(value, field, 1, BIGGEST_INT))
    name = _text(value, field)
    hits = search.concept_search(q=name, limit=5, at=at)
    exact = [h for h in hits if h.match == "exact"]
    if exact:
        return exact[0].concept
    if name.isdigit():  # an id sent as text ("42"), when no concept is named so
        return concept_or_404(int(name))
    near = ", ".join(f"“{h.concept.name}”" for h in hits[:3])
    nearest = f" The nearest names: {near}." if near else ""
    raise ToolError(
        f"No concept is named “{name}” in the graph.{nearest} search_concepts finds "
        "concepts by part of a name."
    )


# --- Tools ----------------------------------------------------------------------------

ConceptArg = Annotated[
    int | str,
    Field(description="A concept's canonical name or one of its aliases, or its numeric id."),
]
AsOf = Annotated[
    str | None,
    Field(description="Read the graph as it stood at this instant (ISO 8601); now when left out."),
]
Relations = Annotated[
    list[str] | None,
    Field(description="Only these relation types (keys such as prerequisite, builds_on)."),
]
Direction = Literal["out", "in", "both"]


@SERVER.tool(
    description="Find concepts by name: canonical names and aliases, exact matches first, "
    "then prefix, then fuzzy matches. Returns each concept's id, name, status and type."
)
async def search_concepts(
    query: Annotated[str, Field(description="A name or part of one.")],
    limit: Annotated[int, Field(description="How many concepts at most (1–100).")] = 10,
    type: Annotated[  # noqa: A002 - the API's parameter name
        str | None, Field(description="Only concepts of this type or a type below it.")
    ] = None,
    as_of: AsOf = None,
) -> dict[str, Any]:
    def read():
        return concept_search_answer(
            q=_text(query, "query"),
            limit=_number(limit, "limit", 1, 100),
            at=_instant(as_of),
            type=_text(type, "type", most=64) if type is not None else None,
        )

    return await _read(read)


@SERVER.tool(
    description="A concept with its names, type, attributes and every edge it takes part "
    "in, each edge with its confidence, reason and evidence (quote, source, revision)."
)
async def get_concept(concept: ConceptArg, as_of: AsOf = None) -> dict[str, Any]:
    def read():
        at = _instant(as_of)
        return concept_detail_answer(concept=_concept(concept, "concept", at), at=at)

    return await _read(read)


@SERVER.tool(
    description="The concepts within depth steps of a concept (nearest first) and the "
    "edges among them. direction: out follows edges from source to target, in the other "
    "way, both either (symmetric edges are walked both ways)."
)
async def neighbours(
    concept: ConceptArg,
    depth: Annotated[int, Field(description="Steps away, 1–6.")] = 1,
    direction: Direction = "both",
    relations: Relations = None,
    limit: Annotated[int, Field(description="How many concepts at most.")] = 50,
    as_of: AsOf = None,
) -> dict[str, Any]:
    def read():
        at = _instant(as_of)
        return neighbours_answer(
            concept=_concept(concept, "concept", at),
            depth=_number(depth, "depth", 1, traversal.MAX_DEPTH),
            direction=direction,
            relations=_relations(relations, "relations"),
            limit=_number(limit, "limit", 1, traversal.NODE_LIMIT),
            at=at,
        )

    return await _read(read, heavy=True)


@SERVER.tool(
    description="A shortest path from one concept to another within max_depth steps, each "
    "hop with its edge; found is false when the graph holds none."
)
async def find_path(
    source: ConceptArg,
    target: ConceptArg,
    direction: Direction = "out",
    relations: Relations = None,
    max_depth: Annotated[int, Field(description="The most steps, 1–6.")] = 4,
    as_of: AsOf = None,
) -> dict[str, Any]:
    def read():
        at = _instant(as_of)
        return path_answer(
            start=_concept(source, "source", at),
            goal=_concept(target, "target", at),
            direction=direction,
            relations=_relations(relations, "relations"),
            max_depth=_number(max_depth, "max_depth", 1, traversal.MAX_DEPTH),
            at=at,
        )

    return await _read(read, heavy=True)


@SERVER.tool(
    description="Everything a concept needs, in a valid study order (foundations first). "
    "via names the ordering relations: "
    + " and ".join(learning.STUDY_ORDER)
    + " (prerequisite by default). Long paths come in pages: offset and next_offset."
)
async def learning_path(
    concept: ConceptArg,
    via: Relations = None,
    depth: Annotated[
        int | None, Field(description="Only needs at most this many steps away (1–6).")
    ] = None,
    limit: Annotated[int, Field(description="Steps in one answer.")] = 200,
    offset: Annotated[int, Field(description="The first step to answer with.")] = 0,
    as_of: AsOf = None,
) -> dict[str, Any]:
    def read():
        at = _instant(as_of)
        return learning_path_answer(
            target=_concept(concept, "concept", at),
            via=_relations(via, "via"),
            at=at,
            limit=_number(limit, "limit", 1, STEPS_PAGE_MAX),
            offset=_number(offset, "offset", 0, 1_000_000),
            depth=_number(depth, "depth", 1, traversal.MAX_DEPTH) if depth is not None else None,
        )

    return await _read(read, heavy=True)


@SERVER.tool(
    description="Answer a question in words from the graph: what to learn before X, how X "
    "is connected to Y, is X a prerequisite for Y, what is part of X. status is answered, "
    "no_path (the graph was searched and holds no such chain: a checked absence) or "
    "not_understood. Every hop of answer.paths cites its edge, the quote and its source."
)
async def ask(
    question: Annotated[str, Field(description="The question, in English.")],
    as_of: AsOf = None,
) -> dict[str, Any]:
    def read():
        # The server's own provider (KG_ASK_PROVIDER): choosing another is the API's
        # curators-only parameter, and a tool call has no page to say so on.
        return ask_graph(_text(question, "question", most=1000), at=_instant(as_of)).as_json()

    return await _read(read, heavy=True)


@SERVER.tool(
    description="Why an edge exists: its evidence quoted in context (source, revision), "
    "the reason and confidence it was proposed with, the decisions made about it and "
    "what it replaced. Edge ids are in the answers of the other tools."
)
async def explain_edge(
    edge_id: Annotated[int, Field(description="The edge's id.")],
    as_of: AsOf = None,
) -> dict[str, Any]:
    def read():
        return edge_explain_answer(
            edge_id=_number(edge_id, "edge_id", 1, BIGGEST_INT), at=_instant(as_of)
        )

    return await _read(read)


# --- Proposing: the writing API's door ------------------------------------------------


@SERVER.tool(
    description="Propose changes to the graph for people to review; nothing enters the "
    "graph until a reviewer accepts it. proposals is a list (at most 1,000) in the shape "
    "of POST /api/v1/proposals: {kind: add_edge, source, relation, target, confidence, "
    "reason, evidence: {source: SLUG, revision?, quote} or {text, quote} or {url, quote}}, "
    "{kind: add_concept, name, aliases?, description?}, {kind: add_alias, concept, alias}, "
    "{kind: invalidate_edge, edge}. Each item is answered queued (its proposal id), merged "
    "into an open proposal, or dropped with the reason. Send the same idempotency_key "
    "again to retry a batch without queuing it twice. Needs a token with the propose "
    "scope (HTTP) or manage.py mcp --user NAME (stdio)."
)
async def propose(
    proposals: Annotated[
        list[dict[str, Any]],
        Field(description="The proposals, as POST /api/v1/proposals takes them."),
    ],
    idempotency_key: Annotated[
        str | None, Field(description="A key naming this batch, for retries.")
    ] = None,
) -> dict[str, Any]:
    def write():
        caller = _caller()
        if caller.user is None:
            raise ToolError(
                "Proposing needs an account to name on each proposal: start the server "
                "with manage.py mcp --user NAME, or connect over HTTP with a token of the "
                "propose scope. Nothing was queued."
            )
        if len(proposals) > BATCH_MAX:
            raise ToolError(
                f"A batch holds at most {BATCH_MAX:,} proposals; this one has "
                f"{len(proposals):,}. Nothing was queued."
            )
        return proposals_submit(
            acting_user=caller.user,
            token=caller.api_token,
            items=proposals,
            idempotency_key=idempotency_key,
            via=ProposalBatch.Via.MCP,
        ).as_json()

    return await _read(write, proposing=True)


# --- Resources: the vocabulary ---------------------------------------------------------


def _relation_types() -> list[dict]:
    return [relation_out(r, at=None) for r in RelationType.objects.order_by("key")]


def _concept_types() -> list[dict]:
    return [
        {
            "key": t.key,
            "label": t.label,
            "description": t.description,
            "parent": t.parent.key if t.parent is not None else None,
            "active": t.active,
            "concepts": getattr(t, "concepts_now", 0),  # the overview counts them
        }
        for t in concept_type_overview()
    ]


async def _vocabulary(read: Callable[[], list[dict]]) -> str:
    """A vocabulary as JSON text; a refusal (a spent rate) is a resource error in words."""
    try:
        return json.dumps(await _read(read), ensure_ascii=False)
    except ToolError as exc:
        raise ResourceError(str(exc)) from None


@SERVER.resource(
    "kgreview://vocabulary/relations",
    name="relation-types",
    title="Relation types",
    description="The relation vocabulary: each type's key, label, verb, meaning, whether "
    "it is directed, symmetric and acyclic, whether it is active, and how it orders study.",
    mime_type="application/json",
)
async def relation_types() -> str:
    return await _vocabulary(_relation_types)


@SERVER.resource(
    "kgreview://vocabulary/concept-types",
    name="concept-types",
    title="Concept types",
    description="The concept types: each type's key, label, meaning, parent type, whether "
    "it is active and how many active concepts have it.",
    mime_type="application/json",
)
async def concept_types() -> str:
    return await _vocabulary(_concept_types)
