"""Relation vocabularies: the presets, a team's own file (JSON or YAML), and installing
one into a graph: missing relations added, changed ones described, unnamed ones retired
only while nothing stands on them, refusals in words with nothing written, and the same
install twice changing nothing."""

from __future__ import annotations

import io
import json
from importlib import import_module
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from kgreview.core.models import AuditEntry
from kgreview.graph import services
from kgreview.graph.models import RelationType
from kgreview.graph.vocabulary_files import (
    BadVocabulary,
    load_file,
    load_preset,
    parse,
    preset_names,
)
from kgreview.review.vocabulary import VocabularyRefused, vocabulary_install

pytestmark = pytest.mark.django_db

SEEDED = import_module("kgreview.graph.migrations.0003_seed_relation_types").RELATIONS

# vocab.md, as the lead decided it: key -> (label, verb, symmetric, acyclic).
DOCUMENTATION = {
    "is_a": ("kind of", "is a kind of", False, True),
    "part_of": ("part of", "is part of", False, True),
    "requires": ("requires", "requires", False, False),
    "uses": ("uses", "uses", False, False),
    "produces": ("produces", "produces", False, False),
    "configures": ("configures", "configures", False, False),
    "alternative_to": ("alternative to", "is an alternative to", True, False),
    "contrasts_with": ("contrasts with", "contrasts with", True, False),
    "related": ("related to", "is related to", True, False),
}


def _active() -> set[str]:
    return set(RelationType.objects.filter(active=True).values_list("key", flat=True))


def _audit_count() -> int:
    return AuditEntry.objects.count()


def test_the_presets_are_curriculum_and_documentation():
    """Two presets ship with kgreview, each a whole vocabulary."""
    assert preset_names() == ["curriculum", "documentation"]


def test_the_curriculum_preset_is_exactly_what_the_migration_seeds():
    """Same keys, labels, verbs, descriptions and shapes as graph/0003, in its order."""
    preset = load_preset("curriculum")
    assert [
        (r.key, r.label, r.verb, r.directed, r.symmetric, r.acyclic, r.description)
        for r in preset.relations
    ] == [tuple(row) for row in SEEDED]


def test_the_documentation_preset_is_the_leads_table():
    """The nine relations of vocab.md with their labels, verbs and shapes, and each a
    description with an example."""
    preset = load_preset("documentation")
    assert {r.key: (r.label, r.verb, r.symmetric, r.acyclic) for r in preset.relations} == (
        DOCUMENTATION
    )
    assert list(preset.keys) == list(DOCUMENTATION)
    kinds = {r.key: r.description for r in preset.relations}
    assert kinds["requires"].startswith("The source needs the target to work or to be done")
    assert "no more specific relation above fits" in kinds["related"]


def test_an_unknown_preset_is_refused_in_words():
    """The message names the presets there are."""
    with pytest.raises(Exception, match="curriculum or documentation"):
        load_preset("medicine")


def test_installing_documentation_on_the_seeded_graph_adds_describes_and_retires(f):
    """Six added, three described again, the three curriculum-only relations retired;
    each change is one curation log row by the person, plus one for the install."""
    curator = f.user(role="curator")
    before = AuditEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    report = vocabulary_install(vocabulary=load_preset("documentation"), acting_user=curator)
    assert sorted(report.created) == sorted(
        ["is_a", "requires", "uses", "produces", "configures", "alternative_to"]
    )
    assert sorted(report.described) == ["contrasts_with", "part_of", "related"]
    assert report.retired == ["applies_to", "builds_on", "prerequisite"]
    assert _active() == set(DOCUMENTATION)
    for key, (label, verb, symmetric, acyclic) in DOCUMENTATION.items():
        row = RelationType.objects.get(key=key)
        assert (row.label, row.verb, row.symmetric, row.acyclic, row.directed) == (
            label,
            verb,
            symmetric,
            acyclic,
            not symmetric,
        )
    retired = RelationType.objects.get(key="prerequisite")
    assert not retired.active and retired.retired_at is not None
    rows = list(AuditEntry.objects.filter(pk__gt=before).order_by("pk"))
    actions = [r.action for r in rows]
    assert actions.count("relation_type.create") == 6
    assert actions.count("relation_type.describe") == 3
    assert actions.count("relation_type.retire") == 3
    assert actions[-1] == "vocabulary.install"
    assert {r.user_id for r in rows} == {curator.pk}
    assert rows[-1].summary == (
        "The documentation vocabulary: 6 added, 3 described again, 3 retired."
    )


def test_installing_the_same_vocabulary_twice_changes_nothing_the_second_time(f):
    """The second install reports every relation unchanged and writes no row."""
    vocabulary_install(vocabulary=load_preset("documentation"), acting_user=None)
    rows = _audit_count()
    relations = list(RelationType.objects.order_by("pk").values())
    again = vocabulary_install(vocabulary=load_preset("documentation"), acting_user=None)
    assert not again.changed
    assert again.unchanged == list(DOCUMENTATION)
    assert _audit_count() == rows
    assert list(RelationType.objects.order_by("pk").values()) == relations


def test_the_curriculum_preset_on_the_seeded_graph_is_a_no_op():
    """A fresh graph already holds the curriculum's six relations."""
    report = vocabulary_install(vocabulary=load_preset("curriculum"), acting_user=None)
    assert not report.changed and len(report.unchanged) == 6


def test_going_back_to_the_curriculum_reactivates_what_it_names(f):
    """Retired relations the vocabulary names come back; the others are retired, never
    deleted."""
    vocabulary_install(vocabulary=load_preset("documentation"), acting_user=None)
    report = vocabulary_install(vocabulary=load_preset("curriculum"), acting_user=None)
    assert sorted(report.reactivated) == ["applies_to", "builds_on", "prerequisite"]
    assert "is_a" in report.retired
    assert _active() == {row[0] for row in SEEDED}
    assert RelationType.objects.count() == 12
    assert RelationType.objects.get(key="part_of").label == "Part of"


def test_a_relation_with_an_active_edge_is_not_retired_and_nothing_is_written(f):
    """The refusal names the relation and its edges; no relation was added or retired."""
    f.edge(f.concept("Embeddings"), f.concept("Vector search"), "prerequisite")
    rows = _audit_count()
    with pytest.raises(VocabularyRefused) as refused:
        vocabulary_install(vocabulary=load_preset("documentation"), acting_user=None)
    words = refused.value.message
    assert "“prerequisite” is not in the file but holds 1 active edge" in words
    assert "nothing was changed" in words
    assert _active() == {row[0] for row in SEEDED}
    assert not RelationType.objects.filter(key="is_a").exists()
    assert _audit_count() == rows


def test_a_relation_with_an_open_proposal_is_not_retired(f):
    """An open edge proposal in a relation the file leaves out refuses the install."""
    f.edge_proposal(f.concept("RLHF"), f.concept("Alignment"), "applies_to")
    with pytest.raises(VocabularyRefused, match="“applies_to” is not in the file but holds 1 open"):
        vocabulary_install(vocabulary=load_preset("documentation"), acting_user=None)
    assert RelationType.objects.get(key="applies_to").active


def test_every_reason_is_given_at_once(f):
    """Two relations in use: both are named in one refusal."""
    f.edge(f.concept("A"), f.concept("B"), "prerequisite")
    f.edge(f.concept("C"), f.concept("D"), "builds_on")
    f.edge(f.concept("E"), f.concept("F"), "builds_on")
    with pytest.raises(VocabularyRefused) as refused:
        vocabulary_install(vocabulary=load_preset("documentation"), acting_user=None)
    assert len(refused.value.problems) == 2
    assert "“builds_on” is not in the file but holds 2 active edges" in refused.value.message


def test_a_retired_edge_does_not_hold_its_relation(f):
    """History stays with a retired relation: only active edges stand on it."""
    edge = f.edge(f.concept("A"), f.concept("B"), "prerequisite")
    services.edge_invalidate(edge=edge, reason="Wrong.", acting_user=None)
    report = vocabulary_install(vocabulary=load_preset("documentation"), acting_user=None)
    assert "prerequisite" in report.retired


def test_a_decided_proposal_does_not_hold_its_relation(f):
    """Only open proposals (pending or held) stand on a relation."""
    from kgreview.review.decide.decisions import proposal_reject

    proposal = f.edge_proposal(f.concept("RLHF"), f.concept("Alignment"), "applies_to")
    proposal_reject(
        proposal_id=proposal.pk, acting_user=f.user(role="reviewer"), reason_code="too_vague"
    )
    report = vocabulary_install(vocabulary=load_preset("documentation"), acting_user=None)
    assert "applies_to" in report.retired


def test_a_file_that_reshapes_a_relation_is_refused():
    """part_of is directed and acyclic in the graph: a file making it symmetric is
    refused, naming both shapes."""
    vocabulary = parse(
        json.dumps({"relations": [{"key": "part_of", "label": "p", "verb": "is part of",
                                   "symmetric": True}]}),
        fmt="json",
        origin="team.json",
    )  # fmt: skip
    with pytest.raises(VocabularyRefused) as refused:
        vocabulary_install(vocabulary=vocabulary, acting_user=None)
    assert (
        "“part_of” is directed and acyclic in this graph and symmetric in the file"
        in refused.value.message
    )


def test_a_teams_yaml_file_adds_its_own_relations_with_their_shape(tmp_path: Path):
    """A relation of the team's own (directed, acyclic) is created as written; labels
    and verbs are trimmed; the file's name names the vocabulary."""
    path = tmp_path / "acme.yaml"
    path.write_text(
        "name: acme\n"
        "description: Our platform's words.\n"
        "relations:\n"
        "  - key: deploys_before\n"
        "    label: '  deploys before '\n"
        "    verb: is deployed before\n"
        "    acyclic: true\n"
        "  - key: related\n"
        "    label: Related\n"
        "    verb: is related to\n"
        "    description: The two are connected in a way none of the other relations names.\n"
        "    symmetric: true\n"
    )
    vocabulary = load_file(path)
    assert vocabulary.name == "acme" and vocabulary.keys == ("deploys_before", "related")
    report = vocabulary_install(vocabulary=vocabulary, acting_user=None)
    row = RelationType.objects.get(key="deploys_before")
    assert (row.label, row.directed, row.symmetric, row.acyclic) == (
        "deploys before",
        True,
        False,
        True,
    )
    assert report.unchanged == ["related"]
    assert _active() == {"deploys_before", "related"}


def test_json_and_yaml_files_with_the_same_fields_give_the_same_vocabulary(tmp_path: Path):
    """A bare list of relations is a vocabulary too; the name defaults to the file's."""
    rows = [{"key": "uses", "label": "uses", "verb": "uses"}]
    (tmp_path / "ours.json").write_text(json.dumps(rows))
    (tmp_path / "ours.yml").write_text("- key: uses\n  label: uses\n  verb: uses\n")
    a, b = load_file(tmp_path / "ours.json"), load_file(tmp_path / "ours.yml")
    assert a.relations == b.relations and a.name == b.name == "ours"


BAD_FILES = [
    ("bad.json", '{"relations": [\n  {"key": "a", "label": "A", "verb": "as"}\n', "line 3"),
    ("bad.json", '{"relations": [\n  {"key": "a", "label": "A", "verb": "as"},\n'
     '  {"key": "b", "label": 3, "verb": "bs"}\n]}', "line 3: relation 2 (“b”): “label” must "
     "be text, not 3"),
    ("bad.yaml", "relations:\n  - key: a\n    label: A\n", "line 2: relation 1 (“a”): “verb” is "
     "missing"),
    ("bad.yaml", "relations:\n  - key: a\n    label: A\n    verb: as\n    symmetric: maybe\n",
     "line 5: relation 1 (“a”): “symmetric” must be true or false, not “maybe”"),
    ("bad.yaml", "relations:\n  - key: a\n    label: A\n    verb: as\n    acylic: true\n",
     "line 5: relation 1 (“a”): “acylic” is not a field of a relation"),
    ("bad.yaml", "relations:\n  - key: Part-Of\n    label: A\n    verb: as\n",
     "line 2: relation 1 (“Part-Of”): “key” must be lowercase letters"),
    ("bad.yaml", "relations:\n  - key: same\n    label: same\n    verb: is\n    symmetric: true\n"
     "    acyclic: true\n", "line 2: relation 1 (“same”): a symmetric relation has no "
     "direction, so it cannot be acyclic"),
    ("bad.yaml", "relations:\n  - {key: a, label: A, verb: as}\n  - {key: a, label: B, verb: bs}\n",
     "line 3: relation 2: the key “a” is already used by relation 1"),
    ("bad.yaml", "relations:\n  - key: a\n    key: b\n    label: A\n    verb: as\n",
     "line 3: “key” is written twice in one object"),
    ("bad.yaml", "relations: []\n", "“relations” holds no relation"),
    ("bad.yaml", "relations: [\n", "not YAML"),
    ("bad.yaml", "hello\n", "must hold an object with “relations”"),
    ("bad.yaml", "relation:\n  - {key: a, label: A, verb: as}\n",
     "“relation” is not a field of a vocabulary file (use name, description, relations)"),
    ("bad.yaml", f"relations:\n  - {{key: a, label: {'x' * 101}, verb: as}}\n",
     "“label” is longer than 100 characters"),
    ("bad.yaml", "relations:\n  - {key: a, label: '  ', verb: as}\n", "label and verb must "
     "hold words"),
    ("bad.toml", "relations = []\n", "ends in .json, .yaml or .yml"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "words"), BAD_FILES)
def test_a_bad_file_is_refused_with_its_line_and_field(tmp_path: Path, name, text, words):
    """Each problem in words, where it is; nothing is installed."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(BadVocabulary) as bad:
        load_file(path)
    assert words in bad.value.message
    assert bad.value.message.startswith(f"{path}: ")


def test_a_file_that_is_not_utf8_or_missing_is_refused(tmp_path: Path):
    """Unreadable files are said, never a traceback."""
    path = tmp_path / "latin.yaml"
    path.write_bytes("relations:\n  - {key: caf\xe9}\n".encode("latin-1"))
    with pytest.raises(BadVocabulary, match="not UTF-8"):
        load_file(path)
    with pytest.raises(BadVocabulary, match="cannot be read"):
        load_file(tmp_path / "absent.json")


# --- the command ---------------------------------------------------------------------------


def test_the_command_installs_a_preset_and_says_what_it_did():
    """Each change on its own line, then the summary; --json prints the report."""
    out = io.StringIO()
    call_command("vocabulary", "--preset", "documentation", stdout=out)
    text = out.getvalue()
    assert "      added  is_a" in text and "    retired  prerequisite" in text
    assert "6 added, 3 described again, 3 retired" in text
    out = io.StringIO()
    call_command("vocabulary", "--preset", "documentation", "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["vocabulary"] == "documentation" and report["created"] == []
    assert report["unchanged"] == list(DOCUMENTATION)


def test_the_command_lists_the_presets_and_the_graphs_relations():
    """--list names each preset's relations and the graph's, retired ones marked."""
    call_command("vocabulary", "--preset", "documentation", stdout=io.StringIO())
    out = io.StringIO()
    call_command("vocabulary", "--list", "--json", stdout=out)
    listed = json.loads(out.getvalue())
    assert listed["presets"]["documentation"]["relations"] == list(DOCUMENTATION)
    assert listed["installed"]["name"] == "documentation"
    states = {r["key"]: r["active"] for r in listed["relations"]}
    assert states["prerequisite"] is False and states["is_a"] is True
    out = io.StringIO()
    call_command("vocabulary", "--list", stdout=out)
    assert "prerequisite     source is a prerequisite for target  (retired)" in out.getvalue()


def test_the_command_refuses_bad_input_in_words(tmp_path: Path, f):
    """A bad file, an unknown preset and a relation in use are errors, not tracebacks."""
    path = tmp_path / "v.yaml"
    path.write_text("relations:\n  - key: a\n")
    with pytest.raises(CommandError, match="line 2: relation 1 .* “label” is missing"):
        call_command("vocabulary", "--file", str(path))
    with pytest.raises(CommandError, match="no vocabulary preset called “x”"):
        call_command("vocabulary", "--preset", "x")
    f.edge(f.concept("A"), f.concept("B"), "builds_on")
    with pytest.raises(CommandError, match="“builds_on” is not in the file but holds"):
        call_command("vocabulary", "--preset", "documentation")
