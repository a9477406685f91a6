"""The MCP server, driven by the SDK's own client: in process, over stdio (``manage.py
mcp`` spawned against the test database) and over streamable HTTP (``/api/mcp`` on the
live server, behind bearer tokens). Tools answer what the read API answers; bad
arguments and bad tokens are refused in words."""

from __future__ import annotations

import json
import sys

import anyio
import httpx2
import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.db import connection
from django.test import Client as DjangoClient
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from kgreview.api import throttle
from kgreview.api.mcp.server import SERVER, Caller, reading_as
from kgreview.api.services import api_token_create, api_token_revoke
from tests import ask_world
from tests.agents import helpers

TOOLS = {
    "search_concepts",
    "get_concept",
    "neighbours",
    "find_path",
    "learning_path",
    "ask",
    "explain_edge",
    "propose",
}
QUESTION = "How is RAG connected to embeddings?"


@pytest.fixture(autouse=True)
def fresh_counts():
    throttle.reset()
    yield
    throttle.reset()


def in_process(calls, *, caller: Caller | None = None):
    """Run ``calls(client)`` with the SDK's client connected to the server object. The
    client runs under ``async_to_sync``, so the tools' reads come back to this thread and
    see the test's transaction."""

    async def main():
        async with Client(SERVER) as client:
            return await calls(client)

    reset = reading_as(caller or Caller())
    try:
        return async_to_sync(main)()
    finally:
        reset.var.reset(reset)


def refusal(run) -> MCPError:
    """The MCP error ``run()`` raised, out of the task groups it may come wrapped in."""
    try:
        run()
    except BaseException as exc:  # noqa: BLE001 - unwrapped below, re-raised if not one
        found = exc
        while isinstance(found, BaseExceptionGroup) and len(found.exceptions) == 1:
            found = found.exceptions[0]
        if isinstance(found, MCPError):
            return found
        raise
    raise AssertionError("the call was not refused")


def text_of(result) -> str:
    return " ".join(part.text for part in result.content)


# --- In process: every tool, every refusal --------------------------------------------


@pytest.fixture
def world(db):
    return ask_world.build()


def test_the_tools_and_the_vocabulary_are_listed(world):
    """The SDK's client lists the seven read tools and propose, and both vocabulary
    resources."""

    async def calls(client):
        tools = await client.list_tools()
        resources = await client.list_resources()
        return {t.name for t in tools.tools}, {str(r.uri) for r in resources.resources}

    tools, resources = in_process(calls)
    assert tools == TOOLS
    assert resources == {
        "kgreview://vocabulary/relations",
        "kgreview://vocabulary/concept-types",
    }


def test_search_finds_a_concept_by_its_alias(world):
    """search_concepts answers the API's search: the concept, the name that matched."""

    async def calls(client):
        return await client.call_tool("search_concepts", {"query": "Low-rank adaptation"})

    result = in_process(calls)
    assert not result.is_error
    first = result.structured_content["results"][0]
    assert first["concept"] == {"id": world.id("LoRA"), "name": "LoRA"}
    assert first["match"] == "exact" and first["matched_name"] == "Low-rank adaptation"


def test_a_concept_is_read_by_name_with_its_edges_and_their_evidence(world):
    """get_concept takes a name (or an alias) and answers with the concept's edges."""

    async def calls(client):
        by_name = await client.call_tool("get_concept", {"concept": "RAG"})
        by_id = await client.call_tool("get_concept", {"concept": world.id("RAG")})
        return by_name, by_id

    by_name, by_id = in_process(calls)
    assert by_name.structured_content == by_id.structured_content
    edges = by_name.structured_content["outgoing"]
    assert [(e["source"]["name"], e["relation"], e["target"]["name"]) for e in edges] == [
        ("RAG", "builds_on", "Vector search")
    ]
    assert edges[0]["evidence"]["quote"] == "RAG builds on vector search."


def test_walks_answer_neighbours_paths_and_learning_paths(world):
    """neighbours, find_path and learning_path answer the API's walks."""

    async def calls(client):
        near = await client.call_tool("neighbours", {"concept": "Embeddings", "depth": 1})
        path = await client.call_tool(
            "find_path", {"source": "RAG", "target": "Embeddings", "direction": "both"}
        )
        plan = await client.call_tool("learning_path", {"concept": "Transformer"})
        return near, path, plan

    near, path, plan = in_process(calls)
    names = {n["name"] for n in near.structured_content["nodes"]}
    assert {"Embeddings", "Tokenization", "Attention", "Vector search"} <= names
    assert "Transformer" not in names
    assert path.structured_content["found"] is True
    hops = path.structured_content["hops"]
    assert [(h["from_concept"]["name"], h["to_concept"]["name"]) for h in hops] == [
        ("RAG", "Vector search"),
        ("Vector search", "Embeddings"),
    ]
    assert hops[0]["edge"]["id"] == world.edge("RAG", "builds_on", "Vector search").pk
    order = [s["concept"]["name"] for s in plan.structured_content["steps"]]
    assert order.index("Tokenization") < order.index("Embeddings") < order.index("Attention")
    assert order[-1] == "Transformer"


def test_ask_answers_with_cited_hops(world):
    """ask answers a connection question with a path whose every hop cites its edge,
    quote and source."""

    async def calls(client):
        return await client.call_tool("ask", {"question": QUESTION})

    answer = in_process(calls).structured_content
    assert answer["status"] == "answered"
    hops = answer["answer"]["paths"][0]
    assert [(h["source"], h["relation"], h["target"]) for h in hops] == [
        ("RAG", "builds_on", "Vector search"),
        ("Embeddings", "prerequisite", "Vector search"),
    ]
    assert hops[0]["edge"] == world.edge("RAG", "builds_on", "Vector search").pk
    assert hops[0]["quote"] == "RAG builds on vector search."
    assert all(h["source_slug"] == "transformers-and-friends" for h in hops)


def test_explain_edge_says_why_it_exists(db, f):
    """explain_edge answers with the edge's quote, the proposal's reason and the decision
    that made it."""
    from kgreview.graph.models import Edge
    from kgreview.review.decide import decisions

    doc = f.lesson("explain")
    p = f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"), doc=doc)
    reviewer = f.user("rita", role="reviewer")
    decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer, note="Clear cue phrase.")
    edge = Edge.objects.get(provenance__proposal=p)

    async def calls(client):
        return await client.call_tool("explain_edge", {"edge_id": edge.pk})

    body = in_process(calls).structured_content
    assert body["claim"] == "Embeddings is a prerequisite for Vector search"
    assert body["evidence"]["quote"].startswith("Before learning vector search")
    assert body["evidence"]["source"] == "explain"
    assert body["proposal"]["id"] == p.pk and body["proposal"]["reason"] == p.reason
    assert [(t["action"], t["by"], t["note"]) for t in body["trail"]] == [
        ("accept", "rita", "Clear cue phrase.")
    ]


@pytest.mark.parametrize(
    ("tool", "arguments", "words"),
    [
        ("search_concepts", {"query": "RAG\x00"}, "control character (such as a NUL byte)"),
        ("search_concepts", {"query": "   "}, "query is empty"),
        ("search_concepts", {"query": "RAG", "limit": 10**40}, "limit must be a whole number"),
        ("get_concept", {"concept": 10**40}, "concept must be a whole number"),
        ("get_concept", {"concept": 987654321}, "There is no concept with id 987654321"),
        ("get_concept", {"concept": "Quantum networking"}, "No concept is named"),
        ("get_concept", {"concept": "Low-rank adaptatio"}, "nearest names: “LoRA”"),
        ("neighbours", {"concept": "RAG", "depth": 99}, "depth must be a whole number from 1"),
        ("neighbours", {"concept": "RAG", "relations": ["cousin_of"]}, "Unknown relation"),
        ("find_path", {"source": "RAG", "target": "x" * 5000}, "at most 200 are read"),
        ("learning_path", {"concept": "RAG", "via": ["related"]}, "does not order study"),
        ("explain_edge", {"edge_id": 2**63 + 5}, "edge_id must be a whole number"),
        ("explain_edge", {"edge_id": -(10**5000)}, "a number of about 5,001 digits"),
        ("explain_edge", {"edge_id": 123456789}, "There is no edge with id 123456789"),
        ("ask", {"question": "Why?", "as_of": "yesterday"}, "is not an instant"),
        ("ask", {"question": "Why?", "as_of": "0001-01-01T00:00:00+14:00"}, "as_of"),
        ("get_concept", {"concept": "RAG", "as_of": "2026-02-30T00:00:00"}, "is not an instant"),
    ],
)
def test_bad_arguments_are_refused_in_words(world, tool, arguments, words):
    """What a caller sent that the graph cannot answer is a tool error in words, with no
    traceback."""

    async def calls(client):
        return await client.call_tool(tool, arguments)

    result = in_process(calls)
    assert result.is_error
    said = text_of(result)
    assert words in said
    assert "Traceback" not in said and 'File "' not in said


def test_a_wrong_type_is_refused_in_words(world):
    """A string where a number belongs is refused by the tool's schema, in words."""

    async def calls(client):
        return await client.call_tool("explain_edge", {"edge_id": "the first one"})

    result = in_process(calls)
    assert result.is_error and "edge_id" in text_of(result)
    assert "Traceback" not in text_of(result)


def test_the_vocabulary_resources_list_the_relation_and_concept_types(world):
    """The relation vocabulary and the concept types are readable resources."""
    from kgreview.graph.models import ConceptType

    ConceptType.objects.create(key="method", label="Method")

    async def calls(client):
        relations = await client.read_resource("kgreview://vocabulary/relations")
        types = await client.read_resource("kgreview://vocabulary/concept-types")
        return relations, types

    relations, types = in_process(calls)
    keys = {r["key"] for r in json.loads(relations.contents[0].text)}
    assert {"prerequisite", "builds_on", "part_of", "contrasts_with"} <= keys
    assert [t["key"] for t in json.loads(types.contents[0].text)] == ["method"]


def test_a_stdio_reader_is_held_to_its_accounts_heavy_rate(world, f, settings):
    """A named account's walks and asks spend KG_API_HEAVY_RATE; the refusal says when
    to try again."""
    settings.KG_API_HEAVY_RATE = "2/min"
    reader = f.user("agent-reader", role="viewer")

    async def calls(client):
        return [await client.call_tool("ask", {"question": QUESTION}) for _ in range(3)]

    results = in_process(calls, caller=Caller(user=reader))
    assert [r.is_error for r in results] == [False, False, True]
    assert "KG_API_HEAVY_RATE" in text_of(results[2]) and "Try again in" in text_of(results[2])


# --- Over stdio: manage.py mcp spawned against the test database -------------------------


def test_manage_py_mcp_serves_the_tools_over_stdio(transactional_db, reference_data):
    """The SDK's stdio client starts ``manage.py mcp``, lists the tools, searches a
    concept and asks a question whose hops cite their edges."""
    world = ask_world.build()
    server = StdioServerParameters(
        command=sys.executable,
        args=[str(helpers.ROOT / "manage.py"), "mcp"],
        env=helpers.subprocess_env(DATABASE_URL=helpers.test_database_url()),
        cwd=str(helpers.ROOT),
    )

    async def main():
        async with Client(server, read_timeout_seconds=60) as client:
            tools = await client.list_tools()
            found = await client.call_tool("search_concepts", {"query": "RAG"})
            answer = await client.call_tool("ask", {"question": QUESTION})
            missing = await client.call_tool("get_concept", {"concept": "Quantum networking"})
            return tools, found, answer, missing

    tools, found, answer, missing = anyio.run(main)
    assert {t.name for t in tools.tools} == TOOLS
    assert found.structured_content["results"][0]["concept"]["id"] == world.id("RAG")
    hops = answer.structured_content["answer"]["paths"][0]
    assert hops[0]["edge"] == world.edge("RAG", "builds_on", "Vector search").pk
    assert hops[0]["quote"] == "RAG builds on vector search."
    assert missing.is_error and "No concept is named “Quantum networking”" in text_of(missing)


def test_manage_py_mcp_refuses_an_unknown_user(db):
    """``--user`` names an account that exists and may read; another is refused in words."""
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="no user called 'nobody'"):
        call_command("mcp", "--user", "nobody")


# --- Over HTTP: /api/mcp on the live server ------------------------------------------------


def over_http(url: str, token: str, calls, mode: str = "auto"):
    async def main():
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,
        ):
            return await calls(client)

    return anyio.run(main)


@pytest.fixture
def served(transactional_db, reference_data, live_server, f):
    """The ask world on the live server, a viewer's token and the endpoint's URL."""
    world = ask_world.build()
    issued = api_token_create(owner=f.user(role="viewer"), name="tutor-bot", acting_user=None)
    return world, issued, f"{live_server.url}/api/mcp"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_an_agent_reads_over_http_with_its_token(served, mode):
    """Over streamable HTTP the SDK's client lists the tools, searches, asks (cited
    hops) and explains an edge, with a bearer token: in the current protocol and in the
    initialize handshake older clients still speak."""
    world, issued, url = served
    edge = world.edge("RAG", "builds_on", "Vector search")

    async def calls(client):
        tools = await client.list_tools()
        found = await client.call_tool("search_concepts", {"query": "vector"})
        answer = await client.call_tool("ask", {"question": QUESTION})
        why = await client.call_tool("explain_edge", {"edge_id": edge.pk})
        bad = await client.call_tool("get_concept", {"concept": "RAG\x00"})
        return tools, found, answer, why, bad

    tools, found, answer, why, bad = over_http(url, issued.secret, calls, mode)
    assert {t.name for t in tools.tools} == TOOLS
    assert found.structured_content["results"][0]["concept"]["name"] == "Vector search"
    hops = answer.structured_content["answer"]["paths"][0]
    assert hops[0]["edge"] == edge.pk and hops[0]["quote"] == "RAG builds on vector search."
    assert why.structured_content["edge"]["id"] == edge.pk
    assert why.structured_content["evidence"]["quote"] == "RAG builds on vector search."
    assert bad.is_error and "NUL byte" in text_of(bad)


def test_a_bad_token_is_refused_in_words(served):
    """A bearer that is no token never reaches a tool: the client is refused in words."""
    _world, _issued, url = served

    async def calls(client):
        return await client.list_tools()

    refused = refusal(lambda: over_http(url, "kgr_nothing_atall", calls))
    assert "Authentication needed: send Authorization: Bearer <token>" in str(refused)


def test_a_read_by_a_revoked_token_is_refused(served):
    """A token revoked while its agent is connected reads no more: the next call is
    refused in words."""
    _world, issued, url = served

    def revoke():
        """Revoke on a thread of its own (the live server's holds the test's connection),
        and close that thread's connection after."""
        try:
            api_token_revoke(token=issued.token, acting_user=None)
        finally:
            connection.close()

    async def calls(client):
        before = await client.call_tool("search_concepts", {"query": "RAG"})
        await sync_to_async(revoke, thread_sensitive=False)()
        with pytest.raises(MCPError, match="Revoked tokens"):
            await client.call_tool("search_concepts", {"query": "RAG"})
        return before

    before = over_http(url, issued.secret, calls)
    assert not before.is_error


def test_the_endpoint_answers_plain_http_refusals_as_json_rpc(db):
    """Without a token the endpoint answers 401 with a JSON-RPC error in words and a
    WWW-Authenticate header; a GET or a DELETE (no event stream, no session here) is a
    405 in words, answered at once."""
    client = DjangoClient()
    r = client.post(
        "/api/mcp",
        data=json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}),
        content_type="application/json",
    )
    assert r.status_code == 401 and r["WWW-Authenticate"].startswith("Bearer")
    assert r.json()["id"] == 7 and "Authentication needed" in r.json()["error"]["message"]
    for method in ("get", "delete"):
        got = getattr(client, method)("/api/mcp", headers={"Accept": "text/event-stream"})
        assert got.status_code == 405 and got["Allow"] == "POST"
        assert "stateless" in got.json()["error"]["message"]


def test_a_token_of_an_account_without_a_role_is_refused(db, f):
    """A live token whose account has no role reads nothing: 401 in words."""
    issued = api_token_create(owner=f.user("no-role"), name="stray", acting_user=None)
    r = DjangoClient().post(
        "/api/mcp",
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {issued.secret}"},
    )
    assert r.status_code == 401 and "accounts without a role" in r.json()["error"]["message"]


def test_http_requests_spend_the_accounts_api_rate(served, settings):
    """Every request to /api/mcp counts against the account's KG_API_RATE; a spent rate
    is refused in words that say when to try again."""
    _world, issued, url = served
    settings.KG_API_RATE = "5/min"

    async def calls(client):
        answered = 0
        for _ in range(10):
            try:
                await client.call_tool("search_concepts", {"query": "RAG"})
            except MCPError as exc:
                return answered, str(exc)
            answered += 1
        return answered, ""

    answered, words = over_http(url, issued.secret, calls)
    assert 1 <= answered < 5
    assert "KG_API_RATE" in words and "Try again in" in words


def test_a_form_post_is_refused_in_words(db, f):
    """A form (read by the middlewares before the view) is no JSON-RPC message: a 415
    in words, never a 500."""
    issued = api_token_create(owner=f.user(role="viewer"), name="form", acting_user=None)
    r = DjangoClient().post(
        "/api/mcp",
        data={"q": "rag"},
        headers={"Authorization": f"Bearer {issued.secret}"},
    )
    assert r.status_code == 415
    assert "Content-Type: application/json" in r.json()["error"]["message"]


def test_a_huge_number_on_the_wire_is_answered_in_words(db, f):
    """A tool call whose JSON holds a number of thousands of digits, posted as any HTTP
    client would, is refused by the transport's parser in words: a 400, never a 500."""
    issued = api_token_create(owner=f.user(role="viewer"), name="wire", acting_user=None)
    message = (
        '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": '
        '"explain_edge", "arguments": {"edge_id": ' + "9" * 5000 + "}}}"
    )
    r = DjangoClient().post(
        "/api/mcp",
        data=message,
        content_type="application/json",
        headers={
            "Authorization": f"Bearer {issued.secret}",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert r.status_code == 400
    assert r.json()["error"]["message"].startswith("Parse error: number out of range")


# --- Proposing: the writing API's door ------------------------------------------------

EDGE_ITEM = {
    "kind": "add_edge",
    "source": "RAG",
    "relation": "prerequisite",
    "target": "Embeddings",
    "confidence": 0.8,
    "reason": "The tutor saw learners stuck here.",
    "evidence": {
        "text": "To follow RAG you must know embeddings first.",
        "quote": "you must know embeddings",
    },
}


def test_propose_queues_for_review_names_the_account_and_never_twice(world, f):
    """Over stdio with --user (an account, no token), propose answers per item; the
    same idempotency key again is answered again and queues nothing more."""
    from kgreview.review.models import Proposal

    ada = f.user("ada", role="reviewer")
    item = {**EDGE_ITEM, "evidence": {**EDGE_ITEM["evidence"], "quote": "must know embeddings"}}

    async def calls(client):
        first = await client.call_tool("propose", {"proposals": [item], "idempotency_key": "b1"})
        again = await client.call_tool("propose", {"proposals": [item], "idempotency_key": "b1"})
        return first, again

    first, again = in_process(calls, caller=Caller(user=ada))
    assert not first.is_error, text_of(first)
    (result,) = first.structured_content["results"]
    assert result["result"] in ("queued", "merged"), result
    proposal = Proposal.objects.get(pk=result["id"])
    assert proposal.created_by == ada and proposal.decided_at is None
    assert again.structured_content["replayed"] is True
    assert again.structured_content["results"] == first.structured_content["results"]
    assert Proposal.objects.filter(created_by=ada).count() == 1


def test_propose_is_refused_in_words_without_an_account_or_with_a_read_token(world, f):
    from kgreview.review.models import Proposal

    before = Proposal.objects.count()
    reader = f.user("rita", role="viewer")
    token = api_token_create(owner=reader, name="reader", acting_user=None).token

    async def calls(client):
        return await client.call_tool("propose", {"proposals": [EDGE_ITEM]})

    nobody = in_process(calls, caller=Caller())
    assert nobody.is_error and "manage.py mcp --user NAME" in text_of(nobody)
    read_only = in_process(calls, caller=Caller(user=reader, api_token=token))
    assert read_only.is_error and "propose scope" in text_of(read_only)

    async def too_many(client):
        return await client.call_tool("propose", {"proposals": [EDGE_ITEM] * 1001})

    big = in_process(too_many, caller=Caller(user=reader))
    assert big.is_error and "at most 1,000" in text_of(big)
    assert Proposal.objects.count() == before


def test_an_agent_proposes_over_http_and_the_review_page_names_it(served, f):
    """The issue's case: an agent with a propose token proposes an edge over MCP; it
    waits on the Review page, which says who submitted it."""
    from kgreview.review.models import Proposal

    _, _, url = served
    agent = f.user("tutor", role="viewer")
    issued = api_token_create(owner=agent, name="tutor-bot", acting_user=None, scope="propose")

    async def calls(client):
        return await client.call_tool("propose", {"proposals": [EDGE_ITEM]})

    answer = over_http(url, issued.secret, calls)
    assert not answer.is_error, text_of(answer)
    (result,) = answer.structured_content["results"]
    proposal = Proposal.objects.get(pk=result["id"])
    reviewer = DjangoClient()
    reviewer.force_login(f.user("rev", role="reviewer"))
    page = reviewer.get(f"/review/focus/?id={proposal.pk}").content.decode()
    assert f'data-proposal="{proposal.pk}"' in page
    assert "<dt>Submitted by</dt>" in page and "tutor-bot (tutor) via MCP" in page
