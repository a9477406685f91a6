"""The offline extractor: cue phrases in, candidate edges with verbatim evidence out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from construction.offline import OfflineExtractor
from construction.sentences import sentences
from construction.text import name_key, split_abbreviation
from construction.types import Extraction, IndexEntry, LLMUsage, RelationSpec, SourceDoc

VOCABULARY = (
    RelationSpec("prerequisite", "Prerequisite", "is a prerequisite for", "", False, True),
    RelationSpec("builds_on", "Builds on", "builds on", "", False, True),
    RelationSpec("part_of", "Part of", "is part of", "", False, True),
    RelationSpec("contrasts_with", "Contrasts with", "contrasts with", "", True, False),
    RelationSpec("applies_to", "Applies to", "applies to", "", False, False),
    RelationSpec("related", "Related", "is related to", "", True, False),
)
SYMMETRIC = {"contrasts_with", "related"}
DISCOVERY = {"alternative_to", "replaces", "mitigates", "causes", "evaluated_with"}


@dataclass
class DictLexicon:
    """The smallest Lexicon: a dict from name key to entry, counting its lookups."""

    names: dict[str, str] = field(default_factory=dict)  # name or alias -> canonical
    lookups: int = 0

    def __post_init__(self) -> None:
        self.entries = {}
        for name, canonical in self.names.items():
            self.entries[name_key(name)] = IndexEntry(
                name=name, canonical=canonical, key=f"n:{name_key(canonical)}"
            )

    def lookup(self, key: str) -> IndexEntry | None:
        self.lookups += 1
        return self.entries.get(key)

    @property
    def max_words(self) -> int:
        return max((len(k.split()) for k in self.entries), default=0)


def extract(
    text: str,
    *,
    lexicon: DictLexicon | None = None,
    vocabulary: tuple[RelationSpec, ...] = VOCABULARY,
    max_edges: int = 20,
    title: str = "",
) -> Extraction:
    doc = SourceDoc(slug="t", revision_id=1, revision_number=1, title=title, text=text)
    return OfflineExtractor().extract(
        doc, vocabulary=vocabulary, lexicon=lexicon or DictLexicon(), max_edges=max_edges
    )


def keys(name: str) -> set[str]:
    long, short = split_abbreviation(name)
    return {k for k in (name_key(name), name_key(long), name_key(short or "")) if k}


def has(result: Extraction, source: str, relation: str, target: str) -> bool:
    """Whether an edge is among the candidates, names compared by key (and abbreviation)."""
    for c in result.candidates:
        if c.relation != relation:
            continue
        forward = name_key(source) in keys(c.source) and name_key(target) in keys(c.target)
        backward = name_key(target) in keys(c.source) and name_key(source) in keys(c.target)
        if forward or (relation in SYMMETRIC and backward):
            return True
    return False


def triples(result: Extraction) -> set[tuple[str, str, str]]:
    return {(name_key(c.source), c.relation, name_key(c.target)) for c in result.candidates}


# --- The protocol -----------------------------------------------------------------------


def test_extractor_names_itself_and_uses_no_model_calls():
    """The extraction says which extractor made it and reports zero usage."""
    result = extract("Linear algebra is a prerequisite for machine learning.\n")
    assert (result.extractor, result.model) == ("offline", "rules-v2")
    assert OfflineExtractor.name == "offline" and OfflineExtractor.model == "rules-v2"
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


# --- Concepts: abbreviations, lexicon, headings -------------------------------------------


def test_an_abbreviation_becomes_an_alias_and_its_bare_use_resolves():
    """ "Change Data Capture (CDC)" defines CDC; later "CDC relies on ..." means that concept."""
    text = (
        "# Streaming\n\n**Change Data Capture (CDC)** streams row changes to other systems. "
        "CDC relies on the write-ahead log.\n"
    )
    result = extract(text)
    assert [c.source for c in result.candidates] == ["Write-ahead log"]
    assert result.candidates[0].target == "Change Data Capture (CDC)"
    (concept,) = [c for c in result.concepts if c.name.startswith("Change")]
    assert concept.aliases == ("CDC",)


def test_an_abbreviation_outside_bold_is_found_and_singularised():
    """ "Recurrent neural networks (RNNs)" defines one concept, RNN, in the singular."""
    text = (
        "Recurrent neural networks (RNNs) read one token at a time. "
        "Unlike RNNs, Transformers read in parallel.\n"
    )
    result = extract(text)
    assert has(result, "recurrent neural network", "contrasts_with", "transformers")
    names = {c.name for c in result.concepts}
    assert "Recurrent neural network (RNN)" in names


def test_known_names_from_the_lexicon_are_preferred_and_keep_their_spelling():
    """A name the lexicon knows is used verbatim, with its generic head ("pipelines") dropped."""
    lexicon = DictLexicon(
        {
            "Retrieval-augmented generation": "Retrieval-augmented generation",
            "RAG": "Retrieval-augmented generation",
            "Reranking": "Reranking",
        }
    )
    result = extract(
        "Reranking is often part of RAG pipelines that need precision.\n", lexicon=lexicon
    )
    (candidate,) = result.candidates
    assert (candidate.source, candidate.target) == ("Reranking", "Retrieval-augmented generation")


def test_known_names_beat_guessed_ones_in_confidence():
    """The same sentence scores higher when both sides are names the graph already knows."""
    text = "Linear algebra is a prerequisite for machine learning.\n"
    known = DictLexicon(
        {"Linear algebra": "Linear algebra", "Machine learning": "Machine learning"}
    )
    assert (
        extract(text, lexicon=known).candidates[0].confidence
        > extract(text).candidates[0].confidence
    )


def test_a_generic_head_stays_when_the_rest_is_not_a_concept():
    """ "reward model" is a name of its own; only "RLHF pipelines" would shrink to RLHF."""
    lexicon = DictLexicon({"RLHF": "RLHF"})
    result = extract(
        "The reward model is the central component of RLHF pipelines.\n", lexicon=lexicon
    )
    assert [(c.source, c.target) for c in result.candidates] == [("Reward model", "RLHF")]


def test_the_longest_known_name_wins():
    """ "vector database" is one concept even though "vector" alone is known too."""
    lexicon = DictLexicon(
        {"Vector": "Vector", "Vector database": "Vector database", "Vector search": "Vector search"}
    )
    result = extract("Vector search is a component of every vector database.\n", lexicon=lexicon)
    assert [(c.source, c.target) for c in result.candidates] == [
        ("Vector search", "Vector database")
    ]


def test_the_lexicon_is_looked_up_by_ngram_never_scanned():
    """Lookups grow with the text, not with the lexicon; a lexicon that cannot be iterated works."""
    names = {f"concept number {i}": f"Concept number {i}" for i in range(50_000)}
    lexicon = DictLexicon(names)
    text = "Before learning calculus, you should understand algebra. " * 20 + "\n"
    result = extract(text, lexicon=lexicon)
    assert has(result, "algebra", "prerequisite", "calculus")
    assert lexicon.lookups < 20 * len(text.split())


def test_compound_titles_are_split_into_concepts():
    """ "Proofing and Shaping" names two concepts; each can be an endpoint."""
    text = (
        "# Proofing and Shaping\n\nProofing is closely related to fermentation. "
        "Shaping relies on gluten strength.\n"
    )
    result = extract(text)
    names = {c.name for c in result.concepts}
    assert {"Proofing", "Shaping"} <= names


def test_generic_section_headings_are_not_concepts():
    """ "Overview", "The pipeline", "What you need first", "Summary" name no concept."""
    text = (
        "# Sourdough Bread\n\n## Overview\n\nIt is slow.\n\n## The pipeline\n\nIt rises.\n\n"
        "## What you need first\n\nMake sure you are comfortable with fermentation first.\n\n"
        "## Summary\n\nSee also rye bread.\n"
    )
    result = extract(text)
    names = {name_key(c.name) for c in result.concepts}
    assert not names & {"overview", "pipeline", "what you need first", "summary"}
    assert has(result, "fermentation", "prerequisite", "sourdough bread")
    assert has(result, "sourdough bread", "related", "rye bread")


def test_a_defining_sentence_becomes_the_description():
    """ "A contract is a legally binding agreement ..." describes the contract."""
    text = (
        "A **contract** is a legally binding agreement between parties. "
        "Consideration is required for a contract.\n"
    )
    (concept,) = [c for c in extract(text).concepts if c.name == "Contract"]
    assert concept.description.startswith("A contract is a legally binding agreement")


def test_new_names_are_capitalised_unless_case_carries_meaning():
    """Guessed names start with a capital; acronyms and "k-means" keep their case."""
    result = extract("Clustering relies on k-means. TCP is used for file transfer.\n")
    names = {c.name for c in result.concepts}
    assert {"Clustering", "k-means", "TCP", "File transfer"} <= names


# --- What must not happen ---------------------------------------------------------------

NEGATED = [
    "Calculus is not a prerequisite for discrete mathematics.",
    "Sorting does not require recursion.",
    "Python 2 is no longer part of the build.",
    "Recursion isn't required for tree traversal.",
    "A cache is not a replacement for a database.",
    "Kotlin never depends on Java.",
    "Quicksort requires no extra memory.",
]


@pytest.mark.parametrize("text", NEGATED)
def test_negated_cues_produce_nothing(text):
    """ "is not", "does not", "is no longer", "isn't", "not a replacement": no edge."""
    assert extract(text + "\n").candidates == ()


def test_hedging_lowers_confidence_a_little():
    """ "may require" is weaker evidence than "requires", but only a little."""
    sure = extract("Quicksort requires extra memory.\n").candidates[0].confidence
    hedged = extract("Quicksort may require extra memory.\n").candidates[0].confidence
    assert 0 < sure - hedged <= 0.1


def test_stronger_cues_score_higher():
    """An explicit "is a prerequisite for" outranks "requires", which outranks "related to"."""
    lexicon = DictLexicon({"Algebra": "Algebra", "Calculus": "Calculus"})
    explicit = extract("Algebra is a prerequisite for calculus.\n", lexicon=lexicon)
    requires = extract("Calculus requires algebra.\n", lexicon=lexicon)
    related = extract("Algebra is related to calculus.\n", lexicon=lexicon)
    scores = [r.candidates[0].confidence for r in (explicit, requires, related)]
    assert scores == sorted(scores, reverse=True) and scores[0] >= 0.85
    assert all(0 <= s <= 1 for s in scores)


@pytest.mark.parametrize(
    "text",
    [
        "It is used for routing.",
        "This is part of the kernel.",
        "They depend on the scheduler.",
        "These metrics are applied to ranking.",
    ],
)
def test_pronouns_are_never_arguments(text):
    """An unresolvable "it", "this", "they" or "these X" yields no edge at all."""
    assert extract(f"# Networks\n\n{text}\n").candidates == ()


def test_it_resolves_to_the_previous_subject():
    """ "Vector clocks ... . It is used for ..." speaks of vector clocks."""
    text = "A vector clock tracks causality between events. It is used for conflict detection.\n"
    assert has(extract(text), "vector clock", "applies_to", "conflict detection")


def test_only_vocabulary_and_discovery_relations_are_emitted():
    """Without applies_to in the vocabulary, "used for" yields nothing rather than a stray key."""
    vocabulary = tuple(s for s in VOCABULARY if s.key != "applies_to")
    result = extract(
        "Hash tables are used for caching. Kotlin builds on Java.\n", vocabulary=vocabulary
    )
    assert {c.relation for c in result.candidates} == {"builds_on"}


DISCOVERED = [
    ("Git has replaced Subversion in most teams.", "replaces", "git", "subversion"),
    (
        "Connection pooling mitigates connection overhead.",
        "mitigates",
        "connection pooling",
        "connection overhead",
    ),
    ("Deadlocks cause system hangs.", "causes", "deadlocks", "system hangs"),
    ("Ranking quality is evaluated with NDCG.", "evaluated_with", "ranking quality", "ndcg"),
    (
        "Promissory estoppel is an alternative to consideration.",
        "alternative_to",
        "promissory estoppel",
        "consideration",
    ),
]


@pytest.mark.parametrize(("text", "relation", "source", "target"), DISCOVERED)
def test_cues_outside_the_vocabulary_get_discovery_labels(text, relation, source, target):
    """Out-of-vocabulary cues yield short snake_case labels for ontology discovery."""
    result = extract(text + "\n")
    assert has(result, source, relation, target)
    assert {c.relation for c in result.candidates} <= DISCOVERY


def test_discovery_candidates_rank_below_vocabulary_ones():
    """With one slot left, the vocabulary edge wins over the discovery one."""
    result = extract("Git has replaced Subversion. Kotlin builds on Java.\n", max_edges=1)
    assert [c.relation for c in result.candidates] == ["builds_on"]


def test_a_passive_replaced_by_is_not_read_backwards():
    """ "older turns are replaced with a summary" does not say turns replace summaries."""
    result = extract("Older turns are replaced with a summary.\n")
    assert result.candidates == ()


def test_a_relation_added_to_the_vocabulary_is_found_by_its_verb():
    """A curator's new type ("enables", "is a variant of") is found without code changes."""
    vocabulary = VOCABULARY + (
        RelationSpec("enables", "Enables", "enables", "", False, False),
        RelationSpec("variant_of", "Variant of", "is a variant of", "", False, False),
        RelationSpec("alternative_to", "Alternative to", "is an alternative to", "", True, False),
    )
    text = (
        "Ownership enables memory safety. Merge sort is a variant of divide-and-conquer sorting. "
        "Promissory estoppel is an alternative to consideration.\n"
    )
    result = extract(text, vocabulary=vocabulary)
    assert has(result, "ownership", "enables", "memory safety")
    assert has(result, "merge sort", "variant_of", "divide-and-conquer sorting")
    assert has(result, "promissory estoppel", "alternative_to", "consideration")


# --- Output contract --------------------------------------------------------------------

LESSON = """# Change Data Capture

**Change Data Capture (CDC)** streams every insert, update and delete from a database to
other systems. CDC relies on the write-ahead log, which records each change before it is
applied to the tables. Before learning CDC you should understand database transactions and
replication.

## How it fits together

A CDC pipeline is made up of three parts: a log reader, a message broker and a sink
connector. Debezium is a component of many CDC deployments. Unlike batch extraction, CDC
delivers changes within seconds. CDC is often used for cache invalidation and search
indexing. Event sourcing is closely related to CDC, but it stores events as the primary
record.
"""


def test_evidence_is_always_a_verbatim_sentence_of_the_text():
    """Every candidate quotes one whole sentence exactly as the text has it."""
    result = extract(LESSON)
    spans = {LESSON[start:end] for start, end, _ in sentences(LESSON)}
    assert result.candidates
    for candidate in result.candidates:
        assert candidate.evidence in spans
        assert candidate.evidence in LESSON


def test_reasons_name_the_cue():
    """The reason quotes the text and names the cue phrase that fired."""
    (candidate,) = extract("Machine learning requires linear algebra.\n").candidates
    assert (
        candidate.reason == 'The text says "Machine learning requires linear algebra" ("requires").'
    )


def test_max_edges_is_respected_best_first():
    """At most max_edges candidates, highest confidence first, ties in text order."""
    everything = extract(LESSON)
    assert len(everything.candidates) > 3
    top = extract(LESSON, max_edges=3)
    assert top.candidates == everything.candidates[:3]
    scores = [c.confidence for c in everything.candidates]
    assert scores == sorted(scores, reverse=True)
    assert extract(LESSON, max_edges=0).candidates == ()


def test_concepts_are_exactly_the_endpoints_used():
    """The concept list names every endpoint of the returned candidates and nothing else."""
    result = extract(LESSON, max_edges=3)
    endpoints = {n for c in result.candidates for n in (c.source, c.target)}
    assert {c.name for c in result.concepts} == endpoints


def test_duplicate_edges_are_reported_once():
    """The same edge stated twice, or a symmetric one stated both ways, appears once."""
    text = (
        "Kotlin builds on Java. Kotlin extends Java. "
        "Unlike Java, Kotlin is concise. Kotlin differs from Java.\n"
    )
    result = extract(text)
    assert sorted(c.relation for c in result.candidates) == ["builds_on", "contrasts_with"]


# Cue phrases, names, pronouns and Markdown debris, for generated hostile text.
FRAGMENTS = (
    "is a prerequisite for",
    "requires no",
    "depends on",
    "Unlike",
    "whereas",
    "versus",
    "consists of three parts:",
    "are both components of",
    "is used for",
    "see also",
    "one stage of",
    "Before learning",
    "you should understand",
    "make sure you are comfortable with",
    "first",
    "it",
    "this lesson",
    "they",
    "the idea of",
    "isn't",
    "may",
    "Change Data Capture (CDC)",
    "CDC",
    "Kotlin",
    "Java",
    "Dijkstra's algorithm",
    "and",
    ",",
    ".",
    ";",
    "**",
    "“quoted”",
    "é",
    "\n",
    "\n\n# Title\n\n",
    "\n- item ",
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(" ".join) | st.text(max_size=300),
    st.integers(min_value=-1, max_value=10),
)
def test_any_text_yields_well_formed_candidates(text, max_edges):
    """Whatever the text, extraction never fails and every candidate is well formed."""
    lexicon = DictLexicon({"Kotlin": "Kotlin", "CDC": "Change Data Capture (CDC)"})
    result = extract(text, lexicon=lexicon, max_edges=max_edges)
    assert len(result.candidates) <= max(0, max_edges)
    names = {c.name for c in result.concepts}
    for c in result.candidates:
        assert c.evidence and c.evidence in text
        assert 0 <= c.confidence <= 1
        assert c.source and c.target and name_key(c.source) != name_key(c.target)
        assert {c.source, c.target} <= names


def test_the_same_input_gives_the_same_output():
    """Extraction is deterministic, down to the order and the confidences."""
    assert extract(LESSON).as_json() == extract(LESSON).as_json()


def test_markdown_and_unicode_do_not_break_extraction():
    """Typographic quotes, emphasis and non-ASCII names pass through to verbatim evidence."""
    text = (
        "The *Schrödinger equation* is a prerequisite for “quantum chemistry”. "
        "Ångström units are used in crystallography.\n"
    )
    result = extract(text)
    assert has(result, "schrödinger equation", "prerequisite", "quantum chemistry")
    assert has(result, "ångström units", "applies_to", "crystallography")
    assert all(c.evidence in text for c in result.candidates)


# --- Generalisation: fresh prose far from the AI curriculum -------------------------------

DATA_ENGINEERING = """# Change Data Capture

**Change Data Capture (CDC)** is a technique for streaming every insert, update and delete
from a database to downstream systems. CDC relies on the write-ahead log, which records each
change before it reaches the tables. Before learning CDC you should understand database
transactions and replication.

A CDC pipeline is made up of three parts: a log reader, a message broker and a sink
connector. Debezium is a component of many CDC deployments. Unlike batch extraction, CDC
delivers changes within seconds. CDC is often used for cache invalidation and search
indexing. Event sourcing is closely related to CDC, but it stores events as the primary record.
"""

COOKING = """# Bread Baking

Kneading develops gluten, and **gluten** is a network of proteins that traps gas. A sourdough
starter is a prerequisite for sourdough bread. Sourdough bread depends on wild yeast rather
than commercial yeast. Proofing is a stage of bread baking, and shaping and scoring are both
steps of bread baking too. In contrast to quick breads, yeast breads need time to rise.
Baking soda is used in quick breads. Brioche is based on an enriched dough.
"""

BIOLOGY = """# Cellular Respiration

**Cellular respiration** converts glucose into usable energy. Glycolysis is the first stage of
cellular respiration, and the Krebs cycle builds on its products. Oxidative phosphorylation
requires the electron transport chain. Whereas aerobic respiration uses oxygen, fermentation
works without it. Mitochondria are closely linked to cellular respiration.
"""

LAW = """# Contract Law

A **contract** is a legally binding agreement between two or more parties. Offer and
acceptance are both components of contract formation. Consideration is required for a valid
contract in common law systems. Promissory estoppel is an alternative to consideration in some
cases. The parol evidence rule applies to written agreements. Compared with civil law, common
law relies on judicial precedent.
"""


def test_data_engineering_prose():
    """A CDC lesson: abbreviation, reliance, a counted list, contrast, uses, relatedness."""
    result = extract(DATA_ENGINEERING)
    cdc = "Change Data Capture (CDC)"
    expected = [
        ("Write-ahead log", "prerequisite", cdc),
        ("Database transactions", "prerequisite", cdc),
        ("Replication", "prerequisite", cdc),
        ("Log reader", "part_of", cdc),
        ("Message broker", "part_of", cdc),
        ("Sink connector", "part_of", cdc),
        ("Debezium", "part_of", cdc),
        ("Batch extraction", "contrasts_with", cdc),
        (cdc, "applies_to", "Cache invalidation"),
        (cdc, "applies_to", "Search indexing"),
        ("Event sourcing", "related", cdc),
    ]
    for edge in expected:
        assert has(result, *edge), edge
    assert len(result.candidates) == len(expected)


def test_cooking_prose():
    """A baking lesson: prerequisites, stages, coordinated steps, contrast, uses, basis."""
    result = extract(COOKING)
    expected = [
        ("Sourdough starter", "prerequisite", "Sourdough bread"),
        ("Wild yeast", "prerequisite", "Sourdough bread"),
        ("Proofing", "part_of", "Bread baking"),
        ("Shaping", "part_of", "Bread baking"),
        ("Scoring", "part_of", "Bread baking"),
        ("Quick breads", "contrasts_with", "Yeast breads"),
        ("Baking soda", "applies_to", "Quick breads"),
        ("Brioche", "builds_on", "Enriched dough"),
    ]
    for edge in expected:
        assert has(result, *edge), edge
    assert not has(result, "commercial yeast", "prerequisite", "sourdough bread")


def test_biology_prose():
    """A biology lesson: a stage, a requirement, a whereas-contrast, a link; no pronoun edge."""
    result = extract(BIOLOGY)
    expected = [
        ("Glycolysis", "part_of", "Cellular respiration"),
        ("Electron transport chain", "prerequisite", "Oxidative phosphorylation"),
        ("Aerobic respiration", "contrasts_with", "Fermentation"),
        ("Mitochondria", "related", "Cellular respiration"),
    ]
    for edge in expected:
        assert has(result, *edge), edge
    assert len(result.candidates) == len(expected)  # "builds on its products" names nothing


def test_law_prose():
    """A law lesson: coordinated components, a requirement, an alternative, a comparison."""
    result = extract(LAW)
    expected = [
        ("Offer", "part_of", "Contract formation"),
        ("Acceptance", "part_of", "Contract formation"),
        ("Consideration", "prerequisite", "Contract"),
        ("Promissory estoppel", "alternative_to", "Consideration"),
        ("Parol evidence rule", "applies_to", "Written agreements"),
        ("Civil law", "contrasts_with", "Common law"),
        ("Judicial precedent", "prerequisite", "Common law"),
    ]
    for edge in expected:
        assert has(result, *edge), edge


def test_the_sample_curriculum_stays_above_the_precision_target():
    """On the hand-labelled corpus, precision stays at or above 0.8 (see gold_eval)."""
    gold = Path(__file__).resolve().parents[2] / "corpus" / "gold.jsonl"
    if not gold.exists():
        pytest.skip("no corpus/gold.jsonl in this checkout")
    from tests.construction.gold_eval import evaluate

    scores = evaluate(verbose=False)
    assert scores["precision"] >= 0.8
    assert scores["recall"] >= 0.7
