"""Importing a vocabulary through the queue: one batch of proposals, resolved against the
graph, decided in bulk, never twice (``agents.ontology_import``, ``import_ontology``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from kgreview.agents import adapters
from kgreview.agents.construct import sources_to_construct
from kgreview.agents.models import AgentRun
from kgreview.agents.ontology_import import ontology_import
from kgreview.core.errors import ValidationFailed
from kgreview.graph import services as graph
from kgreview.graph.models import (
    Attribute,
    Concept,
    ConceptType,
    Edge,
    RelationPattern,
    RelationType,
    Source,
)
from kgreview.review.decide.bulk import proposals_bulk_decide
from kgreview.review.models import Proposal

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "vocabularies"
SKOS_FILE = EXAMPLES / "networking.ttl"
OWL_FILE = EXAMPLES / "database.owl"
MAP = ["broader=part_of", "related=related"]


def skos_import(**kwargs):
    return ontology_import(
        raw=SKOS_FILE.read_bytes(),
        filename=SKOS_FILE.name,
        relation_map=kwargs.pop("relation_map", MAP),
        acting_user=kwargs.pop("acting_user", None),
        **kwargs,
    )


def run_proposals(run_id: int):
    return Proposal.objects.filter(origin__run=run_id, origin__agent="import")


def accept_all(user, run_id: int):
    """Accept the run's proposals as a curator does in the queue: one bulk decision of
    the whole run, in the queue's priority order (the vocabulary is accepted first)."""
    ids = list(run_proposals(run_id).order_by("-priority", "-id").values_list("pk", flat=True))
    result = proposals_bulk_decide(acting_user=user, proposal_ids=ids, action="accept")
    assert result.refused == []


def test_a_skos_thesaurus_becomes_one_run_of_proposals_each_quoting_its_statement():
    summary = skos_import()
    proposals = run_proposals(summary.run_id)
    kinds = sorted(proposals.values_list("kind", flat=True))
    assert kinds.count("add_concept") == 5
    assert kinds.count("add_concept_type") == 3
    assert kinds.count("add_edge") == 4
    assert summary.proposed == {"add_concept_type": 3, "add_concept": 5, "add_edge": 4}
    run = AgentRun.objects.get(pk=summary.run_id)
    assert run.agent == "import" and run.status == "succeeded"
    tcp = proposals.get(kind="add_concept", payload__name="Transmission Control Protocol")
    assert tcp.payload["aliases"] == ["TCP", "tcp/ip transport"]
    assert tcp.payload["type_key"] == "protocol"
    assert "skos/core#prefLabel" in tcp.evidence_quote
    revision = tcp.evidence_revision
    assert revision.text[tcp.evidence_start : tcp.evidence_end] == tcp.evidence_quote
    assert revision.original.data == SKOS_FILE.read_bytes()  # the file is kept
    defined = {d["alias"]: d["quote"] for d in tcp.payload["defined"]}
    assert defined["TCP"].endswith('#altLabel> "TCP"@en .')
    related = proposals.get(kind="add_edge", payload__relation="related")
    assert len(related.payload["support"]) == 1  # stated both ways round: one edge
    router = proposals.get(kind="add_concept", payload__name="Router")
    assert router.payload["type_key"] == "network_device"  # under the top concept
    # German labels are left out, and said so.
    assert any("another language" in s.reason for s in summary.skipped)


def test_accepting_the_batch_in_bulk_gives_typed_concepts_aliases_and_mapped_relations(
    curator_user,
):
    summary = skos_import()
    accept_all(curator_user, summary.run_id)
    tcp = Concept.objects.get(name="Transmission Control Protocol")
    assert {a.name for a in tcp.aliases.all()} >= {"TCP", "tcp/ip transport"}
    assert tcp.type.key == "protocol"
    assert ConceptType.objects.get(key="protocol").parent.key == "networking"
    part_of = RelationType.objects.get(key="part_of")
    protocol = Concept.objects.get(name="Protocol")
    assert Edge.objects.filter(source=tcp, relation=part_of, target=protocol).exists()
    router = Concept.objects.get(name="Router")
    assert Edge.objects.filter(source=router, relation=part_of, target__name="Network device")
    assert Edge.objects.filter(relation__key="related").count() == 1


def test_importing_the_same_file_again_adds_nothing_before_or_after_the_decisions(
    curator_user,
):
    first = skos_import()
    again = skos_import()
    assert again.total == 0 and again.source_outcome == "unchanged"
    assert Source.objects.filter(slug__startswith="vocabulary-").count() == 1
    accept_all(curator_user, first.run_id)
    before = Proposal.objects.count()
    after = skos_import()
    assert after.total == 0
    assert Proposal.objects.count() == before


def test_a_name_the_graph_knows_becomes_an_alias_and_a_type_proposal_not_a_twin(f):
    known = f.concept("Internet Protocol")
    summary = skos_import()
    proposals = run_proposals(summary.run_id)
    assert not proposals.filter(kind="add_concept", payload__name="Internet Protocol").exists()
    alias = proposals.get(kind="add_alias")
    assert alias.payload == {"concept_id": known.pk, "alias": "IP", "name": "Internet Protocol"}
    retype = proposals.get(kind="update_concept")
    assert retype.payload["concept_id"] == known.pk and retype.payload["type_key"] == "protocol"
    edge = proposals.get(kind="add_edge", payload__relation="part_of", source_concept=known)
    assert edge.payload["source"]["concept_id"] == known.pk


def test_a_rejected_proposal_is_not_proposed_again(curator_user):
    first = skos_import()
    router = run_proposals(first.run_id).get(kind="add_concept", payload__name="Router")
    proposals_bulk_decide(
        acting_user=curator_user, proposal_ids=[router.pk], action="reject", reason_code="too_vague"
    )
    again = skos_import()
    assert again.total == 0
    assert any(s.reason == "rejected before; not proposed again" for s in again.skipped)


def test_unmapped_skos_relations_are_reported_not_guessed():
    summary = skos_import(relation_map=[])
    assert summary.proposed.get("add_edge", 0) == 0
    reasons = {s.what: s.reason for s in summary.skipped}
    assert "not mapped to a relation" in reasons["2 skos:broader statements"]
    assert "--map related=RELATION" in reasons["2 skos:related statements"]


def test_a_mapping_to_a_relation_the_graph_lacks_is_refused_before_anything_is_written():
    with pytest.raises(ValidationFailed, match='no active relation "subsumed_by"'):
        skos_import(relation_map=["broader=subsumed_by"])
    with pytest.raises(ValidationFailed, match='"exactMatch" cannot be mapped'):
        skos_import(relation_map=["exactMatch=related"])
    assert not Source.objects.exists() and not Proposal.objects.exists()


def test_an_owl_ontology_gives_types_relations_with_patterns_attributes_and_typed_concepts(
    curator_user,
):
    summary = ontology_import(raw=OWL_FILE.read_bytes(), filename=OWL_FILE.name, acting_user=None)
    proposals = run_proposals(summary.run_id)
    assert summary.syntax == "RDF/XML"
    setting = proposals.get(kind="add_concept_type", payload__key="setting")
    assert setting.payload["parent_key"] == "component"
    affects = proposals.get(kind="add_relation_type")
    assert affects.payload["key"] == "affects"
    assert affects.payload["patterns"] == [{"domain_key": "setting", "range_key": "process"}]
    attribute = proposals.get(kind="add_attribute")
    assert attribute.payload["type_key"] == "setting"
    assert attribute.payload["datatype"] == "integer"
    timeout = proposals.get(kind="add_concept", payload__name="checkpoint_timeout")
    assert timeout.payload["type_key"] == "setting"
    edge = proposals.get(kind="add_edge")
    assert edge.payload["relation"] == "affects"
    accept_all(curator_user, summary.run_id)
    assert RelationPattern.objects.filter(
        relation__key="affects", domain__key="setting", range__key="process", active=True
    ).exists()
    assert Attribute.objects.filter(concept_type__key="setting", key="default_value").exists()
    assert Concept.objects.get(name="checkpointer").type.key == "process"
    assert Edge.objects.filter(relation__key="affects", source__name="checkpoint_timeout")


def test_a_relation_the_graph_has_gets_only_the_patterns_it_lacks(f, curator_user):
    graph.relation_type_create(
        key="affects", label="Affects", verb="affects", acting_user=curator_user
    )
    summary = ontology_import(raw=OWL_FILE.read_bytes(), filename=OWL_FILE.name, acting_user=None)
    proposals = run_proposals(summary.run_id)
    assert not proposals.filter(kind="add_relation_type").exists()
    pattern = proposals.get(kind="add_relation_pattern")
    assert (pattern.payload["domain_key"], pattern.payload["range_key"]) == ("setting", "process")
    assert "rdf-schema#domain" in pattern.payload["examples"][0]["quote"]


@pytest.mark.parametrize(
    ("name", "raw", "words"),
    [
        ("bad.ttl", b"@prefix x: <http://e/> .\nx:a x:b", "not valid Turtle"),
        ("bad.rdf", b"<rdf:RDF>\x00", "NUL byte"),
        ("bad.jsonld", b'{"@context": "https://schema.org/", "name": "x"}', "never fetches"),
        ("bad.nt", b"\xff\xfe<a> <b> <c> .", "not UTF-8"),
        ("bad.ttl", b"   ", "empty"),
        ("bad.ttl", b"# only a comment\n", "no statements"),
    ],
)
def test_a_bad_file_is_refused_in_words_and_nothing_is_written(name, raw, words):
    with pytest.raises(ValidationFailed, match=words):
        ontology_import(raw=raw, filename=name, acting_user=None)
    assert not Source.objects.exists()
    assert not Proposal.objects.exists()
    assert not AgentRun.objects.exists()


def test_a_kept_vocabulary_is_never_read_by_construction(f):
    lesson = f.lesson("tcp-lesson")
    skos_import()
    assert sources_to_construct(adapters.extractor_for("rules")) == [lesson]


def test_the_command_prints_a_json_summary_with_counts_and_skips():
    out = io.StringIO()
    call_command(
        "import_ontology", str(SKOS_FILE), "--map", "broader=part_of", "--json", stdout=out
    )
    summary = json.loads(out.getvalue())
    assert summary["proposed"]["add_concept"] == 5
    assert summary["proposed"]["add_edge"] == 3
    reasons = {s["reason"]: s["count"] for s in summary["skipped"]}
    assert reasons["not mapped to a relation (map it: --map related=RELATION)"] == 1


def test_the_command_refuses_a_bad_file_in_words(tmp_path):
    bad = tmp_path / "broken.rdf"
    bad.write_text("<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>")
    with pytest.raises(CommandError, match="not valid RDF/XML"):
        call_command("import_ontology", str(bad))


def test_a_concept_waiting_in_the_queue_gets_the_vocabularys_names_not_a_twin(f):
    waiting = f.concept_proposal("Internet Protocol")
    summary = skos_import()
    assert not run_proposals(summary.run_id).filter(payload__name="Internet Protocol").exists()
    waiting.refresh_from_db()
    assert waiting.payload["aliases"] == ["IP"]
    assert waiting.payload["defined"][0]["quote"].endswith('#altLabel> "IP"@en .')
    edge = run_proposals(summary.run_id).get(
        kind="add_edge", payload__relation="part_of", payload__source__name="Internet Protocol"
    )
    assert edge.payload["source"]["proposal_id"] == waiting.pk
