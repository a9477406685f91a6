"""The read API: every endpoint with and without a token, and with as_of."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from kgreview.api.models import ApiToken
from kgreview.api.services import api_token_create, api_token_revoke
from kgreview.graph import services
from kgreview.graph.models import Edge

pytestmark = pytest.mark.django_db


def _shift(edge: Edge, *, back: timedelta) -> None:
    """Move an edge's times into the past, as if it had been recorded then."""
    Edge.objects.filter(pk=edge.pk).update(
        valid_at=edge.valid_at - back, recorded_at=edge.recorded_at - back
    )


@pytest.fixture
def graph(f):
    """embeddings → vector search → RAG (prerequisite), RAG related to agents, with
    evidence on the first edge."""
    doc = f.lesson("vectors")
    rev = doc.current_revision
    emb, vs, rag, ag = (
        f.concept("Embeddings", aliases=["text embeddings"]),
        f.concept("Vector search"),
        f.concept("Retrieval-augmented generation", aliases=["RAG"]),
        f.concept("Agents"),
    )
    e1 = f.edge(
        emb,
        vs,
        evidence=f.evidence(rev, "Before learning vector search you should understand embeddings."),
    )
    e2 = f.edge(vs, rag)
    e3 = f.edge(rag, ag, "related")
    return {"emb": emb, "vs": vs, "rag": rag, "ag": ag, "e1": e1, "e2": e2, "e3": e3}


URLS = [
    "/api/v1/relations",
    "/api/v1/concepts?q=rag",
    "/api/v1/concepts/{rag}",
    "/api/v1/concepts/{rag}/neighbours",
    "/api/v1/path?from_id={emb}&to_id={rag}",
    "/api/v1/concepts/{rag}/learning-path",
    "/api/v1/edges/{e1}",
    "/api/v1/diff?since=2000-01-01T00:00:00Z",
    "/api/v1/ask?q=How+is+RAG+connected+to+embeddings%3F",
    "/api/v1/agreement",
]


def _url(template: str, graph) -> str:
    return template.format(**{k: v.pk for k, v in graph.items()})


@pytest.mark.parametrize("template", URLS)
def test_every_endpoint_refuses_a_request_without_credentials(graph, template):
    """No token and no session: 401 with words that say how to authenticate."""
    r = Client().get(_url(template, graph))
    assert r.status_code == 401
    assert "Bearer" in r.json()["detail"]


@pytest.mark.parametrize("template", URLS)
def test_every_endpoint_answers_an_agent_with_a_token(graph, agent, template):
    """A read-only bearer token reads every endpoint."""
    r = agent.get(_url(template, graph))
    assert r.status_code == 200, r.content


@pytest.mark.parametrize("template", URLS)
def test_every_endpoint_answers_a_signed_in_browser(graph, f, template):
    """The explorer's session works without a token."""
    c = Client()
    c.force_login(f.user(role="reviewer"))
    assert c.get(_url(template, graph)).status_code == 200


@pytest.mark.parametrize("template", URLS)
def test_every_endpoint_takes_as_of(graph, agent, template):
    """as_of is accepted everywhere and echoed where the answer carries it."""
    sep = "&" if "?" in template else "?"
    r = agent.get(_url(template, graph) + sep + "as_of=2030-01-01T00:00:00Z")
    assert r.status_code == 200, r.content


def test_a_wrong_or_revoked_token_is_refused(graph, f):
    """Tokens that do not match, or were revoked, get 401."""
    viewer = f.user(role="viewer")
    issued = api_token_create(owner=viewer, name="old-bot", acting_user=None)
    assert (
        Client(headers={"Authorization": "Bearer kgr_nope_nope"})
        .get("/api/v1/relations")
        .status_code
        == 401
    )
    ok = Client(headers={"Authorization": f"Bearer {issued.secret}"})
    assert ok.get("/api/v1/relations").status_code == 200
    api_token_revoke(token=issued.token, acting_user=viewer)
    assert ok.get("/api/v1/relations").status_code == 401


def test_a_token_of_a_user_without_a_role_is_refused(graph, f):
    """A token cannot read more than its owner could in the browser."""
    issued = api_token_create(owner=f.user(), name="nobody-bot", acting_user=None)
    c = Client(headers={"Authorization": f"Bearer {issued.secret}"})
    assert c.get("/api/v1/relations").status_code == 401


def test_a_token_records_when_it_was_last_used(graph, f, agent, token):
    """last_used_at is set on use, so curators can see tokens in service."""
    agent.get("/api/v1/relations")
    assert ApiToken.objects.get(prefix=token.split("_")[1]).last_used_at is not None


def test_a_token_cannot_write(graph, agent):
    """The API has no unsafe methods: a POST is refused whatever the token."""
    r = agent.post("/api/v1/concepts", data={"q": "x"})
    assert r.status_code == 405


def test_search_finds_concepts_by_alias_and_by_a_misspelling(graph, agent):
    """Exact alias hits come first; a typo still finds the concept, once."""
    body = agent.get("/api/v1/concepts?q=RAG").json()
    assert body["results"][0]["concept"]["name"] == "Retrieval-augmented generation"
    assert body["results"][0]["match"] == "exact"
    assert body["results"][0]["matched_name"] == "RAG"
    body = agent.get("/api/v1/concepts?q=embedings").json()
    names = [h["concept"]["name"] for h in body["results"]]
    assert names.count("Embeddings") == 1
    assert body["results"][0]["match"] == "fuzzy"


def test_search_as_of_before_a_concept_existed_does_not_find_it(graph, agent):
    """A concept created after as_of is not part of that graph."""
    past = (timezone.now() - timedelta(days=1)).isoformat()
    body = agent.get("/api/v1/concepts", {"q": "Embeddings", "as_of": past}).json()
    assert body["results"] == []


def test_search_needs_a_query_in_words(graph, agent):
    """A blank query is a 400 that says what to send."""
    r = agent.get("/api/v1/concepts?q=%20")
    assert r.status_code == 400
    assert "search for" in r.json()["detail"]


def test_concept_detail_lists_edges_with_provenance(graph, agent):
    """Each edge carries its evidence, confidence, reason and who decided."""
    body = agent.get(f"/api/v1/concepts/{graph['vs'].pk}").json()
    assert [e["source"]["name"] for e in body["incoming"]] == ["Embeddings"]
    assert [e["target"]["name"] for e in body["outgoing"]] == ["Retrieval-augmented generation"]
    ev = body["incoming"][0]["evidence"]
    assert ev["source"] == "vectors" and ev["revision"] == 1
    assert ev["quote"].startswith("Before learning vector search")
    assert body["incoming"][0]["confidence"] == 0.9


def test_concept_detail_as_of_shows_the_edges_of_that_time(graph, agent, f):
    """An edge invalidated later still shows as of a time before; not after."""
    _shift(graph["e2"], back=timedelta(hours=2))
    before = timezone.now() - timedelta(hours=1)
    services.edge_invalidate(edge=graph["e2"], reason="Wrong direction.", acting_user=None)
    now_body = agent.get(f"/api/v1/concepts/{graph['rag'].pk}").json()
    assert now_body["incoming"] == []
    past_body = agent.get(
        f"/api/v1/concepts/{graph['rag'].pk}", {"as_of": before.isoformat()}
    ).json()
    assert [e["id"] for e in past_body["incoming"]] == [graph["e2"].pk]
    assert past_body["incoming"][0]["status"] == "invalidated"


def test_a_merged_concept_points_at_its_survivor(graph, agent, f):
    """Old ids keep working: the merged concept says where it went."""
    twin = f.concept("Vector retrieval")
    services.concept_merge(loser=twin, survivor=graph["vs"], reason="Same thing.", acting_user=None)
    body = agent.get(f"/api/v1/concepts/{twin.pk}").json()
    assert body["status"] == "merged"
    assert body["merged_into"]["id"] == graph["vs"].pk


def test_unknown_ids_are_404_in_words(graph, agent):
    """A missing concept or edge says which id was not found."""
    r = agent.get("/api/v1/concepts/999999")
    assert r.status_code == 404 and "999999" in r.json()["detail"]
    r = agent.get("/api/v1/edges/999999")
    assert r.status_code == 404 and "999999" in r.json()["detail"]


def test_neighbours_follow_direction_and_relation_filters(graph, agent):
    """out, in and both walk the right way; relation filters types."""
    vs = graph["vs"].pk
    names = lambda body: sorted(n["name"] for n in body["nodes"])  # noqa: E731
    out = agent.get(f"/api/v1/concepts/{vs}/neighbours?direction=out&depth=2").json()
    assert names(out) == ["Agents", "Retrieval-augmented generation", "Vector search"]
    inn = agent.get(f"/api/v1/concepts/{vs}/neighbours?direction=in&depth=2").json()
    assert names(inn) == ["Embeddings", "Vector search"]
    prereq = agent.get(f"/api/v1/concepts/{vs}/neighbours?depth=3&relation=prerequisite").json()
    assert "Agents" not in names(prereq)
    assert {e["relation"] for e in prereq["edges"]} == {"prerequisite"}
    assert {n["distance"] for n in out["nodes"]} == {0, 1, 2}


def test_neighbours_reject_bad_parameters_in_words(graph, agent):
    """Unknown relations, directions and depths are 400s that name the problem."""
    vs = graph["vs"].pk
    r = agent.get(f"/api/v1/concepts/{vs}/neighbours?relation=teaches")
    assert r.status_code == 400 and "teaches" in r.json()["detail"]
    assert "prerequisite" in r.json()["detail"]
    r = agent.get(f"/api/v1/concepts/{vs}/neighbours?direction=sideways")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "direction"]
    r = agent.get(f"/api/v1/concepts/{vs}/neighbours?depth=99")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "depth"]
    assert "less than or equal to 6" in r.json()["detail"][0]["msg"]


def test_neighbours_as_of_before_an_edge_leave_it_out(graph, agent):
    """The neighbourhood of the past lacks edges recorded since."""
    _shift(graph["e1"], back=timedelta(hours=2))
    before = (timezone.now() - timedelta(hours=1)).isoformat()
    body = agent.get(f"/api/v1/concepts/{graph['vs'].pk}/neighbours", {"as_of": before}).json()
    assert sorted(n["name"] for n in body["nodes"]) == ["Embeddings", "Vector search"]
    assert body["as_of"] is not None


def test_path_between_two_concepts_reads_hop_by_hop(graph, agent):
    """The shortest path names each hop and the edge behind it."""
    body = agent.get(
        f"/api/v1/path?from_id={graph['emb'].pk}&to_id={graph['ag'].pk}&max_depth=4"
    ).json()
    assert body["found"] is True and body["length"] == 3
    assert [c["name"] for c in body["concepts"]] == [
        "Embeddings",
        "Vector search",
        "Retrieval-augmented generation",
        "Agents",
    ]
    assert body["hops"][0]["edge"]["id"] == graph["e1"].pk
    assert all(h["along_edge_direction"] for h in body["hops"])


def test_path_against_the_edges_is_found_only_when_asked(graph, agent):
    """direction=out does not walk backwards; direction=both does."""
    url = f"/api/v1/path?from_id={graph['rag'].pk}&to_id={graph['emb'].pk}"
    assert agent.get(url).json()["found"] is False
    body = agent.get(url + "&direction=both").json()
    assert body["found"] is True and body["length"] == 2
    assert not body["hops"][0]["along_edge_direction"]


def test_path_beyond_max_depth_is_not_found_in_words(graph, agent):
    """A path longer than max_depth is reported as not found, with the limit."""
    body = agent.get(
        f"/api/v1/path?from_id={graph['emb'].pk}&to_id={graph['ag'].pk}&max_depth=2"
    ).json()
    assert body["found"] is False and "within 2 steps" in body["message"]


def test_learning_path_orders_prerequisites_before_the_target(graph, agent):
    """Foundations first, target last, each step listing what it needs."""
    body = agent.get(f"/api/v1/concepts/{graph['rag'].pk}/learning-path").json()
    assert body["ok"] is True and body["cycle"] is None
    assert [s["concept"]["name"] for s in body["steps"]] == [
        "Embeddings",
        "Vector search",
        "Retrieval-augmented generation",
    ]
    assert body["steps"][2]["needs"][0]["concept"]["name"] == "Vector search"


def test_learning_path_names_a_planted_cycle(graph, agent, f):
    """prerequisite one way and builds_on the other make a cycle of needs, named."""
    # "Vector search builds on RAG" means RAG comes first, yet RAG needs vector search.
    f.edge(graph["vs"], graph["rag"], "builds_on")
    body = agent.get(
        f"/api/v1/concepts/{graph['rag'].pk}/learning-path?via=prerequisite&via=builds_on"
    ).json()
    assert body["ok"] is False
    names = {c["name"] for c in body["cycle"]["concepts"]}
    assert names == {"Vector search", "Retrieval-augmented generation"}
    assert "cycle" in body["cycle"]["message"]
    assert len(body["cycle"]["edges"]) == 2
    assert [s["concept"]["name"] for s in body["steps"]] == ["Embeddings"]


def test_learning_path_refuses_relations_that_do_not_order_study(graph, agent):
    """via=related is a 400 naming the relations that do order study."""
    r = agent.get(f"/api/v1/concepts/{graph['rag'].pk}/learning-path?via=related")
    assert r.status_code == 400 and "prerequisite" in r.json()["detail"]


def test_edge_explain_gives_evidence_in_context_and_the_decision_trail(f, agent):
    """Explain quotes the evidence with the text around it, the agent's reason, and
    every decision on the proposal that made the edge."""
    from kgreview.review.decide import decisions

    doc = f.lesson("explain")
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    p = f.edge_proposal(emb, vs, doc=doc)
    reviewer = f.user("rita", role="reviewer")
    decisions.proposal_accept(proposal_id=p.pk, acting_user=reviewer, note="Clear cue phrase.")
    edge = Edge.objects.get(provenance__proposal=p)
    body = agent.get(f"/api/v1/edges/{edge.pk}").json()
    assert body["claim"] == "Embeddings is a prerequisite for Vector search"
    assert body["evidence"]["quote"].startswith("Before learning vector search")
    assert body["evidence"]["source"] == "explain"
    assert body["evidence"]["in_current_revision"] is True
    assert body["evidence"]["after"].startswith("\nRetrieval-augmented")
    assert body["proposal"]["id"] == p.pk
    assert [t["action"] for t in body["trail"]] == ["accept"]
    assert body["trail"][0]["by"] == "rita" and body["trail"][0]["note"] == "Clear cue phrase."
    assert body["edge"]["decided_by"] == "rita"


def test_edge_explain_says_when_the_evidence_left_the_source(f, agent):
    """After the lesson is rewritten without the quote, explain says so."""
    doc = f.lesson("rewritten")
    rev = doc.current_revision
    quote = "Before learning vector search you should understand embeddings."
    edge = f.edge(
        f.concept("Embeddings"), f.concept("Vector search"), evidence=f.evidence(rev, quote)
    )
    services.source_import(
        slug="rewritten", title="Rewritten", text="Nothing about it now.\n", acting_user=None
    )
    body = agent.get(f"/api/v1/edges/{edge.pk}").json()
    assert body["evidence"]["revision"] == 1
    assert body["evidence"]["current_revision"] == 2
    assert body["evidence"]["in_current_revision"] is False


def test_edge_explain_as_of_tells_the_state_then(graph, agent):
    """Before the edge was recorded it was not_yet; now it is active."""
    past = (timezone.now() - timedelta(days=1)).isoformat()
    body = agent.get(f"/api/v1/edges/{graph['e1'].pk}", {"as_of": past}).json()
    assert body["state_at"] == "not_yet"
    assert agent.get(f"/api/v1/edges/{graph['e1'].pk}").json()["state_at"] == "active"


def test_diff_lists_added_invalidated_and_superseded_edges(graph, agent):
    """Between two instants: new edges, retired ones, and replaced ones with their
    replacement."""
    for e in (graph["e1"], graph["e2"], graph["e3"]):
        _shift(e, back=timedelta(hours=3))
    t0 = timezone.now() - timedelta(hours=1)
    services.edge_invalidate(edge=graph["e3"], reason="Too vague.", acting_user=None)
    new = services.edge_supersede(
        edge=graph["e1"], confidence=0.95, reason="Sharper.", acting_user=None
    )
    body = agent.get("/api/v1/diff", {"since": t0.isoformat()}).json()
    assert body["counts"]["invalidated"] == 1
    assert body["invalidated"][0]["id"] == graph["e3"].pk
    assert body["counts"]["superseded"] == 1
    assert body["superseded"][0]["old"]["id"] == graph["e1"].pk
    assert body["superseded"][0]["new"]["id"] == new.pk
    assert [e["id"] for e in body["added"]] == [new.pk]


def test_diff_needs_since_in_words(agent):
    """Leaving out since is a 422 that names the missing field."""
    r = agent.get("/api/v1/diff")
    assert r.status_code == 422
    assert "since" in r.content.decode()


def test_the_openapi_schema_is_published(agent):
    """The schema is published to the API's callers and lists every endpoint with bearer
    security."""
    body = agent.get("/api/openapi.json").json()
    assert set(body["paths"]) >= {
        "/api/v1/relations",
        "/api/v1/concepts",
        "/api/v1/concepts/{concept_id}",
        "/api/v1/concepts/{concept_id}/neighbours",
        "/api/v1/path",
        "/api/v1/concepts/{concept_id}/learning-path",
        "/api/v1/edges/{edge_id}",
        "/api/v1/diff",
        "/api/v1/ask",
    }
    assert "BearerToken" in body["components"]["securitySchemes"]


def test_as_of_with_an_odd_offset_or_out_of_range_is_answered_not_crashed(graph, agent):
    """Offsets like +20:58 are read as UTC; dates that overflow are a 400 in words."""
    r = agent.get("/api/v1/relations", {"as_of": "3489-01-11T13:15:27+20:58"})
    assert r.status_code == 200
    r = agent.get("/api/v1/relations", {"as_of": "0001-01-01T00:00:00+23:00"})
    assert r.status_code == 400 and "outside the range" in r.json()["detail"]


def test_neighbours_say_whether_the_centre_existed_at_as_of(graph, agent):
    """Before a concept was created its neighbourhood says it did not exist yet."""
    url = f"/api/v1/concepts/{graph['vs'].pk}/neighbours"
    assert agent.get(url).json()["existed"] is True
    past = (timezone.now() - timedelta(days=1)).isoformat()
    assert agent.get(url, {"as_of": past}).json()["existed"] is False
