"""Which untyped concepts a newly accepted type fits, from the quotes stored about them
(``construction.ontology.typing.types_that_fit``): a pure function of the quotes."""

from __future__ import annotations

from construction.ontology import KnownType
from construction.ontology.typing import Quoted, Untyped, type_sign, types_below, types_that_fit

TYPES = [
    KnownType("lock", "Lock"),
    KnownType("lock_mode", "Lock mode"),
    KnownType("setting", "Setting"),
    KnownType("command", "Command"),
    KnownType("table_lock", "Table lock", "lock"),
    KnownType("old_lock", "Old lock", "lock", active=False),
]


def fits(*concepts: Untyped, wanted: str) -> dict[int, tuple[str, int, str]]:
    found = types_that_fit(concepts, TYPES, types_below(TYPES, wanted))
    return {f.concept_id: (f.type_key, f.quote, f.sign) for f in found}


def test_the_wanted_types_are_the_type_and_its_active_subtypes():
    assert types_below(TYPES, "lock") == {"lock", "table_lock"}
    assert types_below(TYPES, "old_lock") == set()


def test_a_head_noun_a_definition_a_classifier_and_a_heading_each_show_a_type():
    head = Untyped(
        1, ("ACCESS EXCLUSIVE lock",), (Quoted("Only an ACCESS EXCLUSIVE lock blocks a SELECT."),)
    )
    defined = Untyped(
        2, ("advisory",), (Quoted("An advisory is a kind of table lock held by the app."),)
    )
    named = Untyped(
        3, ("work_mem",), (Quoted("Nothing here."), Quoted("The work_mem setting is 4MB."))
    )
    under = Untyped(
        4, ("VACUUM",), (Quoted("VACUUM reclaims storage.", ("Reference", "SQL Commands")),)
    )
    assert fits(head, defined, named, under, wanted="lock") == {
        1: ("lock", 0, 'its name ends in "lock"'),
        2: ("table_lock", 0, 'the text defines it as a "table lock"'),
    }
    assert fits(head, defined, named, under, wanted="setting") == {
        3: ("setting", 1, 'the text names it with the noun "setting"')
    }
    assert fits(head, defined, named, under, wanted="command") == {
        4: ("command", 0, 'it sits under the heading "SQL Commands"')
    }


def test_a_closer_type_wins_and_a_quote_that_does_not_name_the_concept_shows_nothing():
    closer = Untyped(1, ("SHARE lock mode",), (Quoted("SHARE lock mode is weaker."),))
    unnamed = Untyped(2, ("pg_locks",), (Quoted("A lock is a lock."),))
    assert fits(closer, unnamed, wanted="lock") == {}
    assert fits(closer, wanted="lock_mode") == {1: ("lock_mode", 0, 'its name ends in "mode"')}


def test_an_alias_in_the_quote_names_the_concept():
    bare = Untyped(1, ("AccessExclusiveLock", "ACCESS EXCLUSIVE"), (Quoted("Take it first."),))
    assert fits(bare, wanted="lock") == {}  # no quote names it
    defined = Untyped(
        2,
        ("AccessExclusiveLock", "ACCESS EXCLUSIVE"),
        (Quoted("ACCESS EXCLUSIVE is the strongest lock."),),
    )
    assert fits(defined, wanted="lock") == {
        2: ("lock", 0, 'the text defines it as a "strongest lock"')
    }


def test_no_type_no_sign():
    assert type_sign("work_mem", []) == ("", "")
    assert types_that_fit([Untyped(1, ("x",), (Quoted("x is a lock"),))], TYPES, set()) == []


def test_a_quote_names_a_concept_in_the_plural_or_with_other_punctuation():
    plural = Untyped(1, ("ROW SHARE lock",), (Quoted("ROW SHARE locks conflict with it."),))
    spaced = Untyped(2, ("Foreign-key lock",), (Quoted("A foreign key lock is taken."),))
    inside = Untyped(3, ("key lock",), (Quoted("The monkey locksmith."),))
    assert fits(plural, spaced, inside, wanted="lock") == {
        1: ("lock", 0, 'its name ends in "lock"'),
        2: ("lock", 0, 'its name ends in "lock"'),
    }


def test_a_definition_is_the_noun_phrase_after_an_article_not_what_follows_it():
    """Found typing the sample curriculum: "is a component of RAG evaluation" typed context
    recall an evaluation, and "are closely related to prompt engineering" typed JSON mode
    a prompt."""
    types = [KnownType("evaluation", "Evaluation"), KnownType("prompt", "Prompt")]
    part = Untyped(
        1, ("Context recall",), (Quoted("Context recall is a component of RAG evaluation."),)
    )
    related = Untyped(
        2, ("JSON mode",), (Quoted("JSON mode are closely related to prompt engineering."),)
    )
    defined = Untyped(3, ("Few-shot",), (Quoted("Few-shot is a prompt technique."),))
    found = types_that_fit([part, related, defined], types, {"evaluation", "prompt"})
    assert [(f.concept_id, f.type_key) for f in found] == [(3, "prompt")]


def test_a_heading_that_joins_things_or_is_a_lone_plural_is_no_sign():
    types = [
        KnownType("vector", "Vector"),
        KnownType("embedding", "Embedding"),
        KnownType("metric", "Metric"),
    ]
    say = "Cosine similarity is used."
    under = {
        1: ("Graphs versus vectors",),
        2: ("Token embeddings and sentence embeddings",),
        3: ("Embeddings",),
        5: ("From one-hot to dense vectors",),
        4: ("Lessons", "Similarity metrics"),
    }
    concepts = [Untyped(i, ("Cosine similarity",), (Quoted(say, h),)) for i, h in under.items()]
    found = types_that_fit(concepts, types, {"vector", "embedding", "metric"})
    assert [(f.concept_id, f.type_key) for f in found] == [(4, "metric")]


def test_a_heading_does_not_type_a_term_whose_own_head_noun_it_does_not_name():
    """Found on the PostgreSQL manual: everything on "C-Language Functions" was typed a
    function ("Memory context", "ECPG implementation"); a statement form is a command."""
    types = [
        KnownType("function", "Function"),
        KnownType("metric", "Metric"),
        KnownType("command", "Command"),
        KnownType("index", "Index"),
    ]
    page = ("C-Language Functions",)
    assert type_sign("Memory context", types, section=page) == ("", "")
    assert type_sign("ECPG implementation", types, section=page) == ("", "")
    assert type_sign("setval", types, section=page)[0] == "function"
    assert type_sign("Cosine similarity", types, section=("Similarity metrics",))[0] == "metric"
    assert type_sign("ALTER INDEX", types) == ("command", "it is a statement form")
