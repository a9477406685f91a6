"""The linguistic offline reader: terms a colleague would keep, relations the sentence
states, nothing when in doubt. Sentences from the issue that reported the rule reader on
a database manual are here as regressions."""

from __future__ import annotations

import pytest

from construction.linguistic import LinguisticExtractor
from construction.linguistic.markup import read_sentences
from construction.linguistic.nlp import pipeline
from construction.linguistic.terms import TERM_SCORE, TermTable
from construction.types import IndexEntry, RelationSpec, SourceDoc


def spec(key, verb, symmetric=False, acyclic=False):
    return RelationSpec(key, key, verb, "", symmetric, acyclic)


CURRICULUM = [
    spec("prerequisite", "is a prerequisite for", acyclic=True),
    spec("builds_on", "builds on", acyclic=True),
    spec("part_of", "is part of", acyclic=True),
    spec("contrasts_with", "contrasts with", symmetric=True),
    spec("applies_to", "applies to"),
    spec("related", "is related to", symmetric=True),
]
DOCUMENTATION = [
    spec("is_a", "is a kind of", acyclic=True),
    spec("part_of", "is part of", acyclic=True),
    spec("requires", "requires"),
    spec("uses", "uses"),
    spec("produces", "produces"),
    spec("configures", "configures"),
    spec("alternative_to", "is an alternative to", symmetric=True),
    spec("contrasts_with", "contrasts with", symmetric=True),
    spec("related", "is related to", symmetric=True),
]


class Known:
    """A lexicon of names the graph already has."""

    max_words = 6

    def __init__(self, *names: str, drafted: bool = False) -> None:
        from construction.text import name_key

        self.names = {name_key(n): n for n in names}
        self.drafted = drafted  # only drafted in this run, no concept yet

    def lookup(self, key):
        name = self.names.get(key)
        if not name:
            return None
        concept = None if self.drafted else 1
        return IndexEntry(name=name, canonical=name, key=f"c:{key}", concept_id=concept)


def read(text, vocabulary=DOCUMENTATION, *, known=(), title="Manual", max_edges=20):
    doc = SourceDoc(slug="manual", revision_id=1, revision_number=1, title=title, text=text)
    return LinguisticExtractor().extract(
        doc, vocabulary=vocabulary, lexicon=Known(*known), max_edges=max_edges
    )


def edges(text, vocabulary=DOCUMENTATION, **kwargs):
    return {(c.source, c.relation, c.target) for c in read(text, vocabulary, **kwargs).candidates}


def terms_of(text):
    sentences = read_sentences(text)
    docs = pipeline().analyse([s.clean for s in sentences])
    table = TermTable()
    for index, (sentence, doc) in enumerate(zip(sentences, docs, strict=True)):
        table.read(index, doc, sentence)
    table.collapse_generic_tails()
    table.score()
    return {c.name: c.score for c in table.candidates.values()}


# --- Relations from the sentence, not a word window ----------------------------------


def test_a_requirement_between_two_terms_is_read_from_the_parse():
    """ "VACUUM FULL requires an ACCESS EXCLUSIVE lock" states what VACUUM FULL needs."""
    assert edges("VACUUM FULL requires an ACCESS EXCLUSIVE lock on the table.") == {
        ("VACUUM FULL", "requires", "ACCESS EXCLUSIVE")
    }


def test_a_cue_whose_subject_is_no_term_yields_nothing():
    """ "This form is much slower and requires ..." never becomes "LOCK ... Slower"."""
    found = edges("This form is much slower and requires an ACCESS EXCLUSIVE lock.")
    assert found == set()


def test_a_cue_inside_a_conditional_yields_nothing():
    """ "if the server requires password authentication" states nothing about the server."""
    text = "If the server requires password authentication, the client sends a password."
    assert edges(text) == set()


@pytest.mark.parametrize(
    "opening",
    ["On Emscripten, ", "On other platforms, ", "In this case, ", "It would seem that "],
)
def test_a_clause_restricted_or_only_supposed_yields_nothing(opening):
    """ "On Emscripten, the `socket` module requires ..." states the requirement only
    there; "it would seem that" does not state it at all. The same clause alone, or
    after "In PostgreSQL," does."""
    clause = "the `socket` module requires **JavaScript glue**."
    assert edges(clause[0].upper() + clause[1:]) == {("socket", "requires", "JavaScript glue")}
    assert edges("In PostgreSQL, " + clause) == {("socket", "requires", "JavaScript glue")}
    assert edges(opening + clause) == set()


def test_the_main_clause_of_a_conditional_yields_nothing():
    """What holds only under a condition is not stated as a fact."""
    text = "If no option is given, initdb uses the locale of the environment."
    assert edges(text) == set()


def test_a_negated_cue_yields_nothing():
    """ "does not require", "requires no" and "is not part of" state the opposite."""
    text = (
        "The autovacuum daemon does not require the superuser privilege. "
        "A temporary table requires no write-ahead log. "
        "A temporary table is not part of any tablespace backup."
    )
    assert edges(text) == set()


def test_a_possibility_states_no_composition():
    """ "may contain" and "will probably contain" say what could be, not what is."""
    text = (
        "The hypothetical document may contain factual errors. "
        "The prompt string will probably contain whitespace."
    )
    assert edges(text) == set()


def test_distinct_from_is_no_contrast():
    """ "must be distinct from" is a constraint, not a contrast between two concepts."""
    text = "The name of the new table must be distinct from the name of any other table."
    assert edges(text) == set()


def test_operational_requirements_are_not_confident_learning_prerequisites():
    """A privilege a command requires is not something to learn before it: with the
    curriculum's vocabulary (no relation for needs) the sentence gives a prerequisite
    only below the confidence gate, held for a reviewer; with a vocabulary that has
    "requires" it is that relation, above the gate."""
    text = "CREATE SUBSCRIPTION requires the REPLICATION privilege."
    held = read(text, CURRICULUM).candidates
    assert [c.relation for c in held] == ["prerequisite"]
    assert held[0].confidence < 0.6
    (needed,) = read(text).candidates
    assert (needed.source, needed.relation, needed.target) == (
        "CREATE SUBSCRIPTION",
        "requires",
        "REPLICATION privilege",
    )
    assert needed.confidence >= 0.6


def test_a_passive_reads_the_agent_as_the_source():
    """ "Y is controlled by X" states that X configures Y."""
    text = "The wraparound failsafe mechanism is controlled by `vacuum_failsafe_age`."
    assert edges(text) == {("vacuum_failsafe_age", "configures", "Wraparound failsafe mechanism")}


def test_coordinated_objects_each_become_an_edge():
    """ "includes A, B and C" names three parts."""
    text = "The `tablefunc` module includes `crosstab2`, `crosstab3` and `crosstab4`."
    assert edges(text) == {
        ("crosstab2", "part_of", "tablefunc"),
        ("crosstab3", "part_of", "tablefunc"),
        ("crosstab4", "part_of", "tablefunc"),
    }


def test_a_proper_names_possessive_stays_in_the_name():
    """ "Dijkstra's algorithm" is a name of its own, not Dijkstra."""
    found = edges("OSPF builds on Dijkstra's algorithm.", CURRICULUM)
    assert found == {("OSPF", "builds_on", "Dijkstra's algorithm")}


def test_a_label_names_the_subject_of_the_paragraph_under_it():
    """Under "`wal_level` (enum)", "Controls how much information is written to the WAL"
    is said of wal_level; the verb's object must still be a term."""
    text = "`wal_level` (`enum`)\n\nControls the `archive_mode` of the server.\n"
    assert edges(text) == {("wal_level", "configures", "archive_mode")}


def test_the_quote_of_a_side_named_above_starts_where_it_is_named():
    """The reviewer sees both sides in the quote: from the label that names the subject
    of "Controls ...", and from the sentence "this parameter" points back to."""
    text = "`wal_level` (`enum`)\n\nControls the `archive_mode` of the server.\n"
    (edge,) = read(text).candidates
    assert edge.evidence == "`wal_level` (`enum`)\n\nControls the `archive_mode` of the server."
    assert text.startswith(edge.evidence)


@pytest.mark.parametrize(
    "label, name",
    [
        ("tempfile.mkstemp(*suffix=None*, *prefix=None*)", "tempfile.mkstemp()"),
        ("*class* poplib.POP3_SSL(*host*, *port=POP3_SSL_PORT*)", "poplib.POP3_SSL"),
        ("*class* asyncio.DefaultEventLoopPolicy", "asyncio.DefaultEventLoopPolicy"),
        ("`--source-pgdata=directory`", "--source-pgdata"),
    ],
)
def test_a_reference_entrys_label_names_its_callable_or_option(label, name):
    """Under a signature the subject is the callable (not a parameter, not "Class"),
    under an option's line the option with its dashes."""
    found = edges(f"{label}\n\nCreates a **temporary file** in the most secure manner.\n")
    assert found == {(name, "produces", "Temporary file")}


def test_a_field_line_names_no_subject():
    """ "Source code: Lib/tempfile.py" says where the module lives; "This module creates
    ..." under it is not said of "Source code"."""
    text = "**Source code:** Lib/tempfile.py\n\nThis module creates **temporary files**.\n"
    assert not any(s == "Source code" for s, _, _ in edges(text))


@pytest.mark.parametrize(
    "sentence",
    [
        "You need **tokenization** to follow this lesson, because tokens index the table.",
        "Before reading this lesson, make sure you understand **tokenization**.",
        "This chapter assumes you are familiar with **tokenization**.",
        "You should know **tokenization** before you start this lesson.",
    ],
)
def test_a_lesson_pointing_at_itself_names_its_topic_as_what_comes_later(sentence):
    """ "this lesson", "this chapter" stand for the document's topic; "you need Y to
    follow it" says what to learn first."""
    text = f"# Embeddings\n\n**Embeddings** are vectors.\n\n{sentence}"
    found = edges(text, CURRICULUM, title="Embeddings")
    assert found == {("Tokenization", "prerequisite", "Embedding")}


def test_needing_a_thing_for_a_task_is_no_study_order():
    """ "You need Python to run the examples" names a tool for a task, not a lesson."""
    text = "# Embeddings\n\n**Embeddings** are vectors.\n\nYou need **Python** to run the examples."
    assert edges(text, CURRICULUM, title="Embeddings") == set()


def test_a_grasp_of_a_thing_is_no_name_of_its_own():
    """ "requires a solid grasp of JSON Schema": JSON Schema comes first, and "Solid grasp
    of JSON Schema" is no concept."""
    text = (
        "# Function calling\n\n**Function calling** lets a model act. Function calling "
        "also requires a solid grasp of **JSON Schema**, since vague parameters fail."
    )
    found = edges(text, CURRICULUM, title="Function calling")
    assert found == {("JSON Schema", "prerequisite", "Function calling")}


def test_teaching_material_says_what_to_learn_first():
    """ "X assumes you know Y", "Before studying X, make sure you are comfortable with Y"
    and "make sure you know Y first" (the lesson's topic) are prerequisites."""
    text = (
        "# Knowledge distillation\n\n"
        "Knowledge distillation assumes you know the **softmax** function. "
        "Before studying **speculative decoding**, make sure you are comfortable with "
        "**autoregressive decoding**. Make sure you are comfortable with **gradient "
        "descent** first."
    )
    found = edges(text, CURRICULUM, title="Knowledge distillation")
    assert ("Softmax function", "prerequisite", "Knowledge distillation") in found
    assert ("Autoregressive decoding", "prerequisite", "Speculative decoding") in found
    assert ("Gradient descent", "prerequisite", "Knowledge distillation") in found


def test_a_curators_relation_is_read_by_its_own_verb():
    """A relation the vocabulary adds ("is caused by") is read in both voices."""
    vocabulary = [spec("caused_by", "is caused by")]
    text = (
        "Transaction ID wraparound is caused by a long-running transaction. "
        "Table bloat causes slow **sequential scans**."
    )
    assert edges(text, vocabulary) == {
        ("Transaction ID wraparound", "caused_by", "Long-running transaction"),
        ("Sequential scan", "caused_by", "Table bloat"),
    }


def test_each_edge_quotes_its_sentence_verbatim_with_its_markup():
    """The evidence is the stored sentence, backticks and all, so it is found again."""
    text = "Intro line here.\n\nThe `tablefunc` module includes `crosstab2`.\n"
    (candidate,) = read(text).candidates
    assert candidate.evidence == "The `tablefunc` module includes `crosstab2`."
    assert candidate.evidence in text


def test_reading_is_deterministic():
    """The same chunk gives the same candidates, in the same order, twice."""
    text = "SSL uses certificate verification. Tablespaces are part of the database cluster."
    first, second = read(text).candidates, read(text).candidates
    assert first == second and len(first) == 2


def test_the_best_edges_are_kept_up_to_the_budget():
    """At most ``max_edges`` candidates, highest confidence first."""
    text = (
        "The `tablefunc` module includes `crosstab2`, `crosstab3` and `crosstab4`. "
        "SSL uses encryption."
    )
    found = read(text, max_edges=2).candidates
    assert len(found) == 2
    assert found[0].confidence >= found[1].confidence


@pytest.mark.parametrize(
    "text, kept",
    [
        ("The structure type `sqlda_t` is the type of the actual `SQLDA`.", set()),
        (
            "`HTTPError` is the subclass of `URLError` raised for HTTP URLs.",
            {("HTTPError", "is_a", "URLError")},
        ),
        (
            "A **BRIN index** is a type of **index structure**.",
            {("BRIN index", "is_a", "Index structure")},
        ),
    ],
)
def test_the_type_of_a_thing_names_its_type_and_a_type_of_a_thing_classifies(text, kept):
    """ "X is the type of Y" says what type Y has, not that X is a kind of Y; "a type
    of" and "the subclass of" still classify."""
    assert edges(text) == kept


def test_an_infinitive_after_a_noun_is_a_purpose_not_what_the_noun_does():
    """ "You must be a superuser to use X": a duty, not "superuser uses X"."""
    assert edges("You must be a superuser to use `ALTER OPERATOR FAMILY`.") == set()
    assert edges("The `postgres` superuser uses `ALTER OPERATOR FAMILY`.") != set()


@pytest.mark.parametrize(
    "text",
    [
        "Guido van Rossum and Jelke de Boer, “Interactively Testing Remote Servers Using "
        "the Python Programming Language”, CWI Quarterly, Volume 4 (December 1991).",
        "See also HOWTO Fetch Internet Resources Using The urllib Package.",
        'The chapter "Replication Uses Logical Decoding" is in Part V.',
    ],
)
def test_a_cue_inside_a_title_or_quotation_states_nothing(text):
    """A verb inside quotation marks, or capitalised mid-sentence as in a title, is
    mentioned, not used: a bibliography entry or a cross-reference links nothing."""
    assert edges(text) == set()


def test_a_sentence_that_opens_with_its_cue_still_states_it():
    """Only a capital mid-sentence marks a title: a label's sentence may open with its
    verb, and a cue after a full stop is a new sentence."""
    found = edges("asyncio.DefaultEventLoopPolicy\n\nUses the `SelectorEventLoop` class.")
    assert {target for _, _, target in found} == {"SelectorEventLoop"}
    assert edges("The `asyncio` module uses the `selectors` module.") == {
        ("asyncio", "uses", "selectors")
    }


def test_a_participle_with_its_own_subject_states_the_relation_of_that_subject():
    """ "..., which is why guardrails are connected to AI agents": the subject is the
    participle's own, not the relative pronoun's."""
    text = (
        "Agents that read emails are exposed to prompt injection, which is why "
        "**guardrails** are closely connected to **AI agents**."
    )
    assert edges(text, CURRICULUM) == {("Guardrail", "related", "AI agent")}


@pytest.mark.parametrize(
    "text",
    [
        "**ReAct** is the pattern most commonly used for **AI agents**.",
        "**ReAct** is a technique used for **AI agents**.",
    ],
)
def test_a_noun_that_only_carries_a_description_passes_it_to_the_subject(text):
    """ "X is the pattern used for Y": X is used for Y."""
    assert edges(text, CURRICULUM) == {("ReAct", "applies_to", "AI agent")}


def test_a_bare_noun_that_heads_the_topic_stands_for_the_topic():
    """In a lesson on AI agents, "an agent is made up of ..." speaks of AI agents; a
    noun with a modifier of its own ("a travel agent") does not."""
    text = (
        "# AI agents\n\nAn **AI agent** works toward a goal.\n\n"
        "An agent is made up of a **language model** and **agent memory**. "
        "A travel agent is made up of **booking tools**."
    )
    found = edges(text, CURRICULUM, title="AI agents")
    assert ("Language model", "part_of", "AI agent") in found
    assert ("Agent memory", "part_of", "AI agent") in found
    assert not any(target != "AI agent" or "Booking" in source for source, _, target in found)


def test_an_it_that_stands_for_the_clause_after_it_points_at_nothing_before():
    """ "It is also possible to use CREATE TYPE ..." says nothing of the composite types
    of the sentence before; "It uses COPY" after "pg_dump is a utility" does."""
    text = (
        "**Composite types** are created whenever the user creates a table. It is also "
        "possible to use `CREATE TYPE` to define a stand-alone composite type."
    )
    assert edges(text) == set()
    assert edges("**pg_dump** is a utility. It uses the `COPY` command.") == {
        ("pg_dump", "uses", "COPY")
    }


def test_a_side_only_pointed_at_makes_an_edge_less_sure_than_a_label_or_a_name():
    """Reviewers found "It uses X" (the sentence before's subject) right less often than
    the same claim named outright or said under the entry's label."""
    named = read("**pg_dump** is a utility. **pg_dump** uses the `COPY` command.").candidates
    pointed = read("**pg_dump** is a utility. It uses the `COPY` command.").candidates
    labelled = read("`pg_dump`\n\nUses the `COPY` command.\n").candidates
    assert [c.target for c in named + pointed + labelled] == ["COPY", "COPY", "COPY"]
    assert pointed[0].confidence < named[0].confidence
    assert pointed[0].confidence < labelled[0].confidence


def test_an_alias_is_another_name_not_a_kind_of_alias():
    """ "X is an alias to Y" makes X an alternative to Y, never "X is a kind of Alias"."""
    found = edges("`DefaultSelector` is an alias to the most efficient **selector class**.")
    assert found == {("DefaultSelector", "alternative_to", "Selector class")}


def test_a_clause_under_a_when_clause_in_front_holds_only_then():
    """ "When this namespace is specified, the name string is an ISO OID": only then."""
    text = "When this namespace is specified, the **name string** is an `ISO OID`."
    assert edges(text) == set()
    assert edges("The **name string** is an `ISO OID`.") != set()
    during = "When executing a command, `PL/pgSQL` uses the **execution plan**."
    assert edges(during) != set()  # what it does while it runs one, not a condition


def test_on_top_of_a_thing_is_on_the_thing():
    """ "is built on top of vector search": on vector search, not on "top"."""
    text = (
        "**Dense retrieval**, which we will meet again in the lessons on RAG, is built on "
        "top of **vector search**."
    )
    assert edges(text, CURRICULUM) == {("Dense retrieval", "builds_on", "Vector search")}


def test_the_idea_of_a_thing_is_the_thing():
    """ "HNSW builds on the idea of a proximity graph": on the proximity graph; "part of
    the broader toolkit of prompt engineering": of prompt engineering."""
    text = "**HNSW** builds on the idea of a **proximity graph**: every vector is a node."
    assert edges(text, CURRICULUM) == {("HNSW", "builds_on", "Proximity graph")}
    text = (
        "**Chain-of-thought prompting** is part of the broader toolkit of **prompt engineering**."
    )
    assert edges(text, CURRICULUM) == {
        ("Chain-of-thought prompting", "part_of", "Prompt engineering")
    }


def test_an_imperative_joined_to_a_statement_has_no_subject_of_its_own():
    """ "One way to develop in PL/pgSQL is to use an editor, and in another window, use
    psql ...": nobody but the reader uses psql; "X reads A and requires B" still gives
    X both."""
    text = (
        "One good way to develop in **PL/pgSQL** is to use the text editor of your "
        "choice, and in another window, use `psql` to load and test those functions."
    )
    assert edges(text) == set()
    found = edges("`pg_dump` reads the **catalog** and requires the `SELECT` privilege.")
    assert ("pg_dump", "requires", "SELECT privilege") in found


# --- Names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, junk",
    [
        ("This form is much slower and is able to run twice.", {"Able", "Slower", "Twice"}),
        ("The value is available back then, and ready.", {"Available", "Back", "Ready"}),
        ("Savepoints allow you to discard parts of the transaction.", {"Savepoints allow"}),
        ("See Section 11.5 and Table t1 for details.", {"Section 11.5", "Table t1"}),
        ("11.3. Multicolumn Indexes", {"11.3. multicolumn", "11.3"}),
        ("The server holds a lock and specifies a mode.", {"Holds", "Specifies"}),
    ],
)
def test_adjectives_verbs_fragments_and_captions_are_never_names(text, junk):
    """No candidate name is an adjective, adverb, verb, clause fragment, section number
    or caption."""
    assert not junk & set(terms_of(text))


@pytest.mark.parametrize(
    "text, description, kept",
    [
        ("SQLSTATE is a five-character array.", "Five-character array", "SQLSTATE"),
        ("Use 32-bit integers for counters.", "32-bit integer", "Counter"),
        ("It is a low-level interface to the socket layer.", "Low-level interface", "Socket layer"),
        ("The default database is postgres.", "Default database", None),
        ("The returned object is a file-like object.", "Returned object", "File-like object"),
        (
            "A so-called shadow password system is used.",
            "So-called shadow password system",
            "Shadow password system",
        ),
    ],
)
def test_a_modifier_of_no_weight_is_not_part_of_a_name(text, description, kept):
    """A measure ("five-character") or a word that only describes this one thing
    ("low-level", "default", "returned", "so-called") makes no kind of thing: it comes
    off the front of the name, and a generic word is all that is left."""
    names = terms_of(text)
    assert description not in names
    if kept:
        assert kept in names


def test_a_number_joined_to_a_kind_is_part_of_the_name():
    """Only a unit of size measures: "one-hot", "two-phase" and "three-way" name kinds."""
    names = terms_of("Unlike one-hot vectors, a two-phase commit uses a three-way merge.")
    assert {"One-hot vector", "Two-phase commit", "Three-way merge"} <= set(names)


@pytest.mark.parametrize(
    "text, made_up",
    [
        ("So in our example, `x.f` is a valid **method object**.", "x.f"),
        ("A complex number `z` has `z.imag` as its **imaginary part**.", "z.imag"),
        ("It is determined by its *imaginary part* `z.imag`.", "imaginary part z.imag"),
        ("The attribute reference `obj.name` uses the **attribute lookup**.", "obj.name"),
        ("The `foo` table has a `bar` column.", "foo table"),
    ],
)
def test_a_name_an_example_made_up_is_no_term(text, made_up):
    """A metasyntactic name ("foo", "obj.name") or an attribute of a one-letter variable
    ("x.f") belongs to the example, not to the manual; "os.path" is a name."""
    names = terms_of(text)
    assert names[made_up] == 0.0
    assert terms_of("The `os.path` module joins paths.")["os.path"] > 0.0


def test_a_heading_that_names_a_task_is_not_a_kind_of_its_object():
    """ "Creating Indexes" is something to do, not a kind of index: "that index" under it
    is not "Creating index"; "Streaming Replication" is a kind of replication."""
    text = (
        "### 12.2.2. Creating Indexes\n\nWe can create a GIN index to speed up searches. "
        "Only a query reference that uses the 2-argument version of `to_tsvector` will use "
        "that index."
    )
    assert not any("Creating index" in (s, t) for s, _, t in edges(text))
    assert "Streaming replication" in terms_of("## Streaming Replication\n\nSome text.")


@pytest.mark.parametrize(
    "text, name",
    [
        ("The server uses load balancing.", "Load balancing"),
        ("Query planning uses statistics.", "Query planning"),
        ("**Function calling** is a prerequisite for agents.", "Function calling"),
    ],
)
def test_a_gerund_after_a_noun_ends_a_name(text, name):
    """ "Function calling", "load balancing": a noun and a gerund make one name, unless
    the gerund takes an object ("a function calling the API")."""
    assert name in terms_of(text)
    assert "Function calling" not in terms_of("A function calling the API returns a list.")


def test_a_name_ending_in_a_gerund_is_the_subject_the_parse_gives():
    """The parser hangs "calling" on "Function"; the name is still the clause's subject."""
    text = "**Function calling** is a prerequisite for building **AI agents**."
    assert edges(text, CURRICULUM) == {("Function calling", "prerequisite", "AI agent")}


def test_identifiers_keep_their_case():
    """ "min_wal_size" stays as written; a sentence's first capital goes from a noun."""
    names = terms_of("`min_wal_size` sets the size. Checkpoints write dirty pages.")
    assert "min_wal_size" in names
    assert "Min_wal_size" not in names
    assert "Checkpoint" in names


def test_common_single_words_are_terms_only_where_the_text_sets_them_apart():
    """ "server" or "file" said in passing is no term; "tablespace" (rare in English), a
    multi-word name and a bold word are."""
    names = terms_of("The server reads the file. A **tablespace** holds the write-ahead log files.")
    assert names["Server"] < TERM_SCORE and names["File"] < TERM_SCORE
    assert names["Tablespace"] >= TERM_SCORE
    assert names["Write-ahead log file"] >= TERM_SCORE


def test_a_generic_tail_after_a_proper_name_names_that_name():
    """ "the Transformer architecture" is the Transformer; "MoE model" is MoE."""
    names = terms_of("MoE models replace the Transformer architecture. The Transformer is old.")
    assert "MoE" in names and "Transformer" in names
    assert "MoE model" not in names and "Transformer architecture" not in names


def test_a_known_name_is_a_term_whatever_its_shape():
    """A name the graph knows is always a term, even a common word."""
    found = edges("The server uses the file.", known=("Server", "File"))
    assert found == {("Server", "uses", "File")}


def test_an_everyday_word_in_prose_ends_no_edge_though_the_chunk_has_it_in_code():
    """The keyword `FUNCTION` in code does not make the prose's "a function associated
    with the operator family" the concept; the code mention itself still counts."""
    text = (
        "Use `FUNCTION` with `ALTER OPERATOR FAMILY`. The support number is for a function "
        "associated with the **operator family**."
    )
    assert not any("function" in (s.lower(), t.lower()) for s, _, t in edges(text))
    assert edges("The `FUNCTION` clause is part of `ALTER OPERATOR FAMILY`.") != set()


def test_a_drafted_everyday_word_is_no_term_where_prose_says_it():
    """Another chunk's draft of "Function" (no reviewer accepted it) does not make every
    "function" of the manual a term; a drafted name of several words still counts."""
    text = "The `tablefunc` module includes various functions. The server uses the file."
    lexicon = Known("Function", "Server", "File", drafted=True)
    doc = SourceDoc(slug="manual", revision_id=1, revision_number=1, title="Manual", text=text)
    found = LinguisticExtractor().extract(
        doc, vocabulary=DOCUMENTATION, lexicon=lexicon, max_edges=20
    )
    assert found.candidates == ()
    drafted = Known("Support function", drafted=True)
    doc = SourceDoc(
        slug="manual",
        revision_id=1,
        revision_number=1,
        title="Manual",
        text="The `planner_hook` uses a support function.",
    )
    names = {
        (c.source, c.target)
        for c in LinguisticExtractor()
        .extract(doc, vocabulary=DOCUMENTATION, lexicon=drafted, max_edges=20)
        .candidates
    }
    assert ("planner_hook", "Support function") in names


@pytest.mark.parametrize(
    "text, placeholder",
    [
        ("*args* is a tuple holding the call's arguments.", "args"),
        ("*fd* is a file descriptor connected to the terminal.", "fd"),
        ("*`count`* is a possibly-signed integer constant.", "count"),
        ("The *`sql`* parameter is an SQL statement that produces the rows.", "sql"),
    ],
)
def test_a_parameters_placeholder_is_no_term_and_ends_no_edge(text, placeholder):
    """A parameter's name in a signature's description (Sphinx's italics, DocBook's
    emphasised code) names one call's value, not a thing of the manual."""
    scores = {name.lower(): score for name, score in terms_of(text).items()}
    assert scores[placeholder] < TERM_SCORE
    assert not any(placeholder in (s.lower(), t.lower()) for s, _, t in edges(text))


def test_a_term_introduced_in_italics_with_its_article_stays_a_term():
    """ "A *tablespace* is ...": the italics introduce a term, they do not stand for a
    value."""
    names = terms_of("A *tablespace* is a directory where the database stores its files.")
    assert names["Tablespace"] >= TERM_SCORE


def test_a_plain_word_pointing_at_one_thing_ends_no_edge():
    """ "The generator produces 5-tuples" speaks of the page's generator, not of
    generators; code, a capital or more words make it a name."""
    rest = " Each generator yields tokens. A generator is lazy."
    assert not edges("The generator produces 5-tuples." + rest)
    assert edges("A generator produces 5-tuples." + rest) == {("Generator", "produces", "5-tuple")}
    assert ("pg_dump", "produces", "Archive file") in edges(
        "The `pg_dump` program produces an **archive file**."
    )


def test_an_identifier_keeps_its_underscores_as_a_display_name():
    """ "__doc__" is not Markdown's strong "doc"."""
    from construction.text import clean_display

    assert clean_display("__doc__") == "__doc__"
    assert clean_display("_thread") == "_thread"
    assert clean_display("**bold** words") == "bold words"


def test_an_identifier_keeps_its_case_as_a_new_concept_through_the_pipeline():
    """The reader marks a code name as verbatim, so the concept drafted for it is
    "setval", not "Setval"; a prose name still starts with a capital, and the mark
    survives the extraction's JSON."""
    from construction.pipeline import process_source
    from construction.types import Extraction
    from tests.construction.memory import MemoryGraph, index_of

    text = "In contrast to a `setval` call, a **RESTART** operation is transactional."
    doc = SourceDoc(slug="manual", revision_id=1, revision_number=1, title="Manual", text=text)
    extraction = read(text)
    assert Extraction.from_json(extraction.as_json()) == extraction
    result = process_source(
        doc=doc,
        extraction=extraction,
        vocabulary=DOCUMENTATION,
        index=index_of(),
        graph=MemoryGraph(),
        gate=0.6,
    )
    names = {c.name for c in result.concepts}
    assert "setval" in names and "Setval" not in names
    assert "RESTART operation" in names


def test_an_unmarked_identifier_before_its_kind_names_the_identifier():
    """ "the log_recovery_conflict_waits parameter" and "a `setval` call" name the setting
    and the function, as "the `wal_level` parameter" does."""
    names = terms_of("Turn on the log_recovery_conflict_waits parameter. A `setval` call is fast.")
    assert "log_recovery_conflict_waits" in names and "setval" in names
    assert not {"log_recovery_conflict_waits parameter", "setval call"} & set(names)


@pytest.mark.parametrize("word", ["function", "pointer", "module", "subdirectory", "archive"])
def test_an_everyday_word_of_documentation_alone_is_no_term(word):
    """ "Function" or "Subdirectory" alone names no concept of a manual, however rare in
    general English, repeated or emphasised; written in code, or with a name in front,
    it can."""
    text = f"The *{word}* is described below. Each {word} is checked. A {word} is used again."
    assert terms_of(text)[word.capitalize()] < TERM_SCORE
    assert terms_of(f"`{word}` is checked. Use `{word}` again.")[word] >= TERM_SCORE


def test_dotted_names_plural_looking_names_and_imperatives_stay_as_written():
    """ "shlex.wordchars" is an identifier (not "Shlex.wordchar"), "ncurses" no plural,
    and a sentence's imperative "Set" is not part of the name after it."""
    names = terms_of("Set shlex.wordchars to letters. The ncurses library draws menus.")
    assert "shlex.wordchars" in names and "set shlex.wordchars" not in names
    assert "Ncurses library" in names
    assert "Compiled code" in terms_of("Compiled code is faster. Embedded systems are small.")


def test_a_new_concept_quotes_a_sentence_naming_it_through_markup_and_plurals():
    """A concept drafted from an edge's end has a sentence as its evidence even where the
    text writes it in the plural or with inline code among its words ("The `tar`
    archive", "selectivity estimation functions")."""
    from construction.drafts import first_sentence_naming
    from construction.linguistic.markup import read_sentences

    text = (
        "The archive is a `tar` archive. Some selectivity estimation functions use it. "
        "The **SETOF** modifier is old."
    )
    doc = SourceDoc(slug="m", revision_id=1, revision_number=1, title="M", text=text)
    spans = [(s.start, s.end, False) for s in read_sentences(text)]
    for name, sentence in [
        ("tar archive", "The archive is a `tar` archive."),
        ("Selectivity estimation function", "Some selectivity estimation functions use it."),
        ("SETOF modifier", "The **SETOF** modifier is old."),
    ]:
        span = first_sentence_naming(doc, spans, [name])
        assert span is not None and span.quote == sentence
        assert text[span.start : span.end] == sentence
    assert first_sentence_naming(doc, spans, ["arch"]) is None


def test_a_new_concepts_evidence_is_prose_before_a_synopsis_or_heading():
    """ "OR REPLACE" is named first in a command's synopsis and a heading: its evidence is
    the sentence of prose that names it; a name only a heading holds keeps the heading."""
    from construction.drafts import first_sentence_naming
    from construction.sentences import sentences

    text = (
        "# OR REPLACE\n\n```\nCREATE [ OR REPLACE ] FUNCTION name\n```\n\n"
        "`OR REPLACE` is a PostgreSQL extension.\n"
    )
    doc = SourceDoc(slug="m", revision_id=1, revision_number=1, title="M", text=text)
    span = first_sentence_naming(doc, sentences(text), ["OR REPLACE"])
    assert span is not None and span.quote == "`OR REPLACE` is a PostgreSQL extension."
    only = "# Window functions\n\nSee below.\n"
    doc = SourceDoc(slug="w", revision_id=1, revision_number=1, title="W", text=only)
    span = first_sentence_naming(doc, sentences(only), ["Window function"])
    assert span is not None and "Window functions" in span.quote
