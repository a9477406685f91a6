"""Bad input on the pages that take data: answered in words (a 400 or the page's message),
never a 500, with or without htmx, and nothing half-written.

The mending pages read their input through ``review.mend_forms``, the decision pages
through ``review.forms``, the ontology's relation actions through ``graph.forms``.
"""

from __future__ import annotations

import html as htmllib
import re

import pytest
from django.test import Client
from django.urls import reverse

from kgreview.graph.models import ConceptAlias, Edge
from kgreview.review.models import Decision

pytestmark = pytest.mark.django_db

HUGE = "9" * 40


@pytest.fixture(params=[False, True], ids=["plain", "htmx"])
def curator(request, f) -> Client:
    """A signed-in curator's client, sending the htmx header or not."""
    client = Client(headers={"HX-Request": "true"} if request.param else {})
    client.force_login(f.user("curator-user", role="curator"))
    return client


def flashes(response) -> list[str]:
    found = re.findall(r'<li class="msg-\w+">(.*?)</li>', response.content.decode(), re.S)
    return [htmllib.unescape(text) for text in found]


def page_error(response) -> str:
    """The refusal shown on a mending page (``#mend-error``)."""
    found = re.search(r'id="mend-error">(.*?)</p>', response.content.decode(), re.S)
    return htmllib.unescape(found.group(1)) if found else ""


# --- adding an edge ---------------------------------------------------------------------


def test_adding_an_edge_with_nothing_sent_asks_for_both_ends(curator):
    response = curator.post(reverse("review:edge-add"), {})
    assert response.status_code == 400
    assert page_error(response) == "Pick a concept for both ends."
    assert not Edge.objects.exists()


@pytest.mark.parametrize("confidence", ["1e400", "nan", "-inf", "lots", HUGE + "e9999"])
def test_adding_an_edge_with_a_confidence_that_is_not_a_number_says_so(curator, f, confidence):
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    data = {
        "source_concept_id": str(emb.pk),
        "target_concept_id": str(vs.pk),
        "relation": "related",
        "note": "x",
        "confidence": confidence,
    }
    response = curator.post(reverse("review:edge-add"), data)
    assert response.status_code == 400
    assert page_error(response) == "Confidence must be a number between 0 and 1."
    assert not Edge.objects.exists()


def test_adding_an_edge_with_a_confidence_out_of_range_is_refused_by_the_service(curator, f):
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    data = {
        "source_concept_id": str(emb.pk),
        "target_concept_id": str(vs.pk),
        "relation": "related",
        "note": "x",
        "confidence": "7",
    }
    response = curator.post(reverse("review:edge-add"), data)
    assert response.status_code == 400
    assert page_error(response) == "Confidence must lie between 0 and 1."


@pytest.mark.parametrize("concept_id", ["abc", HUGE, "-3", ""])
def test_adding_an_edge_with_an_end_id_that_is_not_one_asks_for_both_ends(curator, f, concept_id):
    data = {
        "source_concept_id": concept_id,
        "target_concept_id": str(f.concept("Vector search").pk),
        "relation": "related",
        "note": "x",
    }
    response = curator.post(reverse("review:edge-add"), data)
    assert response.status_code == 400
    assert page_error(response) == "Pick a concept for both ends."


def test_adding_an_edge_from_a_concept_to_itself_says_the_rule_books_words(curator, f):
    """The rule book's sentence, not the payload validator's jargon (found walking the
    redesign: it said "Invalid add_edge payload: … the same concept")."""
    emb = f.concept("Embeddings")
    data = {
        "source_concept_id": str(emb.pk),
        "target_concept_id": str(emb.pk),
        "relation": "related",
        "note": "x",
    }
    response = curator.post(reverse("review:edge-add"), data)
    assert response.status_code == 400
    assert page_error(response) == 'An edge cannot join "Embeddings" to itself.'
    assert not Edge.objects.exists()
    assert not Decision.objects.exists()


def test_adding_an_edge_quoting_a_revision_that_does_not_exist_says_so(curator, f):
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    data = {
        "source_concept_id": str(emb.pk),
        "target_concept_id": str(vs.pk),
        "relation": "related",
        "note": "x",
        "revision": "987654",
        "quote": "anything",
    }
    response = curator.post(reverse("review:edge-add"), data)
    assert response.status_code == 400
    assert page_error(response) == "There is no source revision #987654."
    assert not Edge.objects.exists()


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({}, "Select the sentence that supports the edge on the source page."),
        ({"quote": "   "}, "Select the sentence that supports the edge on the source page."),
        ({"quote": "not in the lesson at all"}, "The selected text was not found"),
        ({"start": "5", "end": HUGE}, "Select the sentence"),  # an end that is no offset
        ({"start": "5", "end": "999999"}, "The selected text lies outside the revision."),
        ({"start": "9", "end": "3"}, "The selected text lies outside the revision."),
    ],
)
def test_adding_an_edge_with_a_quote_that_cannot_be_placed_says_why(curator, f, extra, words):
    revision = f.lesson(slug="vs").current_revision
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    data = {
        "source_concept_id": str(emb.pk),
        "target_concept_id": str(vs.pk),
        "relation": "related",
        "note": "x",
        "revision": str(revision.pk),
        **extra,
    }
    response = curator.post(reverse("review:edge-add"), data)
    assert response.status_code == 400
    assert page_error(response).startswith(words)
    assert not Edge.objects.exists()


def refused_at_the_door(response) -> bool:
    """A 400 from ``core.middleware``: a page in words, or for htmx a toast and no swap."""
    words = "holds a NUL byte, which kgreview does not accept"
    if response.status_code != 400 or words not in response.content.decode():
        return False
    htmx = response.request.get("HTTP_HX_REQUEST") == "true"
    return not htmx or (response["HX-Reswap"] == "none" and "kgRefused" in response["HX-Trigger"])


def test_adding_an_edge_with_a_nul_byte_is_refused_and_writes_nothing(curator, f):
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    data = {
        "source_concept_id": str(emb.pk),
        "target_concept_id": str(vs.pk),
        "relation": "rel\x00ated",
        "note": "seen\x00 in the lesson",
    }
    response = curator.post(reverse("review:edge-add"), data)
    assert refused_at_the_door(response)
    assert not Edge.objects.exists()
    assert not Decision.objects.exists()


@pytest.mark.parametrize("value", [HUGE, "abc", "1e400", "-1"])
def test_the_add_an_edge_page_reads_any_query_without_failing(curator, value):
    query = {
        k: value
        for k in (
            "revision",
            "start",
            "end",
            "quote",
            "relation",
            "note",
            "confidence",
            "source_concept_id",
            "target_proposal_id",
            "target_name",
        )
    }
    response = curator.get(reverse("review:edge-add"), query)
    assert response.status_code == 200
    assert "\x00" not in response.content.decode()


# --- retiring an edge -------------------------------------------------------------------


@pytest.mark.parametrize("note", [None, "", "  "])
def test_retiring_an_edge_without_a_reason_asks_for_one(curator, f, note):
    edge = f.edge(f.concept("Embeddings"), f.concept("Vector search"))
    data = {} if note is None else {"note": note}
    response = curator.post(reverse("review:edge-retire", args=[edge.pk]), data, follow=True)
    assert response.status_code == 200
    assert flashes(response) == ["Say why the edge is wrong."]
    edge.refresh_from_db()
    assert edge.status == "active"


# --- a concept's status and names -------------------------------------------------------


@pytest.mark.parametrize("action", [None, "", HUGE, "retired"])
def test_a_concept_status_without_a_known_action_names_the_choices(curator, f, action):
    orphan = f.concept("Orphan topic")
    data = {} if action is None else {"action": action, "note": "x"}
    response = curator.post(reverse("concept-status", args=[orphan.pk]), data, follow=True)
    assert flashes(response) == ["Choose retire or reactivate."]
    orphan.refresh_from_db()
    assert orphan.status == "active"


def test_retiring_a_concept_with_a_nul_byte_in_the_note_is_refused(curator, f):
    orphan = f.concept("Orphan topic")
    data = {"action": "retire", "note": "no\x00 longer taught"}
    response = curator.post(reverse("concept-status", args=[orphan.pk]), data)
    assert refused_at_the_door(response)
    orphan.refresh_from_db()
    assert orphan.status == "active"
    assert not Decision.objects.exists()


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({}, "Choose rename, add an alias or remove one."),
        ({"action": "delete", "name": "x"}, "Choose rename, add an alias or remove one."),
        ({"action": "rename"}, "Type the new name."),
        ({"action": "rename", "name": " \t "}, "Type the new name."),
        ({"action": "add_alias", "name": " "}, "Type the alias to add."),
        ({"action": "remove_alias"}, "Nothing would change."),
    ],
)
def test_changing_names_without_what_is_needed_says_what_is_missing(curator, f, data, words):
    emb = f.concept("Embeddings")
    response = curator.post(reverse("review:concept-names", args=[emb.pk]), data, follow=True)
    assert flashes(response) == [words]
    emb.refresh_from_db()
    assert emb.name == "Embeddings"
    assert not Decision.objects.exists()


def test_an_alias_too_long_for_a_name_is_refused_in_words(curator, f):
    emb = f.concept("Embeddings")
    data = {"action": "add_alias", "name": "E" + "m" * 400}
    response = curator.post(reverse("review:concept-names", args=[emb.pk]), data, follow=True)
    (words,) = flashes(response)
    assert words.endswith("add_aliases.0: String should have at most 200 characters")
    assert not ConceptAlias.objects.filter(concept=emb, name__startswith="Emmm").exists()


# --- merging two concepts ---------------------------------------------------------------


@pytest.mark.parametrize("other", ["abc", HUGE, "1e99", "-1", "0"])
def test_the_merge_page_reads_an_other_that_is_no_concept_as_none_chosen(curator, f, other):
    emb = f.concept("Embeddings")
    url = reverse("review:concept-merge", args=[emb.pk])
    assert curator.get(url, {"other": other, "target_concept_id": other}).status_code == 200
    response = curator.post(url, {"other": other, "survivor": str(emb.pk)})
    assert response.status_code == 400
    assert page_error(response) == "Pick the concept to merge with this one (type its name)."
    assert emb.__class__.objects.get(pk=emb.pk).status == "active"


def test_the_merge_page_asks_to_pick_a_name_typed_but_not_chosen(curator, f):
    emb = f.concept("Embeddings")
    url = reverse("review:concept-merge", args=[emb.pk])
    response = curator.post(url, {"target_name": "Embedding"})
    assert response.status_code == 400
    assert page_error(response) == "Pick the other concept from the list (↓ then Enter)."


@pytest.mark.parametrize("survivor", [None, "", "abc", HUGE])
def test_merging_without_a_readable_survivor_asks_which_to_keep(curator, f, survivor):
    emb, embed = f.concept("Embeddings"), f.concept("Embed")
    data = {"other": str(embed.pk)}
    if survivor is not None:
        data["survivor"] = survivor
    response = curator.post(reverse("review:concept-merge", args=[emb.pk]), data)
    assert response.status_code == 400
    assert page_error(response) == "Choose which of the two concepts to keep."
    embed.refresh_from_db()
    assert embed.status == "active"


def test_merging_with_a_nul_byte_in_the_note_is_refused(curator, f):
    emb, embed = f.concept("Embeddings"), f.concept("Embed")
    data = {"other": str(embed.pk), "survivor": str(emb.pk), "note": "same\x00 thing"}
    response = curator.post(reverse("review:concept-merge", args=[emb.pk]), data)
    assert refused_at_the_door(response)
    embed.refresh_from_db()
    assert embed.status == "active"


# --- deciding, undoing, walking the queue -----------------------------------------------


@pytest.mark.parametrize("value", [HUGE, "abc", "1e400"])
def test_deciding_and_undoing_with_hostile_fields_is_never_a_server_error(curator, f, value):
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    proposal = f.edge_proposal(emb, vs, doc=f.lesson(slug="vs"))
    fields = {"note": value, "version": value, "cursor": value, "survivor": value}
    accept = curator.post(reverse("review:accept", args=[proposal.pk]), fields)
    assert accept.status_code in (200, 302, 409)
    reject = {"note": value, "reason_code": value, "version": value}
    assert curator.post(reverse("review:reject", args=[proposal.pk]), reject).status_code < 500
    undo = {"batch": value, "from": value, "trail": value}
    assert curator.post(reverse("review:undo"), undo).status_code < 500
    edit = {"note": value, "relation": value, "confidence": value, "source_concept_id": value}
    assert curator.post(reverse("review:edit", args=[proposal.pk]), edit).status_code < 500


def test_rejecting_with_a_nul_byte_in_the_note_is_refused_and_decides_nothing(curator, f):
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    proposal = f.edge_proposal(emb, vs, doc=f.lesson(slug="vs"))
    data = {"reason_code": "wrong_relation", "note": "not\x00 this"}
    response = curator.post(reverse("review:reject", args=[proposal.pk]), data)
    assert refused_at_the_door(response)
    proposal.refresh_from_db()
    assert proposal.status == "pending"
    assert not Decision.objects.exists()


@pytest.mark.parametrize("value", ["abc", HUGE, "-1"])
def test_the_focus_page_answers_an_id_that_is_not_one_with_a_404(curator, value):
    assert curator.get(reverse("review:focus"), {"id": value}).status_code == 404


@pytest.mark.parametrize("value", ["abc", HUGE, "1:2:3"])
def test_walking_the_queue_with_unreadable_cursors_shows_the_start(curator, f, value):
    f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))
    walk = {"after": value, "before": value, "from": value}
    assert curator.get(reverse("review:focus"), walk).status_code == 200
    assert curator.get(reverse("review:queue"), walk).status_code == 200
    assert curator.get(reverse("review:queue-counts"), {"only": value}).status_code == 200


# --- a relation type --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({}, "Choose retire, reactivate, describe or guideline."),
        ({"action": "a b"}, "Choose retire, reactivate, describe or guideline."),
        ({"action": "describe", "label": "Related"}, "A relation needs a label and a verb."),
        ({"action": "describe", "label": " ", "verb": "x"}, "A relation needs a label"),
    ],
)
def test_a_relation_action_without_what_it_needs_says_so(curator, f, data, words):
    relation = f.relation("related")
    before = (relation.label, relation.verb, relation.active)
    url = reverse("relation-action", args=[relation.pk])
    response = curator.post(url, data, follow=True)
    assert response.status_code == 200
    assert flashes(response)[0].startswith(words)
    relation.refresh_from_db()
    assert (relation.label, relation.verb, relation.active) == before


def test_describing_a_relation_trims_and_caps_the_lengths(curator, f):
    relation = f.relation("related")
    data = {
        "action": "describe",
        "label": " Related ",
        "verb": "relates to" + "o" * 200,
        "description": "d" * 6000,
    }
    response = curator.post(reverse("relation-action", args=[relation.pk]), data)
    assert response.status_code == 302
    relation.refresh_from_db()
    assert relation.label == "Related"
    assert relation.verb == ("relates to" + "o" * 200)[:100]
    assert relation.description == "d" * 5000
