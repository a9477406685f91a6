"""Reading and planning a vocabulary (``construction.vocab_read``, ``vocab_plan``): four
syntaxes, offline, refused in words, and the rules that turn statements into a plan."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from construction.vocab_plan import parse_map, plan_vocabulary
from construction.vocab_read import (
    BadVocabulary,
    NetworkRefused,
    VocabLimits,
    no_network,
    read_vocabulary,
    syntax_for,
)

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "vocabularies"
SKOS = "http://www.w3.org/2004/02/skos/core#"
PREFIXES = f"@prefix skos: <{SKOS}> .\n@prefix ex: <http://example.org/> .\n"


def plan(turtle: str, **kwargs):
    return plan_vocabulary(read_vocabulary((PREFIXES + turtle).encode()), **kwargs)


def test_json_ld_and_n_triples_read_to_the_same_statements_as_turtle():
    turtle = read_vocabulary((EXAMPLES / "networking.ttl").read_bytes(), filename="n.ttl")
    nt = turtle.text().encode()
    as_nt = read_vocabulary(nt, filename="networking.nt")
    assert as_nt.syntax == "nt" and as_nt.text() == turtle.text()
    json_ld = turtle.graph.serialize(format="json-ld", auto_compact=False)
    as_json = read_vocabulary(json_ld.encode(), filename="networking.jsonld")
    assert as_json.syntax == "json-ld" and as_json.text() == turtle.text()
    names = {c.name for c in plan_vocabulary(as_json).concepts}
    assert "Transmission Control Protocol" in names


def test_the_syntax_is_asked_else_the_suffix_else_the_first_characters():
    assert syntax_for(filename="x.owl", asked=None, text="") == "xml"
    assert syntax_for(filename="x.ttl", asked="json-ld", text="") == "json-ld"
    assert syntax_for(filename="vocab", asked=None, text="<?xml version='1.0'?>") == "xml"
    assert syntax_for(filename="vocab", asked=None, text=' {"@id": "x"}') == "json-ld"
    assert syntax_for(filename="vocab", asked=None, text="<a> <b> <c> .\n# c\n") == "nt"
    assert syntax_for(filename="vocab", asked=None, text="@prefix a: <b> .") == "turtle"
    with pytest.raises(BadVocabulary, match='"n3" is not a vocabulary syntax'):
        syntax_for(filename="x", asked="n3", text="")


def test_the_same_file_gives_the_same_text_blank_nodes_and_all():
    raw = (PREFIXES + 'ex:a skos:broader [ skos:prefLabel "b" ] ; skos:prefLabel "a" .').encode()
    first, second = read_vocabulary(raw).text(), read_vocabulary(raw).text()
    assert first == second
    assert "_:b0" in first


def test_a_remote_json_ld_context_is_refused_before_any_fetch():
    for context in ('"https://schema.org/"', '["https://schema.org/"]', '{"@import": "http://x/"}'):
        raw = f'{{"@context": {context}, "@id": "http://e/a", "name": "x"}}'.encode()
        with pytest.raises(BadVocabulary, match="never fetches"):
            read_vocabulary(raw, filename="a.jsonld")


def test_an_external_xml_entity_is_refused_and_internal_ones_are_read():
    external = (
        '<?xml version="1.0"?><!DOCTYPE rdf:RDF [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">&x;</rdf:RDF>'
    )
    with pytest.raises(BadVocabulary, match="external entity"):
        read_vocabulary(external.encode(), filename="a.rdf")
    owl = read_vocabulary((EXAMPLES / "database.owl").read_bytes(), filename="database.owl")
    assert owl.syntax == "xml" and len(owl.graph) > 20


def test_while_parsing_no_url_is_opened():
    with no_network() as attempts, pytest.raises(NetworkRefused):
        urllib.request.urlopen("http://example.org/context.jsonld")
    assert attempts == ["http://example.org/context.jsonld"]
    # Outside the block the hook lets everything be.
    assert urllib.request.Request("http://example.org/").full_url == "http://example.org/"


def test_the_limits_are_said_in_words():
    raw = (EXAMPLES / "networking.ttl").read_bytes()
    with pytest.raises(BadVocabulary, match="MB; a vocabulary is 0 MB at most"):
        read_vocabulary(raw, filename="n.ttl", limits=VocabLimits(max_bytes=100))
    with pytest.raises(BadVocabulary, match="statements; a vocabulary is 10 at most"):
        read_vocabulary(raw, filename="n.ttl", limits=VocabLimits(max_statements=10))
    with pytest.raises(BadVocabulary, match="NUL byte"):
        read_vocabulary(b"<a> <b> <c> .\x00", filename="n.nt")


def test_names_and_aliases_are_taken_in_one_language():
    p = plan(
        'ex:c a skos:Concept ; skos:prefLabel "Katze"@de, "Cat"@en ; '
        'skos:altLabel "Kitty"@en, "Mieze"@de, "Felis" .'
    )
    (cat,) = p.concepts
    assert cat.name == "Cat"
    assert [a.name for a in cat.aliases] == ["Kitty", "Felis"]  # the language first
    german = plan('ex:c a skos:Concept ; skos:prefLabel "Katze"@de, "Cat"@en .', lang="de")
    assert german.concepts[0].name == "Katze"


def test_narrower_is_broader_read_backwards_and_two_spellings_make_one_edge():
    p = plan(
        'ex:a a skos:Concept ; skos:prefLabel "Animal" ; skos:narrower ex:b .\n'
        'ex:b a skos:Concept ; skos:prefLabel "Dog" ; skos:broader ex:a .',
        relation_map=parse_map(["broader=part_of"]),
    )
    (edge,) = p.edges
    assert (edge.source, edge.relation, edge.target) == ("Dog", "part_of", "Animal")
    assert len(edge.cites) == 2


def test_two_concepts_with_one_name_are_one_concept_and_the_report_says_so():
    p = plan(
        'ex:a a skos:Concept ; skos:prefLabel "Bank" ; skos:altLabel "Shore" .\n'
        'ex:b a skos:Concept ; skos:prefLabel "Banks" ; skos:altLabel "Lender" .'
    )
    (bank,) = p.concepts
    assert bank.name == "Bank" and {a.name for a in bank.aliases} == {"Shore", "Lender"}
    assert any("imported as one concept" in s.reason for s in p.skipped)


def test_a_loop_of_subclasses_is_cut_and_said():
    p = plan(
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "ex:A a owl:Class ; rdfs:subClassOf ex:B .\nex:B a owl:Class ; rdfs:subClassOf ex:A ."
    )
    keys = [(t.key, t.parent_key) for t in p.types]
    assert sorted(keys) == [("a", ""), ("b", "a")] or sorted(keys) == [("a", "b"), ("b", "")]
    assert [t.key for t in p.types][0] in {k for k, parent in keys if not parent}
    assert any("closes a loop" in s.reason for s in p.skipped)


def test_a_union_domain_gives_a_pattern_per_member():
    p = plan(
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "ex:Setting a owl:Class . ex:Parameter a owl:Class . ex:Process a owl:Class .\n"
        "ex:tunes a owl:ObjectProperty ; rdfs:domain [ owl:unionOf (ex:Setting ex:Parameter) ] ;"
        " rdfs:range ex:Process ."
    )
    (tunes,) = p.relations
    assert {(x.domain_key, x.range_key) for x in tunes.patterns} == {
        ("setting", "process"),
        ("parameter", "process"),
    }
    assert all("rdf-schema#domain" in x.cites[0] for x in tunes.patterns)


def test_every_item_cites_lines_of_the_kept_text():
    statements = read_vocabulary((EXAMPLES / "database.owl").read_bytes(), filename="db.owl")
    text = statements.text()
    p = plan_vocabulary(statements)
    cites = [c for t in p.types for c in t.cites] + [c for r in p.relations for c in r.cites]
    cites += [c for a in p.attributes for c in a.cites] + [c for c in p.concepts[0].cites]
    assert cites and all(f"{line}\n" in text for line in cites)


def test_a_mapping_says_what_it_cannot_map():
    assert parse_map(["broader=part_of,related=related"]) == {
        "broader": "part_of",
        "related": "related",
    }
    with pytest.raises(ValueError, match="write skos_relation=relation"):
        parse_map(["broader"])
    with pytest.raises(ValueError, match='"closeMatch" cannot be mapped'):
        parse_map(["closeMatch=related"])


def test_json_ld_with_an_inline_context_reads():
    raw = json.dumps(
        {
            "@context": {"skos": SKOS, "label": {"@id": f"{SKOS}prefLabel"}},
            "@id": "http://example.org/a",
            "@type": "skos:Concept",
            "label": "Checkpoint",
        }
    ).encode()
    (concept,) = plan_vocabulary(read_vocabulary(raw, filename="a.json")).concepts
    assert concept.name == "Checkpoint"


def test_entities_that_would_blow_up_are_refused_before_parsing():
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">&b;</rdf:RDF>'
    )
    with pytest.raises(BadVocabulary, match='entity "b" is made of other entities'):
        read_vocabulary(laughs.encode(), filename="a.rdf")
    wide = (
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "' + "x" * 1000 + '">]>'
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
        + "&a;" * 2000
        + "</rdf:RDF>"
    )
    with pytest.raises(BadVocabulary, match="entities would spell out 2 MB"):
        read_vocabulary(wide.encode(), filename="a.rdf", limits=VocabLimits(max_bytes=1024**2))


def test_an_alias_that_names_another_concept_of_the_file_is_left_out_and_said():
    p = plan(
        'ex:a a skos:Concept ; skos:prefLabel "Transport layer" ; skos:altLabel "TL" .\n'
        'ex:b a skos:Concept ; skos:prefLabel "Token lexer" ; skos:altLabel "TL", "Lexer" .'
    )
    aliases = {c.name: [a.name for a in c.aliases] for c in p.concepts}
    assert aliases == {"Token lexer": ["Lexer"], "Transport layer": ["TL"]}
    assert any(s.reason == "a name of another concept of the file" for s in p.skipped)
