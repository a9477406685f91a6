"""Relation labels by meaning, shared by VERIFY and ontology discovery.

An extractor names relations freely ("is an alternative to", "used for", "can replace").
``normalise_label`` turns a label into the key of its meaning: snake_case, no leading
auxiliaries or articles, one inflection per verb, and phrasings merged through a small
hand-written synonym table. VERIFY matches a candidate to the vocabulary by that meaning
when its words differ, and discovery leaves out labels whose meaning the vocabulary has,
so the two agree on which labels are known.
"""

from __future__ import annotations

from .keys import relation_key

__all__ = ["SYNONYMS", "normalise_label"]

# Words that carry no relation meaning at the start of a label ("is_an_alternative_to",
# "can_replace", "are_often_used_for"). Articles go wherever they are.
LEADING = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "can",
        "could",
        "may",
        "might",
        "will",
        "would",
        "should",
        "must",
        "often",
        "usually",
        "typically",
        "generally",
        "commonly",
        "sometimes",
        "also",
        "directly",
    }
)
ARTICLES = frozenset({"a", "an", "the"})
# A negated label states that a relation does not hold: it is not that relation.
NEGATIONS = frozenset({"not", "never", "no", "cannot", "isn", "doesn", "don", "aren", "without"})
PREPOSITIONS = frozenset(
    {"to", "of", "for", "from", "with", "on", "in", "by", "as", "into", "over", "against"}
)

# Verbs whose forms are folded into one ("replace", "replaced", "replacing" -> "replaces").
# Only known verbs: guessing the stem of an unknown word ("focus" / "focuses") is how
# nouns become verbs.
VERBS = frozenset(
    {
        "address",
        "affect",
        "alleviate",
        "allow",
        "approximate",
        "boost",
        "cause",
        "combine",
        "compete",
        "complement",
        "compress",
        "conflict",
        "consist",
        "constrain",
        "contain",
        "control",
        "counter",
        "decrease",
        "define",
        "degrade",
        "depend",
        "derive",
        "describe",
        "detect",
        "drive",
        "employ",
        "enable",
        "encode",
        "enhance",
        "evaluate",
        "evolve",
        "extend",
        "feed",
        "follow",
        "generalize",
        "generate",
        "govern",
        "guard",
        "improve",
        "include",
        "increase",
        "influence",
        "inherit",
        "implement",
        "limit",
        "leverage",
        "lower",
        "measure",
        "mimic",
        "mitigate",
        "need",
        "obsolete",
        "optimize",
        "outperform",
        "power",
        "precede",
        "predict",
        "prevent",
        "produce",
        "protect",
        "reduce",
        "refine",
        "rely",
        "replace",
        "represent",
        "require",
        "resemble",
        "retrieve",
        "solve",
        "specialize",
        "speed",
        "substitute",
        "succeed",
        "supersede",
        "support",
        "tackle",
        "trade",
        "train",
        "underlie",
        "use",
        "utilize",
        "validate",
        "verify",
        "worsen",
    }
)
# Nouns that head a relation label, with the preposition they take when the label is the
# bare noun ("alternative" -> "alternative_to").
NOUNS = {
    "alternative": "to",
    "prerequisite": "for",
    "example": "of",
    "instance": "of",
    "variant": "of",
    "kind": "of",
    "type": "of",
    "component": "of",
    "subset": "of",
    "extension": "of",
    "generalization": "of",
    "specialization": "of",
    "precursor": "to",
    "successor": "of",
    "predecessor": "of",
    "part": "of",
    "substitute": "for",
    "counterpart": "of",
    "complement": "to",
}
IRREGULAR = {"underlies": "underlie", "underlay": "underlie", "fed": "feed", "drove": "drive"}

# Merging by meaning. Each entry folds a normalised phrasing into the key of its meaning,
# keeping its direction (a phrasing that reverses the roles, "is replaced by", is not
# listed: it keeps its own key). Meanings are kept apart when the reviewer would read them
# differently:
# - replaces (one concept takes the other's place, an ordering in time) is not
#   alternative_to (either may be chosen, no order);
# - mitigates (lessens a risk or a harm) is not reduces (lowers a quantity: latency,
#   memory, cost): their targets are of different kinds, so one relation would mix
#   "guardrails mitigate prompt injection" with "quantization reduces memory";
# - depends_on (needs the other to work) takes "requires" and "relies on", but not
#   "uses" (may use the other, could do without it).
SYNONYMS = {
    # alternatives and likeness (symmetric)
    "alternative_for": "alternative_to",
    "substitute_for": "alternative_to",
    "interchangeable_with": "alternative_to",
    "option_instead_of": "alternative_to",
    "similar": "similar_to",
    "resembles": "similar_to",
    "akin_to": "similar_to",
    "analogous_to": "similar_to",
    "like": "similar_to",
    "comparable_to": "similar_to",
    "same_as": "equivalent_to",
    "identical_to": "equivalent_to",
    "equal_to": "equivalent_to",
    "equivalent": "equivalent_to",
    "synonym_of": "equivalent_to",
    "compared_to": "compared_with",
    "compares_with": "compared_with",
    "compares_to": "compared_with",
    "versus": "compared_with",
    "vs": "compared_with",
    "complementary_to": "complements",
    "complement_to": "complements",
    "competes_against": "competes_with",
    "combines_with": "combined_with",
    "used_with": "combined_with",
    "used_together_with": "combined_with",
    "paired_with": "combined_with",
    "works_with": "combined_with",
    "trades_off": "trades_off_against",
    "trades_off_with": "trades_off_against",
    "trade_off_with": "trades_off_against",
    "in_tension_with": "trades_off_against",
    # orderings (directed, acyclic)
    "supersedes": "replaces",
    "obsoletes": "replaces",
    "takes_place_of": "replaces",
    "comes_before": "precedes",
    "prior_to": "precedes",
    "followed_by": "precedes",
    "succeeded_by": "precedes",
    "predecessor_of": "precedes",
    "comes_after": "follows",
    "successor_of": "follows",
    "succeeds": "follows",
    "requires": "depends_on",
    "relies_on": "depends_on",
    "needs": "depends_on",
    "dependent_on": "depends_on",
    "derives_from": "derived_from",
    "evolved_from": "derived_from",
    "evolves_from": "derived_from",
    "descended_from": "derived_from",
    "inherits_from": "derived_from",
    "originates_from": "derived_from",
    "extension_of": "extends",
    "kind_of": "kind_of",
    "type_of": "kind_of",
    "form_of": "kind_of",
    "subclass_of": "kind_of",
    "subtype_of": "kind_of",
    "category_of": "kind_of",
    "is_a": "kind_of",
    "instance_of": "example_of",
    "case_of": "example_of",
    "special_case_of": "example_of",
    "component_of": "part_of",
    "a_part_of": "part_of",
    "belongs_to": "part_of",
    "subset_of": "part_of",
    # effects (directed)
    "alleviates": "mitigates",
    "guards_against": "mitigates",
    "protects_against": "mitigates",
    "counters": "mitigates",
    "decreases": "reduces",
    "lowers": "reduces",
    "cuts": "reduces",
    "enhances": "improves",
    "boosts": "improves",
    "allows": "enables",
    "makes_possible": "enables",
    "leads_to": "causes",
    "results_in": "causes",
    "gives_rise_to": "causes",
    "employs": "uses",
    "utilizes": "uses",
    "leverages": "uses",
    "makes_use_of": "uses",
    "addresses": "solves",
    "tackles": "solves",
    # phrasings of the starting vocabulary: skipped when the vocabulary has them
    "builds_upon": "builds_on",
    "built_on": "builds_on",
    "built_upon": "builds_on",
    "based_on": "builds_on",
    "in_contrast_to": "contrasts_with",
    "in_contrast_with": "contrasts_with",
    "contrasted_with": "contrasts_with",
    "opposed_to": "contrasts_with",
    "related": "related_to",
    "relates_to": "related_to",
    "associated_with": "related_to",
    "connected_to": "related_to",
    "linked_to": "related_to",
    "applied_to": "applies_to",
    "used_for": "applies_to",
    "used_in": "applies_to",
    "required_for": "prerequisite_for",
    "needed_for": "prerequisite_for",
    "necessary_for": "prerequisite_for",
    "foundation_for": "prerequisite_for",
    "foundation_of": "prerequisite_for",
}


def _third_person(lemma: str) -> str:
    if lemma.endswith(("s", "sh", "ch", "x", "z", "o")):
        return lemma + "es"
    if lemma.endswith("y") and len(lemma) > 2 and lemma[-2] not in "aeiou":
        return lemma[:-1] + "ies"
    return lemma + "s"


def _lemma(word: str) -> tuple[str, bool] | None:
    """(lemma, is a participle) for a form of a known verb, else None."""
    if word in IRREGULAR:
        return IRREGULAR[word], word.endswith("d")
    if word in VERBS:
        return word, False
    forms: list[tuple[str, bool]] = []
    if word.endswith("ies"):
        forms.append((word[:-3] + "y", False))
    if word.endswith("es"):
        forms.append((word[:-2], False))
    if word.endswith("s"):
        forms.append((word[:-1], False))
    if word.endswith("ied"):
        forms.append((word[:-3] + "y", True))
    if word.endswith("ed"):
        forms += [(word[:-1], True), (word[:-2], True)]
        if len(word) > 4 and word[-3] == word[-4]:
            forms.append((word[:-3], True))
    if word.endswith("ing"):
        forms += [(word[:-3], False), (word[:-3] + "e", False)]
        if len(word) > 5 and word[-4] == word[-5]:
            forms.append((word[:-4], False))
    for lemma, participle in forms:
        if lemma in VERBS:
            return lemma, participle
    return None


def normalise_label(label: str) -> str:
    """The meaning key of a raw relation label; "" when it names no usable relation.

    "is an alternative to", "an alternative to", "Alternatives" -> "alternative_to";
    "replace", "replaced", "can replace" -> "replaces"; "is replaced by" stays
    "replaced_by" (the roles are swapped, so it is another relation).
    """
    key = relation_key(label)
    if not key:
        return ""
    if key in SYNONYMS:  # "is_a" must not lose both of its words below
        return SYNONYMS[key]
    tokens = key.split("_")
    if any(t in NEGATIONS for t in tokens):
        return ""
    while len(tokens) > 1 and tokens[0] in LEADING:
        tokens = tokens[1:]
    tokens = [t for t in tokens if t not in ARTICLES]
    if not tokens or tokens[0] in LEADING:
        return ""
    head, rest = tokens[0], tokens[1:]
    singular = head[:-1] if head.endswith("s") and head[:-1] in NOUNS else head
    found = _lemma(head)
    if singular in NOUNS and (not rest or rest[0] in PREPOSITIONS):
        # A noun heads it ("alternatives to", "a prerequisite"): singular, with its
        # preposition when it is bare.
        head = singular
        if not rest:
            rest = [NOUNS[head]]
    elif found is not None:
        lemma, participle = found
        # "derived from", "replaced by", "used for": a participle before a preposition
        # is adjectival or passive, and a passive swaps the roles; left as it is.
        if not (participle and rest and rest[0] in PREPOSITIONS) and not (rest and rest[0] == "of"):
            head = _third_person(lemma)
    key = "_".join([head, *rest])
    return SYNONYMS.get(key, key)
