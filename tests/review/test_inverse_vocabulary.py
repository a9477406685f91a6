"""Where a vocabulary's inverse pairs come from and go: a proposed relation type naming
its inverse, a vocabulary file's ``inverse`` field, ``owl:inverseOf`` read from an OWL
file and written in the OWL export."""

from __future__ import annotations

import json

import pytest
from rdflib import Graph
from rdflib import namespace as ns

from construction.vocab_plan import plan_vocabulary
from construction.vocab_read import read_vocabulary
from kgreview.exports import rdf
from kgreview.graph.models import RelationType
from kgreview.graph.vocabulary_files import BadVocabulary, load_preset, parse
from kgreview.review.decide import decisions, undo
from kgreview.review.services import proposal_create
from kgreview.review.vocabulary import vocabulary_install
from tests.exports.support import text_of

pytestmark = pytest.mark.django_db


def _inverse(key: str) -> str:
    row = RelationType.objects.select_related("inverse").get(key=key)
    return row.inverse.key if row.inverse else ""


# --- A proposed relation type -----------------------------------------------------------


def test_accepting_a_relation_type_declares_its_inverse_and_undo_takes_it_back(f):
    curator = f.user("cora", role="curator")
    base = proposal_create(
        kind="add_relation_type",
        payload={"key": "uses", "label": "Uses", "verb": "uses"},
        confidence=0.9,
    )
    decisions.proposal_accept(proposal_id=base.pk, acting_user=curator)
    p = proposal_create(
        kind="add_relation_type",
        payload={"key": "used_by", "label": "Used by", "verb": "is used by", "inverse": "uses"},
        confidence=0.9,
    )
    out = decisions.proposal_accept(proposal_id=p.pk, acting_user=curator)
    assert _inverse("uses") == "used_by" and _inverse("used_by") == "uses"
    undo.decisions_undo(acting_user=curator, batch=out.batch)
    assert _inverse("uses") == "" and _inverse("used_by") == ""


def test_a_proposed_symmetric_relation_names_no_inverse(f):
    with pytest.raises(Exception, match="its own inverse"):
        proposal_create(
            kind="add_relation_type",
            payload={
                "key": "near",
                "label": "Near",
                "verb": "is near",
                "directed": False,
                "symmetric": True,
                "inverse": "uses",
            },
            confidence=0.9,
        )


# --- Vocabulary files ---------------------------------------------------------------------


def _file(*relations) -> str:
    return json.dumps({"name": "team", "relations": list(relations)}, indent=1)


def _rel(key, **more):
    return {"key": key, "label": key.title(), "verb": key.replace("_", " "), **more}


def test_the_curriculum_preset_declares_the_starting_pair():
    assert load_preset("curriculum").inverses == {
        "prerequisite": "builds_on",
        "builds_on": "prerequisite",
    }


@pytest.mark.parametrize(
    ("relations", "words"),
    [
        ([_rel("uses", inverse="uses")], "cannot be its own inverse"),
        ([_rel("uses", inverse="nowhere")], "“nowhere” is not a relation of the file"),
        ([_rel("uses", inverse="near"), _rel("near", symmetric=True)], "a symmetric relation"),
        (
            [_rel("uses", inverse="after"), _rel("after", acyclic=True)],
            "both are acyclic or neither",
        ),
        (
            [_rel("a", inverse="b"), _rel("b", inverse="c"), _rel("c")],
            "“a” names “b” its inverse, but “b” names “c”",
        ),
        (
            [_rel("a", inverse="c"), _rel("b", inverse="c"), _rel("c")],
            "“c” is named the inverse of more than one relation",
        ),
    ],
)
def test_a_file_whose_pairs_make_no_sense_is_refused_in_words(relations, words):
    with pytest.raises(BadVocabulary, match=words):
        parse(_file(*relations), fmt="json", origin="team.json")


def test_installing_a_file_declares_its_pairs(db):
    vocabulary = parse(
        _file(
            _rel("uses", inverse="used_by"),
            _rel("used_by"),
            _rel("prerequisite", verb="is a prerequisite for", acyclic=True),
            _rel("builds_on", verb="builds on", acyclic=True),
        ),
        fmt="json",
        origin="team.json",
    )
    vocabulary_install(vocabulary=vocabulary, acting_user=None)
    assert _inverse("uses") == "used_by" and _inverse("used_by") == "uses"
    # A file naming no pair for them leaves the graph's pair as it was.
    assert _inverse("prerequisite") == "builds_on"


# --- OWL ---------------------------------------------------------------------------------


def test_owl_inverse_of_is_read_into_the_later_relations_proposal():
    turtle = (
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix ex: <http://example.org/> .\n"
        "ex:uses a owl:ObjectProperty .\n"
        "ex:usedBy a owl:ObjectProperty ; owl:inverseOf ex:uses .\n"
        "ex:near a owl:ObjectProperty, owl:SymmetricProperty ; owl:inverseOf ex:uses .\n"
    )
    plan = plan_vocabulary(read_vocabulary(turtle.encode()))
    by_key = {r.key: r for r in plan.relations}
    first, later = sorted(("uses", "used_by"), key=[r.key for r in plan.relations].index)
    assert by_key[later].inverse == first and by_key[first].inverse == ""
    assert by_key["near"].inverse == ""
    assert any("inverseOf" in c for c in by_key[later].cites)


def test_the_owl_export_says_owl_inverse_of(db):
    graph = Graph().parse(data=text_of("owl"), format="turtle")
    pre, builds = rdf.relation("prerequisite"), rdf.relation("builds_on")
    assert (pre, ns.OWL.inverseOf, builds) in graph
    assert (builds, ns.OWL.inverseOf, pre) in graph
    assert not list(graph.triples((rdf.relation("related"), ns.OWL.inverseOf, None)))
