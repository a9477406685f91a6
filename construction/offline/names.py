"""What one document names: its defined terms, its topic, and every mention in a sentence.

``DocumentNames`` is the first layer of the reader (``arguments`` and ``reader`` build on
it). It collects the terms the text defines ("Long Name (ABBR)", **bold** terms, the title
and headings) before any sentence is read, picks the lesson's topic, then tokenises each
sentence and marks the names in it, longest match first; the lexicon is only asked about
n-grams, and each answer is cached for the document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..protocols import Lexicon
from ..sentences import sentences
from ..text import (
    ARTICLES,
    clean_display,
    looks_like_abbreviation,
    name_key,
    singular,
    split_abbreviation,
)
from ..types import SourceDoc
from .lexicon import (
    AUXILIARIES,
    CONTAINERS,
    GENERIC_HEADS,
    HEADING_OPENERS,
    HEADING_SKIP,
    MODALS,
    PRONOUNS,
    SUBJECT_VERBS,
)
from .tokens import (
    SOFT_GAP,
    Sent,
    Tok,
    display_name,
    gram_key,
    is_function,
    is_generic,
    is_gerund,
    sentence_case,
    tokenize,
)

BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
PAREN = re.compile(r"\(([^()\n]{1,12})\)")
HEADING_SPLIT = re.compile(
    r"\s+(?:and|with|&|versus|vs\.?)\s+|\s*:\s+|\s+[-\u2013\u2014]\s+", re.IGNORECASE
)


@dataclass
class DocConcept:
    """A concept as this one document names it (mutable only while the document is read)."""

    name: str
    rank: int  # 3 abbreviation expansion, 2 bold, 1 heading, 0 guessed; -1 lexicon
    aliases: list[str] = field(default_factory=list)


class DocumentNames:
    """Everything one document teaches the extractor: its concepts, sentences and cues."""

    def __init__(self, doc: SourceDoc, lexicon: Lexicon | None) -> None:
        self.text = doc.text
        # A chunk is about its section more than about the whole document.
        self.title = doc.section[-1] if doc.section else doc.title
        self.lexicon = lexicon
        self.concepts: dict[str, DocConcept] = {}
        self.keys: dict[str, str] = {}  # any name key -> concept id
        self.misses: set[str] = set()
        self.weak: set[str] = set()  # shortenings of the topic: only a name when alone
        self.first_words: set[str] = set()
        self.local_words = 0
        self.topic: str | None = None
        spans = sentences(doc.text)
        self._collect_terms(spans)
        lex_words = min(int(getattr(lexicon, "max_words", 0) or 0), 8) if lexicon else 0
        self.max_words = max(self.local_words, lex_words)
        self.use_lexicon = lex_words > 0
        self.sents = [self._sentence(i, *span) for i, span in enumerate(spans)]

    # -- concepts --

    def lookup(self, key: str) -> str | None:
        """The concept a name key points at, locally or in the lexicon (cached per document)."""
        if not key:
            return None
        cid = self.keys.get(key)
        if cid is not None or key in self.misses:
            return cid
        entry = self.lexicon.lookup(key) if self.lexicon is not None else None
        if entry is None:
            self.misses.add(key)
            return None
        canonical = entry.canonical or entry.name
        cid = name_key(canonical) or key
        if cid not in self.concepts:
            self.concepts[cid] = DocConcept(name=canonical, rank=-1)
        self.keys[key] = cid
        self.keys.setdefault(cid, cid)
        return cid

    def register(self, name: str, rank: int, alias: str | None = None) -> str | None:
        """Make a name the document uses findable; the strongest definitional form wins."""
        display = display_name(name)
        key = name_key(display)
        if not key or all(is_function(w) for w in key.split()) or is_generic(key):
            return None
        alias_key = name_key(alias) if alias else ""
        long_key = name_key(split_abbreviation(display)[0])
        cid = self.keys.get(key) or self.keys.get(long_key) or self.keys.get(alias_key)
        if cid is None:
            cid = self.lookup(key) or self.lookup(long_key)
            cid = cid or (self.lookup(alias_key) if alias_key else None)
        if cid is None:
            cid = key
            self.concepts[cid] = DocConcept(name=display, rank=rank)
        concept = self.concepts[cid]
        if 0 <= concept.rank < rank:
            concept.name, concept.rank = display, rank
        if alias and alias not in concept.aliases:
            concept.aliases.append(alias)
        for k in (key, long_key, alias_key):
            if k:
                self.keys.setdefault(k, cid)
                self._note_words(k)
        return cid

    def _note_words(self, key: str) -> None:
        words = key.split()
        self.local_words = max(self.local_words, len(words))
        self.first_words.add(words[0])

    def display(self, cid: str) -> str:
        return self.concepts[cid].name

    def aliases(self, cid: str) -> tuple[str, ...]:
        concept = self.concepts[cid]
        key = name_key(concept.name)
        return tuple(a for a in concept.aliases if name_key(a) != key)

    # -- terms the document defines --

    def _collect_terms(self, spans: list[tuple[int, int, bool]]) -> None:
        """Abbreviations and bold terms first: they are how a text defines its concepts."""
        for match in PAREN.finditer(self.text):
            self._abbreviation(match)
        bold_ids = []
        for match in BOLD.finditer(self.text):
            cid = self._bold(match.group(1) or match.group(2), match.end())
            if cid:
                bold_ids.append(cid)
        title_parts: list[str] = []
        opening = True
        for start, end, heading in spans:
            if not heading:
                opening = False
                continue
            line_start = self.text.rfind("\n", 0, start) + 1
            level = self.text[line_start:start].count("#")
            parts = self._heading_terms(self.text[start:end])
            # A chunk of a long document opens with its section's heading, at any level:
            # that heading is what the chunk is about, as a lesson's title is.
            if (level == 1 or (opening and not self.text[:line_start].strip())) and not title_parts:
                title_parts = parts or [""]
            opening = False
        if not title_parts:
            title_parts = self._heading_terms(self.title)
        self._choose_topic(title_parts, bold_ids)

    def _abbreviation(self, match: re.Match[str]) -> None:
        short = match.group(1).strip()
        if not any(c.isupper() for c in short):
            return
        words = self.text[max(0, match.start() - 160) : match.start()].split()
        for k in range(1, min(len(words), 8) + 1):
            chunk = [w.strip("*_`") for w in words[-k:]]
            if any(w[-1:] in ",.;:!?)" for w in chunk) or "(" in chunk[0]:
                return
            if is_function(chunk[0].lower()):
                continue
            long = " ".join(chunk)
            if looks_like_abbreviation(short, long):
                if short.endswith("s") and short[:-1].isupper() and len(short) > 2:
                    short = short[:-1]
                    head, _, last = long.rpartition(" ")
                    long = f"{head} {singular(last)}".strip() if last.islower() else long
                long = display_name(long)
                self.register(f"{long} ({short})", 3, alias=short)
                return

    def _bold(self, inner: str, end: int) -> str | None:
        inner = clean_display(inner)
        long, short = split_abbreviation(inner)
        if short:
            return self.register(f"{display_name(long)} ({short})", 3, alias=short)
        after = PAREN.match(self.text, end + (1 if self.text[end : end + 1] == " " else 0))
        if after and looks_like_abbreviation(after.group(1), inner):
            return self.register(f"{display_name(inner)} ({after.group(1)})", 3, after.group(1))
        if len(inner.split()) > 6 or len(inner) > 60 or not any(c.isalpha() for c in inner):
            return None
        return self.register(inner, 2)

    def _heading_terms(self, heading: str) -> list[str]:
        """Concept names a heading offers: "X and Y", "X: Y", "X with Y" name two."""
        found = []
        for part in HEADING_SPLIT.split(clean_display(heading)):
            cid = self._heading_part(part)
            if cid:
                found.append(cid)
        return found

    def _heading_part(self, part: str) -> str | None:
        words = part.split()
        if words and words[0].lower() in ARTICLES:
            words = words[1:]
            if len(words) == 1 and words[0].islower():
                return None  # "The objective", "The pipeline": a section, not a concept
        if not words:
            return None
        if len(words) > 2 and words[1].lower() == "of" and singular(words[0].lower()) in CONTAINERS:
            return None  # "Kinds of store"
        lows = [w.lower().strip("?!.,") for w in words]
        content = [w for w in lows if not is_function(w)]
        if (
            lows[0] in HEADING_OPENERS
            or lows[0] in PRONOUNS
            or any(w in PRONOUNS for w in lows)
            or not content
            or all(w in HEADING_SKIP or is_generic(w) for w in content)
            or (len(words) > 1 and lows[0].endswith("ing") and "-" not in lows[0])
            or len(words) > 7
        ):
            return None
        # "The Transformer Architecture" names the Transformer when the text knows it.
        while len(words) > 1 and is_generic(words[-1].lower()):
            shorter = " ".join(words[:-1])
            cid = self.keys.get(name_key(shorter)) or self.lookup(name_key(shorter))
            if cid:
                return cid
            words = words[:-1] if singular(words[-1].lower()) in GENERIC_HEADS else words
            if singular(words[-1].lower()) not in GENERIC_HEADS:
                break
        return self.register(sentence_case(words), 1)

    def _choose_topic(self, title_ids: list[str], bold_ids: list[str]) -> None:
        """What "this lesson" is about: a bold term the title names, else the title itself."""
        title_words = {w for cid in title_ids if cid for w in cid.split()}
        title_words |= {singular(w) for w in name_key(self.title).split()}
        for cid in bold_ids:
            if any(w in title_words and not is_function(w) for w in cid.split()):
                self.topic = cid
                break
        else:
            self.topic = next((c for c in title_ids if c), None)
        if not self.topic:
            return
        words = self.topic.split()
        # "AI agent" is often just "the agent"; "chain-of-thought prompting" just
        # "chain-of-thought". Only unambiguous shortenings of the topic are kept.
        shortenings = []
        if len(words) > 1 and all(w.upper() == w for w in self.display(self.topic).split()[:-1]):
            shortenings.append(words[-1])
        shorter = self.display(self.topic).split()[:-1]
        if shorter and ("-" in shorter[-1] or len(shorter) > 1):
            shortenings.append(name_key(" ".join(shorter)))
        for key in shortenings:
            if key and not is_generic(key) and key not in self.keys:
                self.keys[key] = self.topic
                self.weak.add(key)
                self._note_words(key)

    # -- sentences and mentions --

    def _sentence(self, index: int, start: int, end: int, heading: bool) -> Sent:
        toks = self._eponyms(tokenize(self.text, start, end))
        soft, comma = [True], [False]
        for prev, tok in zip(toks, toks[1:], strict=False):
            gap = self.text[prev.end : tok.start]
            soft.append(SOFT_GAP.fullmatch(gap) is not None)
            comma.append("," in gap)
        # A word right after "can", "will", "does not" is a verb, never part of a name.
        verbs = {
            k
            for k in range(1, len(toks))
            if soft[k]
            and (
                toks[k - 1].low in MODALS
                or (k > 1 and toks[k - 1].low == "not" and toks[k - 2].low in AUXILIARIES)
            )
        }
        sent = Sent(index, start, end, heading, tuple(toks), tuple(soft), tuple(comma), {}, verbs)
        self._find_mentions(sent)
        return sent

    def _eponyms(self, toks: list[Tok]) -> list[Tok]:
        """ "Dijkstra's algorithm" is one name; "the Transformer's input layer" is not."""
        out: list[Tok] = []
        k = 0
        while k < len(toks):
            tok = toks[k]
            if (
                k + 2 < len(toks)
                and toks[k + 1].low == "s"
                and self.text[tok.end : toks[k + 1].start] in ("'", "\u2019")
                and tok.text[:1].isupper()
                and not tok.text.isupper()
                and not toks[k + 2].func
                and self.lookup(gram_key([tok])) is None
            ):
                end = toks[k + 1].end
                text = self.text[tok.start : end]
                out.append(Tok(tok.start, end, text, text.lower(), (*tok.pieces, "s"), False))
                k += 2
                continue
            out.append(tok)
            k += 1
        return out

    def _may_start_name(self, tok: Tok) -> bool:
        """Without a lexicon only local names can match: skip words none of them starts with."""
        first = tok.pieces[0] if tok.pieces else ""
        return first in self.first_words or singular(first) in self.first_words

    def _find_mentions(self, s: Sent) -> None:
        """Known and local names in the sentence, longest match first, left to right."""
        toks, n, i = s.toks, len(s.toks), 0
        while i < n:
            if toks[i].func or (not self.use_lexicon and not self._may_start_name(toks[i])):
                i += 1
                continue
            stop = i + 1
            while stop < n and stop - i < self.max_words and s.soft[stop]:
                stop += 1
            hit = None
            for j in range(stop, i, -1):
                if toks[j - 1].func:
                    continue
                key = gram_key(toks[i:j])
                cid = self.lookup(key)
                if cid and key in self.weak and self._modified(s, i, j):
                    cid = None  # "LLM evaluation" is not "RAG evaluation"
                if cid:
                    hit = (j, cid)
                    break
            if hit:
                s.mentions[i] = hit
                i = hit[0]
            else:
                i += 1

    @staticmethod
    def _modified(s: Sent, i: int, j: int) -> bool:
        """Whether tokens i..j sit inside a longer run of content words."""
        prev = s.toks[i - 1] if i > 0 else None
        before = prev is not None and s.soft[i] and not prev.func and not is_gerund(prev)
        nxt = s.toks[j] if j < len(s.toks) else None
        after = nxt is not None and s.soft[j] and not nxt.func and nxt.low not in SUBJECT_VERBS
        return before or after
