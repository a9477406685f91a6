"""The phrasings that state a relation, as patterns the reader looks for in a sentence.

``CUES`` are infix phrasings ("A is a prerequisite for B") and contrasts ("unlike A, B");
``verb_cue`` makes one from a relation type's own verb, so a curator's new type is read
without code. ``KNOW``, ``TO_GRASP`` and ``BEFORE`` are prerequisites stated about the
reader ("before learning B you should understand A"); ``SLOTS`` are phrasings whose two
sides are named groups. ``NEGATION`` and ``HEDGE`` drop or weaken a cue.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..types import RelationSpec

SPACE_OR_APOSTROPHE = re.compile(r"[\s'\u2019]*")
NEGATION = re.compile(
    r"\b(?:not|never|no\s+longer|cannot|neither|nor)\b|n['\u2019]t\b", re.IGNORECASE
)
HEDGE = re.compile(
    r"\b(?:may|might|can|could|sometimes|often|occasionally|possibly|perhaps|arguably)\b",
    re.IGNORECASE,
)

_DET = r"(?:(?:a|an|the|one|another)\s+)"
_ADJ = r"(?:[\w-]+\s+)?"

FWD, REV = True, False


@dataclass(frozen=True)
class Cue:
    """A phrasing that states a relation; ``forward``: the left side is the source."""

    relation: str
    forward: bool
    confidence: float
    words: str  # one of these must occur in the sentence: a cheap filter before the regex
    pattern: str  # starts at the keyword
    shape: str = "infix"  # infix | contrast | whereas | see_also
    plural: bool = False  # the left side may be a coordination: "A and B are parts of C"
    copula: bool = False  # needs "is" (or an adverb) first: "is part of", not "the part of"
    active: bool = False  # a copula first makes it passive: "are replaced with" is not it


_PART = (
    r"part|component|stage|step|layer|element|module|building\s+block|ingredient|piece|phase|"
    r"sub-?field|branch|subtask"
)
_PARTS = (
    r"parts|components|stages|steps|layers|elements|modules|building\s+blocks|ingredients|"
    r"pieces|phases"
)
_PART_WORDS = "part component stage step layer element module block ingredient piece phase"
_KNOWLEDGE = (
    r"(?:(?:some\s+|basic\s+|prior\s+)?(?:familiarity|knowledge|experience|understanding)\s+"
    r"(?:with|of)\s+|(?:that\s+)?you\s+(?:already\s+)?(?:know|understand|are\s+familiar\s+with)\s+)?"
)
CUES: tuple[Cue, ...] = (
    # prerequisite: "A is a prerequisite for B", "B requires A", "B relies on A", ...
    Cue(
        "prerequisite",
        FWD,
        0.9,
        "prerequisite",
        rf"(?:{_DET}|one\s+of\s+the\s+)?{_ADJ}prerequisites?\s+(?:for|of|to)\s+",
        copula=True,
    ),
    Cue(
        "prerequisite",
        FWD,
        0.8,
        "required needed necessary essential indispensable",
        r"(?:required|needed|necessary|essential|indispensable)\s+"
        r"(?:for|before|to\s+(?:understand|follow|learn|use|build|implement))\s+",
        copula=True,
    ),
    Cue(
        "prerequisite",
        REV,
        0.8,
        "require presuppose",
        r"(?:requires?|presupposes?)\s+",
        plural=True,
    ),
    Cue("prerequisite", REV, 0.8, "depend", r"(?:depends?|depended)\s+(?:up)?on\s+", plural=True),
    Cue(
        "prerequisite",
        REV,
        0.75,
        "relies rely relied",
        r"(?:relies|rely|relied)\s+(?:up)?on\s+",
        plural=True,
    ),
    Cue("prerequisite", REV, 0.75, "assume", rf"assumes?\s+{_KNOWLEDGE}"),
    # builds_on: "A builds on B", "A is built on top of B", "A extends B", ...
    Cue(
        "builds_on",
        FWD,
        0.85,
        "built constructed layered",
        r"(?:built|constructed|layered)\s+(?:up)?on(?:\s+top\s+of)?\s+",
        copula=True,
    ),
    Cue("builds_on", FWD, 0.85, "build", r"builds?\s+(?:up)?on(?:\s+top\s+of)?\s+", plural=True),
    Cue("builds_on", FWD, 0.75, "based", r"based\s+(?:on|upon)\s+", copula=True),
    Cue("builds_on", FWD, 0.7, "derived adapted", r"(?:derived|adapted)\s+from\s+", copula=True),
    Cue("builds_on", FWD, 0.7, "extend generali", r"(?:extends?|generali[sz]es|generali[sz]e)\s+"),
    Cue(
        "builds_on",
        FWD,
        0.75,
        "extension generali refinement",
        rf"{_DET}?{_ADJ}(?:extension|generali[sz]ation|refinement)\s+of\s+",
        copula=True,
    ),
    # part_of: "A is a stage of B", "A and C are components of B", "B consists of A", ...
    Cue(
        "part_of",
        FWD,
        0.85,
        _PART_WORDS + " field branch subtask",
        rf"(?:{_DET}{_ADJ})?(?:{_PART})\s+of\s+",
        copula=True,
    ),
    Cue(
        "part_of",
        FWD,
        0.85,
        _PART_WORDS,
        rf"(?:(?:the|all|both|two|three|several)\s+)?{_ADJ}(?:{_PARTS})\s+of\s+",
        plural=True,
        copula=True,
    ),
    Cue(
        "part_of",
        REV,
        0.8,
        "made composed comprised",
        r"(?:made\s+up|composed|comprised)\s+of\s+",
        copula=True,
    ),
    Cue("part_of", REV, 0.8, "consist compris", r"(?:(?:consists?|consisted)\s+of|comprises?)\s+"),
    # contrasts_with: "unlike A, B", "whereas A ..., B ...", "A versus B", ...
    Cue(
        "contrasts_with",
        FWD,
        0.8,
        "unlike contrast opposed contrary",
        r"\b(?:unlike|in\s+contrast\s+(?:to|with)|as\s+opposed\s+to|contrary\s+to)\s+",
        shape="contrast",
    ),
    Cue("contrasts_with", FWD, 0.7, "compared", r"\bcompared\s+(?:with|to)\s+", shape="contrast"),
    Cue("contrasts_with", FWD, 0.7, "whereas", r"\bwhereas\s+", shape="whereas"),
    Cue("contrasts_with", FWD, 0.7, "versus vs", r"(?<=\s)(?:versus|vs\.?)\s+"),
    Cue("contrasts_with", FWD, 0.75, "differ", r"(?:differs?|differed)\s+from\s+", plural=True),
    Cue(
        "contrasts_with",
        FWD,
        0.75,
        "different distinct",
        r"(?:different|distinct)\s+from\s+",
        plural=True,
        copula=True,
    ),
    Cue("contrasts_with", FWD, 0.75, "contrast", r"contrasts?\s+with\s+", plural=True),
    # applies_to: "A is applied to B", "A is used for B", "A is useful for B", ...
    Cue("applies_to", FWD, 0.8, "applied", r"applied\s+(?:to|in)\s+", copula=True),
    Cue(
        "applies_to", FWD, 0.75, "used employed", r"(?:used|employed)\s+(?:for|in)\s+", copula=True
    ),
    Cue("applies_to", FWD, 0.7, "apply applies", r"appl(?:y|ies)\s+to\s+", plural=True),
    Cue(
        "applies_to",
        FWD,
        0.7,
        "useful helpful valuable",
        r"(?:useful|helpful|valuable)\s+for\s+",
        copula=True,
    ),
    # related: "A is closely related to B", "A is associated with B", "see also B", ...
    Cue(
        "related",
        FWD,
        0.7,
        "related connected linked tied relevant",
        r"(?:related|connected|linked|tied|relevant)\s+(?:to|with)\s+",
        plural=True,
        copula=True,
    ),
    Cue("related", FWD, 0.65, "associated", r"associated\s+with\s+", copula=True),
    Cue("related", FWD, 0.65, "relate", r"relates?\s+to\s+"),
    Cue("related", FWD, 0.6, "see also", r"\bsee\s+also:?\s+", shape="see_also"),
    # Outside the starting vocabulary: ranked low, dropped later as unknown relations, and
    # counted there for ontology discovery.
    Cue(
        "alternative_to",
        FWD,
        0.6,
        "alternative",
        rf"{_DET}?{_ADJ}alternatives?\s+to\s+",
        copula=True,
    ),
    Cue(
        "replaces",
        FWD,
        0.6,
        "replace supersede",
        r"(?:replaces?|supersedes?|replaced|superseded)\s+(?!by\b|with\b)",
        active=True,
    ),
    Cue(
        "replaces",
        FWD,
        0.6,
        "replacement substitute",
        rf"{_DET}?{_ADJ}(?:replacement|substitute)\s+for\s+",
        copula=True,
    ),
    Cue(
        "mitigates",
        FWD,
        0.5,
        "mitigate alleviate reduce",
        r"(?:mitigates?|alleviates?|reduces?)\s+",
    ),
    Cue("causes", FWD, 0.5, "cause lead result", r"(?:causes?|leads?\s+to|results?\s+in)\s+"),
    Cue(
        "evaluated_with",
        FWD,
        0.55,
        "evaluated measured assessed benchmarked",
        r"(?:evaluated|measured|assessed|benchmarked)\s+(?:with|using)\s+",
        copula=True,
    ),
)
DISCOVERY = frozenset({"alternative_to", "replaces", "mitigates", "causes", "evaluated_with"})
BUILT_IN_SYMMETRIC = frozenset({"contrasts_with", "related", "alternative_to"})

CompiledCue = tuple[Cue, tuple[str, ...], re.Pattern[str]]


def compile_cues(cues: Sequence[Cue]) -> tuple[CompiledCue, ...]:
    return tuple(
        (cue, tuple(cue.words.split()), re.compile(rf"\b(?:{cue.pattern})", re.IGNORECASE))
        for cue in cues
    )


COMPILED_CUES = compile_cues(CUES)


def verb_cue(spec: RelationSpec) -> Cue | None:
    """A cue from a relation's English verb, so a curator's new type is found without code."""
    words = spec.verb.lower().split()
    copula = bool(words) and words[0] in ("is", "are")
    words = words[1:] if copula else words
    if not words:
        return None
    body = []
    for word in words:
        if word in ("a", "an"):
            body.append(r"(?:a|an|the)")
        elif word.endswith("s") and len(word) > 3 and not word.endswith("ss"):
            body.append(re.escape(word[:-1]) + "s?")  # "builds on" also reads "build on"
        else:
            body.append(re.escape(word))
    longest = max((w for w in words if w not in ("a", "an")), key=len, default=words[0])
    trigger = longest[:-1] if longest.endswith("s") and len(longest) > 3 else longest
    pattern = r"\s+".join(body) + r"\s+"
    return Cue(spec.key, FWD, 0.75, trigger, pattern, plural=True, copula=copula)


# Prerequisites stated about the reader: "Before learning B, you should understand A",
# "make sure you are comfortable with A (first)", "To follow B, you need A".
KNOW = re.compile(
    r"\b(?:you\s+(?:should|must|need\s+to|ought\s+to|will\s+want\s+to|'ll\s+want\s+to|"
    r"have\s+to|will\s+need\s+to|'ll\s+need\s+to)\s+(?:first\s+|already\s+|also\s+)?"
    r"(?:understand|know|be\s+(?:familiar|comfortable|confident|at\s+home)\s+with|"
    r"have\s+(?:met|seen|learned|learnt|studied|covered|read\s+about|a\s+(?:good|solid|basic)"
    r"\s+grasp\s+of)|review|revisit|master|grasp|learn|study|read\s+up\s+on)|"
    r"make\s+sure\s+(?:that\s+)?you(?:\s+are|'re)?\s+(?:(?:comfortable|familiar|confident)"
    r"\s+with|understand|know))\s+",
    re.IGNORECASE,
)
_GRASP = r"(?:understand|follow|learn|use|read|make\s+sense\s+of|get\s+the\s+most\s+(?:out\s+)?of)"
# "To understand B, you should ...": only at the very start of a sentence.
TO_GRASP = re.compile(rf"(?:in\s+order\s+)?to\s+{_GRASP}\s+", re.IGNORECASE)
BEFORE = re.compile(
    r"\bbefore\s+(?:(?:learning(?:\s+about)?|studying|tackling|reading(?:\s+about)?|starting|"
    r"diving\s+into|implementing|building|using|moving\s+on\s+to|turning\s+to|attempting|"
    r"trying)\s+|you\s+(?:learn|study|tackle|start|read|use|build|implement|move\s+on\s+to|"
    r"turn\s+to|try)\s+)",
    re.IGNORECASE,
)
# Phrasings whose two sides are named slots: (relation, filter word, pattern, confidence).
SLOTS: tuple[tuple[str, str, re.Pattern[str], float], ...] = (
    (
        "prerequisite",
        "need",
        re.compile(
            r"\byou(?:\s+will|'ll)?\s+(?:first\s+)?need\s+(?P<a>[^,;:.]+?)\s+(?:in\s+order\s+)?"
            rf"to\s+{_GRASP}\s+(?P<b>[^,;:.]+)",
            re.IGNORECASE,
        ),
        0.8,
    ),
    (
        "prerequisite",
        "need",
        re.compile(
            rf"\bto\s+{_GRASP}\s+(?P<b>[^,;:.]+?),?\s+you(?:\s+will|'ll)?\s+(?:first\s+)?need"
            r"(?:\s+to\s+(?:know|understand|be\s+familiar\s+with))?\s+(?P<a>[^,;:.]+)",
            re.IGNORECASE,
        ),
        0.8,
    ),
    (
        "part_of",
        "one",
        re.compile(
            r"\bone\s+(?:of\s+the\s+)?(?:stages?|steps?|parts?|components?|layers?|phases?)\s+"
            r"of\s+(?P<b>[^,;:.]+?)\s+is\s+(?P<a>[^,;:.]+)",
            re.IGNORECASE,
        ),
        0.8,
    ),
)
