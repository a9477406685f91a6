"""Text utilities shared by every stage: name keys, sentences, and finding quotes.

Name keys make "The Vector Databases", "vector-database" and "Vector  database" the same
key. Quote finding compares with runs of whitespace collapsed (and typographic quotes,
dashes and Markdown emphasis ignored) but always returns offsets into the original
text, so ``text[start:end]`` is what the reviewer sees.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from bisect import bisect_left
from collections.abc import Iterator

from .types import Span

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


def clean_display(name: str) -> str:
    """A name as people should read it: trimmed, one space between words, no Markdown."""
    text = unicodedata.normalize("NFKC", str(name)).translate(TYPOGRAPHIC)
    text = text.replace("**", "").replace("__", "").replace("`", "")
    text = " ".join(text.split())
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

    An empty key means the name has nothing to match on.
    """
    text = unicodedata.normalize("NFKC", str(name)).translate(TYPOGRAPHIC).casefold()
    text = re.sub(r"[-_/]+", " ", text)
    text = NAME_PUNCT.sub(" ", text)
    text = re.sub(r"(?<!\w)\.|\.(?!\w)", " ", text)  # keep dots inside tokens (node.js)
    words = text.split()
    while len(words) > 1 and words[0] in ARTICLES:
        words = words[1:]
    if words:
        words[-1] = singular(words[-1])
    return " ".join(words)


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
        key = name_key(part) if part else ""
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


# --- Quotes -----------------------------------------------------------------------------


_NON_SPACE = re.compile(r"\S+")
_SPECIAL = re.compile("[" + re.escape("".join(chr(c) for c in TYPOGRAPHIC)) + "]")
_SPECIAL_OR_EMPHASIS = re.compile(
    "[" + re.escape("".join(chr(c) for c in TYPOGRAPHIC) + "".join(EMPHASIS)) + "]"
)


def _normalised_with_map(text: str, *, drop_emphasis: bool) -> tuple[str, array]:
    """The comparison form of ``text`` and, per character of it, its offset in ``text``.

    Whitespace runs become one space, typographic characters their ASCII forms, and
    (optionally) Markdown emphasis markers disappear. Words without such characters are
    copied whole, which keeps this fast on long texts.
    """
    special = _SPECIAL_OR_EMPHASIS if drop_emphasis else _SPECIAL
    pieces: list[str] = []
    # One machine integer per character: a list of Python ints would cost 36 bytes a
    # character, over 100 MB for a 1,000-page document.
    where = array("q")
    for match in _NON_SPACE.finditer(text):
        token, base = match.group(), match.start()
        if special.search(token) is None:
            piece, offsets = token, range(base, base + len(token))
        else:
            chars: list[str] = []
            offsets = []
            for i, ch in enumerate(token):
                if drop_emphasis and ch in EMPHASIS:
                    continue
                for out in ch.translate(TYPOGRAPHIC):
                    chars.append(out)
                    offsets.append(base + i)
            piece = "".join(chars)
            if not piece:
                continue
        if pieces:
            pieces.append(" ")
            where.append(base - 1)
        pieces.append(piece)
        where.extend(offsets)
    return "".join(pieces), where


class QuoteFinder:
    """Finds quotes in one text, normalising the text once for many quotes."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._haystack, self._where = _normalised_with_map(text, drop_emphasis=True)

    def find(self, quote: str, *, within: tuple[int, int] | None = None) -> Span | None:
        """Where ``quote`` occurs, compared with whitespace runs collapsed.

        Returns offsets into the original text and the original substring, or None.
        Typographic quotes and dashes count as their ASCII forms; Markdown emphasis
        markers are ignored. ``within`` (start, end offsets of the original text) looks
        there first, so a sentence repeated in a long document is found in the chunk
        that quoted it; anywhere else in the text is the fallback.
        """
        probe, _ = _normalised_with_map(
            quote.translate(TYPOGRAPHIC).strip().strip("\"'").strip(), drop_emphasis=True
        )
        if not probe.strip():
            return None
        at = -1
        if within is not None:
            lo = bisect_left(self._where, within[0])
            hi = bisect_left(self._where, within[1])
            at = self._haystack.find(probe, lo, hi)
        if at == -1:
            at = self._haystack.find(probe)
        if at == -1:
            return None
        start = self._where[at]
        end = self._where[at + len(probe) - 1] + 1
        start, end = _balance_emphasis(self.text, start, end)
        return Span(start=start, end=end, quote=self.text[start:end])


def find_quote(text: str, quote: str) -> Span | None:
    """Where ``quote`` occurs in ``text`` (see ``QuoteFinder.find``)."""
    return QuoteFinder(text).find(quote)


def _balance_emphasis(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a span by the Markdown markers that open or close just outside it.

    "**RAG** is ..." quoted from "RAG" onwards would otherwise show a stray "**".
    """
    for marker in ("**", "__", "`", "*", "_"):
        inside = text[start:end].count(marker)
        if inside % 2 == 0:
            continue
        if text[max(0, start - len(marker)) : start] == marker:
            start -= len(marker)
        elif text[end : end + len(marker)] == marker:
            end += len(marker)
    return start, end


def quote_key(quote: str) -> str:
    """A comparison key for evidence: "is this the same evidence as before?"."""
    probe, _ = _normalised_with_map(quote, drop_emphasis=True)
    return probe.casefold().strip(" .\"'")


# --- Sentences --------------------------------------------------------------------------

ABBREVIATIONS = frozenset(
    {
        "e.g",
        "i.e",
        "vs",
        "etc",
        "cf",
        "dr",
        "mr",
        "mrs",
        "ms",
        "fig",
        "al",
        "approx",
        "no",
        "vol",
        "eq",
        "resp",
        "incl",
    }
)
SENTENCE_END = re.compile(r"[.!?]+[\"')\]*_]*(?=\s)")
LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
HEADING_MARK = re.compile(r"^\s*#{1,6}\s+")


def _blocks(text: str) -> Iterator[tuple[int, int, bool]]:
    """Paragraphs, headings and list items as (start, end, is_heading)."""
    pos = 0
    para_start: int | None = None
    para_end = 0
    for line in text.splitlines(keepends=True):
        start, end = pos, pos + len(line.rstrip("\r\n"))
        pos += len(line)
        stripped = line.strip()
        heading = HEADING_MARK.match(line)
        item = LIST_MARK.match(line)
        if not stripped or heading or item:
            if para_start is not None:
                yield para_start, para_end, False
                para_start = None
            if heading:
                yield start + heading.end(), end, True
            elif item:
                para_start, para_end = start + item.end(), end
            continue
        if para_start is None:
            para_start = start + (len(line) - len(line.lstrip()))
        para_end = end
    if para_start is not None:
        yield para_start, para_end, False


def sentences(text: str) -> list[tuple[int, int, bool]]:
    """Sentence spans (start, end, is_heading) with offsets into ``text``."""
    spans: list[tuple[int, int, bool]] = []
    for block_start, block_end, is_heading in _blocks(text):
        if is_heading:
            spans.append((block_start, block_end, True))
            continue
        chunk = text[block_start:block_end]
        cursor = 0
        for match in SENTENCE_END.finditer(chunk):
            before = chunk[cursor : match.start()].rsplit(None, 1)
            last_word = before[-1].lower().rstrip(".") if before else ""
            if match.group().startswith(".") and (
                last_word in ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha())
            ):
                continue
            rest = chunk[match.end() :].lstrip()
            if rest and not (rest[0].isupper() or rest[0].isdigit() or rest[0] in "\"'(*_`["):
                continue
            end = match.end()
            if chunk[cursor:end].strip():
                spans.append(_trim(text, block_start + cursor, block_start + end))
            cursor = end
        if chunk[cursor:].strip():
            spans.append(_trim(text, block_start + cursor, block_end))
    return spans


def _trim(text: str, start: int, end: int) -> tuple[int, int, bool]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end, False
