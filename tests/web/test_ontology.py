"""The ontology page over HTTP: relation types, unknown relations, changing a type."""

from __future__ import annotations

import html as htmllib
import re

import pytest
from django.test import Client
from django.urls import reverse

from kgreview.agents.models import AgentRun, DroppedCandidate
from kgreview.agents.runs import agent_run_create
from kgreview.graph import services
from kgreview.graph.models import Edge, RelationType
from kgreview.review.decide import decisions
from kgreview.review.models import Proposal
from tests.pages import HOSTILE, client_for, flashes, page, reload

pytestmark = pytest.mark.django_db


@pytest.fixture
def curator(f) -> Client:
    return client_for(f, "curator")


@pytest.fixture
def viewer(f) -> Client:
    return client_for(f, "viewer")


# --- the ontology -----------------------------------------------------------------------


def relation_rows(response) -> dict[str, tuple[int, int, str]]:
    """key -> (active edges, open proposals, status text) from the relation table."""
    rows = re.findall(
        r'<td><code>([\w-]+)</code>.*?<td class="num edges">(\d+)</td>\s*'
        r'<td class="num"><a [^>]*>(\d+)</a></td>\s*<td><span class="badge \w+">([^<]+)</span>',
        page(response),
        re.S,
    )
    return {key: (int(e), int(p), status.strip()) for key, e, p, status in rows}


def unknown_rows(response) -> list[tuple[str, int, int, str]]:
    """(label, candidates, sources, example) from the unknown-relations panel, in order."""
    panel = re.search(
        r'<section class="card" id="unknown-relations">(.*?)</section>', page(response), re.S
    ).group(1)
    rows = re.findall(
        r'<tr><td><code>(.*?)</code></td><td class="num">(\d+)</td><td class="num">(\d+)</td>'
        r'<td class="quote-snippet">(.*?)</td></tr>',
        panel,
        re.S,
    )
    return [(htmllib.unescape(a), int(b), int(c), htmllib.unescape(d)) for a, b, c, d in rows]


def test_ontology_lists_every_relation_type_with_edges_and_open_proposals(viewer, f):
    """Each type shows its active edge count and open proposals; retired types say so."""
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    f.edge(emb, vs)
    f.edge(f.concept("Tokenization"), emb)
    f.edge_proposal(vs, f.concept("Reranking"))
    services.relation_type_retire(relation=f.relation("applies_to"), acting_user=None)
    rows = relation_rows(viewer.get(reverse("ontology")))
    assert set(rows) == set(RelationType.objects.values_list("key", flat=True))
    assert rows["prerequisite"] == (2, 1, "active")
    assert rows["related"] == (0, 0, "active")
    assert rows["applies_to"][2].startswith("retired ")


def test_ontology_gives_curators_change_forms_and_viewers_none(f, curator, viewer):
    """Describe/retire forms and the admin link are for curators only."""
    rel = f.relation("related")
    mine = page(curator.get(reverse("ontology")))
    assert f'action="/ontology/{rel.pk}/"' in mine and 'class="describe-form"' in mine
    assert 'value="retire"' in mine and "run it now" in mine
    theirs = page(viewer.get(reverse("ontology")))
    assert "/ontology/" + str(rel.pk) not in theirs and "describe-form" not in theirs
    assert "run it now" not in theirs and "/admin/" not in theirs


def dropped(run, doc, label, *, reason="unknown_relation", evidence="", requeued=False):
    from django.utils import timezone

    return DroppedCandidate.objects.create(
        run=run,
        revision=doc.current_revision,
        reason=reason,
        relation_label=label,
        candidate={"source": "A", "target": "B", "relation": label, "evidence": evidence},
        requeued_at=timezone.now() if requeued else None,
    )


def test_ontology_groups_unknown_relations_by_label_with_candidate_and_source_counts(viewer, f):
    """Waiting unknown_relation rows are grouped by label, most candidates first."""
    run = agent_run_create(agent=AgentRun.Agent.CONSTRUCT)
    d1, d2, d3 = f.lesson(), f.lesson(), f.lesson()
    dropped(run, d1, "alternative_to", evidence="DPO is an alternative to RLHF.")
    dropped(run, d1, "alternative_to", evidence="Another sentence.")
    dropped(run, d2, "alternative_to", evidence="A third sentence.")
    dropped(run, d3, "mitigates", evidence="Caching mitigates latency.")
    dropped(run, d3, "mitigates", evidence="Batching mitigates cost.")
    dropped(run, d1, "complements", evidence="Sparse complements dense.")
    # Not waiting for discovery: requeued, another reason, or no label.
    dropped(run, d3, "alternative_to", requeued=True)
    dropped(run, d2, "requeued_only", requeued=True)
    dropped(run, d2, "self_ref", reason="self_loop")
    dropped(run, d2, "")
    rows = unknown_rows(viewer.get(reverse("ontology")))
    assert rows == [
        ("alternative_to", 3, 2, "DPO is an alternative to RLHF."),
        ("mitigates", 2, 1, "Caching mitigates latency."),
        ("complements", 1, 1, "Sparse complements dense."),
    ]


def test_ontology_says_when_no_unknown_relations_are_waiting(viewer, f):
    """With only requeued candidates, the panel says none are waiting."""
    run = agent_run_create(agent=AgentRun.Agent.CONSTRUCT)
    dropped(run, f.lesson(), "alternative_to", requeued=True)
    response = viewer.get(reverse("ontology"))
    assert unknown_rows(response) == []
    assert "None waiting." in page(response)


def test_ontology_states_the_discovery_thresholds(viewer, settings):
    """The panel says how often a label must be seen before discovery proposes it."""
    settings.KG_DISCOVERY_MIN_SUPPORT = 7
    settings.KG_DISCOVERY_MIN_SOURCES = 4
    html = page(viewer.get(reverse("ontology")))
    assert "seen 7 or more times in 4 or more sources" in html


def test_ontology_escapes_hostile_unknown_labels_and_quotes(viewer, f):
    """Labels and quotes found in lessons are shown as text, never as markup."""
    run = agent_run_create(agent=AgentRun.Agent.CONSTRUCT)
    dropped(run, f.lesson(), "<img src=x onerror=alert(1)>", evidence=HOSTILE)
    response = viewer.get(reverse("ontology"))
    assert unknown_rows(response) == [("<img src=x onerror=alert(1)>", 1, 1, HOSTILE)]
    html = page(response)
    assert "<img src=x" not in html and HOSTILE not in html


# --- changing a relation type -----------------------------------------------------------


def test_curator_retires_a_relation_type_and_its_edges_stay(curator, f):
    """A retired type is inactive with a time; its edges stay active and counted."""
    rel = f.relation("prerequisite")
    edge = f.edge(f.concept("Embeddings"), f.concept("Vector search"))
    response = curator.post(
        reverse("relation-action", args=[rel.pk]), {"action": "retire"}, follow=True
    )
    assert response.redirect_chain == [(reverse("ontology"), 302)]
    assert ("success", '"prerequisite" retired; its edges and history stay.') in flashes(response)
    rel = reload(rel)
    assert rel.active is False and rel.retired_at is not None
    assert reload(edge).status == Edge.Status.ACTIVE
    assert relation_rows(response)["prerequisite"][0] == 1
    assert relation_rows(response)["prerequisite"][2].startswith("retired")


def test_retiring_a_retired_relation_type_is_refused_in_words(curator, f):
    """A second retire says the type is already retired and keeps its first retirement time."""
    rel = services.relation_type_retire(relation=f.relation("related"), acting_user=None)
    first = rel.retired_at
    response = curator.post(
        reverse("relation-action", args=[rel.pk]), {"action": "retire"}, follow=True
    )
    assert flashes(response) == [("error", 'The relation "related" is already retired.')]
    assert reload(rel).retired_at == first


def test_curator_reactivates_a_retired_relation_type(curator, f):
    """Reactivation makes the type active again and clears its retirement time."""
    rel = services.relation_type_retire(relation=f.relation("related"), acting_user=None)
    response = curator.post(
        reverse("relation-action", args=[rel.pk]), {"action": "reactivate"}, follow=True
    )
    assert ("success", '"related" is active again.') in flashes(response)
    rel = reload(rel)
    assert rel.active is True and rel.retired_at is None


def test_reactivating_an_active_relation_type_is_refused_in_words(curator, f):
    """Reactivate on an active type says so and changes nothing."""
    rel = f.relation("related")
    response = curator.post(
        reverse("relation-action", args=[rel.pk]), {"action": "reactivate"}, follow=True
    )
    assert flashes(response) == [("error", 'The relation "related" is already active.')]
    assert reload(rel).active is True


def test_curator_describes_a_relation_type(curator, f):
    """Label, verb and description are saved trimmed; the key and shape do not change."""
    rel = f.relation("related")
    shape = (rel.key, rel.directed, rel.symmetric, rel.acyclic)
    response = curator.post(
        reverse("relation-action", args=[rel.pk]),
        {
            "action": "describe",
            "label": "  Is related  ",
            "verb": " is related to ",
            "description": "  Loosely connected topics.  ",
        },
        follow=True,
    )
    assert ("success", '"related" described.') in flashes(response)
    rel = reload(rel)
    assert (rel.label, rel.verb, rel.description) == (
        "Is related",
        "is related to",
        "Loosely connected topics.",
    )
    assert (rel.key, rel.directed, rel.symmetric, rel.acyclic) == shape
    assert "Loosely connected topics." in page(response)


def test_describing_a_relation_cuts_overlong_fields(curator, f):
    """Label and verb are cut to 100 characters and the description to 5,000."""
    rel = f.relation("related")
    curator.post(
        reverse("relation-action", args=[rel.pk]),
        {"action": "describe", "label": "L" * 300, "verb": "v" * 300, "description": "d" * 9000},
    )
    rel = reload(rel)
    assert (len(rel.label), len(rel.verb), len(rel.description)) == (100, 100, 5000)


@pytest.mark.parametrize(
    "data",
    [
        {"label": "", "verb": "is near"},
        {"label": "Near", "verb": "   "},
        {"verb": "is near"},
        {"label": "Near"},
    ],
)
def test_describing_a_relation_without_label_or_verb_is_refused(curator, f, data):
    """A describe without a label or a verb says what is missing and writes nothing."""
    rel = f.relation("related")
    before = (rel.label, rel.verb, rel.description)
    response = curator.post(
        reverse("relation-action", args=[rel.pk]),
        {"action": "describe", "description": "New text.", **data},
        follow=True,
    )
    assert flashes(response) == [("error", "A relation needs a label and a verb.")]
    rel = reload(rel)
    assert (rel.label, rel.verb, rel.description) == before


@pytest.mark.parametrize("data", [{}, {"action": "delete"}, {"action": "rename"}])
def test_unknown_relation_action_is_refused_and_changes_nothing(curator, f, data):
    """Anything but retire, reactivate or describe is answered with the choices."""
    rel = f.relation("related")
    response = curator.post(reverse("relation-action", args=[rel.pk]), data, follow=True)
    assert flashes(response) == [("error", "Choose retire, reactivate, describe or guideline.")]
    assert reload(rel).active is True


def test_relation_action_on_a_missing_type_is_404(curator):
    """An id that names no relation type is a 404."""
    response = curator.post(reverse("relation-action", args=[999999]), {"action": "retire"})
    assert response.status_code == 404


def test_a_hostile_relation_description_is_saved_as_is_and_shown_as_text(curator, f):
    """What a curator types is stored verbatim and escaped on the ontology page."""
    rel = f.relation("related")
    response = curator.post(
        reverse("relation-action", args=[rel.pk]),
        {"action": "describe", "label": "<b>Rel</b>", "verb": "relates", "description": HOSTILE},
        follow=True,
    )
    assert reload(rel).description == HOSTILE and rel.label == "<b>Rel</b>"
    html = page(response)
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>Rel</b>" not in html


def test_retired_relation_types_are_listed_after_active_ones(viewer, f):
    """Active types come first, so the vocabulary in use reads at the top."""
    services.relation_type_retire(relation=f.relation("applies_to"), acting_user=None)
    keys = list(relation_rows(viewer.get(reverse("ontology"))))
    assert keys[-1] == "applies_to"
    assert keys[:-1] == sorted(keys[:-1])


def test_open_proposal_counts_ignore_decided_proposals(viewer, f):
    """Only pending and held proposals count as open on the ontology page."""
    emb, vs = f.concept("Embeddings"), f.concept("Vector search")
    p = f.edge_proposal(emb, vs)
    f.edge_proposal(
        emb,
        vs,
        "related",
        confidence=0.3,
        quote="Unlike keyword search, dense retrieval compares meanings.",
    )
    decisions.proposal_reject(
        proposal_id=p.pk, acting_user=f.user(role="reviewer"), reason_code="too_vague"
    )
    rows = relation_rows(viewer.get(reverse("ontology")))
    assert Proposal.objects.get(pk=p.pk).status == "rejected"
    assert rows["prerequisite"][1] == 0 and rows["related"][1] == 1
