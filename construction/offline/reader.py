"""The offline extractor: cues found in each sentence become ranked candidate edges.

``Reader`` is the last layer over ``ArgumentFinder`` and ``DocumentNames``: for each
sentence it finds the cues, blocks their words from being arguments, fills both sides and
records a raw candidate with its confidence (lowered when hedged, dropped when negated).
``OfflineExtractor.extract`` keeps the best ``max_edges`` distinct edges, each quoting its
sentence verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..protocols import Lexicon
from ..text import ARTICLES, clean_display, name_key
from ..types import Candidate, ConceptMention, Extraction, LLMUsage, RelationSpec, SourceDoc
from .arguments import ArgumentFinder
from .cues import (
    BEFORE,
    BUILT_IN_SYMMETRIC,
    COMPILED_CUES,
    DISCOVERY,
    HEDGE,
    KNOW,
    NEGATION,
    SLOTS,
    SPACE_OR_APOSTROPHE,
    TO_GRASP,
    Cue,
    compile_cues,
    verb_cue,
)
from .lexicon import ASIDE_STARTS, COPULAS, LEAD_WORDS
from .tokens import Arg, Sent, is_function

# A defining clause after a name ("X is a ..."), for a concept's description.
DEFINITION = re.compile(
    r"(?:\s*\([^()]{1,40}\))?[*_`]*\s+(?:is|are|refers\s+to)\s+(?:a|an|the|one)\s+[^,;:()]+",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Raw:
    """A candidate before ranking, deduplication and naming."""

    source: str
    relation: str
    target: str
    confidence: float
    position: int
    sentence: Sent
    cue: str
    span: tuple[int, int]


class OfflineExtractor:
    """Rule-based READ: deterministic, fast, no network."""

    name = "rules"
    model = "rules-v2"
    # Cheap and local: callers may run it inside a transaction and need not cache it.
    local = True

    def extract(
        self,
        doc: SourceDoc,
        *,
        vocabulary: Sequence[RelationSpec],
        lexicon: Lexicon,
        max_edges: int,
    ) -> Extraction:
        reader = Reader(doc, lexicon)
        raws = reader.read(vocabulary)
        candidates, used = _select(reader, raws, vocabulary, max_edges)
        concepts = tuple(
            ConceptMention(
                name=reader.display(cid),
                aliases=reader.aliases(cid),
                description=reader.description(cid),
            )
            for cid in used
        )
        return Extraction(
            concepts=concepts,
            candidates=candidates,
            usage=LLMUsage(),
            extractor=self.name,
            model=self.model,
        )


def _select(
    reader: Reader, raws: list[Raw], vocabulary: Sequence[RelationSpec], max_edges: int
) -> tuple[tuple[Candidate, ...], list[str]]:
    """Best first, one candidate per edge, at most ``max_edges``; and the endpoints used."""
    symmetric = {s.key for s in vocabulary if s.symmetric} | BUILT_IN_SYMMETRIC
    allowed = {s.key for s in vocabulary} | DISCOVERY
    seen: set[tuple[str, str, str]] = set()
    out: list[Candidate] = []
    used: list[str] = []
    for raw in sorted(raws, key=lambda r: (-r.confidence, r.position)):
        if len(out) >= max(0, max_edges):
            break
        if raw.relation not in allowed or raw.source == raw.target:
            continue
        source, target = reader.display(raw.source), reader.display(raw.target)
        a, b = name_key(source), name_key(target)
        key = (
            (min(a, b), raw.relation, max(a, b))
            if raw.relation in symmetric
            else (a, raw.relation, b)
        )
        if a == b or key in seen:
            continue
        seen.add(key)
        out.append(
            Candidate(
                source=source,
                target=target,
                relation=raw.relation,
                confidence=raw.confidence,
                reason=reader.reason(raw),
                evidence=reader.text[raw.sentence.start : raw.sentence.end],
            )
        )
        used.extend(c for c in (raw.source, raw.target) if c not in used)
    return tuple(out), used


class Reader(ArgumentFinder):
    """Everything one document teaches the extractor: its concepts, sentences and cues."""

    def read(self, vocabulary: Sequence[RelationSpec]) -> list[Raw]:
        cues = COMPILED_CUES + compile_cues([c for c in map(verb_cue, vocabulary) if c])
        raws: list[Raw] = []
        for s in self.sents:
            if not s.toks:
                continue
            low = self.text[s.start : s.end].lower()
            found = []
            for cue, words, pattern in cues:
                if not any(word in low for word in words):
                    continue
                for match in pattern.finditer(self.text, s.start, s.end):
                    hit = self._lead(s, cue, match)
                    if hit:
                        found.append((cue, hit))
            know = [m.span() for m in KNOW.finditer(self.text, s.start, s.end)]
            before = TO_GRASP.match(self.text, s.start, s.end) or BEFORE.search(
                self.text, s.start, s.end
            )
            spans = [hit for _, hit in found] + know + ([before.span()] if before else [])
            for lo, hi in spans:
                s.blocked.update(k for k, t in enumerate(s.toks) if lo <= t.start < hi)
            for cue, hit in found:
                raws.extend(self._cue(s, cue, hit))
            if know:
                raws.extend(self._know(s, know, before.span() if before else None))
            for relation, word, slot, confidence in SLOTS:
                if word not in low:
                    continue
                for match in slot.finditer(self.text, s.start, s.end):
                    raws.extend(self._slot(s, relation, confidence, match))
        return raws

    def _lead(self, s: Sent, cue: Cue, match: re.Match[str]) -> tuple[int, int] | None:
        """The cue's span widened leftwards over "is not often", or None if it needs a copula."""
        k = self.tok_at(s, match.start())
        if k == len(s.toks) or s.toks[k].start != match.start():
            return None  # inside a word: "non-requires" is not "requires"
        if cue.shape != "infix":
            return match.span()
        j, copula, adverb = k, False, False
        while j > 0 and SPACE_OR_APOSTROPHE.fullmatch(
            self.text[s.toks[j - 1].end : s.toks[j].start]
        ):
            low = s.toks[j - 1].low
            is_adverb = low.endswith("ly") and is_function(low)
            if low not in LEAD_WORDS and not is_adverb:
                break
            copula, adverb = copula or low in COPULAS, adverb or is_adverb
            j -= 1
        # "most commonly used for" needs no copula; "are replaced with" is passive.
        if (cue.copula and not (copula or adverb)) or (cue.active and copula):
            return None
        return (s.toks[j].start if j < k else match.start()), match.end()

    def tok_at(self, s: Sent, char: int) -> int:
        """Index of the first token starting at or after a character offset."""
        for k, tok in enumerate(s.toks):
            if tok.start >= char:
                return k
        return len(s.toks)

    def _cue(self, s: Sent, cue: Cue, hit: tuple[int, int]) -> list[Raw]:
        lo, hi = self.tok_at(s, hit[0]), self.tok_at(s, hit[1])
        if cue.shape in ("contrast", "whereas"):
            pairs = self._contrast(s, cue, lo, hi)
        elif cue.shape == "see_also":
            topic = [Arg(self.topic, 0, 0)] if self.topic else []
            pairs = [(a, b) for a in topic for b in self.pick_right(s, hi)]
        else:
            if self._negated(hit):
                return []
            left = self.pick_left(s, lo, plural=cue.plural)
            right = self.pick_right(s, hi)
            pairs = []
            if left and right:
                pairs = [(left[0], b) for b in right] + [(a, right[0]) for a in left[1:]]
            if not cue.forward:
                pairs = [(b, a) for a, b in pairs]
        hedged = HEDGE.search(self.text[max(s.start, hit[0] - 30) : hit[1]])
        confidence = cue.confidence - (0.05 if hedged else 0.0)
        return [self._raw(s, cue.relation, a, b, confidence, hit) for a, b in pairs]

    def _negated(self, hit: tuple[int, int]) -> bool:
        """ "is not a prerequisite for", "does not require", "requires no"."""
        after = self.text[hit[1] : hit[1] + 4].lower()
        return NEGATION.search(self.text[hit[0] : hit[1]]) is not None or after.startswith("no ")

    def _contrast(self, s: Sent, cue: Cue, lo: int, hi: int) -> list[tuple[Arg, Arg]]:
        """ "Unlike A, B ..." / "Whereas A ..., B ..." / "B ..., unlike A ..."."""
        floor = self.clause_start(s, lo) if lo else 0
        opening = all(t.func for t in s.toks[floor:lo]) and not any(
            s.comma[j] for j in range(floor + 1, lo)
        )
        if not opening and not s.comma[lo] and not s.toks[lo].low.startswith(("as", "whereas")):
            return []  # "the query is compared with every key" compares, it does not contrast
        comma = next((j for j in range(hi + 1, len(s.toks)) if s.comma[j]), None)
        first_hi = comma if comma is not None else len(s.toks)
        if cue.shape == "whereas":
            a = self.subject(s, hi, first_hi)
            a_list = [a] if a else []
        else:
            a_list = self.pick_right(s, hi, first_hi)
        if not a_list:
            return []
        if opening:
            if comma is None:
                return []
            k = comma
            while k < len(s.toks) and s.toks[k].low in ASIDE_STARTS - ARTICLES:
                k = next((j for j in range(k + 1, len(s.toks)) if s.comma[j]), len(s.toks))
            b = self.subject(s, k, self.segment_end(s, k, len(s.toks)) or len(s.toks))
        else:
            b = self.subject(s, floor, lo)
            if b is None and lo and s.toks[lo - 1].low in ("it", "this"):
                b = self.antecedent(s, lo - 1)
        if b is None:
            return []
        return [(x, b) for x in a_list]

    def _know(
        self, s: Sent, know: list[tuple[int, int]], before: tuple[int, int] | None
    ) -> list[Raw]:
        """ "Before learning B you should understand A" and "make sure you know A first"."""
        raws = []
        target: Arg | None = None
        if before:
            got = self.pick_right(s, self.tok_at(s, before[1]))
            target = got[0] if got else None
        elif self.topic:
            target = Arg(self.topic, 0, 0, 0.05)  # "... first": first before this lesson
        for hit in know:
            if target is None or self._negated(hit):
                continue
            for a in self.pick_right(s, self.tok_at(s, hit[1])):
                raws.append(self._raw(s, "prerequisite", a, target, 0.8, hit))
        return raws

    def _slot(self, s: Sent, relation: str, confidence: float, match: re.Match[str]) -> list[Raw]:
        if self._negated(match.span()):
            return []
        a_side, b_side = (
            self.pick_right(s, self.tok_at(s, match.start(g)), self.tok_at(s, match.end(g)))
            for g in ("a", "b")
        )
        if not b_side:
            return []
        return [self._raw(s, relation, a, b_side[0], confidence, match.span()) for a in a_side]

    def _raw(
        self, s: Sent, relation: str, a: Arg, b: Arg, confidence: float, hit: tuple[int, int]
    ) -> Raw:
        penalty = min(0.3, a.penalty + b.penalty)
        value = round(min(0.99, max(0.05, confidence - penalty)), 2)
        spans = [(x.lo, x.hi) for x in (a, b) if x.hi > x.lo] + [hit]
        lo, hi = min(x for x, _ in spans), max(y for _, y in spans)
        cue = self.text[hit[0] : hit[1]]
        return Raw(a.cid, relation, b.cid, value, hit[0], s, cue, (lo, hi))

    # -- reporting --

    def reason(self, raw: Raw) -> str:
        snippet = " ".join(self.text[raw.span[0] : raw.span[1]].split()).replace("**", "")
        if len(snippet) > 140:
            snippet = snippet[:137].rstrip() + "..."
        cue = " ".join(raw.cue.split())
        return f'The text says "{snippet}" ("{cue}").'

    def description(self, cid: str) -> str:
        """A defining clause ("X is a ...") when the text has one, else empty."""
        for s in self.sents:
            if s.heading or not s.toks:
                continue
            mention = s.mentions.get(0) or (
                s.mentions.get(1) if s.toks[0].low in ARTICLES else None
            )
            if not mention or mention[1] != cid:
                continue
            start = s.toks[0].start
            tail = DEFINITION.match(self.text, s.toks[mention[0] - 1].end, s.end)
            if tail:
                return clean_display(self.text[start : tail.end()])[:200]
        return ""
