"""Names to resolve against a graph of synthetic concept names, in classes whose right
answer is known (``bench resolve``). Pure Python: no database.

Known names (the answer is the concept whose name was changed):

- ``exact``: a name as written, or in lower case;
- ``typo``: one letter dropped or doubled inside a long word (``synthetic.typo``);
- ``variant``: a plural inside the name, a British spelling, or a compound written in
  two words ("Normalised sparse tokens search", "multi modal").

Unknown names (the answer is "new"), built like real new concepts: their words are
never the words of a known name in any order, plural or spelling.

- ``unknown_combo``: a new combination of the vocabulary's words (``concept_names`` with
  another seed);
- ``unknown_swap``: a known name with one word exchanged for another vocabulary word
  ("Dense token search" where only "Sparse token search" is known);
- ``unknown_new_word``: a known name with one word exchanged for a real word the
  vocabulary lacks ("Sparse token hashing"; three of them one ending from a vocabulary
  word: "ranked" / "ranker").

And one class reported apart, outside the unknown names' budget: ``lookalike``, a
name drawn like ``unknown_combo`` (known or not) with a vocabulary word exchanged for
a real word one edit from it ("Spare token search", "Casual router tuning"). Nothing in
the name tells it from a misspelling, so it is taken for one whenever the name it
looks misspelt from is known: the more names the graph holds, the more often. Every
resolver that forgives typos has this limit; the class shows its size.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from benchmarks.synthetic import ADJECTIVES, NOUNS, TAILS, concept_names, typo
from construction.resolve import spelling_form
from construction.text import name_key

KNOWN = ("exact", "typo", "variant")
UNKNOWN = ("unknown_combo", "unknown_swap", "unknown_new_word")
APART = ("lookalike",)
#: The share of each class in the stream (a construct run meets mostly known names).
MIX = (
    ("exact", 0.40),
    ("typo", 0.20),
    ("variant", 0.10),
    ("unknown_combo", 0.10),
    ("unknown_swap", 0.10),
    ("unknown_new_word", 0.05),
    ("lookalike", 0.05),
)
#: Vocabulary words and a real word one edit from each (a swap of two letters is one).
LOOKALIKES = {
    "sparse": "spare",
    "causal": "casual",
    "neural": "neutral",
    "token": "taken",
    "layer": "later",
    "router": "rooter",
}
#: Real words of the field that the synthetic vocabulary does not use.
NEW_WORDS = (
    "boosting",
    "bagging",
    "clustering",
    "hashing",
    "pooling",
    "masking",
    "scoring",
    "tagging",
    "matching",
    "mining",
    "forecasting",
    "segmentation",
    "detection",
    "tracking",
    "translation",
    "summarization",
    "transfer",
    "dropout",
    "transformer",
    "autoencoder",
    "perceptron",
    "tensor",
    "matrix",
    "lattice",
    "manifold",
    "heap",
    "trie",
    "crawler",
    "lexer",
    "profiler",
    "compiler",
    "variational",
    "symmetric",
    "orthogonal",
    "sparsified",
    # One edit from a vocabulary word ("ranker", "sampler", "router"): a name with one of
    # these reads as a misspelling of a known name, the limit this class measures.
    "ranked",
    "sampled",
    "routed",
)
_ROLES = (ADJECTIVES, NOUNS, TAILS)
# Compounds the vocabulary writes as one word, and where they split.
_COMPOUNDS = {
    "multimodal": 5,
    "autoregressive": 4,
    "bidirectional": 2,
    "unsupervised": 2,
    "tokenizer": 5,
}


@dataclass(frozen=True)
class Probe:
    kind: str
    name: str
    answer: int | None  # the position of the known name meant, or None for a new one


def variant(name: str, rng: random.Random) -> str:
    """``name`` with a plural inside it, a British spelling, or a compound split in two."""
    words = name.split()
    changes = []
    for i, word in enumerate(words):
        low = word.lower()
        if "iz" in low[-8:]:
            at = low.rindex("iz")
            changes.append((i, word[:at] + "is" + word[at + 2 :]))
        if low in _COMPOUNDS:
            cut = _COMPOUNDS[low]
            changes.append(
                (
                    i,
                    f"{word[:cut]}-{word[cut:]}"
                    if rng.random() < 0.5
                    else f"{word[:cut]} {word[cut:]}",
                )
            )
    for i in range(len(words) - 1):
        if words[i].lower() in NOUNS and not words[i].endswith("s"):
            changes.append((i, words[i] + "s"))
    i, changed = rng.choice(changes)
    words[i] = changed
    return " ".join(words)


def _swap(name: str, rng: random.Random, pool: Iterable[str] | None) -> str:
    """``name`` with one word exchanged: for another word of its role, or from ``pool``."""
    words = name.lower().split()
    i = rng.randrange(len(words))
    role = _ROLES[0] if i < len(words) - 2 else _ROLES[3 - (len(words) - i)]
    choices = [w for w in (pool or role) if w != words[i]]
    words[i] = rng.choice(choices)
    text = " ".join(words)
    return text[0].upper() + text[1:]


def resolution_probes(names: list[str], count: int, *, seed: int = 11) -> list[Probe]:
    """``count`` probes in ``MIX``'s shares, shuffled, against a graph of ``names``.

    A probe whose class says "known" but whose key another concept has, or whose class
    says "unknown" but whose words some known name has, is drawn again, so every probe's
    answer is right by construction.
    """
    rng = random.Random(seed)
    keys = {name_key(n): i for i, n in enumerate(names)}
    forms = {spelling_form(k) for k in keys}
    fresh = iter(concept_names(len(names) + 20 * count, seed=seed + 1)[len(names) :])
    probes: list[Probe] = []
    for kind, share in MIX:
        made = 0
        while made < round(count * share):
            at = rng.randrange(len(names))
            known = names[at]
            if kind == "exact":
                probe = Probe(kind, known if rng.random() < 0.5 else known.lower(), at)
            elif kind == "typo":
                probe = Probe(kind, typo(known, rng), at)
            elif kind == "variant":
                probe = Probe(kind, variant(known, rng), at)
            elif kind == "unknown_combo":
                probe = Probe(kind, next(fresh), None)
            elif kind == "unknown_swap":
                probe = Probe(kind, _swap(known, rng, None), None)
            elif kind == "unknown_new_word":
                probe = Probe(kind, _swap(known, rng, NEW_WORDS), None)
            else:
                words = next(fresh).lower().split()
                at_word = [i for i, w in enumerate(words) if w in LOOKALIKES]
                if not at_word:
                    continue
                i = rng.choice(at_word)
                words[i] = LOOKALIKES[words[i]]
                probe = Probe(kind, " ".join(words).capitalize(), None)
            key = name_key(probe.name)
            if probe.answer is None and spelling_form(key) in forms:
                continue
            if probe.answer is not None and keys.get(key, at) != at:
                continue
            probes.append(probe)
            made += 1
    rng.shuffle(probes)
    return probes
