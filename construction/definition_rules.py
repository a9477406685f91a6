"""The rules of DEFINE (``construction.definitions``): where, in one sentence, a text
gives a thing a second name.

"Long Form (SF)" is read the way Schwartz and Hearst do ("A simple algorithm for
identifying abbreviation definitions in biomedical text", Pacific Symposium on
Biocomputing 8, 2003): the short form's letters found in the words before the
parenthesis, in order, right to left, the first one starting a word; this module writes
that rule from the paper, and first tries the letters as the words' initials (whose
longer match "Secure Sockets Layer" the shortest match of the paper's rule would cut to
"Sockets Layer"). The cues ("also called", "aka", "for short", "hereafter", "i.e.") take
the name before them back to a determiner or the start of the clause, and the name after
them up to the end of the clause. Each rule gives ((name, offset), (alias, offset), how)
with offsets into the sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from .text import clean_display, is_acronym

Found = tuple[tuple[str, int], tuple[str, int], str]

# Most words a cue's name may have ("X, also called Y"): longer runs are clauses.
MAX_NAME_WORDS = 5
# Short forms: 2 to 10 characters, at most two words (Schwartz and Hearst's bounds).
SHORT_MIN, SHORT_MAX = 2, 10

PAREN = re.compile(r"\(([^()]{1,120})\)")
WORD = re.compile(r"[^\s,;:()\[\]\"“”]+")
# A parenthesis opening like this is a reference, an example or an aside, not a name.
ASIDE = re.compile(
    r"^(?:e\.?\s?g\b|eg\b|for (?:example|instance)\b|such as\b|see\b|cf\b|compare\b|"
    r"including\b|like\b|as in\b|note\b|fig(?:ure)?\b|table\b|section\b|§|chapter\b|"
    r"page\b|pp?\.|appendix\b|step\b|optional\b|default\b|in\b|on\b|at\b|by\b|from\b|"
    r"since\b|until\b|about\b|approx|circa\b|ca\.)",
    re.IGNORECASE,
)
THAT_IS = re.compile(r"^(?:i\.?\s?e\.?|ie|that is|namely)\s*,?\s*", re.IGNORECASE)
# Cues inside a parenthesis after a name: "(also called Y)", "(aka Y)", "(Y for short)".
INNER_CUE = re.compile(
    r"^(?:(?P<also>(?:also|sometimes|commonly|often)\s+(?:called|known\s+as|referred\s+to\s+as"
    r"|termed|named)|a\.?k\.?a\.?|hereafter(?:\s+(?:called|referred\s+to\s+as|named|termed))?)"
    r"\s*,?\s+(?P<y>.+?)|(?:or\s+)?(?P<short>.+?)\s+for\s+short)$",
    re.IGNORECASE,
)
# Cues in running text after a name: ", also called Y", ", aka Y", ", hereafter Y".
OUTER_CUE = re.compile(
    r",?\s+(?:(?:also|sometimes|commonly|often)\s+(?:called|known\s+as|referred\s+to\s+as"
    r"|termed|named)|a\.?k\.?a\.?|aka|hereafter(?:\s+(?:called|referred\s+to\s+as|named"
    r"|termed))?)\s*,?\s+",
    re.IGNORECASE,
)
FOR_SHORT = re.compile(r",\s+or\s+(?P<y>[^,;:()]{1,60}?)\s+for\s+short\b", re.IGNORECASE)
OUTER_THAT_IS = re.compile(r",?\s+(?:i\.\s?e\.|ie\.?)\s*,?\s+", re.IGNORECASE)

DETERMINERS = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "each",
        "every",
        "any",
        "its",
        "their",
        "our",
        "your",
        "his",
        "her",
        "some",
        "all",
        "both",
        "either",
        "neither",
        "another",
        "such",
    ]
)
# Words that end a name walked over: verbs that glue clauses, pronouns, connectives and
# prepositions ("of", "for", "to" and "and" may sit inside a name between capitals).
STOPS = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "can",
        "could",
        "may",
        "might",
        "will",
        "would",
        "shall",
        "should",
        "must",
        "it",
        "they",
        "we",
        "you",
        "he",
        "she",
        "which",
        "who",
        "whom",
        "whose",
        "that",
        "when",
        "where",
        "while",
        "because",
        "since",
        "if",
        "then",
        "than",
        "but",
        "or",
        "nor",
        "so",
        "yet",
        "also",
        "not",
        "no",
        "as",
        "at",
        "by",
        "from",
        "in",
        "into",
        "on",
        "onto",
        "over",
        "under",
        "with",
        "within",
        "without",
        "about",
        "after",
        "before",
        "between",
        "through",
        "per",
        "via",
    ]
)
INSIDE = frozenset({"of", "for", "to", "and", "de", "la", "du"})


def in_sentence(sentence: str) -> Iterator[Found]:
    """Every (name, alias, how) the sentence defines, offsets into it; unchecked for
    common words and twins (``construction.definitions`` does that)."""
    for match in PAREN.finditer(sentence):
        found = _parenthesis(sentence, match)
        if found is not None:
            yield found
    yield from _cues(sentence)


# --- "Long Form (SF)" and "SF (Long Form)" -------------------------------------------


def _short_form(candidate: str) -> bool:
    """Schwartz and Hearst's short form: 2-10 characters, at most two words, starting
    with a letter or digit and holding a letter; here also a capital (or a digit), so
    that "(ms)" or "(optional)" is never one."""
    text = candidate.strip()
    if not SHORT_MIN <= len(text) <= SHORT_MAX or len(text.split()) > 2:
        return False
    if not text[0].isalnum() or not any(c.isalpha() for c in text):
        return False
    if any(c in text for c in ",;:=<>\"'"):
        return False
    return any(c.isupper() for c in text)


def best_long_form(short: str, candidate: str) -> int | None:
    """Where the long form of ``short`` starts in ``candidate`` (the words just before
    it), or None: every letter and digit of the short form matched right to left, each
    to a character of the candidate further left, the first one at the start of a word
    (the matching step of Schwartz and Hearst)."""
    wanted = [c.lower() for c in short if c.isalnum()]
    low = candidate.lower()
    at = len(low) - 1
    for position in range(len(wanted) - 1, -1, -1):
        char = wanted[position]
        while at >= 0 and (low[at] != char or (position == 0 and at > 0 and low[at - 1].isalnum())):
            at -= 1
        if at < 0:
            return None
        at -= 1
    return at + 1


def _window(sentence: str, paren_at: int, short: str) -> tuple[str, int]:
    """The words before a parenthesis a long form may take, and where they start: at
    most min(|SF| + 5, 2|SF|) words (Schwartz and Hearst), never across a comma, colon,
    semicolon or another parenthesis."""
    before = sentence[:paren_at].rstrip()
    cut = max(before.rfind(c) for c in ",;:()")
    letters = sum(c.isalnum() for c in short)
    words = list(WORD.finditer(before, cut + 1))[-min(letters + 5, letters * 2) :]
    if not words:
        return "", paren_at
    first = words[0].start()
    return before[first:], first


def initials_start(short: str, candidate: str) -> int | None:
    """Where the long form of ``short`` starts in ``candidate`` when its letters are the
    initials of the last words ("Secure Sockets Layer" for "SSL", "round-trip time" for
    "RTT"), counting "of", "and" and the like or not ("Quality of Service", "QoS").
    Tried before ``best_long_form``, whose shortest match would take "Sockets Layer"."""
    wanted = [c.lower() for c in short if c.isalnum()]
    words = list(WORD.finditer(candidate))
    for count in range(1, len(words) + 1):
        parts = [p for w in words[-count:] for p in re.split(r"[-/]", w.group()) if p]
        every = [p[0].lower() for p in parts]
        content = [p[0].lower() for p in parts if p.casefold() not in INSIDE]
        if wanted in (every, content) and parts[0].casefold() not in INSIDE:
            return words[-count].start()
        if len(content) > len(wanted):
            return None
    return None


def _expand(short: str, window: str) -> int | None:
    """Where ``short``'s long form starts in ``window``: by initials, else by the
    letters in order (Schwartz and Hearst)."""
    begin = initials_start(short, window)
    return best_long_form(short, window) if begin is None else begin


def _long_form(short: str, window: str, first: int) -> tuple[str, int] | None:
    """The long form of ``short`` ending the ``window`` (which starts at ``first``), if
    it reads as one: not starting with a determiner or a connective, longer than the
    short form and not holding it, not another abbreviation."""
    begin = _expand(short, window)
    if begin is None:
        return None
    long = clean_display(window[begin:])
    words = long.split()
    if not words or words[0].casefold() in DETERMINERS | STOPS:
        return None
    if len(long) <= len(short) or short.casefold() in (w.casefold() for w in words):
        return None
    if is_acronym(long) and len(words) == 1:
        return None  # "TCP (TC)": two abbreviations, neither the long form
    return long, first + begin


def _long_before(sentence: str, match: re.Match) -> tuple[tuple[str, int], tuple[str, int]] | None:
    """ "Long Form (SF)": the long form ending just before the parenthesis."""
    inner = match.group(1)
    short = inner.strip()
    if not _short_form(short):
        return None
    window, first = _window(sentence, match.start(), short)
    long = _long_form(short, window, first) if window else None
    if long is None:
        return None
    short_at = match.start(1) + (len(inner) - len(inner.lstrip()))
    return long, (clean_display(short), short_at)


def _long_inside(sentence: str, match: re.Match) -> tuple[tuple[str, int], tuple[str, int]] | None:
    """ "SF (Long Form)": an abbreviation just before a parenthesis that spells it out,
    from its first word."""
    before = sentence[: match.start()].rstrip()
    token = WORD.findall(before)[-1:] if before else []
    if not token:
        return None
    short = token[0].strip(".'\"*_`")
    if not (is_acronym(short) and _short_form(short)):
        return None
    inner = match.group(1)
    body = THAT_IS.sub("", inner.strip())
    body = re.split(r"[,;]", body, maxsplit=1)[0].strip()
    words = body.split()
    while words and words[0].casefold() in {"the", "a", "an"}:
        words = words[1:]
    long = clean_display(" ".join(words))
    if len(words) < 2 or len(words) > len(short) + 5 or ASIDE.match(long):
        return None
    if _expand(short, long) != 0:
        return None
    long_at = match.start(1) + inner.find(words[0])
    short_at = before.rfind(short)
    return (long, long_at), (short, short_at)


def _parenthesis(
    sentence: str, match: re.Match
) -> tuple[tuple[str, int], tuple[str, int], str] | None:
    inner = match.group(1).strip()
    if not inner or ASIDE.match(inner):
        return None
    cue = INNER_CUE.match(inner)
    if cue is not None:
        return _inner_cue(sentence, match, cue)
    that_is = THAT_IS.match(inner)
    for read, how in ((_long_before, "long (short)"), (_long_inside, "short (long)")):
        if that_is and read is _long_before:
            continue  # "(i.e. Long Form)" spells out; it never abbreviates the words before
        found = read(sentence, match)
        if found is not None:
            return (*found, "i.e." if that_is else how)
    return None


def _inner_cue(
    sentence: str, match: re.Match, cue: re.Match
) -> tuple[tuple[str, int], tuple[str, int], str] | None:
    """ "X (also called Y)", "X (aka Y)", "X (hereafter Y)", "X (or Y for short)"."""
    said = cue.group("y") or cue.group("short") or ""
    alias = _name_after(said, 0)
    if alias is None or alias[1] + len(alias[0]) < len(said.rstrip(" .\"'”*_`")):
        return None  # the name ends before the parenthesis does: more than a name in it
    name = _name_before(sentence, match.start())
    if name is None:
        return None
    how = _how(cue.group(0)) if not cue.group("short") else "for short"
    inner_at = match.start(1) + match.group(1).find(said)
    return name, (alias[0], inner_at + alias[1]), how


# --- Cues in running text -------------------------------------------------------------


def _how(cue: str) -> str:
    low = cue.casefold()
    if "hereafter" in low:
        return "hereafter"
    if "known" in low:
        return "also known as"
    if re.search(r"\ba\.?k\.?a\b", low):
        return "aka"
    return "also called"


def _cues(sentence: str) -> Iterator[tuple[tuple[str, int], tuple[str, int], str]]:
    for cue in OUTER_CUE.finditer(sentence):
        if "(" in sentence[max(0, cue.start() - 1) : cue.start() + 1]:
            continue  # inside a parenthesis: read there
        name = _name_before(sentence, cue.start())
        alias = _name_after(sentence, cue.end())
        if name is not None and alias is not None:
            yield name, alias, _how(cue.group(0))
    for cue in FOR_SHORT.finditer(sentence):
        name = _name_before(sentence, cue.start())
        alias = _name_after(sentence, cue.start("y"))
        if name is not None and alias is not None and alias[0] == clean_display(cue.group("y")):
            yield name, alias, "for short"
    for cue in OUTER_THAT_IS.finditer(sentence):
        found = _that_is(sentence, cue)
        if found is not None:
            yield (*found, "i.e.")


def _that_is(sentence: str, cue: re.Match) -> tuple[tuple[str, int], tuple[str, int]] | None:
    """ "Long Form, i.e. SF" or "SF, i.e. Long Form": only where one spells the other out."""
    after = _name_after(sentence, cue.end())
    if after is not None and is_acronym(after[0]) and _short_form(after[0]):
        window, first = _window(sentence, cue.start(), after[0])
        long = _long_form(after[0], window, first) if window else None
        return None if long is None else (long, after)
    before = WORD.findall(sentence[: cue.start()])[-1:]
    short = before[0].strip(".'\"*_`") if before else ""
    if not (is_acronym(short) and _short_form(short)):
        return None
    tail = sentence[cue.end() :]
    clause = re.split(r"[,;:()]|\.(?:\s|$)", tail, maxsplit=1)[0]
    words = list(WORD.finditer(clause))
    while words and words[0].group().casefold() in DETERMINERS:
        words = words[1:]
    if not 2 <= len(words) <= len(short) + 5:
        return None
    spelled = clean_display(clause[words[0].start() : words[-1].end()])
    if _expand(short, spelled) != 0:
        return None
    return (spelled, cue.end() + words[0].start()), (short, sentence.rfind(short, 0, cue.start()))


def _words(text: str) -> list[tuple[str, int]]:
    return [(m.group(), m.start()) for m in WORD.finditer(text)]


def _name_like(words: Sequence[str]) -> bool:
    """Words that read as one name: its words capitalised or acronyms (function words
    between them aside), or a single word."""
    if len(words) == 1:
        return True
    return all(
        w[0].isupper() or w[0].isdigit() or is_acronym(w) or w.casefold() in INSIDE for w in words
    )


def _name_before(sentence: str, end: int) -> tuple[str, int] | None:
    """The name ending at ``end``: the words back to a determiner, or to the start of
    the clause (or a word that ends one) when they read as one name; at most
    ``MAX_NAME_WORDS``. "of", "for", "to", "and" stay inside a name between capitals
    ("Quality of Service")."""
    head = sentence[:end]
    cut = max(head.rfind(c) for c in ",;:()")
    words = _words(head[cut + 1 :])
    taken: list[tuple[str, int]] = []
    determined = False
    for index in range(len(words) - 1, -1, -1):
        word = words[index][0]
        low = word.casefold().strip(".'\"*_`")
        if low in DETERMINERS:
            determined = True
            break
        left = words[index - 1][0] if index else ""
        if low in STOPS or (low in INSIDE and not (taken and left[:1].isupper())):
            break
        taken.append(words[index])
        if len(taken) > MAX_NAME_WORDS:
            return None
    taken.reverse()
    if not taken:
        return None
    names = [w for w, _ in taken]
    if not determined and not _name_like(names):
        return None
    return clean_display(" ".join(names)), cut + 1 + taken[0][1]


def _name_after(text: str, begin: int) -> tuple[str, int] | None:
    """The name starting at ``begin``: past a determiner, up to the end of the clause or
    a word that starts another one; at most ``MAX_NAME_WORDS``."""
    tail = text[begin:]
    stop = min([i for i in (tail.find(c) for c in ",;:()") if i >= 0] + [len(tail)])
    words = _words(tail[:stop])
    while words and words[0][0].casefold().strip("\"'“") in DETERMINERS:
        words = words[1:]
    taken: list[tuple[str, int]] = []
    for index, (word, at) in enumerate(words):
        low = word.casefold().strip(".'\"“”")
        right = words[index + 1][0] if index + 1 < len(words) else ""
        if low in STOPS or (low in INSIDE and not (taken and right[:1].isupper())):
            break
        taken.append((word, at))
    if not taken or len(taken) > MAX_NAME_WORDS:
        return None
    names = [w for w, _ in taken]
    if len(taken) > 3 and not _name_like(names):
        return None  # four lower-case words or more run into a clause
    name = clean_display(" ".join(names))
    if not name:
        return None
    first = taken[0][1] + (len(taken[0][0]) - len(taken[0][0].lstrip("\"'“*_`")))
    return name, begin + first
