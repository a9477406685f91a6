"""The word lists the linguistic reader's rules name, each with why it exists."""

from __future__ import annotations


def words_of(text: str) -> list[str]:
    """A word list written as text, one space or line between words."""
    return text.split()


# Adjectives that pick out some members of a class rather than naming a kind of thing:
# "the other tables", "several indexes", "a new server". Taken off the front of a name.
NON_CLASSIFYING = frozenset(
    words_of(
        """
        able additional all another any appropriate available bad best better
        big certain common complete corresponding current different difficult
        due easy entire enough every existing extra few fine first following
        further given good great high important individual large last later
        least less little long low main many more most much multiple necessary
        new next normal old only other own particular possible previous proper
        real relevant respective same second separate several short similar
        simple single small some special specific standard such sufficient third
        total typical unique unknown usual various very whole wrong useful
        actual recent initial modern familiar traditional conventional ordinary
        auxiliary basic final original exact general optional slow fast quick
        expensive efficient inefficient costly significant serious severe
        excessive unnecessary desirable undesirable convenient
        default custom sample valid invalid arbitrary obsolete unexpected unused
        returned resulting specified allocated supplied provided desired suggested
        surprising popular straightforward idiomatic opaque flexible so-called
        low-level high-level higher-level lower-level high-profile well-known
        """
    )
)
# A modifier that only measures the thing ("a five-character array", "32-bit integers",
# "a three-element array"): a number joined by a hyphen to a unit of size. Taken off the
# front like a non-classifying adjective; "one-hot", "two-phase", "three-way" name kinds.
MEASURE = (
    r"^(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|sixteen)-"
    r"(bit|byte|character|char|element|digit|item|entry|argument|letter|word|column|row"
    r"|field|octet|dimensional|dimension|line|tuple)s?$"
)
# The made-up names of examples (metasyntactic variables): a name holding one is the
# example's ("foo", "spam.eggs", "obj.name"), never a thing of the manual.
METASYNTACTIC = frozenset(words_of("foo bar baz qux quux spam eggs ham xyzzy obj myclass"))
# Nouns that only wrap what follows "of": a relation's side is that thing ("builds on the
# idea of a proximity graph", "part of the broader toolkit of prompt engineering").
STANDS_FOR_OF = frozenset(words_of("idea concept notion toolkit"))
# ... and those that, with the ones above, make no name with what follows "of" ("a kind
# of index", "a solid grasp of JSON Schema").
WRAPPERS = STANDS_FOR_OF | frozenset(
    words_of("build form kind way knowledge understanding grasp familiarity")
)
# Nouns that only point elsewhere in the text, never name a thing of the domain.
CAPTIONS = frozenset(
    words_of(
        """
        table figure example section chapter listing step appendix page note tip warning
        caution important equation footnote part item line column row
        """
    )
)
# Words that are nouns in form but say nothing on their own: a one-word candidate with
# such a head is never a term ("way", "case", "number").
EMPTY_HEADS = frozenset(
    words_of(
        """
        way thing things case cases example examples number numbers amount lot lots kind
        kinds type types sort form forms end fact point points result results need needs
        part parts use uses set order time times place idea ideas detail details reason
        reasons issue issues problem problems question questions answer answers matter
        something anything everything nothing someone anyone everyone one ones other
        others instance instances means manner sense deal bit piece side hand term terms
        aspect aspects feature features option options default defaults value values
        information approach approaches method methods effect effects purpose purposes
        situation situations level levels step steps section sections chapter chapters
        rest variety range group groups list lists name names user users people person
        course practice job task tasks work change changes addition behavior behaviour
        """
    )
)
# A head noun that only classifies the identifier in front of it: "the `wal_level`
# parameter" names `wal_level`.
CLASSIFIERS = frozenset(
    words_of(
        """
        parameter setting option command function variable field column file directory
        key flag statement clause keyword mode method class module package type value
        property attribute argument element directive tag view catalog program utility
        tool operator macro hook extension library script server process procedure
        routine call
        """
    )
)
# Everyday words of software documentation: alone, each names no concept of a manual
# ("Function", "Module", "File", "Pointer"); with a name in front it can ("window
# function", "the `tablefunc` module"). Written in code, a word names the thing itself.
GENERIC_WORDS = CLASSIFIERS | frozenset(
    words_of(
        """
        pointer archive cluster encoding implementation api interface widget
        subdirectory password digit alias synonym data object structure array string
        integer character byte word text entry item output input error message system
        application version platform format record buffer request response client
        service resource operation action event limit size location address
        count length width template aggregate expression condition query row table
        dialog window menu button code document convention mechanism support
        subtraction installer container documentation reference semicolon creation
        session packet compiler machine launcher bitmask metadata line backend weekday
        """
    )
)
# The last word of a name that only says what sort of thing the rest is, when the rest
# is a name of its own ("Transformer architecture" is the Transformer).
GENERIC_TAILS = frozenset(
    words_of(
        """
        architecture model models system systems pipeline pipelines setup setups
        approach technique method framework mechanism algorithm concept function
        """
    )
)
# Nouns named after a person with a possessive: "Dijkstra's algorithm", "Amdahl's law".
EPONYMOUS = frozenset(
    words_of(
        """
        algorithm law theorem rule method principle lemma distribution test constant
        equation inequality conjecture paradox effect formula problem hypothesis
        """
    )
)
# Tails that make a name of their own after a common word ("teacher model").
WEAK_TAILS = frozenset({"model", "models"})
