"""Issue 24's regression: a graph built by a model that names every concept by its long
form, and gives no aliases, answers questions by the abbreviations the documents define.

Seven short networking lessons (``networking/``, written for this test) define their
abbreviations the ways real texts do. A "perfect model" behind the local chat-completions
server answers each chunk with the edges its text states, naming both ends by their long
form only. The lessons are read in two runs (so some names arrive for concepts already in
the graph), every proposal is accepted through the review services, then the 24
questions of ``networking/questions.json`` are asked by abbreviation.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from construction.quotes import find_quote
from kgreview.graph.asking import ask_graph
from kgreview.graph.importing import read_upload, store_document
from kgreview.graph.models import Concept
from kgreview.review.decide.decisions import proposal_accept
from kgreview.review.models import Proposal
from tests import factories
from tests.construction.fake_llm import reply

pytestmark = pytest.mark.django_db

LESSONS = Path(__file__).resolve().parent / "networking"
DOCUMENT = re.compile(
    r"<<<(DOCUMENT-[0-9a-f]+)>>>\nTitle: [^\n]*\n(?:Section: [^\n]*\n)?\n(.*)\n<<<END-\1>>>",
    re.S,
)
FIRST_RUN = ("01-internet-protocol", "02-finding-neighbours", "03-reliable-streams")
# Every question: before DEFINE (at acc8a0f) this graph answered 0 of them, since no
# concept had an abbreviation among its names.
AT_LEAST = 24


def perfect_model(edges: list[dict]):
    """For each chunk, the stated edges whose sentence it holds: both ends by their long
    form, every concept with no alias, as a model that never abbreviates would answer."""

    def answer(body):
        match = DOCUMENT.search(body["messages"][1]["content"])
        text = match.group(2) if match else ""
        chosen = [e for e in edges if find_quote(text, e["evidence"]) is not None]
        names = list(dict.fromkeys(n for e in chosen for n in (e["source"], e["target"])))
        return reply(
            {
                "concepts": [{"name": n, "aliases": None, "description": None} for n in names],
                "edges": [
                    {**e, "confidence": 0.9, "reason": "The lesson says so."} for e in chosen
                ],
            }
        )

    return answer


def upload(path: Path) -> None:
    raw = path.read_bytes()
    slug, document = read_upload(raw, filename=path.name, max_bytes=1_000_000)
    store_document(
        slug=slug,
        document=document,
        raw=raw,
        filename=path.name,
        origin=path.name,
        acting_user=None,
    )


def construct(slugs) -> dict:
    out = io.StringIO()
    args = [a for slug in slugs for a in ("--source", slug)]
    call_command("construct", "--provider", "openai", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def accept_everything(curator) -> int:
    """Accept every open proposal, oldest first, as a curator would one by one."""
    accepted = 0
    while True:
        waiting = Proposal.objects.filter(status__in=("pending", "held")).order_by("pk").first()
        if waiting is None:
            return accepted
        proposal_accept(proposal_id=waiting.pk, acting_user=curator)
        accepted += 1


def answered(question: dict) -> bool:
    found = ask_graph(question["question"]).as_json()
    return found["status"] == "answered" and set(question["expect"]) <= set(
        found["answer"]["concepts"]
    )


@pytest.fixture
def built(openai_settings):
    """The lessons read in two runs by the long-form model, everything accepted."""
    openai_settings.fallback = perfect_model(json.loads((LESSONS / "edges.json").read_text()))
    lessons = sorted(LESSONS.glob("*.md"))
    for path in lessons:
        upload(path)
    curator = factories.user("cora", role="curator")
    slugs = [p.stem for p in lessons]
    first = construct(FIRST_RUN)
    assert first["run"]["processed"] == len(FIRST_RUN), first["run"]["errors"]
    accept_everything(curator)
    second = construct([s for s in slugs if s not in FIRST_RUN])
    assert second["run"]["processed"] == len(slugs) - len(FIRST_RUN), second["run"]["errors"]
    accept_everything(curator)
    return curator


def test_questions_by_abbreviation_are_answered_from_a_long_form_graph(built):
    """All 24 questions asked by abbreviation are answered right."""
    questions = json.loads((LESSONS / "questions.json").read_text())
    wrong = [q["question"] for q in questions if not answered(q)]
    assert len(questions) - len(wrong) >= AT_LEAST, wrong


def test_the_concepts_carry_the_abbreviations_their_lessons_define(built):
    """Every defined abbreviation is a name of its long form's concept."""
    names = {
        c.name: {a.name for a in c.aliases.all()} for c in Concept.objects.filter(status="active")
    }
    assert "TCP" in names["Transmission Control Protocol"]
    assert "HTTPS" in names["Hypertext Transfer Protocol Secure"]
    assert "HTTP" in names["Hypertext Transfer Protocol"]
    assert {"IPv4"} <= names["Internet Protocol version 4"]
    assert "stub resolver" in names["Resolver"]


def test_a_name_defined_for_a_concept_already_in_the_graph_arrives_as_an_alias_proposal(built):
    """UDP became a concept in the first run, where no lesson defines "UDP"; the second
    run's lesson does, and its sentence is the accepted alias proposal's evidence."""
    proposal = Proposal.objects.get(kind="add_alias", payload__alias="UDP")
    assert proposal.status == "accepted"
    assert proposal.evidence_quote == (
        "The User Datagram Protocol (UDP) sends single messages over IP without opening a "
        "connection."
    )
    assert proposal.source_concept.name == "User Datagram Protocol"


def test_http_never_resolves_to_https(built):
    """HTTP and HTTPS are two concepts; a question about one never finds the other."""
    http = ask_graph("What does HTTP build on?").as_json()["plan"]
    https = ask_graph("What does HTTPS build on?").as_json()["plan"]
    assert [c["name"] for c in http["concepts"]] == ["Hypertext Transfer Protocol"]
    assert [c["name"] for c in https["concepts"]] == ["Hypertext Transfer Protocol Secure"]
