"""A text submitted with a proposal (a source revision of the submitted kind) is evidence
for the proposals submitted with it only: no reading of "every source" mines it
(construct over every source, on a schedule or by Run now; bootstrap; discover's
additions; the gap searches), and a curator who names it has it read."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from construction.formats import SUBMITTED_MEDIA_TYPE
from kgreview.agents.adapters import extractor_for
from kgreview.agents.bootstrap import arrived_since, corpus_chunks
from kgreview.agents.construct import construct_run_create, sources_to_construct
from kgreview.agents.models import AgentRunItem
from kgreview.agents.run_now import agent_run_now
from kgreview.agents.selectors import mined_sources
from kgreview.api.proposing import proposals_submit
from kgreview.graph.models import Source
from kgreview.questions.gaps import _revisions
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db

TEXT = (
    "Retrieval-augmented generation builds on vector search. "
    "Before learning vector search you should understand embeddings. "
    "Chunking is part of retrieval-augmented generation."
)


@pytest.fixture
def submitted(f) -> Source:
    """A source made by a proposal whose evidence is a text sent along."""
    f.lesson("vectors")
    answer = proposals_submit(
        acting_user=f.user("ada", role="viewer"),
        token=None,
        items=[
            {
                "kind": "add_edge",
                "source": "Embeddings",
                "relation": "prerequisite",
                "target": "Vector search",
                "confidence": 0.9,
                "reason": "The tutor's notes say so.",
                "evidence": {"text": TEXT, "quote": "you should understand embeddings"},
            }
        ],
    )
    assert answer.results[0]["result"] == "queued", answer.results
    source = Source.objects.select_related("current_revision").get(slug__startswith="submitted-")
    assert source.current_revision.media_type == SUBMITTED_MEDIA_TYPE
    return source


def slugs(sources) -> set[str]:
    return {s.slug for s in sources}


def test_construct_over_every_source_leaves_a_submitted_text_unread(submitted):
    assert slugs(mined_sources()) == {"vectors"}
    assert slugs(sources_to_construct(extractor_for("offline"))) == {"vectors"}
    run = construct_run_create(provider="offline")
    assert set(run.items.values_list("source__slug", flat=True)) == {"vectors"}


def test_run_now_and_the_command_over_every_source_leave_a_submitted_text_unread(submitted, f):
    curator = f.user("cora", role="curator")
    started = agent_run_now(agent="construct", acting_user=curator, every_source=True)
    assert started.run is not None
    assert submitted.pk not in set(started.run.items.values_list("source_id", flat=True))
    out = io.StringIO()
    call_command("construct", "--all", "--provider", "offline", "--json", stdout=out)
    report = json.loads(out.getvalue())
    read = {p["evidence"]["source"] for p in report["proposals"] if p.get("evidence")}
    assert submitted.slug not in read
    assert not AgentRunItem.objects.filter(source=submitted).exists()
    # Only the submitted proposals quote it.
    quoting = Proposal.objects.filter(document=submitted)
    assert quoting.exists() and all(p.origin.is_submitted for p in quoting)


def test_a_curator_naming_a_submitted_text_has_it_read(submitted):
    run = construct_run_create(sources=[submitted], provider="offline")
    assert list(run.items.values_list("source__slug", flat=True)) == [submitted.slug]
    out = io.StringIO()
    call_command(
        "construct", "--source", submitted.slug, "--provider", "offline", "--json", stdout=out
    )
    assert AgentRunItem.objects.filter(source=submitted, run__agent="construct").count() == 2


def test_bootstrap_and_discover_leave_a_submitted_text_unread_unless_named(submitted):
    assert {c.slug for c in corpus_chunks(sample_chunks=None)} == {"vectors"}
    assert {c.slug for c in corpus_chunks(slugs=[submitted.slug], sample_chunks=None)} == {
        submitted.slug
    }
    assert arrived_since(None) == ["vectors"]


def test_gap_searches_leave_a_submitted_text_unread(submitted):
    assert {r.source.slug for r in _revisions()} == {"vectors"}
