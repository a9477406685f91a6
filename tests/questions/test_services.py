"""Competency question services: validation in words, audit rows, retire / reactivate."""

from __future__ import annotations

import pytest

from kgreview.core.errors import NotFound, StateConflict, ValidationFailed
from kgreview.core.models import AuditEntry
from kgreview.questions.models import CompetencyQuestion
from kgreview.questions.services import (
    QuestionSpec,
    question_create,
    question_reactivate,
    question_retire,
    question_update,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def graph(f):
    names = ["Embeddings", "Vector search", "Attention", "Transformer"]
    return {n: f.concept(n) for n in names}


def spec(
    text="What should I learn before vector search?",
    expect="concepts",
    names=("Embeddings",),
    yes=None,
    note="",
):
    return QuestionSpec(text=text, expect=expect, names=tuple(names), yes=yes, note=note)


def test_a_question_is_stored_active_with_its_expected_answer_and_audited(graph, curator_user):
    """Create writes the question and one curation-log row naming the curator."""
    q = question_create(spec=spec(note="  core path  "), acting_user=curator_user)
    assert q.active and q.expect == "concepts" and q.expected_names == ["Embeddings"]
    assert q.note == "core path" and q.created_by == curator_user
    entry = AuditEntry.objects.get(action="competency_question.create")
    assert entry.user == curator_user and entry.subject_id == str(q.pk)
    assert "What should I learn before vector search?" in entry.summary


def test_expected_names_the_graph_does_not_know_are_named_in_the_refusal(graph, curator_user):
    """Unknown names are listed in words, and nothing is written."""
    with pytest.raises(ValidationFailed) as refused:
        question_create(
            spec=spec(names=("Embeddings", "Quantum networking", "Teleportation")),
            acting_user=curator_user,
        )
    assert "“Quantum networking”, “Teleportation”" in str(refused.value)
    assert "does not know the concepts" in str(refused.value)
    assert not CompetencyQuestion.objects.exists()
    assert not AuditEntry.objects.filter(action__startswith="competency_question").exists()


def test_expected_names_resolve_by_alias_plural_and_case(f, graph, curator_user):
    """A name known as an alias, a plural or in another case is a known concept."""
    from kgreview.graph.services import concept_add_alias

    rag = f.concept("Retrieval-augmented generation")
    concept_add_alias(concept=rag, name="RAG", acting_user=None)
    q = question_create(
        spec=spec(names=("embedding", "VECTOR SEARCH", "RAG")), acting_user=curator_user
    )
    assert q.expected_names == ["embedding", "VECTOR SEARCH", "RAG"]


def test_a_retired_concept_is_not_a_known_name(f, graph, curator_user):
    """A concept retired from the graph cannot be expected."""
    from kgreview.graph.services import concept_retire

    concept_retire(concept=graph["Attention"], acting_user=None)
    with pytest.raises(ValidationFailed, match="“Attention”"):
        question_create(spec=spec(names=("Attention",)), acting_user=curator_user)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"text": "   "}, "Write the question."),
        ({"text": "x" * 501}, "501 characters long; at most 500"),
        ({"expect": "maybe"}, "“maybe” is not a kind of answer"),
        ({"names": ()}, "Name at least one concept"),
        ({"expect": "path", "names": ("Embeddings",)}, "name exactly two concepts (you named 1)"),
        ({"expect": "yes_no", "names": ()}, "Say whether the expected answer is yes or no."),
        (
            {"expect": "yes_no", "names": ("Embeddings",), "yes": True},
            "names its two concepts, or none",
        ),
    ],
)
def test_bad_input_is_refused_in_words(graph, curator_user, kwargs, words):
    """Each refusal says what is wrong; nothing is written."""
    with pytest.raises(ValidationFailed, match=words.replace("(", r"\(").replace(")", r"\)")):
        question_create(spec=spec(**kwargs), acting_user=curator_user)
    assert not CompetencyQuestion.objects.exists()


def test_the_same_name_twice_is_kept_once(graph, curator_user):
    """Two spellings of one name (by key) count once."""
    q = question_create(
        spec=spec(names=("Embeddings", "embeddings", " Embedding ")), acting_user=curator_user
    )
    assert q.expected_names == ["Embeddings"]


def test_a_path_and_a_yes_no_question_store_their_answers(graph, curator_user):
    """A path keeps its two ends; a yes/no keeps its yes, its names optional."""
    path = question_create(
        spec=spec(
            text="How is attention connected to embeddings?",
            expect="path",
            names=("Attention", "Embeddings"),
        ),
        acting_user=curator_user,
    )
    yes = question_create(
        spec=spec(
            text="Is attention a prerequisite for the transformer?",
            expect="yes_no",
            names=(),
            yes=True,
        ),
        acting_user=curator_user,
    )
    assert path.expected_names == ["Attention", "Embeddings"] and path.expected_yes is None
    assert yes.expected_yes is True and yes.expected_words == "yes"


def test_an_active_question_cannot_be_asked_twice(graph, curator_user):
    """The same words (any case or spacing) as an active question are refused."""
    first = question_create(spec=spec(), acting_user=curator_user)
    with pytest.raises(ValidationFailed, match=f"#{first.pk} already asks"):
        question_create(
            spec=spec(text="what should I learn  before vector search?"), acting_user=curator_user
        )


def test_edit_changes_the_question_and_audits_only_what_changed(graph, curator_user):
    """The audit row names the fields changed, with before and after."""
    q = question_create(spec=spec(), acting_user=curator_user)
    question_update(
        question_id=q.pk, spec=spec(names=("Embeddings", "Attention")), acting_user=curator_user
    )
    q.refresh_from_db()
    assert q.expected_names == ["Embeddings", "Attention"]
    entry = AuditEntry.objects.get(action="competency_question.edit")
    assert entry.before == {"expected_names": ["Embeddings"]}
    assert entry.after == {"expected_names": ["Embeddings", "Attention"]}


def test_an_edit_that_changes_nothing_writes_nothing(graph, curator_user):
    """No change, no audit row."""
    q = question_create(spec=spec(), acting_user=curator_user)
    question_update(question_id=q.pk, spec=spec(), acting_user=curator_user)
    assert not AuditEntry.objects.filter(action="competency_question.edit").exists()


def test_edit_refuses_unknown_names_and_leaves_the_question(graph, curator_user):
    """A refused edit changes nothing."""
    q = question_create(spec=spec(), acting_user=curator_user)
    with pytest.raises(ValidationFailed, match="Nowhere"):
        question_update(question_id=q.pk, spec=spec(names=("Nowhere",)), acting_user=curator_user)
    q.refresh_from_db()
    assert q.expected_names == ["Embeddings"]


def test_edit_of_an_unknown_question_is_not_found(graph, curator_user):
    with pytest.raises(NotFound, match="no competency question #999"):
        question_update(question_id=999, spec=spec(), acting_user=curator_user)


def test_retire_keeps_the_question_and_reactivate_brings_it_back(graph, curator_user):
    """Retire, then reactivate: each audited, the row never deleted."""
    q = question_create(spec=spec(), acting_user=curator_user)
    question_retire(question_id=q.pk, acting_user=curator_user)
    q.refresh_from_db()
    assert not q.active and q.retired_at is not None
    with pytest.raises(StateConflict, match="already retired"):
        question_retire(question_id=q.pk, acting_user=curator_user)
    question_reactivate(question_id=q.pk, acting_user=curator_user)
    q.refresh_from_db()
    assert q.active and q.retired_at is None
    with pytest.raises(StateConflict, match="already active"):
        question_reactivate(question_id=q.pk, acting_user=curator_user)
    actions = list(
        AuditEntry.objects.filter(subject_type="competencyquestion")
        .order_by("pk")
        .values_list("action", flat=True)
    )
    assert actions == [
        "competency_question.create",
        "competency_question.retire",
        "competency_question.reactivate",
    ]


def test_a_retired_question_frees_its_words_but_cannot_come_back_beside_its_twin(
    graph, curator_user
):
    """Retired, its words may be asked again; reactivating it then is refused."""
    old = question_create(spec=spec(), acting_user=curator_user)
    question_retire(question_id=old.pk, acting_user=curator_user)
    new = question_create(spec=spec(), acting_user=curator_user)
    with pytest.raises(StateConflict, match=f"#{new.pk} already asks"):
        question_reactivate(question_id=old.pk, acting_user=curator_user)


def test_a_question_is_never_deleted(graph, curator_user):
    """Delete raises; retire instead."""
    from kgreview.core.errors import HardDeleteForbidden

    q = question_create(spec=spec(), acting_user=curator_user)
    with pytest.raises(HardDeleteForbidden, match="retire it instead"):
        q.delete()
