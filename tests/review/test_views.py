"""The workspace over HTTP: focus, deciding, bulk, the queue, history and search, with
and without htmx, errors in words. Who may reach each URL: test_view_permissions.py."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from kgreview.graph import selectors as graph_selectors
from kgreview.graph.models import Edge
from kgreview.review.decide import decisions
from kgreview.review.models import Decision, Proposal
from kgreview.review.services import proposal_create
from kgreview.review.workspace import selectors
from tests.review.workspace import HX, client_for

pytestmark = pytest.mark.django_db

# --- focus mode -------------------------------------------------------------------------


def test_focus_page_shows_the_claim_evidence_resolution_and_neighbours(f, world):
    """The card names the claim in words, highlights the quote, shows ends and edges."""
    html = client_for(f, "reviewer").get(reverse("review:focus") + f"?id={world['p_edge'].pk}")
    html = html.content.decode()
    assert "is a prerequisite for" in html
    assert "<mark>Before learning vector search you should understand embeddings.</mark>" in html
    assert "How the ends were resolved" in html
    assert "Edges of <bdi>Embeddings</bdi>" in html and "Tokenization" in html
    assert 'data-key="a"' in html and 'data-key="r"' in html and 'data-key="e"' in html


def test_focus_with_htmx_returns_only_the_card(f, world):
    """htmx asks for the card partial; a plain request gets the whole page."""
    client = client_for(f, "reviewer")
    here = {**HX, "HX-Current-URL": "http://testserver" + reverse("review:focus") + "?id=1"}
    partial = client.get(reverse("review:focus"), headers=here).content.decode()
    assert '<section id="card"' in partial and "<html" not in partial
    # The pending count beside the title asks for itself when a card arrives (an event
    # the page's script sends), so a card's answer carries no out-of-band part: one whose
    # form was replaced meanwhile, or a card on the Queue page, has none to miss.
    assert 'id="focus-count"' not in partial and "hx-swap-oob" not in partial
    full = client.get(reverse("review:focus")).content.decode()
    assert "<html" in full and 'id="card"' in full
    assert re.search(r'id="focus-count"[^>]*hx-trigger="load, kg-card from:body"', full)


def test_focus_walks_the_queue_in_priority_order_with_after_and_before(f, world):
    """Skip goes to the next card by keyset, previous comes back."""
    client = client_for(f, "reviewer")
    qs = selectors.queue_queryset(selectors.QueueFilter()).order_by("-priority", "-id")
    first, second = list(qs[:2])
    cursor = selectors.cursor_of(first, "priority")
    nxt = client.get(reverse("review:focus") + f"?after={cursor}", headers=HX).content.decode()
    assert f'data-proposal="{second.pk}"' in nxt
    back = client.get(
        reverse("review:focus") + "?before=" + selectors.cursor_of(second, "priority"),
        headers=HX,
    ).content.decode()
    assert f'data-proposal="{first.pk}"' in back


def test_empty_view_says_so(f, world):
    """A filter that matches nothing shows an empty state, not an error."""
    html = client_for(f, "reviewer").get(reverse("review:focus") + "?kind=merge_concepts")
    assert "Nothing left to review here" in html.content.decode()


# --- deciding ---------------------------------------------------------------------------


def test_accept_with_htmx_swaps_in_the_next_card_with_a_notice(f, world):
    """One request: the decision is applied and the next card comes back."""
    client = client_for(f, "reviewer")
    p = world["p_concept"]
    response = client.post(
        reverse("review:accept", args=[p.pk]),
        {"version": p.version, "cursor": selectors.cursor_of(p, "priority")},
        headers=HX,
    )
    html = response.content.decode()
    assert response.status_code == 200 and f"Accepted #{p.pk}" in html
    assert 'id="card"' in html and f'data-proposal="{p.pk}"' not in html
    assert Proposal.objects.get(pk=p.pk).status == "accepted"


def test_accept_without_javascript_redirects_to_the_next_card(f, world):
    """A plain form POST works: redirect, and a message on the next page."""
    client = client_for(f, "reviewer")
    p = world["p_edge"]
    response = client.post(
        reverse("review:accept", args=[p.pk]),
        {"version": p.version, "cursor": selectors.cursor_of(p, "priority")},
    )
    assert response.status_code == 302 and "/review/focus/?after=" in response["Location"]
    page = client.get(response["Location"]).content.decode()
    assert f"Accepted #{p.pk}" in page
    assert graph_selectors.edges_active().count() == 2


def test_reject_without_a_reason_is_explained_and_nothing_changes(f, world):
    """Missing reasons come back in words, in the same card."""
    client = client_for(f, "reviewer")
    p = world["p_edge"]
    response = client.post(reverse("review:reject", args=[p.pk]), {"version": 1}, headers=HX)
    html = response.content.decode()
    assert response.status_code == 200 and "is not a reject reason" in html
    assert f'data-proposal="{p.pk}"' in html
    assert Proposal.objects.get(pk=p.pk).status == "pending"


def test_second_reviewer_is_told_who_decided_and_when(f, world):
    """The loser of a race sees the winner's name and time, and the next card."""
    p = world["p_edge"]
    decisions.proposal_accept(proposal_id=p.pk, acting_user=f.user("ann", role="reviewer"))
    response = client_for(f, "reviewer").post(
        reverse("review:reject", args=[p.pk]),
        {"version": 1, "reason_code": "too_vague"},
        headers=HX,
    )
    html = response.content.decode()
    assert re.search(r"already accepted by ann at \d{4}-\d\d-\d\d \d\d:\d\d", html)
    assert f'data-proposal="{p.pk}"' not in html


def test_stale_accept_is_refused_with_the_reason_in_the_same_card(f, world):
    """A cycle found at accept time is explained; the card stays for another decision."""
    f.edge(world["vs"], world["emb"])
    p = world["p_edge"]
    response = client_for(f, "reviewer").post(
        reverse("review:accept", args=[p.pk]), {"version": 1}, headers=HX
    )
    html = response.content.decode()
    assert response.status_code == 200 and "cycle" in html
    assert f'data-proposal="{p.pk}"' in html


def test_edit_form_then_accept_with_edits(f, world):
    """GET gives the edit form in the card; POST accepts the corrected edge."""
    client = client_for(f, "reviewer")
    p = world["p_edge"]
    form = client.get(reverse("review:edit", args=[p.pk]), headers=HX).content.decode()
    assert 'class="edit-form"' in form and 'name="relation"' in form
    response = client.post(
        reverse("review:edit", args=[p.pk]),
        {"version": 1, "relation": "builds_on", "swap": "1", "confidence": "0.8"},
        headers=HX,
    )
    assert "Edited and accepted" in response.content.decode()
    edge = graph_selectors.edges_active().get(relation__key="builds_on")
    assert (edge.source, edge.target, edge.confidence) == (world["vs"], world["emb"], 0.8)


def test_edit_with_a_non_numeric_confidence_is_refused_in_words(f, world):
    """Bad numbers are reported, not a server error."""
    response = client_for(f, "reviewer").post(
        reverse("review:edit", args=[world["p_edge"].pk]), {"confidence": "high"}, headers=HX
    )
    assert "must be numbers" in response.content.decode()


def test_undo_last_returns_the_proposal_to_the_queue_and_shows_it(f, world):
    """u after a decision brings that proposal back as the current card."""
    client = client_for(f, "reviewer")
    p = world["p_edge"]
    client.post(reverse("review:reject", args=[p.pk]), {"reason_code": "too_vague"}, headers=HX)
    response = client.post(reverse("review:undo"), {}, headers=HX)
    html = response.content.decode()
    assert f"Undone: reject #{p.pk}; back in the queue." in html
    assert f'data-proposal="{p.pk}"' in html
    assert Proposal.objects.get(pk=p.pk).status == "pending"
    nothing = client.post(reverse("review:undo"), {}, headers=HX).content.decode()
    assert "nothing of yours to undo" in nothing


def test_undo_with_an_unreadable_batch_is_refused_in_words_and_undoes_nothing(f, world):
    """Only an absent batch means "my latest": one that was sent but cannot be read is
    refused, with and without htmx, and the last decision stays."""
    client = client_for(f, "reviewer")
    p = world["p_edge"]
    client.post(reverse("review:reject", args=[p.pk]), {"reason_code": "too_vague"}, headers=HX)
    for headers in (HX, {}):
        response = client.post(reverse("review:undo"), {"batch": "not-a-batch"}, headers=headers)
        assert response.status_code in (200, 302)
        page = response.content.decode()
        if response.status_code == 302:
            page = client.get(response["Location"]).content.decode()
        assert "Which decisions to undo could not be read: nothing was undone." in page
    assert Proposal.objects.get(pk=p.pk).status == "rejected"
    assert not Decision.objects.filter(proposal=p, action="undo").exists()


@pytest.mark.parametrize("version", ["abc", "-1", "99999999999999999999999", "1.5"])
def test_a_decision_with_an_unreadable_version_is_refused_not_taken_as_no_version(
    f, world, version
):
    """A version the page sent that cannot be read never skips the "changed while you
    were looking" check: the decision is refused in words and nothing is decided."""
    client = client_for(f, "reviewer")
    p = world["p_edge"]
    accepted = client.post(
        reverse("review:accept", args=[p.pk]), {"version": version}, headers=HX
    ).content.decode()
    rejected = client.post(
        reverse("review:reject", args=[p.pk]),
        {"version": version, "reason_code": "too_vague"},
        headers=HX,
    ).content.decode()
    for page in (accepted, rejected):
        assert "The version of the card you decided on could not be read" in page
    assert Proposal.objects.get(pk=p.pk).status == "pending"
    assert not Decision.objects.filter(proposal=p).exists()


def test_a_decision_without_a_version_is_still_taken(f, world):
    """No version sent (a client that does not compare) decides as before."""
    client = client_for(f, "reviewer")
    p = world["p_edge"]
    client.post(reverse("review:reject", args=[p.pk]), {"reason_code": "too_vague"}, headers=HX)
    assert Proposal.objects.get(pk=p.pk).status == "rejected"


# --- bulk -------------------------------------------------------------------------------


def test_bulk_preview_writes_nothing_and_apply_decides_the_selection(f, world):
    """Preview is a dry run with counts; apply decides and can be undone as one."""
    client = client_for(f, "reviewer")
    ids = [world["p_edge"].pk, world["held"].pk]
    data = {"action": "reject", "reason_code": "too_vague", "ids": ids}
    preview = client.post(reverse("review:bulk"), {**data, "step": "preview"}, headers=HX)
    assert "2 would go through" in preview.content.decode()
    assert not Decision.objects.exists()
    applied = client.post(reverse("review:bulk"), {**data, "step": "apply"}, headers=HX)
    assert "Rejected 2 proposals" in applied.content.decode()
    assert set(Proposal.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"rejected"}


def test_bulk_lists_refused_proposals_with_links_and_reasons(f, world):
    """Proposals that cannot be decided are listed with their reason, linked when they exist."""
    decisions.proposal_reject(
        proposal_id=world["p_edge"].pk,
        acting_user=f.user("x", role="reviewer"),
        reason_code="too_vague",
    )
    client = client_for(f, "reviewer")
    ids = [world["p_edge"].pk, world["held"].pk, 987654]
    data = {"action": "reject", "reason_code": "too_vague", "ids": ids, "step": "preview"}
    html = client.post(reverse("review:bulk"), data, headers=HX).content.decode()
    assert "1 would go through" in html and "2 would be refused" in html
    assert reverse("review:proposal", args=[world["p_edge"].pk]) in html
    assert reverse("review:proposal", args=[987654]) not in html


def test_bulk_on_everything_matching_a_filter(f, world):
    """scope=filter decides what the filter matches, here the held proposals."""
    client = client_for(f, "reviewer")
    response = client.post(
        reverse("review:bulk"),
        {"q": "status=held", "scope": "filter", "action": "accept", "step": "apply"},
        headers=HX,
    )
    assert "Accepted 1 proposal" in response.content.decode()
    assert Proposal.objects.get(pk=world["held"].pk).status == "accepted"
    assert Proposal.objects.get(pk=world["p_edge"].pk).status == "pending"


def test_bulk_without_selection_or_reason_is_explained(f, world):
    """Empty selections and reject without a reason are errors in words."""
    client = client_for(f, "reviewer")
    empty = client.post(reverse("review:bulk"), {"action": "accept"})
    assert empty.status_code == 400 and "Select at least one" in empty.content.decode()
    no_reason = client.post(
        reverse("review:bulk"), {"action": "reject", "ids": [world["held"].pk]}, headers=HX
    )
    assert "Choose a reason" in no_reason.content.decode()


# --- queue ------------------------------------------------------------------------------


def test_queue_filters_and_counts(f, world):
    """Status, kind, flag, relation and confidence filters, with live counts."""
    client = client_for(f, "reviewer")
    page = client.get(reverse("review:queue")).content.decode()
    assert re.search(r'id="result-count">2<', page)
    held = client.get(reverse("review:queue") + "?status=held").content.decode()
    assert re.search(r'id="result-count">1<', held) and "related" in held
    flagged = client.get(reverse("review:queue") + "?status=open&flag=below_gate").content.decode()
    assert re.search(r'id="result-count">1<', flagged)
    concepts = client.get(reverse("review:queue") + "?kind=add_concept").content.decode()
    assert "Retrieval-augmented generation" in concepts and "Vector search" not in concepts
    confident = client.get(reverse("review:queue") + "?status=open&cmin=0.5").content.decode()
    assert re.search(r'id="result-count">2<', confident)


def test_queue_reports_bad_filters_in_words(f, world):
    """Unknown values are dropped and said, the page still renders."""
    html = (
        client_for(f, "reviewer")
        .get(reverse("review:queue") + "?status=nope&cmin=2&sort=random&run=x")
        .content.decode()
    )
    for words in ("Unknown status", "lie between 0 and 1", "Unknown sort", "must be a number"):
        assert words in html


def test_queue_with_htmx_returns_results_and_out_of_band_counts(f, world):
    """Changing a filter swaps the results and refreshes the counts."""
    html = (
        client_for(f, "reviewer")
        .get(reverse("review:queue") + "?status=held", headers=HX)
        .content.decode()
    )
    assert html.lstrip().startswith('<section id="queue-results"')
    assert 'id="filter-counts" hx-swap-oob="true"' in html and "<html" not in html


def test_queue_pages_by_keyset_and_query_count_does_not_grow_with_page_size(f, world, monkeypatch):
    """Page 2 follows page 1 without overlap; 10 or 50 rows cost the same queries."""
    doc = world["doc"]
    concepts = [f.concept(f"Node {i}") for i in range(12)]
    for i in range(11):
        f.edge_proposal(concepts[i], concepts[i + 1], "related", doc=doc)
    client = client_for(f, "reviewer")
    monkeypatch.setattr(selectors, "PAGE_SIZE", 5)
    first = selectors.queue_page(selectors.QueueFilter(), size=5)
    second = selectors.queue_page(selectors.QueueFilter(), after=first.next_cursor, size=5)
    assert not {p.pk for p in first.items} & {p.pk for p in second.items}
    assert len(second.items) == 5

    def queries(size):
        monkeypatch.setattr(selectors, "PAGE_SIZE", size)
        from kgreview.review.workspace import views

        monkeypatch.setattr(views.selectors, "PAGE_SIZE", size)
        with CaptureQueriesContext(connection) as ctx:
            client.get(reverse("review:queue"))
        return len(ctx.captured_queries)

    assert queries(3) == queries(12)


# --- history, search, sources -----------------------------------------------------------


def test_decision_log_filters_by_reviewer_and_date(f, world):
    """The log lists decisions newest first; reviewer and date narrow it."""
    ann, bob = f.user("ann", role="reviewer"), f.user("bob", role="reviewer")
    decisions.proposal_reject(
        proposal_id=world["p_edge"].pk, acting_user=ann, reason_code="too_vague"
    )
    decisions.proposal_accept(proposal_id=world["p_concept"].pk, acting_user=bob)
    client = client_for(f, "viewer")
    both = client.get(reverse("review:decisions")).content.decode()
    assert "ann" in both and "bob" in both
    only_ann = client.get(reverse("review:decisions") + "?reviewer=ann").content.decode()
    assert "too_vague" in only_ann and "Retrieval-augmented" not in only_ann
    future = client.get(reverse("review:decisions") + "?since=2999-01-01").content.decode()
    assert "No decisions" in future
    bad = client.get(reverse("review:decisions") + "?since=yesterday").content.decode()
    assert "is not a date" in bad


def test_decision_log_names_an_edge_proposals_relation_in_words_not_by_its_key(f, world):
    p = f.edge_proposal(world["emb"], world["vs"], "builds_on")
    decisions.proposal_accept(proposal_id=p.pk, acting_user=f.user("ann", role="reviewer"))
    html = client_for(f, "viewer").get(reverse("review:decisions")).content.decode()
    assert "builds_on" not in html
    assert re.search(r'Embeddings</bdi> <span class="verb">builds on</span>', html)


def test_edge_page_shows_its_whole_life(f, world):
    """Created, superseded and invalidated rows, oldest first, with who and why."""
    from kgreview.graph import services as graph

    e1 = world["edge"]
    e2 = graph.edge_supersede(edge=e1, confidence=0.5, why="Weaker than thought.", acting_user=None)
    graph.edge_invalidate(edge=e2, reason="Lesson rewritten.", acting_user=None)
    html = client_for(f, "viewer").get(reverse("review:edge", args=[e1.pk])).content.decode()
    assert html.index(f"#{e1.pk}") < html.index(f"#{e2.pk}")
    assert "Weaker than thought." in html and "Lesson rewritten." in html


def test_edge_page_costs_no_queries_per_row(f, world):
    """Each row's concepts, relation, people and quoted source come with the row itself."""
    from kgreview.graph import services as graph

    decisions.proposal_accept(proposal_id=world["p_edge"].pk, acting_user=f.user(role="reviewer"))
    e1 = Edge.objects.get(provenance__proposal=world["p_edge"])
    assert e1.evidence_revision_id and e1.decided_by_id
    curator = f.user(role="curator")
    e2 = graph.edge_supersede(edge=e1, acting_user=curator, confidence=0.5, why="Weaker.")
    e3 = graph.edge_supersede(edge=e2, acting_user=curator, confidence=0.4, why="Weaker still.")
    graph.edge_invalidate(edge=e3, acting_user=curator, reason="Lesson rewritten.")
    client = client_for(f, "viewer")

    def queries(pk):
        with CaptureQueriesContext(connection) as ctx:
            client.get(reverse("review:edge", args=[pk]))
        return len(ctx.captured_queries)

    html = client.get(reverse("review:edge", args=[e2.pk])).content.decode()
    assert all(f"#{e.pk}" in html for e in (e1, e2, e3)) and html.count(", revision ") == 3
    # The walk reads one row per neighbour plus the miss at the newest end, whichever
    # row the page is opened at; the template adds nothing per row.
    single = queries(world["edge"].pk)
    assert queries(e1.pk) == queries(e2.pk) == queries(e3.pk) == single + 2


def test_concept_search_finds_names_and_aliases_and_escapes_them(f, world):
    """Autocomplete matches names and aliases; text is escaped."""
    f.concept("<b>Bold</b> idea", aliases=["Bold"])
    client = client_for(f, "reviewer")
    html = client.get(reverse("review:concept-search") + "?q=embed").content.decode()
    assert 'data-name="Embeddings"' in html
    hostile = client.get(reverse("review:concept-search") + "?q=bold").content.decode()
    assert "<b>Bold</b>" not in hostile and "&lt;b&gt;Bold&lt;/b&gt; idea" in hostile
    none = client.get(reverse("review:concept-search") + "?q=zzzz").content.decode()
    assert "Create “<strong>zzzz</strong>” as a new concept" in none


def test_source_page_highlights_each_proposal_by_status(f, world):
    """Quoted sentences are marked with their proposal's status and link to it."""
    decisions.proposal_reject(
        proposal_id=world["held"].pk,
        acting_user=f.user("x", role="reviewer"),
        reason_code="too_vague",
    )
    html = client_for(f, "viewer").get(reverse("source-detail", args=["vs"])).content.decode()
    assert 'class="hl status-pending"' in html and 'class="hl status-rejected"' in html
    assert reverse("review:proposal", args=[world["p_edge"].pk]) in html


def test_hostile_text_is_escaped_in_the_card(f):
    """Script in a lesson, a name or a reason is shown as text in the card."""
    evil = '<script>alert("x")</script> requires <img src=x onerror=alert(1)>.\n'
    doc = f.lesson(slug="evil", text=evil)
    p = f.edge_proposal(
        "<img src=x onerror=alert(1)>", "<script>alert('n')</script>", doc=doc, quote=evil.strip()
    )
    html = client_for(f, "reviewer").get(reverse("review:focus") + f"?id={p.pk}")
    html = html.content.decode()
    assert "<script>alert" not in html and "<img src=x" not in html
    # The evidence is rendered as Markdown and sanitised: the lesson's markup shows as text.
    assert '&lt;script&gt;alert("x")&lt;/script&gt;' in html


def test_counts_load_after_the_page_and_follow_decisions(f, world):
    """Facet counts come from a second request, cached until the queue changes."""
    client = client_for(f, "reviewer")
    page = client.get(reverse("review:queue")).content.decode()
    assert 'hx-get="/review/counts/"' in page and 'hx-trigger="load"' in page
    counts = client.get(reverse("review:queue-counts"), headers=HX).content.decode()
    assert '<strong id="result-count" hx-swap-oob="true">2</strong>' in counts
    assert re.search(r'value="held"[^>]*> held <span class="count">1<', counts)
    assert re.search(r'value="add_concept"[^>]*> Add concept <span class="count">1<', counts)
    decisions.proposal_reject(
        proposal_id=world["p_edge"].pk,
        acting_user=f.user("z", role="reviewer"),
        reason_code="too_vague",
    )
    again = client.get(reverse("review:queue-counts"), headers=HX).content.decode()
    assert '<strong id="result-count" hx-swap-oob="true">1</strong>' in again
    total = client.get(reverse("review:queue-counts") + "?only=total&status=held").content
    shown = rb'<span id="focus-count"[^>]*hx-trigger="kg-card from:body"[^>]*>1</span>'
    assert re.search(shown, total)


def test_queue_rows_name_the_concepts_of_merges_and_edge_retirements(f, world):
    """A merge row reads "Finetuning into Fine-tuning", not concept ids."""
    a, b = f.concept("Fine-tuning"), f.concept("Finetuning")
    edge = f.edge(a, b, "builds_on")
    proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": a.pk, "loser_id": b.pk, "why": "Spelling."},
        confidence=0.9,
    )
    proposal_create(
        kind="invalidate_edge",
        payload={"edge_id": edge.pk, "reason_code": "cycle"},
        confidence=0.9,
    )
    html = client_for(f, "reviewer").get(reverse("review:queue") + "?status=open").content.decode()
    assert re.search(
        r"<bdi>Finetuning</bdi>\s*<span class=\"verb\">into</span>\s*<bdi>Fine-tuning</bdi>", html
    )
    assert re.search(
        r"retire edge</span>\s*<bdi>Fine-tuning</bdi>\s*<span class=\"verb\">builds on", html
    )


def test_counts_swap_the_bulk_count_only_for_those_who_have_the_bulk_bar(f, world):
    """A viewer's page has no bulk bar, so its counts carry no out-of-band target for it
    (htmx would log an error for a target that is not there)."""
    viewer = client_for(f, "viewer")
    assert 'id="match-all-count"' not in viewer.get(reverse("review:queue")).content.decode()
    counts = viewer.get(reverse("review:queue-counts"), headers=HX).content.decode()
    assert 'id="match-all-count"' not in counts
    reviewer = client_for(f, "reviewer")
    counts = reviewer.get(reverse("review:queue-counts"), headers=HX).content.decode()
    assert '<span id="match-all-count" hx-swap-oob="true">2</span>' in counts


def test_mending_with_nul_bytes_and_huge_numbers_is_answered_in_words(f):
    """Hostile form input on the mending pages: no 500, nothing half-written."""
    client = client_for(f, "curator")
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    edge = f.edge(emb, vs)
    retire = client.post(reverse("review:edge-retire", args=[edge.pk]), {"note": "bad\x00 edge"})
    assert retire.status_code == 400 and "holds a NUL byte" in retire.content.decode()
    edge.refresh_from_db()
    assert edge.status == "active"
    names = client.post(
        reverse("review:concept-names", args=[emb.pk]), {"action": "add_alias", "name": "E\x00mb"}
    )
    assert (
        names.status_code == 400
        and not emb.aliases.filter(name__startswith="E").exclude(name="Embeddings").exists()
    )
    added = client.post(
        reverse("review:edge-add"),
        {
            "source_concept_id": "99999999999999999999999",
            "target_concept_id": str(vs.pk),
            "relation": "related",
            "note": "x",
            "confidence": "1e400",
        },
    )
    assert added.status_code == 400
    assert "Confidence must be a number" in added.content.decode()
    merge = client.get(reverse("review:concept-merge", args=[emb.pk]) + "?other=1e99")
    assert merge.status_code == 200


def test_a_reviewer_sees_waiting_for_a_curator_only_while_a_curator_only_card_is_open(f):
    """Once a curator decided it, the card says who did, not that it waits (found walking
    the review: a decided merge still said "Waiting for a curator")."""
    a, b = f.concept("Embeddings"), f.concept("Embedding")
    merge = proposal_create(
        kind="merge_concepts",
        payload={"survivor_id": a.pk, "loser_id": b.pk, "score": 95.0, "why": "Plural."},
        confidence=0.9,
    )
    reviewer = client_for(f, "reviewer")
    url = reverse("review:focus") + f"?id={merge.pk}"
    assert "Waiting for a curator." in reviewer.get(url).content.decode()

    decisions.proposal_accept(proposal_id=merge.pk, acting_user=f.user("cora", role="curator"))
    html = reviewer.get(url).content.decode()
    assert "Waiting for a curator." not in html
    assert "cora" in html
