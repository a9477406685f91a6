"""Names shared by every stage: name keys, display forms, abbreviations, identifiers.

Name keys make "The Vector Databases", "vector-database" and "Vector  database" the same
key. Quotes are found in ``quotes`` and sentences split in ``sentences``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable

from rapidfuzz import fuzz

ARTICLES = frozenset({"the", "a", "an"})
TYPOGRAPHIC = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2032": "'",
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
        "\u00a0": " ",
        "\u2009": " ",
        "\u202f": " ",
        "\u2026": "...",
    }
)
EMPHASIS = frozenset("*_`")
# Words that end in "s" but are not plurals of a shorter word we would want to match.
SINGULAR_S = frozenset(
    {
        "analysis",
        "basis",
        "bias",
        "business",
        "calculus",
        "chaos",
        "class",
        "consensus",
        "corpus",
        "diagnosis",
        "focus",
        "gas",
        "hypothesis",
        "lens",
        "loss",
        "mass",
        "news",
        "process",
        "progress",
        "series",
        "species",
        "status",
        "success",
        "synthesis",
        "thesis",
        "virus",
        "axis",
        "cross",
        "access",
        "less",
        "plus",
        "bus",
        "atlas",
        "its",
        "this",
        "has",
        "was",
        "is",
        "us",
        "yes",
        "always",
        "perhaps",
        "whereas",
        "ollama",
        "pandas",
        "keras",
        "redis",
        "kubernetes",
        "postgres",
        "aws",
        "glass",
    }
)
NAME_PUNCT = re.compile(r"[^\w\s+#.]")
TOKEN = re.compile(r"[\w+#]+(?:\.[\w+#]+)*")
ROMAN = frozenset({"ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii"})
ABBREVIATION = re.compile(r"^\s*(?P<long>[^()]*?[^\s()])\s*\((?P<short>[^()]{1,40})\)\s*$")


# Characters no text kgreview keeps may hold: C0 and C1 controls but tab, newline and
# carriage return; DEL; lone surrogates (no UTF-8 text carries them, but Python strings
# can). PostgreSQL text cannot hold NUL at all.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# Unicode categories a name never keeps: controls (Cc), format characters (Cf: zero-width
# spaces and joiners, bidi marks, embeddings, overrides and isolates, the BOM, the soft
# hyphen) and surrogates (Cs). They are invisible or reorder what follows them, so two
# names that look alike would be two concepts, and "Evil\u202egnp.exe" would print
# backwards and carry the rest of a sentence with it.
_UNSEEN = frozenset({"Cc", "Cf", "Cs"})


def control_in(text: str) -> str | None:
    """The first control character in ``text`` (see ``CONTROL``), or None."""
    found = CONTROL.search(text)
    return found.group() if found else None


def without_controls(text: str) -> str:
    """``text`` with every ``CONTROL`` character removed (tab and line ends stay)."""
    return CONTROL.sub("", text)


def visible(text: str) -> str:
    """``text`` without control, format and surrogate characters; whitespace controls
    (tab, line ends) become spaces. Cheap when there is nothing to take out."""
    if text.isprintable():  # False for every Cc, Cf and Cs character (and some spaces)
        return text
    return "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or unicodedata.category(ch) not in _UNSEEN
    )


def normal_name(name: str) -> str:
    """The one stored form of every name and title kgreview keeps, whatever path it came
    by: concept names and aliases, source titles, API token names, relation labels and
    verbs, schedule names. Unicode NFC, no invisible or reordering characters (controls,
    format characters such as bidi marks, overrides and isolates, zero-width characters:
    see ``visible``), one space between words, ends trimmed. Two names with the same
    normal form are the same name."""
    return " ".join(visible(unicodedata.normalize("NFC", str(name))).split())


# An identifier whose underscores are part of it ("__doc__", "_thread", "__init__()"), or a
# command-line option ("--source-pgdata", "-v"): not Markdown's strong emphasis or a dash.
UNDERSCORED = re.compile(r"_+[^\W_][\w.]*(?:\(\))?|[^\W_][\w.]*_+|--?[^\W\d_][\w-]*")


def clean_display(name: str) -> str:
    """A name as people should read it: trimmed, one space between words, no Markdown
    (an identifier written with underscores keeps them: "__doc__", "_thread")."""
    text = visible(unicodedata.normalize("NFKC", str(name))).translate(TYPOGRAPHIC)
    text = " ".join(text.replace("`", "").split())
    if UNDERSCORED.fullmatch(text):
        return text
    text = text.replace("**", "").replace("__", "")
    return text.strip(" \t\"'.,;:!?*_-")


def display_case(name: str) -> str:
    """A new name as people spell it: first letter capitalised unless case carries meaning.

    The first word keeps its case when it has an inner capital ("iPhone", "pgVector"),
    a dash or dot right after its first letter ("k-means", "x.ai"), or does not start with
    a letter ("3D printing").
    """
    if not name:
        return name
    first = name.split()[0]
    keeps_case = (
        any(c.isupper() for c in first[1:])
        or (len(first) > 1 and first[1] in "-.")
        or not first[0].isalpha()
    )
    return name if keeps_case else name[0].upper() + name[1:]


def singular(word: str) -> str:
    """A light English singular for the last word of a name (embeddings -> embedding)."""
    if len(word) <= 3 or word in SINGULAR_S or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return word[:-2]
    if word.endswith("ss") or word.endswith("us") or word.endswith("is"):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


def name_key(name: str) -> str:
    """The key two spellings of one concept share: case, spacing, punctuation, plural, article.

    An empty key means the name has nothing to match on. A last word written as an
    acronym keeps its final capital S: "HTTPS" is not the plural of "HTTP", nor "QoS" of
    "Qo"; the plural of an acronym is written with a small s ("APIs", "CPUs").
    """
    written = written_words(name)
    words = [word.casefold() for word in written]
    while len(words) > 1 and words[0] in ARTICLES:
        words = words[1:]
    if words:
        last = written[-1]
        if not is_acronym(last):
            words[-1] = singular(words[-1])
        elif last.endswith("s") and is_acronym(last[:-1]):
            words[-1] = words[-1][:-1]  # "APIs", "CPUs": the plural of an acronym
    return " ".join(words)


def written_words(name: str) -> list[str]:
    """The words of a name as written, split the way its key is: at spaces, dashes,
    underscores, slashes and punctuation, keeping dots inside a word ("node.js")."""
    text = visible(unicodedata.normalize("NFKC", str(name))).translate(TYPOGRAPHIC)
    text = re.sub(r"[-_/]+", " ", text)
    text = NAME_PUNCT.sub(" ", text)
    text = re.sub(r"(?<!\w)\.|\.(?!\w)", " ", text)
    return text.split()


def is_acronym(token: str) -> bool:
    """Whether a word is written as an abbreviation: 2 to 12 characters, at least two
    capitals, and capitals at least half of its letters ("TCP", "HTTPS", "IPv4", "QoS",
    "I/O"; not "Ethernet", "macOS" or "802.11")."""
    if not 2 <= len(token) <= 12 or not token[0].isalnum():
        return False
    if not all(c.isalnum() or c in ".-+&/" for c in token):
        return False
    letters = [c for c in token if c.isalpha()]
    upper = sum(c.isupper() for c in letters)
    return upper >= 2 and upper * 2 >= len(letters)


def acronym_words(name: str) -> frozenset[str]:
    """The words of a name written as acronyms, as they appear in its key ("HTTP/2
    server" -> {"http"}; "HTTPS" -> {"https"}; "APIs" -> {"apis", "api"})."""
    found: set[str] = set()
    if sum(c.isupper() for c in name) < 2:  # a cheap first look, in any script
        return frozenset()
    for token in written_words(name):
        if is_acronym(token):
            found.update(name_key(token).split())
            found.add(token.casefold())
    return frozenset(found)


def acronym_clash(
    query: Iterable[str], candidate: Iterable[str], acronym: Callable[[str], bool]
) -> bool:
    """Whether a name (its words ``candidate``) cannot be what the words ``query`` mean
    because of an acronym: the query has an acronym the name lacks ("ssl handshake" /
    "tls handshake"), or the name has an acronym the query lacks and the query has a
    word in its place, one that is no misspelling of the name's other words ("http
    request" / "https request", "tls" / "SSL"). ``acronym(word)`` says which words are
    acronyms (some name writes them so). An acronym is a name of its own: it never
    stands for another by likeness, however close the letters."""
    mine, theirs = set(query), set(candidate)
    only_mine = mine - theirs
    if any(acronym(word) for word in only_mine):
        return True
    missing = [word for word in theirs - mine if acronym(word)]
    if not missing:
        return False
    plain = [word for word in theirs if not acronym(word)]
    return any(
        any(_alike(word, m) for m in missing) or not any(_alike(word, p) for p in plain)
        for word in only_mine
    )


def _alike(a: str, b: str) -> bool:
    """Two words close enough that a fuzzy match could take one for the other."""
    return a.startswith(b) or b.startswith(a) or fuzz.ratio(a, b) >= 60


def split_abbreviation(name: str) -> tuple[str, str | None]:
    """ "Change Data Capture (CDC)" -> ("Change Data Capture", "CDC"); otherwise (name, None).

    Only a parenthesis that reads as another name counts: short, and either an acronym or
    an expansion of the other part.
    """
    match = ABBREVIATION.match(name)
    if not match:
        return name, None
    long, short = match.group("long").strip(), match.group("short").strip()
    if looks_like_abbreviation(short, long) or looks_like_abbreviation(long, short):
        return long, short
    return name, None


def name_parts(name: str) -> list[tuple[str, str]]:
    """The parts of a name and their keys: both halves of "X (Y)", else the name itself.

    Parts whose key is empty, or repeats an earlier part's key, are left out; the long
    form comes first.
    """
    out: list[tuple[str, str]] = []
    for part in split_abbreviation(name):
        if not part:
            continue
        key = name_key(part)
        if key and all(key != seen for _, seen in out):
            out.append((part, key))
    return out


def name_keys(name: str) -> list[str]:
    """Every key a name answers to: ``name_key`` of both halves of "X (Y)", in order."""
    return [key for _, key in name_parts(name)]


def looks_like_abbreviation(short: str, long: str) -> bool:
    """Whether ``short`` can abbreviate ``long``: its letters are initials in order."""
    letters = [c.lower() for c in short if c.isalnum()]
    if not 2 <= len(letters) <= 10 or len(short) >= len(long):
        return False
    if sum(c.isupper() for c in short) < max(1, len(letters) // 2):
        return False
    words = [w for w in re.split(r"[\s\-/]+", long.lower()) if w]
    if not words:
        return False
    # Letters must be found in order, the first one starting the long form, each later
    # one starting a word or continuing inside the word just matched (e.g. "BPE").
    if letters[0] != words[0][0]:
        return False
    w, pos = 0, 1
    for letter in letters[1:]:
        found = False
        while w < len(words):
            word = words[w]
            idx = word.find(letter, pos)
            if idx != -1:
                pos = idx + 1
                found = True
                break
            w += 1
            pos = 0
            if w < len(words) and words[w][0] == letter:
                pos = 1
                found = True
                break
        if not found:
            return False
    return True


def identifiers(key: str) -> frozenset[str]:
    """Tokens that name a specific thing: numbers, versions, single letters, roman numerals.

    Two names whose identifiers differ ("GPT-3" and "GPT-4", "Llama 2" and "Llama 3")
    are different concepts however similar the rest is.
    """
    found = set()
    for token in key.split():
        if any(c.isdigit() for c in token) or len(token) == 1 or token in ROMAN:
            found.add(token)
    return frozenset(found)


def words(key: str) -> list[str]:
    return TOKEN.findall(key)


# Light British/American spelling rules for ``spelling``: (pattern, replacement), tried in
# order on a word already made singular, each only on words long enough to carry it.
_SPELLINGS = (
    (re.compile(r"(?<=\w\w)is(e|ed|es|er|ers|ing|ation|ations)$"), r"iz\1"),
    (re.compile(r"(?<=\w)ys(e|ed|er|ing)$"), r"yz\1"),
    (re.compile(r"(?<=\w\w)our(ed|ing|ful|ite|able|er)?$"), r"or\1"),
    (re.compile(r"(?<=\w\w)([tb])re$"), r"\1er"),
    (re.compile(r"(?<=\w\w)ogue$"), "og"),
    (re.compile(r"(?<=\w\w)ell(ing|ed|er)$"), r"el\1"),
    (re.compile(r"^programme$"), "program"),
)


@functools.lru_cache(maxsize=65_536)
def spelling(word: str) -> str:
    """The form one word of a name key shares with its plural and its other spellings:
    "tokens" -> "token", "normalisation" -> "normalization", "colour" -> "color",
    "centre" -> "center", "catalogue" -> "catalog", "modelling" -> "modeling".

    For comparing names only, never shown. Words with digits or other non-letters stay as
    they are ("gpt4", "node.js"); a word that no rule fits is only made singular.
    """
    if not word.isalpha():
        return word
    word = singular(word)
    if word.endswith(("che", "she", "sse", "xe", "zze")):
        word = word[:-1]  # "caches" and "matches" both lose "es": "cache" loses its "e"
    if len(word) < 5:
        return word
    for pattern, replacement in _SPELLINGS:
        changed = pattern.sub(replacement, word)
        if changed != word:
            return changed
    return word
