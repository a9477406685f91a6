"""Terms: the noun phrases and identifiers a text uses as names of things, and how sure.

A candidate is read off the tags of one sentence: a run of nouns, proper nouns and
adjectives (words joined by a hyphen or slash count as one) that ends in a noun, with
the determiners, numbers and non-classifying adjectives in front taken off ("the many
other index types" gives "index type"), or a stretch of inline code, kept verbatim
("min_wal_size", "VACUUM FULL"). Section numbers, pronouns and captions ("Table t1",
"Section 11.5") are never candidates.

Whether a candidate is a term is scored from how it is used, in the whole chunk:

- how much rarer it is in general English than here (a packaged word-frequency list:
  ``wordfreq``'s, for English);
- where it stands: inline code, strong or emphasised words, headings, the subject of a
  definition;
- its shape: several words, an acronym, a capitalised name mid-sentence;
- whether the graph, or an earlier chunk, knows it already (the lexicon).

A common single word ("server", "file", "query") is a term only where the text sets it
apart; an adjective, adverb or verb never is, whatever the tagger said of a neighbour.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..text import display_case, name_key, singular
from .markup import Sentence
from .termhood import TERM_SCORE, Candidate, Mention, termhood, zipf
from .words import (
    CAPTIONS,
    CLASSIFIERS,
    EMPTY_HEADS,
    EPONYMOUS,
    GENERIC_TAILS,
    GENERIC_WORDS,
    MEASURE,
    NON_CLASSIFYING,
    WEAK_TAILS,
    WRAPPERS,
    words_of,
)

NOMINAL = frozenset({"NOUN", "PROPN"})
MODIFIER = frozenset({"NOUN", "PROPN", "ADJ", "X"})
# A word shaped like an identifier: an underscore, a digit after letters, an inner capital,
# a dotted name ("min_wal_size", "crosstab2", "pgBouncer", "shlex.wordchars"): kept
# exactly as written.
IDENTIFIER = re.compile(r"_|[a-z][0-9]|^[a-z]+[A-Z]|\w\.\w{2,}")
SECTION_NUMBER = re.compile(r"^\d+(\.\d+)*\.?$")
INNER_CAPITAL = re.compile(r"^.+[A-Z]")
MAX_WORDS = 5
# Irregular plurals the lemmatiser reads as Latin: kept as they are in names.
KEEP_PLURAL = frozenset({"data", "media", "metadata"})


def unit_spans(doc, sentence: Sentence) -> list[tuple[int, int]]:
    """Token ranges that read as one word: hyphen or slash compounds ("write-ahead",
    "I/O", "B-tree"), a proper name with its possessive, and each stretch of inline
    code."""
    codes = [m for m in sentence.marks if m.kind == "code"]
    spans: list[tuple[int, int]] = []
    i = 0
    n = len(doc)
    while i < n:
        tok = doc[i]
        code = next((m for m in codes if m.start <= tok.idx < m.end), None)
        j = i
        if code is not None:
            while j + 1 < n and doc[j + 1].idx < code.end:
                j += 1
        else:
            # Upper-case words run together are one name ("ACCESS EXCLUSIVE", "VACUUM
            # FULL"): the tagger reads them badly, word by word.
            while _caps(doc[j]) and j + 1 < n and _caps(doc[j + 1]) and doc[j].whitespace_:
                j += 1
            while (
                j + 2 < n
                and not doc[j].whitespace_
                and doc[j + 1].text in ("-", "/")
                and not doc[j + 1].whitespace_
                and doc[j + 2].is_alpha | doc[j + 2].like_num
            ):
                j += 2
            eponym = j + 2 < n and doc[j + 2].lemma_.lower() in EPONYMOUS
            if eponym and doc[j + 1].tag_ == "POS" and doc[j].pos_ == "PROPN":
                j += 1  # a name's possessive in a name: "Dijkstra's algorithm", "Bayes' rule"
        spans.append((i, j))
        i = j + 1
    return spans


def _identifier(doc, unit: tuple[int, int]) -> bool:
    """A word shaped like an identifier though not marked as code ("the
    log_recovery_conflict_waits parameter")."""
    return unit[0] == unit[1] and bool(IDENTIFIER.search(doc[unit[0]].text))


def _numbering(tok) -> bool:
    """A caption's number: "3", "11.5", "t1", "A", "IV"."""
    text = tok.text
    return any(c.isdigit() for c in text) or len(text) <= 2 or text in ROMAN_NUMERALS


ROMAN_NUMERALS = frozenset(words_of("I II III IV V VI VII VIII IX X XI XII"))


def _acronym(word: str) -> bool:
    """ "WAL", "MoE", "IPv6": short, starting with a capital, with another inside."""
    return (
        " " not in word
        and len(word) <= 8
        and word[:1].isupper()
        and sum(c.isupper() for c in word) >= 2
    )


def _caps(tok) -> bool:
    text = tok.text
    return len(text) >= 2 and text.isupper() and text.isalpha()


class TermTable:
    """Every candidate of a chunk, by key; scored once all sentences are read."""

    def __init__(self, lexicon=None) -> None:
        self.lexicon = lexicon
        self.candidates: dict[str, Candidate] = {}
        # (sentence, head token) -> the candidates whose head it is (a name and the
        # longer "X of Y" name it starts)
        self.heads: dict[tuple[int, int], list[Candidate]] = {}
        self.spans: dict[tuple[int, int], tuple[int, int]] = {}

    def read(self, index: int, doc, sentence: Sentence) -> None:
        """Collect the candidates of one tagged sentence."""
        units = unit_spans(doc, sentence)
        run: list[tuple[int, int]] = []
        runs: list[list[tuple[int, int]]] = []
        for unit in [*units, None]:
            if unit is not None and _modifier(doc, sentence, unit):
                run.append(unit)
                continue
            if unit is not None and _gerund_head(doc, unit, run):
                run.append(unit)  # "function calling", "load balancing": the run ends here
                unit = None
            if run:
                kept = self._run(index, doc, sentence, run)
                if kept:
                    runs.append(kept)
            run = []
        for first, second in zip(runs, runs[1:], strict=False):
            # "mixture of experts", "point of failure": a name only where the text says
            # it more than once or sets it apart (scored as such).
            gap = second[0][0] - first[-1][1]
            joined = gap == 2 and doc[first[-1][1] + 1].lower_ == "of"
            if joined and len(first) + len(second) < MAX_WORDS:
                self._add(index, doc, sentence, [*first, None, *second], head=first[-1][1])

    def _run(self, index: int, doc, sentence: Sentence, run: list[tuple[int, int]]):
        """Add the candidate a run of units makes; the units kept, or None."""
        # The run ends at its last nominal unit; a code unit inside stands on its own too.
        while run and not _nominal(doc, sentence, run[-1]):
            run = run[:-1]
        if not run:
            return None
        for k, unit in enumerate(run):
            named = "code" in _unit_kinds(doc, sentence, unit) or _identifier(doc, unit)
            if named and len(run) > 1:
                after = run[k + 1 :]
                if k == len(run) - 1 or (
                    len(after) == 1 and doc[after[0][1]].lemma_.lower() in CLASSIFIERS
                ):
                    self._add(index, doc, sentence, [unit], head=run[-1][1])
                    if after:
                        return None
        start = 0
        parsed = doc.has_annotation("DEP")
        while start < len(run) - 1 and (
            _droppable(doc, run[start]) or (parsed and _outside(doc, run[start], run[-1][1]))
        ):
            start += 1
        run = run[start:]
        if len(run) > MAX_WORDS:
            run = run[-MAX_WORDS:]
        if doc[run[0][0]].lower_ in CAPTIONS and len(run) >= 2 and _numbering(doc[run[1][0]]):
            return None  # "Table t1", "Section 11.5", "Figure 3"
        self._add(index, doc, sentence, run, head=run[-1][1])
        return run

    def _add(self, index: int, doc, sentence: Sentence, run, *, head: int) -> None:
        of_phrase = None in run
        if of_phrase:
            cut = run.index(None)
            left, _ = _name(doc, sentence, run[:cut], plural=True)
            right, _ = _name(doc, sentence, run[cut + 1 :], plural=True)
            if right[1:2].islower():  # "Mixture of Experts" reads "mixture of experts"
                right = right[:1].lower() + right[1:]
            left_head = doc[run[cut - 1][1]].lemma_.lower()
            empty = left_head in EMPTY_HEADS or left_head in WRAPPERS
            name, identifier = ("" if empty or not left else f"{left} of {right}"), False
            run = [r for r in run if r is not None]
        else:
            name, identifier = _name(doc, sentence, run)
        if not name:
            return
        key = name_key(name)
        if not key or SECTION_NUMBER.match(key.replace(" ", "")):
            return
        cand = self.candidates.get(key)
        if cand is None:
            words = [w for w in re.split(r"[\s\-/_.]+", name) if w]
            rarities = [zipf(w) for w in words if any(c.isalpha() for c in w)] or [8.0]
            head_word = words[-1] if words else name
            cand = Candidate(
                key=key,
                name=name,
                words=len(name.split()),
                rarity=min(rarities),
                head_rarity=zipf(head_word),
                identifier=identifier,
                known=self._known(name),
                of_phrase=of_phrase,
                adjective_first=doc[run[0][1]].pos_ == "ADJ",
                head_word=head_word.lower(),
            )
            self.candidates[key] = cand
        first, last = run[0][0], run[-1][1]
        kinds = set(_unit_kinds(doc, sentence, (first, last), whole=True))
        if sentence.heading or sentence.label:
            kinds.add("heading")
        capital = first > 0 and any(
            doc[i].text[:1].isupper() and doc[i].pos_ == "PROPN" for i in range(first, last + 1)
        )
        placeholder = not of_phrase and len(run) == 1 and _placeholder(doc, run[0], kinds)
        cand.mentions.append(Mention(index, first, last, frozenset(kinds), capital, placeholder))
        heads = [head]
        if doc[last].tag_ == "VBG" and first <= doc[last].head.i < last:
            heads.append(doc[last].head.i)  # "Function calling is ...": the parse's head
        for at in heads:
            found = self.heads.setdefault((index, at), [])
            if cand not in found:
                found.append(cand)

    def named(self, name: str, index: int) -> Candidate:
        """The candidate for a name a label gives verbatim (a signature's callable, an
        option), made a term there: what the entry under the label describes."""
        key = name_key(name)
        cand = self.candidates.get(key)
        if cand is None:
            cand = self.candidates[key] = Candidate(
                key=key,
                name=name,
                words=1,
                rarity=0.0,
                head_rarity=0.0,
                identifier=True,
                known=self._known(name),
            )
            cand.mentions.append(Mention(index, 0, 0, frozenset({"code", "heading"}), False))
        cand.score = max(cand.score, 1.0)
        return cand

    def _known(self, name: str) -> bool:
        """Whether the graph knows the name. A word of everyday documentation on its own
        ("Function", "File") counts only as a concept a reviewer accepted: another
        chunk's draft of it does not make the word a term wherever it is said."""
        if self.lexicon is None:
            return False
        key = name_key(name)
        entry = self.lexicon.lookup(key)
        if entry is None:
            return False
        everyday = " " not in key and (key in GENERIC_WORDS or key in EMPTY_HEADS)
        return entry.concept_id is not None or not everyday

    def score(self) -> None:
        """Each candidate's termhood, from all its mentions."""
        heads: dict[str, int] = {}
        for cand in self.candidates.values():
            heads[cand.head_word] = heads.get(cand.head_word, 0) + cand.count
        for cand in self.candidates.values():
            cand.head_count = heads.get(cand.head_word, 0)
            cand.score = termhood(cand)

    def at(self, index: int, token: int) -> Candidate | None:
        """The best-scored candidate whose head is this token of this sentence, if any
        (the longer one of equal score)."""
        found = self.heads.get((index, token))
        if not found:
            return None
        return max(found, key=lambda c: (c.score, c.words))

    def collapse_generic_tails(self) -> None:
        """ "Transformer architecture", "softmax function", "MoE model" name what their
        first words name, when those are a name of their own here: one candidate. Reads
        the scores, so it runs between two scorings."""
        for cand in list(self.candidates.values()):
            words = cand.name.split()
            if len(words) < 2 or words[-1].lower() not in GENERIC_TAILS or cand.of_phrase:
                continue
            if words[-2].endswith(("'s", "'", "\u2019s")):
                continue  # "Dijkstra's algorithm" is not Dijkstra
            rest = " ".join(words[:-1])
            key = name_key(rest)
            strong = (
                self._known(rest)
                or _acronym(rest)
                or rest[:1].isupper()
                and (
                    rest[1:].islower()
                    and not cand.name[:1].islower()
                    and any(m.capital for m in cand.mentions)
                )
            )
            alone = self.candidates.get(key)
            weak = words[-1].lower() in WEAK_TAILS or alone is None or alone.score < TERM_SCORE
            if not strong and weak:
                # "teacher model" is not the teacher, "attention mechanism" is more than
                # the common word "attention"; "softmax function" is softmax.
                continue
            target = self.candidates.get(key)
            if target is None and strong:
                target = self.candidates[key] = Candidate(
                    key=key,
                    name=rest,
                    words=cand.words - 1,
                    rarity=cand.rarity,
                    head_rarity=zipf(words[-2]),
                    identifier=cand.identifier,
                    known=self._known(rest),
                )
            if target is None or target is cand:
                continue
            target.mentions += cand.mentions
            for found in self.heads.values():
                if cand in found:
                    found[found.index(cand)] = target
            del self.candidates[cand.key]


# What may stand before a noun naming a thing rather than a parameter.
DETERMINER_TAGS = frozenset({"DT", "PRP$", "WP$", "CD", "JJ", "JJR", "JJS", "POS"})


def _placeholder(doc, unit: tuple[int, int], kinds: set[str]) -> bool:
    """A placeholder: emphasised code (DocBook's replaceable: "*`table_name`*"), or an
    emphasised lower-case word standing alone where English would want a determiner
    ("*size* is optional", "*fd* is a file descriptor"; Sphinx's parameters). A term
    introduced in italics comes with its article ("a *namespace* is ...") or in the
    plural."""
    if "emphasis" not in kinds or "heading" in kinds or "strong" in kinds:
        return False
    if "code" in kinds:
        return True
    first, last = doc[unit[0]], doc[unit[1]]
    if not first.text[:1].islower() or last.tag_ in ("NNS", "NNPS"):
        return False
    before = doc[unit[0] - 1] if unit[0] else None
    return before is None or before.tag_ not in DETERMINER_TAGS


def _unit_kinds(doc, sentence: Sentence, unit: tuple[int, int], *, whole: bool = False):
    start = doc[unit[0]].idx
    end = doc[unit[1]].idx + len(doc[unit[1]].text)
    return sentence.marked(start, end)


def _modifier(doc, sentence: Sentence, unit: tuple[int, int]) -> bool:
    if "code" in _unit_kinds(doc, sentence, unit) or _caps(doc[unit[1]]):
        return True
    last = doc[unit[1]]
    if unit[0] != unit[1]:  # a compound: "write-ahead", "I/O", "B-tree"
        return last.pos_ in MODIFIER or last.tag_ in ("VBN", "VBG", "RB", "NN", "JJ", "POS")
    if last.pos_ in MODIFIER and last.tag_ not in ("PRP", "WP", "EX"):
        return last.is_alpha or any(c.isalpha() for c in last.text)
    return _participle_modifier(doc, unit[1], heading=sentence.heading)


def _participle_modifier(doc, i: int, *, heading: bool = False) -> bool:
    """ "Routing tables", "streaming replication", "embedding fine-tuning": a gerund or
    participle before a noun, naming a kind of it rather than saying what it does."""
    tok = doc[i]
    if tok.tag_ not in ("VBG", "VBN") or i + 1 >= len(doc):
        return False
    if i == 0 and tok.lemma_.lower() == tok.lower_:
        return False  # "Set shlex.wordchars to ...": an imperative, not "set" as a participle
    after = doc[i + 1]
    opens = all(doc[k].like_num or doc[k].is_punct or doc[k].tag_ == "CD" for k in range(i))
    if heading and opens and tok.tag_ == "VBG" and after.tag_ in ("NNS", "NNPS", "DT"):
        return False  # "Creating Indexes", "Running the Server": a task, not a kind of index
    if after.pos_ not in ("NOUN", "PROPN") and after.tag_ not in ("VBG",) and after.text != "-":
        return False
    if doc.has_annotation("DEP"):
        return tok.dep_ in ("amod", "compound") or (
            tok.dep_ in ("nsubj", "nsubjpass", "dobj", "pobj") and tok.head.i > i
        )
    before = doc[i - 1] if i else None
    return before is None or before.pos_ in ("DET", "ADJ", "ADP", "PUNCT", "CCONJ", "SCONJ")


# What follows a gerund that takes an object or a complement, so acts as a verb: "the
# method returning a list", "a function calling the API".
OBJECT_TAGS = frozenset({"DT", "PRP", "PRP$", "JJ", "NN", "NNS", "NNP", "NNPS", "CD", "TO"})


def _gerund_head(doc, unit: tuple[int, int], run: list) -> bool:
    """A gerund that ends a name of nouns ("function calling", "load balancing", "query
    planning"): right after a singular noun of the run, and followed by no object."""
    i = unit[0]
    if not run or unit[0] != unit[1] or run[-1][1] != i - 1 or not _gerund_after_noun(doc, i):
        return False
    return i + 1 >= len(doc) or doc[i + 1].tag_ not in OBJECT_TAGS


def _gerund_after_noun(doc, i: int) -> bool:
    return doc[i].tag_ == "VBG" and i > 0 and doc[i - 1].tag_ in ("NN", "NNP")


def _nominal(doc, sentence: Sentence, unit: tuple[int, int]) -> bool:
    if "code" in _unit_kinds(doc, sentence, unit) or _caps(doc[unit[1]]):
        return True
    tok = doc[unit[1]]
    if _gerund_after_noun(doc, unit[1]):
        return True  # a gerund ending a name: "function calling"
    return tok.pos_ in NOMINAL or (unit[0] != unit[1] and tok.pos_ in ("NOUN", "PROPN", "X"))


def _droppable(doc, unit: tuple[int, int]) -> bool:
    if unit[0] != unit[1]:  # "low-level", "five-character": one word of hyphenated parts
        written = doc[unit[0] : unit[1] + 1].text.lower()
        return written in NON_CLASSIFYING or bool(re.match(MEASURE, written))
    tok = doc[unit[0]]
    return (
        tok.lower_ in NON_CLASSIFYING
        or tok.like_num
        or tok.pos_ == "NUM"
        or tok.tag_ in ("JJS", "JJR", "RBS", "RBR")  # "the simplest way", "larger tables"
    )


def _outside(doc, unit: tuple[int, int], end: int) -> bool:
    """Whether the parse hangs this unit on something outside the phrase ending at
    ``end`` ("By default PostgreSQL uses ...": "default" belongs to "By")."""
    if unit[0] <= doc[end].head.i <= unit[1] and doc[end].tag_ == "VBG":
        return False  # "Function calling": the parser hangs the gerund on the noun
    return not any(unit[1] < doc[i].head.i <= end for i in range(unit[0], unit[1] + 1))


def _name(doc, sentence: Sentence, run, *, plural: bool = False) -> tuple[str, bool]:
    """The display name of a run of units, and whether it is an identifier (a plural
    head stays plural when ``plural``, as in "mixture of experts")."""
    parts: list[str] = []
    identifier = False
    for k, (i, j) in enumerate(run):
        text = sentence.clean[doc[i].idx : doc[j].idx + len(doc[j].text)]
        code = next(
            (m for m in sentence.marks if m.kind == "code" and m.start <= doc[i].idx < m.end), None
        )
        if code is not None:  # the mark's own stretch: a token may run past it ("()–may")
            text = sentence.clean[max(code.start, doc[i].idx) : code.end]
        if code is not None or IDENTIFIER.search(text):
            identifier = True
            parts.append(text)
            continue
        last = k == len(run) - 1
        head = doc[j]
        if last and not plural and head.tag_ in ("NNS", "NNPS") and head.lower_ not in KEEP_PLURAL:
            lemma = _singular(head)
            if lemma and lemma.lower() != head.lower_ and head.text[:1].islower():
                text = text[: len(text) - len(head.text)] + lemma
            elif lemma and head.text[:1].isupper() and head.text[1:].islower():
                text = text[: len(text) - len(head.text)] + lemma.capitalize()
        parts.append(_case(doc, sentence, i, j, text))
    name = " ".join(parts).strip()
    if identifier:
        return name, True
    return display_case(name[:1].lower() + name[1:]) if _lower_first(parts) else name, False


def _case(doc, sentence: Sentence, i: int, j: int, text: str) -> str:
    """A word as it would be written mid-sentence: a capital that only starts the
    sentence or a title-case heading goes; a name's or an acronym's stays."""
    tok = doc[i]
    if not text[:1].isupper() or not text[1:2].islower() or INNER_CAPITAL.match(text[1:]):
        return text
    title = sentence.heading or i == 0
    if tok.pos_ == "PROPN" and not title:
        return text
    if title and tok.pos_ == "PROPN" and zipf(text.lower()) < 2.5:
        return text  # a rare capitalised word in a heading: a name ("Postgres")
    return text[0].lower() + text[1:]


def _singular(head) -> str:
    """The head noun in the singular: the lemmatiser's, unless it made a word English
    does not have of one it does not know ("backslashes" is not "backslashe"); a word
    English knows only as written, ending in s, stays so ("ncurses" is no plural)."""
    lemma = head.lemma_
    if lemma and zipf(lemma) == 0.0:
        plain = singular(head.lower_)
        if zipf(plain) > 0.0:
            return plain if head.text[:1].islower() else plain.capitalize()
        if zipf(head.lower_) > 0.0:
            return head.text
    return lemma


def _lower_first(parts: Sequence[str]) -> bool:
    return bool(parts) and bool(parts[0]) and parts[0][0].islower()
