"""The Ontology page's vocabulary upload over HTTP: curators only, one batch queued, a
refusal said in words (with htmx in place, without as a message), nothing written."""

from __future__ import annotations

import html as htmllib
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from kgreview.agents.models import AgentRun
from kgreview.graph.models import Concept, Edge, Source
from kgreview.review.models import Proposal
from tests.pages import client_for, flashes, page

pytestmark = pytest.mark.django_db

URL = reverse("vocabulary-import")
SKOS_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "vocabularies" / "networking.ttl"
HTMX = {"HX-Request": "true"}


@pytest.fixture
def curator(f) -> Client:
    return client_for(f, "curator")


def vocabulary(raw: bytes | None = None, name: str = "networking.ttl") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, SKOS_FILE.read_bytes() if raw is None else raw)


def test_the_ontology_page_offers_the_upload_to_curators_only(curator, f):
    assert 'id="vocabulary-import"' in page(curator.get(reverse("ontology")))
    reviewer = client_for(f, "reviewer")
    assert 'id="vocabulary-import"' not in page(reviewer.get(reverse("ontology")))
    refused = reviewer.post(URL, {"file": vocabulary()})
    assert refused.status_code == 403
    assert not Proposal.objects.exists()


def test_with_htmx_the_section_answers_in_place_with_the_run_to_decide(curator):
    response = curator.post(
        URL, {"file": vocabulary(), "map": "broader=part_of, related=related"}, headers=HTMX
    )
    assert response.status_code == 200
    html = page(response)
    run = AgentRun.objects.get(agent="import")
    assert f"12 proposals queued as run #{run.pk}" in html
    assert f"?run={run.pk}&amp;status=open" in html
    assert "another language" in html  # what was left out, and why
    assert run.requested_by is not None and run.trigger == "manual"
    assert Proposal.objects.filter(origin__run=run.pk).count() == 12


def test_without_htmx_the_page_says_it_as_a_message(curator):
    response = curator.post(URL, {"file": vocabulary(), "map": "broader=part_of"}, follow=True)
    assert response.redirect_chain[-1][0].startswith(reverse("ontology"))
    (level, words), *_ = flashes(response)
    assert level == "success" and "proposals queued as run #" in words
    assert Source.objects.filter(slug="vocabulary-networking").exists()


@pytest.mark.parametrize(
    ("raw", "data", "words"),
    [
        (b"@prefix skos: <x> .\x00", {}, "NUL byte"),
        (None, {"map": "broader=is_kind_of"}, 'no active relation "is_kind_of"'),
        (b"@prefix x: <http://e/> .\nx:a x:b", {}, "not valid Turtle"),
        (None, {"lang": "en;drop"}, "a tag such as en"),
    ],
)
def test_a_refusal_is_said_in_words_with_htmx_and_without_and_nothing_is_written(
    curator, raw, data, words
):
    answer = curator.post(URL, {"file": vocabulary(raw), **data}, headers=HTMX)
    assert answer.status_code == 200
    html = htmllib.unescape(page(answer))
    assert "The vocabulary was not imported" in html and words in html
    plain = curator.post(URL, {"file": vocabulary(raw), **data}, follow=True)
    ((level, said),) = flashes(plain)
    assert level == "error" and words in said
    assert not Proposal.objects.exists() and not Source.objects.exists()


def test_a_50_mb_file_is_refused_in_words_while_it_streams_in(curator):
    big = b"# padding\n" * 5_000_000  # 50 MB of Turtle comments
    answer = curator.post(URL, {"file": vocabulary(big)}, headers=HTMX)
    assert answer.status_code == 200
    assert "over the limit of 20 MB for a vocabulary" in page(answer)
    assert not Source.objects.exists()


def test_no_file_is_refused_in_words(curator):
    answer = curator.post(URL, {"map": "broader=part_of"}, headers=HTMX)
    assert "Choose a vocabulary file" in page(answer)


def test_the_kept_vocabulary_is_viewable_as_a_source_and_downloadable(curator):
    curator.post(URL, {"file": vocabulary(), "map": "broader=part_of"}, headers=HTMX)
    shown = curator.get(reverse("source-detail", args=["vocabulary-networking"]))
    assert shown.status_code == 200
    assert "skos/core#altLabel" in htmllib.unescape(page(shown))  # the statements, quoted
    original = curator.get(reverse("source-original", args=["vocabulary-networking"]))
    assert original.status_code == 200
    assert b"".join(original) == SKOS_FILE.read_bytes()
    assert "attachment" in original["Content-Disposition"]


def test_the_batch_is_decided_in_one_bulk_accept_of_the_queue_filtered_by_its_run(curator):
    """The queue filtered by the import's run, previewed (nothing refused, nothing
    written) and applied in one bulk decision: the types go first, so the concepts
    naming them are accepted in the same batch."""
    curator.post(URL, {"file": vocabulary(), "map": "broader=part_of"}, headers=HTMX)
    run = AgentRun.objects.get(agent="import")
    data = {"run": str(run.pk), "status": "open", "action": "accept", "scope": "filter"}
    preview = curator.post(reverse("review:bulk"), {**data, "step": "preview"}, headers=HTMX)
    assert "11 would go through" in page(preview)
    assert "would be refused" not in page(preview)
    assert not Concept.objects.exists()
    applied = curator.post(reverse("review:bulk"), {**data, "step": "apply"}, headers=HTMX)
    assert "Accepted 11 proposals" in page(applied) and "refused" not in page(applied)
    assert not Proposal.objects.filter(origin__run=run.pk, status="pending").exists()
    tcp = Concept.objects.get(name="Transmission Control Protocol")
    assert tcp.type.key == "protocol" and tcp.aliases.filter(name="TCP").exists()
    assert Edge.objects.filter(source=tcp, relation__key="part_of", target__name="Protocol")
