"""The offline bootstrap's word lists, in one place: heads that are never a type, heads
that are a type only with a modifier, and the verbs a statement form begins with.

No well-kept list fits what these do (WordNet's top-level nouns would need a data
download and rank by sense, not by what a manual's curator accepts), so they are ours,
kept short, and each says why a word is on it.
"""

from __future__ import annotations

from ..linguistic.words import words_of

# Heads that name no kind of thing of a domain ("value", "way", "example").
STOP_HEADS = frozenset(
    words_of(
        """
        way thing case example number amount lot kind type sort form end fact point result
        need part use set order time place idea detail reason issue problem question answer
        one other instance means mean manner sense deal bit piece side hand term aspect
        feature option default value information approach method effect purpose situation
        level step section chapter page rest variety range group list name user people
        person course practice job task work change addition behavior behaviour note see
        also following above below lot many much more most less first last new same
        different specific various several certain such other detail details case cases
        version documentation release manual appendix table_of_contents contents description
        overview introduction summary reference synopsis usage purpose default defaults rule
        caveat tip warning respect regard time times people something anything everything
        nothing byte bytes character characters word words line lines text string data
        number size
        """
    )
)
# Nouns that state a relation rather than a kind ("X is an alternative to Y", "a
# component of"): the cue lexicon's nouns.
STOP_HEADS |= frozenset(
    words_of(
        """
        alternative prerequisite substitute synonym alias extension refinement
        generalization component member stage phase variant subclass contrast
        """
    )
)

# Generic heads: nouns of computing that gather unrelated members when they stand alone
# ("code" holds source code, error codes and C; "node" plan nodes and document nodes;
# "system" operating systems and file systems), so they are a type only with a modifier
# ("database object", "lock mode", "plan node") and never a pattern's end on their own.
# Judged on the PostgreSQL manual's drafts (evaluation/ontology/postgresql.md).
GENERIC_HEADS = frozenset(
    words_of(
        """
        code operation structure object node mode system key pointer syntax array item
        entry element unit entity mechanism facility
        """
    )
)

# The first word of a statement form written in capitals ("CREATE TRIGGER", "DROP ROLE",
# "ALTER DEFAULT PRIVILEGES"): such a name is a command, not the object it makes or removes. The
# SQL standard's statement verbs and the common extensions of database manuals.
STATEMENT_VERBS = frozenset(
    words_of(
        """
        ABORT ALTER ANALYZE ATTACH BEGIN CALL CHECKPOINT CLOSE CLUSTER COMMENT COMMIT COPY
        CREATE DEALLOCATE DECLARE DELETE DETACH DISABLE DISCARD DO DROP ENABLE END EXECUTE
        EXPLAIN FETCH GRANT IMPORT INSERT LISTEN LOAD LOCK MERGE MOVE NOTIFY PRAGMA PREPARE
        REASSIGN REFRESH REINDEX RELEASE REPLACE RESET REVOKE ROLLBACK SAVEPOINT SECURITY
        SELECT SET SHOW START TRUNCATE UNLISTEN UPDATE UPSERT VACUUM VALUES
        """
    )
)


def is_statement(name: str) -> bool:
    """A statement form written in capitals: "CREATE TRIGGER", "DROP ROLE", "ALTER
    DEFAULT PRIVILEGES", or a name ending in one ("SQL command DROP ROLE"): a command,
    not the object it makes."""
    words = name.split()
    caps = 0  # the capitalised words the name ends with ("SQL command DROP ROLE")
    while caps < len(words) and words[-1 - caps].isupper():
        caps += 1
    form = [w for w in words[len(words) - caps :] if w.replace("_", "").isalpha()]
    return 2 <= len(form) <= 4 and form[0] in STATEMENT_VERBS
