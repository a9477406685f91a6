"""The pass rules: concept sets by recall, paths by their ends, yes / no by the yes; and
the gaps a failing question points at."""

from __future__ import annotations

from construction.ask.types import Answer, ConceptFact, EdgeFact, Found, Plan, Step
from kgreview.questions.judge import Expected, Gap, judge


def plan(*found: tuple[int, str], family="prerequisites") -> Plan:
    return Plan(
        question="q",
        family=family,
        concepts=tuple(Found(said=n, concept_id=i, name=n, match="exact") for i, n in found),
    )


def answer(status="answered", concepts=(), paths=(), yes=None, p=None, message="m") -> Answer:
    return Answer(
        question="q",
        status=status,
        message=message,
        plan=p or plan((1, "LoRA")),
        yes=yes,
        concepts=tuple(ConceptFact(i, n) for i, n in concepts),
        paths=paths,
    )


def step(edge_id, frm, to) -> Step:
    return Step(edge=EdgeFact(edge_id, frm, to, "prerequisite"), frm=frm, to=to)


def test_a_set_passes_when_every_expected_concept_is_found_and_names_the_rest():
    """Recall 1 passes; the concepts found besides are said, not held against it."""
    got = judge(
        Expected("concepts", ("Fine-tuning", "Transformer"), (2, 3)),
        answer(concepts=[(2, "Fine-tuning"), (3, "Transformer"), (4, "Attention")]),
    )
    assert got.passed and got.extra == ("Attention",) and not got.gaps
    assert got.words == "All 2 expected concepts found. Found besides: Attention."


def test_a_set_missing_a_concept_fails_and_points_a_gap_at_it():
    """The missing concept is listed, and the gap joins it to the asked concept."""
    got = judge(
        Expected("concepts", ("Fine-tuning", "Tokenization"), (2, 5)),
        answer(concepts=[(2, "Fine-tuning")]),
    )
    assert not got.passed and got.missing == ("Tokenization",)
    assert got.words == "Missing 1 of 2: Tokenization."
    assert got.gaps == (Gap(ends=(1, 5), names=("LoRA", "Tokenization")),)


def test_an_expected_concept_no_longer_in_the_graph_is_missing_without_a_gap():
    """A name that means no active concept any more is missing, said so; no search."""
    got = judge(Expected("concepts", ("Gone",), (None,)), answer(concepts=[]))
    assert not got.passed and got.missing == ("Gone",) and not got.gaps
    assert "No longer an active concept of the graph: Gone." in got.words


def test_a_set_answered_no_path_repeats_the_graphs_words():
    """An empty answer set fails with every expected concept missing."""
    got = judge(
        Expected("concepts", ("Alignment",), (7,)),
        answer(status="no_path", message="Nothing is part of LoRA as of now."),
    )
    assert not got.passed and "Nothing is part of LoRA" in got.words


def test_a_path_passes_when_a_path_joins_the_two_ends_either_way_round():
    """The path's ends, in either order, are the expected ones."""
    path = (step(10, 3, 8), step(11, 8, 1))
    got = judge(
        Expected("path", ("LoRA", "Embeddings"), (1, 3)),
        answer(paths=(path,), p=plan((1, "LoRA"), (3, "Embeddings"), family="connection")),
    )
    assert got.passed and got.words == "A path of 2 hops joins LoRA and Embeddings."


def test_no_path_fails_with_a_gap_between_the_two_ends():
    """No path: the gap is the two ends."""
    got = judge(
        Expected("path", ("LoRA", "Embeddings"), (1, 3)),
        answer(status="no_path", message="No path between LoRA and Embeddings as of now."),
    )
    assert not got.passed and got.missing == ("a path between LoRA and Embeddings",)
    assert got.gaps == (Gap(ends=(1, 3), names=("LoRA", "Embeddings")),)
    assert "No path joins LoRA and Embeddings" in got.words


def test_a_path_between_other_ends_fails_and_says_which_ends_it_joined():
    """A path that joins other concepts is not the path asked for."""
    a = Answer(
        question="q",
        status="answered",
        message="m",
        plan=plan((1, "LoRA"), (9, "RAG"), family="connection"),
        paths=((step(10, 1, 9),),),
        names=((1, "LoRA"), (9, "RAG")),
    )
    got = judge(Expected("path", ("LoRA", "Embeddings"), (1, 3)), a)
    assert (
        not got.passed and got.words == "The path found joins LoRA, RAG, not LoRA and Embeddings."
    )


def test_yes_no_passes_on_the_expected_yes_and_fails_on_the_other():
    """Yes expected and found passes; no expected and yes found fails without a gap."""
    yes_plan = plan((1, "Attention"), (2, "Transformer"), family="yes_no")
    assert judge(Expected("yes_no", (), (), yes=True), answer(yes=True, p=yes_plan)).passed
    got = judge(Expected("yes_no", (), (), yes=False), answer(yes=True, p=yes_plan))
    assert not got.passed and got.missing == ("no",) and got.extra == ("yes",) and not got.gaps


def test_yes_expected_and_no_found_points_a_gap_at_the_two_concepts():
    """The gap's ends come from the expected names, else from the plan."""
    yes_plan = plan((1, "Attention"), (2, "Transformer"), family="yes_no")
    got = judge(Expected("yes_no", (), (), yes=True), answer(yes=False, p=yes_plan))
    assert not got.passed and got.gaps == (Gap(ends=(1, 2), names=("Attention", "Transformer")),)
    named = judge(
        Expected("yes_no", ("Attention", "Transformer"), (5, 6), yes=True),
        answer(yes=False, p=yes_plan),
    )
    assert named.gaps == (Gap(ends=(5, 6), names=("Attention", "Transformer")),)


def test_a_question_not_understood_fails_with_the_graphs_words_and_no_gap():
    """An unknown concept in the question is a failure in words, never a search."""
    got = judge(
        Expected("concepts", ("Alignment",), (7,)),
        answer(status="not_understood", message="I do not know the concept 'quantum networking'"),
    )
    assert not got.passed and not got.gaps
    assert got.words == "Not understood: I do not know the concept 'quantum networking'"


def test_a_long_list_of_names_is_cut_in_words():
    """Ten names, then "and N more"."""
    found = [(i, f"C{i}") for i in range(2, 30)]
    got = judge(Expected("concepts", ("C2",), (2,)), answer(concepts=found))
    assert got.passed and got.words.endswith("C12 and 17 more.") and len(got.extra) == 27
