"""The linguistic offline reader: relations the sentence states, nothing when in doubt.
Sentences from the issue that reported the rule reader on a database manual are here as
regressions; names are ``test_linguistic_names``'."""

from __future__ import annotations

import pytest

from .linguistic_helpers import CURRICULUM, edges, read, spec

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
