"""Mending the graph by hand in a real browser: each change a decision, refused to viewers."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from kgreview.graph.models import Concept, ConceptAlias, Edge
from kgreview.review.models import Decision

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1366, "height": 768}}


def pick(page, role: str, typed: str, name: str) -> None:
    """Type into a concept picker and choose ``name`` with the keyboard."""
    page.wait_for_load_state("load")  # htmx binds the field once the page has loaded
    field = page.locator(f"#edit-{role}")
    field.focus()
    page.keyboard.press("Control+A")
    page.keyboard.type(typed)
    options = page.locator(f"#{role}-listbox [role=option]")
    expect(options.first).to_be_visible()
    for i in range(options.count()):
        page.keyboard.press("ArrowDown")
        if options.nth(i).get_attribute("data-name") == name:
            break
    page.keyboard.press("Enter")
    expect(field).to_have_value(name)


def test_a_curator_merges_two_concepts_chosen_by_hand(page, live_server, login, f, shot):
    """From the concept page: pick the other concept, compare side by side, keep one."""
    embed, emb = f.concept("Embed"), f.concept("Embeddings")
    f.edge(embed, f.concept("Vector search"))
    login("curator")
    page.goto(f"{live_server.url}/concepts/{embed.pk}/")
    page.locator("#merge-with").click()
    pick(page, "target", "Embeddi", "Embeddings")
    page.keyboard.press("Control+Enter")
    sides = page.locator(".merge-side")
    expect(sides).to_have_count(2)
    shot("mend-merge-compare")
    page.locator(f'.merge-side[data-concept="{emb.pk}"] input[name=survivor]').check()
    page.locator("#merge-confirm").click()
    page.wait_for_url(f"{live_server.url}/concepts/{emb.pk}/")
    expect(page.locator(".messages")).to_contain_text('Merged into "Embeddings"')
    expect(page.locator("#concept-names")).to_contain_text("Embed")
    assert Concept.objects.get(pk=embed.pk).status == "merged"
    assert Edge.objects.get(status="active").source_id == emb.pk
    decision = Decision.objects.get(proposal__kind="merge_concepts")
    assert decision.user.username == "curator" and "manual" in decision.proposal.flags
    page.goto(f"{live_server.url}/review/decisions/")
    expect(page.locator("#decision-log")).to_contain_text("merge")


def test_a_curator_renames_a_concept_and_changes_its_aliases(page, live_server, login, f):
    c = f.concept("Embed model", aliases=["EM"])
    login("curator")
    page.goto(f"{live_server.url}/concepts/{c.pk}/")
    page.locator("#rename-name").fill("Embedding model")
    page.locator("#rename-submit").click()
    expect(page.locator(".messages")).to_contain_text(
        'Renamed "Embed model" to "Embedding model"; the old name stays as an alias.'
    )
    expect(page.locator("h1")).to_contain_text("Embedding model")
    page.locator("#alias-name").fill("Embedder")
    page.locator("#alias-submit").click()
    expect(page.locator("#concept-names")).to_contain_text("Embedder")
    page.get_by_role("button", name="Remove the alias EM", exact=True).click()
    expect(page.locator(".messages")).to_contain_text('"EM" is no longer a name')
    names = set(ConceptAlias.objects.filter(concept=c).values_list("name", flat=True))
    assert names == {"Embedding model", "Embed model", "Embedder"}
    assert ConceptAlias.all_objects.get(name="EM").removed_at is not None
    assert Decision.objects.filter(user__username="curator").count() == 3


def test_a_reviewer_adds_an_edge_by_hand_and_retires_a_wrong_one_then_undoes_it(
    page, live_server, login, f, shot
):
    """Add from the concept page with the pickers; retire from the edge page with a reason;
    both are in the edge's life and the decision log; u on the Review page undoes the last."""
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    wrong = f.edge(vs, emb)
    login("reviewer")
    page.goto(f"{live_server.url}/review/edges/{wrong.pk}/")
    page.locator("#edge-retire summary").click()
    page.locator("#edge-retire-note").fill("Backwards: search needs embeddings.")
    page.locator("#edge-retire-submit").click()
    expect(page.locator(".messages")).to_contain_text(f"Edge #{wrong.pk} retired")
    expect(page.locator("#edge-life")).to_contain_text("Backwards: search needs embeddings.")
    wrong.refresh_from_db()
    assert wrong.status == "invalidated" and wrong.invalidated_by.username == "reviewer"

    page.goto(f"{live_server.url}/concepts/{emb.pk}/")
    page.locator("#add-edge-from").click()
    expect(page.locator("#edit-source")).to_have_value("Embeddings")
    pick(page, "target", "vector s", "Vector search")
    page.locator("#edit-relation").select_option("prerequisite")
    page.locator("#edge-add-note").fill("Lesson 4 assumes it.")
    shot("mend-add-edge")
    page.locator("#edge-add-note").press("Control+Enter")
    expect(page.locator(".messages")).to_contain_text("Added edge #")
    added = Edge.objects.get(source=emb, target=vs, status="active")
    assert added.decided_by.username == "reviewer" and added.evidence_quote == ""
    expect(page.locator("#edge-life")).to_contain_text("added by hand")

    page.goto(f"{live_server.url}/review/focus/")
    undo = page.locator("#undo-button")
    expect(undo).to_contain_text("accept #")
    page.keyboard.press("u")
    expect(page.locator("#card")).to_contain_text("Undone: accept")
    added.refresh_from_db()
    assert added.status == "invalidated"  # the edge added by hand is taken back
    assert Edge.objects.filter(status="active").count() == 0


def test_a_viewer_sees_no_mending_controls_and_is_refused_by_the_server(
    page, live_server, login, f
):
    c = f.concept("Embeddings")
    edge = f.edge(c, f.concept("Vector search"))
    login("viewer")
    page.goto(f"{live_server.url}/concepts/{c.pk}/")
    for selector in ("#merge-with", "#rename-form", "#alias-form", "#add-edge-from"):
        expect(page.locator(selector)).to_have_count(0)
    page.goto(f"{live_server.url}/review/edges/{edge.pk}/")
    expect(page.locator("#edge-retire")).to_have_count(0)
    token = page.evaluate("document.cookie.match(/csrftoken=([^;]+)/)[1]")
    for url in (
        f"/review/edges/{edge.pk}/retire/",
        f"/review/mend/concepts/{c.pk}/names/",
        f"/review/mend/concepts/{c.pk}/merge/",
        "/review/mend/edges/new/",
    ):
        response = page.request.post(
            f"{live_server.url}{url}",
            form={"note": "x", "action": "rename", "name": "X"},
            headers={"X-CSRFToken": token},
        )
        assert response.status == 403, url
    assert Edge.objects.get(pk=edge.pk).status == "active"
    assert not Decision.objects.exists()


def test_evidence_for_a_hand_made_edge_is_picked_by_selecting_text_on_the_source_page(
    page, live_server, login, f
):
    """Select a rendered sentence (its Markdown marks hidden), add the edge with it: the
    edge quotes the revision's own text at the right offsets."""
    text = "# Search\n\nBefore learning vector search you should understand **embeddings**.\n"
    doc = f.source(slug="search-lesson", text=text)
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    login("reviewer")
    page.goto(f"{live_server.url}/sources/{doc.slug}/")
    button = page.locator("#quote-add")
    expect(button).to_be_disabled()
    page.evaluate(
        """() => {
            const p = [...document.querySelectorAll('#source-text p')]
                .find(el => el.textContent.includes('you should understand'));
            window.getSelection().selectAllChildren(p);
        }"""
    )
    expect(button).to_be_enabled()
    button.click()
    quote = page.locator("#edge-add-quote")
    expect(quote).to_contain_text("you should understand **embeddings**")
    pick(page, "source", "Embeddings", "Embeddings")
    pick(page, "target", "Vector se", "Vector search")
    page.locator("#edit-relation").select_option("prerequisite")
    page.locator("#edge-add-note").fill("Stated in the lesson.")
    page.locator("#edge-add-submit").click()
    expect(page.locator(".messages")).to_contain_text("Added edge #")
    edge = Edge.objects.get(status="active")
    assert (edge.source, edge.target) == (emb, vs)
    revision = doc.current_revision
    assert revision.text[edge.evidence_start : edge.evidence_end] == edge.evidence_quote
    assert edge.evidence_quote.startswith("Before learning vector search")
    assert "**embeddings**" in edge.evidence_quote
    # Shown as the lesson shows it: the quote's Markdown rendered, not its marks.
    expect(page.locator("#edge-life blockquote strong")).to_have_text("embeddings")
