"""The offline extractor: cue phrases in, candidate edges with verbatim evidence out."""

from __future__ import annotations

import pytest

from construction.offline import OfflineExtractor
from construction.text import name_key
from construction.types import LLMUsage
from tests.construction.offline_helpers import (
    extract,
    has,
    triples,
)

# --- The protocol -----------------------------------------------------------------------


def test_extractor_names_itself_and_uses_no_model_calls():
    """The extraction says which extractor made it and reports zero usage."""
    result = extract("Linear algebra is a prerequisite for machine learning.\n")
    assert (result.extractor, result.model) == ("rules", "rules-v2")
    assert OfflineExtractor.name == "rules" and OfflineExtractor.model == "rules-v2"
    assert result.usage == LLMUsage()
    assert result.rejected == ()


def test_empty_text_yields_nothing():
    """A document without text has no concepts and no candidates."""
    result = extract("")
    assert result.candidates == () and result.concepts == ()


# --- Cue families -----------------------------------------------------------------------

PREREQUISITES = [
    (
        "Linear algebra is a prerequisite for machine learning.",
        "linear algebra",
        "machine learning",
    ),
    ("Machine learning requires linear algebra.", "linear algebra", "machine learning"),
    ("Compilers depend on parsing.", "parsing", "compilers"),
    ("Before learning calculus, you should understand algebra.", "algebra", "calculus"),
    ("Before studying topology you should know set theory.", "set theory", "topology"),
    ("You need probability to understand statistics.", "probability", "statistics"),
    ("Set theory is required for topology.", "set theory", "topology"),
    ("Basic arithmetic is needed for algebra.", "basic arithmetic", "algebra"),
    (
        "Make sure you are comfortable with recursion before tackling dynamic programming.",
        "recursion",
        "dynamic programming",
    ),
    ("Dynamic programming assumes familiarity with recursion.", "recursion", "dynamic programming"),
    (
        "Garbage collection relies on reachability analysis.",
        "reachability analysis",
        "garbage collection",
    ),
]


@pytest.mark.parametrize(("text", "source", "target"), PREREQUISITES)
def test_prerequisite_cues_point_from_what_comes_first(text, source, target):
    """Every prerequisite phrasing yields source = what must be learned first."""
    assert has(extract(text + "\n"), source, "prerequisite", target)


BUILDS_ON = [
    ("Kotlin builds on Java.", "kotlin", "java"),
    ("Kotlin extends Java.", "kotlin", "java"),
    ("Spark is built on top of Hadoop.", "spark", "hadoop"),
    ("TypeScript is based on JavaScript.", "typescript", "javascript"),
    (
        "Dijkstra's algorithm generalizes breadth-first search.",
        "dijkstra's algorithm",
        "breadth-first search",
    ),
    ("TypeScript is an extension of JavaScript.", "typescript", "javascript"),
]


@pytest.mark.parametrize(("text", "source", "target"), BUILDS_ON)
def test_builds_on_cues_point_from_the_newer_idea(text, source, target):
    """ "A extends B", "A is built on top of B" and friends read as A builds on B."""
    assert has(extract(text + "\n"), source, "builds_on", target)


PARTS = [
    ("The lexer is part of the compiler.", "lexer", "compiler"),
    ("The optimizer is a stage of the compiler.", "optimizer", "compiler"),
    ("The parser is a component of every compiler.", "parser", "compiler"),
    ("Register allocation is the final step of compilation.", "register allocation", "compilation"),
    ("The kernel is made up of the scheduler and the memory manager.", "scheduler", "kernel"),
    ("An operating system comprises a kernel and user space.", "user space", "operating system"),
    ("One stage of compilation is register allocation.", "register allocation", "compilation"),
]


@pytest.mark.parametrize(("text", "source", "target"), PARTS)
def test_part_of_cues_point_from_the_part_to_the_whole(text, source, target):
    """ "is part of", "is a stage of", "consists of", "one stage of B is A": part -> whole."""
    assert has(extract(text + "\n"), source, "part_of", target)


CONTRASTS = [
    ("Unlike arrays, linked lists grow dynamically.", "arrays", "linked lists"),
    ("In contrast to TCP, UDP does not guarantee delivery.", "tcp", "udp"),
    (
        "Compared with SQL databases, document stores are schemaless.",
        "sql databases",
        "document stores",
    ),
    ("Paging differs from segmentation in how memory is divided.", "paging", "segmentation"),
    ("Whereas TCP guarantees ordering, UDP sends datagrams independently.", "tcp", "udp"),
    ("Static typing versus dynamic typing is an old debate.", "static typing", "dynamic typing"),
    ("Memoization, as opposed to tabulation, works top-down.", "memoization", "tabulation"),
    ("Linked lists grow easily, unlike arrays.", "linked lists", "arrays"),
]


@pytest.mark.parametrize(("text", "a", "b"), CONTRASTS)
def test_contrast_cues_pair_the_two_sides(text, a, b):
    """ "Unlike A, B", "whereas", "versus", "differs from": a symmetric contrast."""
    assert has(extract(text + "\n"), a, "contrasts_with", b)


def test_a_negation_in_the_main_clause_does_not_undo_a_contrast():
    """ "In contrast to TCP, UDP does not guarantee delivery" still contrasts the two."""
    assert has(
        extract("In contrast to TCP, UDP does not guarantee delivery.\n"),
        "udp",
        "contrasts_with",
        "tcp",
    )


def test_comparing_things_inside_a_clause_is_not_a_contrast():
    """ "the query is compared with every key" compares two things without contrasting them."""
    result = extract("Each query is compared with every stored key by a dot product.\n")
    assert not [c for c in result.candidates if c.relation == "contrasts_with"]


APPLICATIONS = [
    ("Hash tables are used for caching.", "hash tables", "caching"),
    ("Regular expressions are applied to text search.", "regular expressions", "text search"),
    ("Graph theory applies to network routing.", "graph theory", "network routing"),
    ("Bloom filters are useful for membership queries.", "bloom filters", "membership queries"),
    ("Tries are widely used in autocompletion.", "tries", "autocompletion"),
]


@pytest.mark.parametrize(("text", "source", "target"), APPLICATIONS)
def test_applies_to_cues_point_from_the_tool_to_its_use(text, source, target):
    """ "A is used for B", "A is applied to B", "A is useful for B": A applies to B."""
    assert has(extract(text + "\n"), source, "applies_to", target)


RELATED = [
    ("Entropy is related to information gain.", "entropy", "information gain"),
    ("Caching is closely tied to locality of reference.", "caching", "locality of reference"),
    ("Overfitting is associated with high variance.", "overfitting", "high variance"),
    ("Latency is closely linked to throughput.", "latency", "throughput"),
]


@pytest.mark.parametrize(("text", "a", "b"), RELATED)
def test_related_cues_link_both_sides(text, a, b):
    """ "related to", "closely tied to", "associated with": a symmetric relation."""
    assert has(extract(text + "\n"), a, "related", b)


def test_see_also_relates_the_lesson_topic_to_what_it_points_at():
    """ "See also B" at the end of a lesson relates the lesson's topic to B."""
    result = extract("# Graph Theory\n\nGraphs model networks.\n\nSee also spectral clustering.\n")
    assert has(result, "graph theory", "related", "spectral clustering")


def test_a_lesson_reference_points_at_the_lesson_topic():
    """ "You need A to follow this lesson" makes A a prerequisite for the lesson's topic."""
    text = (
        "# Sourdough Baking\n\n**Sourdough baking** is slow. "
        "You need a healthy starter to follow this lesson.\n"
    )
    assert has(extract(text), "healthy starter", "prerequisite", "sourdough baking")


def test_comfortable_with_first_points_at_the_lesson_topic():
    """ "Make sure you are comfortable with A first" names no target, so the topic is it."""
    text = "# Knife Skills\n\nCuts matter. Make sure you are comfortable with knife safety first.\n"
    assert has(extract(text), "knife safety", "prerequisite", "knife skills")


# --- Coordination -----------------------------------------------------------------------


def test_two_coordinated_parts_become_two_edges():
    """ "A and B are both components of C" yields A part_of C and B part_of C."""
    result = extract("Mutexes and semaphores are both components of concurrency control.\n")
    assert has(result, "mutexes", "part_of", "concurrency control")
    assert has(result, "semaphores", "part_of", "concurrency control")


def test_before_learning_with_two_prerequisites_becomes_two_edges():
    """ "Before learning X you should understand A and B" yields two prerequisites of X."""
    result = extract(
        "Before learning topology you should understand set theory and metric spaces.\n"
    )
    assert has(result, "set theory", "prerequisite", "topology")
    assert has(result, "metric spaces", "prerequisite", "topology")


def test_a_list_gives_one_edge_per_item():
    """ "C consists of A, B and D" yields three part_of edges."""
    result = extract("A compiler consists of a lexer, a parser and a code generator.\n")
    for part in ("lexer", "parser", "code generator"):
        assert has(result, part, "part_of", "compiler")


def test_a_counted_list_after_a_colon_names_its_items():
    """ "made up of three parts: A, B and C" names A, B and C, not "three parts"."""
    result = extract(
        "A CDC pipeline is made up of three parts: a log reader, a message broker and "
        "a sink connector.\n"
    )
    for part in ("log reader", "message broker", "sink connector"):
        assert has(result, part, "part_of", "cdc pipeline")
    assert not any("part" in name_key(c.source).split() for c in result.candidates)


def test_a_new_clause_after_a_comma_is_not_a_list_item():
    """ "..., treating X as Y" after the object does not join the list."""
    result = extract("RLHF builds on reinforcement learning, treating the model as a policy.\n")
    assert triples(result) == {("rlhf", "builds_on", "reinforcement learning")}
