"""The linguistic offline reader's names: terms a colleague would keep, never an
adjective, a fragment, a placeholder or an everyday word on its own."""

from __future__ import annotations

import pytest

from construction.linguistic.terms import TERM_SCORE
from construction.types import SourceDoc

from .linguistic_helpers import CURRICULUM, DOCUMENTATION, edges, read, terms_of

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
    found = read(text, known=("Function", "Server", "File"), drafted=True)
    assert found.candidates == ()
    text = "The `planner_hook` uses a support function."
    names = {(s, t) for s, _, t in edges(text, known=("Support function",), drafted=True)}
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
