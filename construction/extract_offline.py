"""READ without a model: cue phrases over the text, deterministic and offline.

How a lesson becomes candidate edges:

1. Concepts the text defines are collected first: "Long Name (ABBR)" pairs (the
   abbreviation becomes an alias), **bold** terms, and the title and headings (compound
   ones split, generic section names skipped). The lesson's topic is the bold term the
   title names, else the title; "this lesson" and "... first" point at it.
2. Each sentence is tokenised and scanned for names by n-gram lookup (local terms, then
   the lexicon; longest match wins). The lexicon is only ever asked about n-grams.
3. Cue phrases ("is a prerequisite for", "unlike", "consists of", a relation's own verb)
   are found per sentence; each fills its two sides with the nearest concept, looking past
   asides, relative clauses, "the idea of", generic heads ("RAG pipelines") and
   coordination ("A, B and C"). When no known concept is there, a run of content words is
   guessed as a new name, at a lower confidence.
4. Negated cues are dropped, hedged ones weakened; the best ``max_edges`` distinct edges
   are kept, each quoting its sentence verbatim.

There is no part-of-speech tagger: word lists and small structural rules stand in for
one, so every rule is a guess that errs towards proposing nothing. Everything is a pure
function of the input (one ``_Reader`` per call holds the per-document state).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from .protocols import Lexicon
from .text import (
    ARTICLES,
    NAME_PUNCT,
    TYPOGRAPHIC,
    clean_display,
    display_case,
    looks_like_abbreviation,
    name_key,
    sentences,
    singular,
    split_abbreviation,
)
from .types import Candidate, ConceptMention, Extraction, LLMUsage, RelationSpec, SourceDoc

__all__ = ["OfflineExtractor"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- Words ------------------------------------------------------------------------------

PREPOSITIONS = _words(
    """of in on at by for with from to into onto upon over under above below between among
    inside outside beneath past amid
    through throughout during before after since until within without about against along
    alongside across around behind beyond beside besides near toward towards via per than
    like unlike despite except versus vs"""
)
PRONOUNS = _words(
    """i me my mine we us our ours you your yours he him his she her hers it its they them
    their theirs itself themselves ourselves yourself yourselves himself herself something
    anything everything nothing someone anyone everyone this that these those which who
    whom whose what"""
)
DETERMINERS = _words(
    """a an the this that these those each every all both either neither no some any many
    much more most few fewer less least several such other another same own its their
    your our his her my one two three four five six seven eight nine ten"""
)
# Never part of a concept name's edges; a run of other words is a noun-phrase guess.
FUNCTION_WORDS = (
    PREPOSITIONS
    | PRONOUNS
    | DETERMINERS
    | _words(
        """and or but nor so yet if then else because although though while whereas
        whether unless once when where why how is are was were be been being am has have
        had having do does did done can could may might must shall should will would not
        never also only just even still already again always often sometimes usually
        typically generally rather quite very too thus hence therefore however instead here
        there now today first last next finally moreover furthermore indeed perhaps maybe
        almost nearly well alone ones dozens hundreds thousands millions billions etc e.g
        i.e s t let lets get gets got as"""
    )
)
# "Understanding X is essential for Y" is about X.
KNOWING = _words("understanding knowing mastering grasping studying")
# Nouns and adjectives that end in -ly, which the adverb rule must not swallow.
LY_NOUNS = _words(
    """family assembly anomaly supply reply monopoly rally ally early daily weekly monthly
    yearly friendly butterfly italy poly jelly belly homily"""
)
# "-ing" words that usually name a field rather than an activity on an object.
ING_NOUNS = _words(
    """learning training processing computing engineering reasoning modeling modelling
    programming testing thing string nothing something anything everything meaning setting
    embedding encoding"""
)
# Heads that say what kind of thing a concept is; "RAG pipelines" is about RAG.
GENERIC_HEADS = _words(
    """pipeline system approach method technique architecture model framework implementation
    setup suite family loop block layer index table encoder decoder algorithm library
    process workflow stack setting application component module pattern variant version
    paradigm strategy scheme procedure step stage task deployment platform solution service
    tool tooling engine"""
)
# Words that cannot be a concept on their own.
GENERIC_WORDS = GENERIC_HEADS | _words(
    """thing way idea concept part kind type form set number lot example case result side
    practice use term word lesson chapter section article page course topic question problem
    issue point fact reason detail data information work time piece element item aspect
    feature property value option choice tool list group area field unit rest role
    objective goal purpose"""
)
# "the idea of X", "a solid grasp of X": the concept is X.
CONTAINERS = _words(
    """idea concept notion kind type form family class set toolkit knowledge grasp
    understanding picture basic basics principle fundamental heart core basis use field area
    stack number series sequence collection list lot couple variety range mix combination
    subset member example instance style amount way version role purpose importance rest"""
)
QUANTITIES = _words("two three four five six seven eight nine ten several few many")
ANAPHORIC = _words("this that these those its their his her")
PERSONAL = _words("it they them we you he she i")
LESSON_WORDS = _words(
    "lesson chapter section article tutorial page post guide course module unit topic"
)
# Third-person verbs that end a subject guessed from a run of words.
SUBJECT_VERBS = _words(
    """uses keeps works needs makes takes gives lets helps tends performs handles adds
    produces returns computes stores finds learns reads writes captures generates answers
    allows enables remains becomes improves increases changes shows means scales runs costs
    calls passes turns reasons processes compares contains covers scores ranks trains asks
    checks measures evaluates splits merges combines looks sits stays lies goes does creates
    provides offers supports operates gathers converts delivers develops traps requires
    depends relies builds extends consists comprises applies differs contrasts relates
    replaces generalises generalizes assumes mitigates causes leads results guarantees sends
    grows holds moves prints searches selects loads saves receives waits spawns executes
    compiles parses interprets predicts classifies fits outputs emits yields accepts rejects
    fails succeeds follows precedes wraps exposes hides serves prevents ensures avoids
    permits forbids defines describes represents encodes decodes compresses tracks monitors
    publishes listens verifies encrypts rises falls shrinks varies seems appears comes says
    knows wants tries tells brings matches"""
)
# What may stand between a subject and its verb cue without being the subject.
BEFORE_CUE = _words(
    """also often usually typically generally commonly widely frequently mostly largely
    mainly primarily especially particularly therefore thus then still always sometimes
    essentially basically really just only even now both all each not never can could may
    might will would should must does do did has have had itself themselves"""
)
# A comma segment starting with one of these is an aside, not the clause's subject.
ASIDE_STARTS = _words(
    """which who whom whose where when that short also aka i.e e.g such including like for
    especially particularly typically usually often a an the"""
)
MODALS = _words("can could may might will would shall should must")
AUXILIARIES = MODALS | _words("does do did")
CLAUSE_VERBS = _words(
    "is are was were can could may might will would has have had does do did must should"
)
SUBORDINATORS = _words("because since although though while whereas if unless when where once")
CLAUSE_WORDS = _words("because since so but while although though whereas if unless when where")
RIGHT_STOPS = _words(
    """which that who whom whose because since so where when while whereas but although
    though if unless rather than such including like except whether instead"""
)
HEADING_SKIP = _words(
    """overview introduction intro summary conclusion conclusions background motivation
    caveat caveats limitation limitations extension extensions variant variants tooling
    tools ingredient ingredients safety tip tips design example examples exercise exercises
    practice pipeline prerequisite prerequisites connection connections next steps further
    reading reference references recap setup installation usage basic basics fundamentals
    key ideas stage stages step steps side part lesson notes question questions faq history
    application applications use uses wrap up together glossary"""
)
HEADING_OPENERS = _words(
    """what why how when where who which two three four five six seven eight nine ten from
    inside beyond toward towards into putting getting"""
)

# --- Patterns ---------------------------------------------------------------------------

# An en dash inside a word joins it: "Diels-Alder", "Kullback-Leibler" written with one.
TOKEN = re.compile(r"\w+(?:[-./+#\u2013]\w+)*(?:\+\+|#)?")
BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
PAREN = re.compile(r"\(([^()\n]{1,12})\)")
HEADING_SPLIT = re.compile(
    r"\s+(?:and|with|&|versus|vs\.?)\s+|\s*:\s+|\s+[-\u2013\u2014]\s+", re.IGNORECASE
)
SOFT_GAP = re.compile(r"[\s*_`]*")
SPACE_OR_APOSTROPHE = re.compile(r"[\s'\u2019]*")
NEGATION = re.compile(
    r"\b(?:not|never|no\s+longer|cannot|neither|nor)\b|n['\u2019]t\b", re.IGNORECASE
)
HEDGE = re.compile(
    r"\b(?:may|might|can|could|sometimes|often|occasionally|possibly|perhaps|arguably)\b",
    re.IGNORECASE,
)
DEFINITION = re.compile(
    r"(?:\s*\([^()]{1,40}\))?[*_`]*\s+(?:is|are|refers\s+to)\s+(?:a|an|the|one)\s+[^,;:()]+",
    re.IGNORECASE,
)

_DET = r"(?:(?:a|an|the|one|another)\s+)"
_ADJ = r"(?:[\w-]+\s+)?"
# Auxiliaries, copulas and adverbs that may precede a cue's keyword ("is not often used
# for"). They are collected token by token, leftwards from the keyword, so that each cue
# pattern can start at its keyword: optional prefixes tried at every position are slow.
LEAD_WORDS = _words(
    """is are was were be been being am has have had having can could may might must shall
    should will would does do did not never no longer also often usually typically generally
    commonly widely frequently mostly largely mainly primarily especially particularly
    therefore thus then still always sometimes essentially basically really just only even
    now itself themselves both all each isn aren wasn weren doesn don didn hasn haven won
    wouldn shouldn couldn cannot t"""
)
COPULAS = _words("is are was were be been being am isn aren wasn weren")

FWD, REV = True, False


@dataclass(frozen=True)
class _Cue:
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
CUES: tuple[_Cue, ...] = (
    # prerequisite: "A is a prerequisite for B", "B requires A", "B relies on A", ...
    _Cue(
        "prerequisite",
        FWD,
        0.9,
        "prerequisite",
        rf"(?:{_DET}|one\s+of\s+the\s+)?{_ADJ}prerequisites?\s+(?:for|of|to)\s+",
        copula=True,
    ),
    _Cue(
        "prerequisite",
        FWD,
        0.8,
        "required needed necessary essential indispensable",
        r"(?:required|needed|necessary|essential|indispensable)\s+"
        r"(?:for|before|to\s+(?:understand|follow|learn|use|build|implement))\s+",
        copula=True,
    ),
    _Cue(
        "prerequisite",
        REV,
        0.8,
        "require presuppose",
        r"(?:requires?|presupposes?)\s+",
        plural=True,
    ),
    _Cue("prerequisite", REV, 0.8, "depend", r"(?:depends?|depended)\s+(?:up)?on\s+", plural=True),
    _Cue(
        "prerequisite",
        REV,
        0.75,
        "relies rely relied",
        r"(?:relies|rely|relied)\s+(?:up)?on\s+",
        plural=True,
    ),
    _Cue("prerequisite", REV, 0.75, "assume", rf"assumes?\s+{_KNOWLEDGE}"),
    # builds_on: "A builds on B", "A is built on top of B", "A extends B", ...
    _Cue(
        "builds_on",
        FWD,
        0.85,
        "built constructed layered",
        r"(?:built|constructed|layered)\s+(?:up)?on(?:\s+top\s+of)?\s+",
        copula=True,
    ),
    _Cue("builds_on", FWD, 0.85, "build", r"builds?\s+(?:up)?on(?:\s+top\s+of)?\s+", plural=True),
    _Cue("builds_on", FWD, 0.75, "based", r"based\s+(?:on|upon)\s+", copula=True),
    _Cue("builds_on", FWD, 0.7, "derived adapted", r"(?:derived|adapted)\s+from\s+", copula=True),
    _Cue("builds_on", FWD, 0.7, "extend generali", r"(?:extends?|generali[sz]es|generali[sz]e)\s+"),
    _Cue(
        "builds_on",
        FWD,
        0.75,
        "extension generali refinement",
        rf"{_DET}?{_ADJ}(?:extension|generali[sz]ation|refinement)\s+of\s+",
        copula=True,
    ),
    # part_of: "A is a stage of B", "A and C are components of B", "B consists of A", ...
    _Cue(
        "part_of",
        FWD,
        0.85,
        _PART_WORDS + " field branch subtask",
        rf"(?:{_DET}{_ADJ})?(?:{_PART})\s+of\s+",
        copula=True,
    ),
    _Cue(
        "part_of",
        FWD,
        0.85,
        _PART_WORDS,
        rf"(?:(?:the|all|both|two|three|several)\s+)?{_ADJ}(?:{_PARTS})\s+of\s+",
        plural=True,
        copula=True,
    ),
    _Cue(
        "part_of",
        REV,
        0.8,
        "made composed comprised",
        r"(?:made\s+up|composed|comprised)\s+of\s+",
        copula=True,
    ),
    _Cue("part_of", REV, 0.8, "consist compris", r"(?:(?:consists?|consisted)\s+of|comprises?)\s+"),
    # contrasts_with: "unlike A, B", "whereas A ..., B ...", "A versus B", ...
    _Cue(
        "contrasts_with",
        FWD,
        0.8,
        "unlike contrast opposed contrary",
        r"\b(?:unlike|in\s+contrast\s+(?:to|with)|as\s+opposed\s+to|contrary\s+to)\s+",
        shape="contrast",
    ),
    _Cue("contrasts_with", FWD, 0.7, "compared", r"\bcompared\s+(?:with|to)\s+", shape="contrast"),
    _Cue("contrasts_with", FWD, 0.7, "whereas", r"\bwhereas\s+", shape="whereas"),
    _Cue("contrasts_with", FWD, 0.7, "versus vs", r"(?<=\s)(?:versus|vs\.?)\s+"),
    _Cue("contrasts_with", FWD, 0.75, "differ", r"(?:differs?|differed)\s+from\s+", plural=True),
    _Cue(
        "contrasts_with",
        FWD,
        0.75,
        "different distinct",
        r"(?:different|distinct)\s+from\s+",
        plural=True,
        copula=True,
    ),
    _Cue("contrasts_with", FWD, 0.75, "contrast", r"contrasts?\s+with\s+", plural=True),
    # applies_to: "A is applied to B", "A is used for B", "A is useful for B", ...
    _Cue("applies_to", FWD, 0.8, "applied", r"applied\s+(?:to|in)\s+", copula=True),
    _Cue(
        "applies_to", FWD, 0.75, "used employed", r"(?:used|employed)\s+(?:for|in)\s+", copula=True
    ),
    _Cue("applies_to", FWD, 0.7, "apply applies", r"appl(?:y|ies)\s+to\s+", plural=True),
    _Cue(
        "applies_to",
        FWD,
        0.7,
        "useful helpful valuable",
        r"(?:useful|helpful|valuable)\s+for\s+",
        copula=True,
    ),
    # related: "A is closely related to B", "A is associated with B", "see also B", ...
    _Cue(
        "related",
        FWD,
        0.7,
        "related connected linked tied relevant",
        r"(?:related|connected|linked|tied|relevant)\s+(?:to|with)\s+",
        plural=True,
        copula=True,
    ),
    _Cue("related", FWD, 0.65, "associated", r"associated\s+with\s+", copula=True),
    _Cue("related", FWD, 0.65, "relate", r"relates?\s+to\s+"),
    _Cue("related", FWD, 0.6, "see also", r"\bsee\s+also:?\s+", shape="see_also"),
    # Outside the starting vocabulary: ranked low, dropped later as unknown relations, and
    # counted there for ontology discovery.
    _Cue(
        "alternative_to",
        FWD,
        0.6,
        "alternative",
        rf"{_DET}?{_ADJ}alternatives?\s+to\s+",
        copula=True,
    ),
    _Cue(
        "replaces",
        FWD,
        0.6,
        "replace supersede",
        r"(?:replaces?|supersedes?|replaced|superseded)\s+(?!by\b|with\b)",
        active=True,
    ),
    _Cue(
        "replaces",
        FWD,
        0.6,
        "replacement substitute",
        rf"{_DET}?{_ADJ}(?:replacement|substitute)\s+for\s+",
        copula=True,
    ),
    _Cue(
        "mitigates",
        FWD,
        0.5,
        "mitigate alleviate reduce",
        r"(?:mitigates?|alleviates?|reduces?)\s+",
    ),
    _Cue("causes", FWD, 0.5, "cause lead result", r"(?:causes?|leads?\s+to|results?\s+in)\s+"),
    _Cue(
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

_Compiled = tuple[_Cue, tuple[str, ...], re.Pattern[str]]


def _compiled(cues: Sequence[_Cue]) -> tuple[_Compiled, ...]:
    return tuple(
        (cue, tuple(cue.words.split()), re.compile(rf"\b(?:{cue.pattern})", re.IGNORECASE))
        for cue in cues
    )


COMPILED_CUES = _compiled(CUES)


def _verb_cue(spec: RelationSpec) -> _Cue | None:
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
    return _Cue(spec.key, FWD, 0.75, trigger, pattern, plural=True, copula=copula)


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


# --- Values -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Tok:
    """A word with its offsets; ``pieces`` are its name-key words, computed once."""

    start: int
    end: int
    text: str
    low: str
    pieces: tuple[str, ...]
    func: bool


@dataclass
class _Sent:
    """A sentence as tokens; ``mentions`` and ``blocked`` are filled while it is read."""

    index: int
    start: int
    end: int
    heading: bool
    toks: tuple[_Tok, ...]
    soft: tuple[bool, ...]  # soft[i]: only spaces or emphasis between token i-1 and i
    comma: tuple[bool, ...]  # comma[i]: a comma between token i-1 and i
    mentions: dict[int, tuple[int, str]]  # token index -> (end token index, concept id)
    blocked: set[int]  # tokens inside a cue phrase: never part of an argument


@dataclass(frozen=True)
class _Run:
    """Consecutive content words (and whole concept mentions): a noun-phrase candidate."""

    lo: int
    hi: int
    parts: tuple[tuple[int, int, str | None], ...]  # (lo, hi, concept id or None)


@dataclass(frozen=True)
class _Arg:
    """One side of an edge: a concept id, where the text names it, and how unsure we are."""

    cid: str
    lo: int  # character offsets, for the reason snippet
    hi: int
    penalty: float = 0.0


@dataclass(frozen=True)
class _Raw:
    """A candidate before ranking, deduplication and naming."""

    source: str
    relation: str
    target: str
    confidence: float
    position: int
    sentence: _Sent
    cue: str
    span: tuple[int, int]


@dataclass
class _Concept:
    """A concept as this one document names it (mutable only while the document is read)."""

    name: str
    rank: int  # 3 abbreviation expansion, 2 bold, 1 heading, 0 guessed; -1 lexicon
    aliases: list[str] = field(default_factory=list)


# --- The extractor ----------------------------------------------------------------------


class OfflineExtractor:
    """Rule-based READ: deterministic, fast, no network."""

    name = "offline"
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
        reader = _Reader(doc, lexicon)
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
    reader: _Reader, raws: list[_Raw], vocabulary: Sequence[RelationSpec], max_edges: int
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


# --- Tokens and names -------------------------------------------------------------------


def _pieces(token: str) -> tuple[str, ...]:
    """The words ``name_key`` would make of one token, before articles and plurals."""
    if token.isalnum() and token.isascii():
        return (token.lower(),)
    if token.isascii():
        low = token.lower()
    else:
        low = unicodedata.normalize("NFKC", token).translate(TYPOGRAPHIC).casefold()
        low = NAME_PUNCT.sub(" ", low)
    return tuple(p for p in re.split(r"[-_/\s]+", low) if p)


def _gram_key(toks: Sequence[_Tok]) -> str:
    """``name_key`` of consecutive tokens, built from their pieces (this runs per n-gram)."""
    words = [p for t in toks for p in t.pieces]
    while len(words) > 1 and words[0] in ARTICLES:
        words = words[1:]
    if not words:
        return ""
    words[-1] = singular(words[-1])
    return " ".join(words)


def _is_function(low: str) -> bool:
    if low in FUNCTION_WORDS or len(low) == 1 or low.isdigit():
        return True
    return low.endswith("ly") and len(low) > 4 and low not in LY_NOUNS


def _tokens(text: str, start: int, end: int) -> list[_Tok]:
    toks = []
    for m in TOKEN.finditer(text, start, end):
        low = m.group().lower()
        toks.append(_Tok(m.start(), m.end(), m.group(), low, _pieces(m.group()), _is_function(low)))
    return toks


def _display_name(name: str) -> str:
    """People's spelling of a new name: cleaned, and cased as ``display_case`` says."""
    return display_case(clean_display(name))


def _sentence_case(words: list[str]) -> str:
    """ "Bread Baking" -> "Bread baking"; acronyms and inner capitals ("LoRA") stay."""
    rest = [w.lower() if w[:1].isupper() and w[1:].islower() else w for w in words[1:]]
    return " ".join([words[0], *rest])


def _generic(low: str) -> bool:
    return singular(low) in GENERIC_WORDS or low in GENERIC_WORDS


def _participle(low: str) -> bool:
    """ "trained", "used": a verb form, not the head of a name ("speed", "seed" are fine)."""
    return low.endswith("ed") and not low.endswith("eed") and len(low) > 3


def _verb_after(prev: _Tok, tok: _Tok, following: str) -> bool:
    """Where a guessed subject ends: "fermentation works", "linked lists grow".

    Without a part-of-speech tagger this is a guess: a known verb ("document stores are"
    keeps its noun), or any lowercase word after a plural, which rarely continues a name.
    """
    if tok.low in SUBJECT_VERBS and following not in CLAUSE_VERBS:
        return True
    plural = singular(prev.low) != prev.low and prev.low.isalpha()
    return plural and tok.text.islower() and tok.text.isalpha()


def _activity(s: _Sent, run: _Run) -> bool:
    """ "Building agents", "Understanding accounts": a gerund acting on an object.

    "Baking soda" looks the same, so only a known object or a verb of knowing counts.
    """
    first = s.toks[run.lo]
    if len(run.parts) < 2 or run.parts[0][2] is not None or not _gerund(first):
        return False
    return first.low in KNOWING or (run.parts[1][2] is not None and first.low not in ING_NOUNS)


def _gerund(tok: _Tok) -> bool:
    return tok.low.endswith("ing") and len(tok.low) > 5 and "-" not in tok.low


# --- Reading one document ---------------------------------------------------------------


class _Reader:
    """Everything one document teaches the extractor: its concepts, sentences and cues."""

    def __init__(self, doc: SourceDoc, lexicon: Lexicon | None) -> None:
        self.text = doc.text
        # A chunk is about its section more than about the whole document.
        self.title = doc.section[-1] if doc.section else doc.title
        self.lexicon = lexicon
        self.concepts: dict[str, _Concept] = {}
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
            self.concepts[cid] = _Concept(name=canonical, rank=-1)
        self.keys[key] = cid
        self.keys.setdefault(cid, cid)
        return cid

    def register(self, name: str, rank: int, alias: str | None = None) -> str | None:
        """Make a name the document uses findable; the strongest definitional form wins."""
        display = _display_name(name)
        key = name_key(display)
        if not key or all(_is_function(w) for w in key.split()) or _generic(key):
            return None
        alias_key = name_key(alias) if alias else ""
        long_key = name_key(split_abbreviation(display)[0])
        cid = self.keys.get(key) or self.keys.get(long_key) or self.keys.get(alias_key)
        if cid is None:
            cid = self.lookup(key) or self.lookup(long_key)
            cid = cid or (self.lookup(alias_key) if alias_key else None)
        if cid is None:
            cid = key
            self.concepts[cid] = _Concept(name=display, rank=rank)
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
            if _is_function(chunk[0].lower()):
                continue
            long = " ".join(chunk)
            if looks_like_abbreviation(short, long):
                if short.endswith("s") and short[:-1].isupper() and len(short) > 2:
                    short = short[:-1]
                    head, _, last = long.rpartition(" ")
                    long = f"{head} {singular(last)}".strip() if last.islower() else long
                long = _display_name(long)
                self.register(f"{long} ({short})", 3, alias=short)
                return

    def _bold(self, inner: str, end: int) -> str | None:
        inner = clean_display(inner)
        long, short = split_abbreviation(inner)
        if short:
            return self.register(f"{_display_name(long)} ({short})", 3, alias=short)
        after = PAREN.match(self.text, end + (1 if self.text[end : end + 1] == " " else 0))
        if after and looks_like_abbreviation(after.group(1), inner):
            return self.register(f"{_display_name(inner)} ({after.group(1)})", 3, after.group(1))
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
        content = [w for w in lows if not _is_function(w)]
        if (
            lows[0] in HEADING_OPENERS
            or lows[0] in PRONOUNS
            or any(w in PRONOUNS for w in lows)
            or not content
            or all(w in HEADING_SKIP or _generic(w) for w in content)
            or (len(words) > 1 and lows[0].endswith("ing") and "-" not in lows[0])
            or len(words) > 7
        ):
            return None
        # "The Transformer Architecture" names the Transformer when the text knows it.
        while len(words) > 1 and _generic(words[-1].lower()):
            shorter = " ".join(words[:-1])
            cid = self.keys.get(name_key(shorter)) or self.lookup(name_key(shorter))
            if cid:
                return cid
            words = words[:-1] if singular(words[-1].lower()) in GENERIC_HEADS else words
            if singular(words[-1].lower()) not in GENERIC_HEADS:
                break
        return self.register(_sentence_case(words), 1)

    def _choose_topic(self, title_ids: list[str], bold_ids: list[str]) -> None:
        """What "this lesson" is about: a bold term the title names, else the title itself."""
        title_words = {w for cid in title_ids if cid for w in cid.split()}
        title_words |= {singular(w) for w in name_key(self.title).split()}
        for cid in bold_ids:
            if any(w in title_words and not _is_function(w) for w in cid.split()):
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
            if key and not _generic(key) and key not in self.keys:
                self.keys[key] = self.topic
                self.weak.add(key)
                self._note_words(key)

    # -- sentences and mentions --

    def _sentence(self, index: int, start: int, end: int, heading: bool) -> _Sent:
        toks = self._eponyms(_tokens(self.text, start, end))
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
        sent = _Sent(index, start, end, heading, tuple(toks), tuple(soft), tuple(comma), {}, verbs)
        self._find_mentions(sent)
        return sent

    def _eponyms(self, toks: list[_Tok]) -> list[_Tok]:
        """ "Dijkstra's algorithm" is one name; "the Transformer's input layer" is not."""
        out: list[_Tok] = []
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
                and self.lookup(_gram_key([tok])) is None
            ):
                end = toks[k + 1].end
                text = self.text[tok.start : end]
                out.append(_Tok(tok.start, end, text, text.lower(), (*tok.pieces, "s"), False))
                k += 2
                continue
            out.append(tok)
            k += 1
        return out

    def _may_start_name(self, tok: _Tok) -> bool:
        """Without a lexicon only local names can match: skip words none of them starts with."""
        first = tok.pieces[0] if tok.pieces else ""
        return first in self.first_words or singular(first) in self.first_words

    def _find_mentions(self, s: _Sent) -> None:
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
                key = _gram_key(toks[i:j])
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
    def _modified(s: _Sent, i: int, j: int) -> bool:
        """Whether tokens i..j sit inside a longer run of content words."""
        prev = s.toks[i - 1] if i > 0 else None
        before = prev is not None and s.soft[i] and not prev.func and not _gerund(prev)
        nxt = s.toks[j] if j < len(s.toks) else None
        after = nxt is not None and s.soft[j] and not nxt.func and nxt.low not in SUBJECT_VERBS
        return before or after

    def runs(self, s: _Sent, lo: int, hi: int) -> list[_Run]:
        """Noun-phrase candidates between two token positions."""
        out: list[_Run] = []
        parts: list[tuple[int, int, str | None]] = []
        i = lo
        while i < hi:
            mention = s.mentions.get(i)
            if i in s.blocked:
                piece = None
            elif mention and mention[0] <= hi:
                piece = (i, mention[0], mention[1])
            elif not s.toks[i].func:
                piece = (i, i + 1, None)
            else:
                piece = None
            if piece and parts and not s.soft[i]:
                out.append(_Run(parts[0][0], parts[-1][1], tuple(parts)))
                parts = []
            if piece:
                parts.append(piece)
                i = piece[1]
                continue
            if parts:
                out.append(_Run(parts[0][0], parts[-1][1], tuple(parts)))
                parts = []
            i += 1
        if parts:
            out.append(_Run(parts[0][0], parts[-1][1], tuple(parts)))
        return self._of_phrases(s, out)

    @staticmethod
    def _of_phrases(s: _Sent, runs: list[_Run]) -> list[_Run]:
        """ "locality of reference", "separation of concerns": names with "of" inside.

        Only short phrases of unknown words join, and never after a container ("the idea
        of X" is about X) or before a determiner ("the size of the collection").
        """
        out: list[_Run] = []
        for run in runs:
            prev = out[-1] if out else None
            if (
                prev is not None
                and run.lo == prev.hi + 1
                and s.toks[prev.hi].low == "of"
                and s.soft[prev.hi]
                and s.soft[run.lo]
                and prev.hi not in s.blocked
                and all(p[2] is None for p in (*prev.parts, *run.parts))
                and singular(s.toks[prev.hi - 1].low) not in CONTAINERS
                and (prev.hi - prev.lo) + (run.hi - run.lo) <= 4
            ):
                of = (prev.hi, prev.hi + 1, None)
                out[-1] = _Run(prev.lo, run.hi, (*prev.parts, of, *run.parts))
            else:
                out.append(run)
        return out

    # -- arguments --

    def resolve(self, s: _Sent, run: _Run, *, head: bool = False) -> _Arg | None:
        """The concept a run names: its last mention (past generic heads), else a guess."""
        if run.lo and s.toks[run.lo - 1].low in ANAPHORIC and s.soft[run.lo]:
            return None  # "these metrics" points back at something; it names nothing new
        parts = list(run.parts)
        lo_char, hi_char = s.toks[run.lo].start, s.toks[run.hi - 1].end
        if head and parts[0][2]:
            return _Arg(parts[0][2], lo_char, hi_char)  # "QLoRA brings quantization ..."
        core = parts[:]
        while len(core) > 1 and core[-1][2] is None and _generic(s.toks[core[-1][0]].low):
            core.pop()
        if core[-1][2]:
            return _Arg(core[-1][2], lo_char, hi_char)
        toks = list(s.toks[run.lo : run.hi])
        if head:
            following = [t.low for t in toks[1:]] + [
                s.toks[run.hi].low if run.hi < len(s.toks) else ""
            ]
            cut = next(
                (k for k in range(1, len(toks)) if _verb_after(toks[k - 1], toks[k], following[k])),
                None,
            )
            toks = toks[:cut] if cut else toks
        after_preposition = run.lo > 0 and s.toks[run.lo - 1].low in PREPOSITIONS
        if len(toks) > 1 and after_preposition and _gerund(toks[0]):
            toks = toks[1:]  # "a prerequisite for building AI agents"
        while len(toks) > 1 and _participle(toks[-1].low):
            toks = toks[:-1]  # "the KV cache used during decoding"
        toks = toks[-5:]
        if (
            all(_generic(t.low) or t.func for t in toks)
            or _participle(toks[-1].low)
            or toks[-1].low in LESSON_WORDS
        ):
            return None
        name = _display_name(self.text[toks[0].start : toks[-1].end])
        cid = self.lookup(name_key(name)) or self.register(name, 0)
        return _Arg(cid, toks[0].start, toks[-1].end, penalty=0.1) if cid else None

    def usable(self, s: _Sent, run: _Run, hi: int) -> bool:
        """Not "the idea of", not only generic words."""
        return not self.container(s, run, hi) and not self.generic_run(s, run)

    @staticmethod
    def container(s: _Sent, run: _Run, hi: int) -> bool:
        """ "the idea of X", "a solid grasp of X": the concept is X, not the run."""
        last = s.toks[run.hi - 1].low
        followed_by_of = run.hi < hi and s.toks[run.hi].low == "of" and s.soft[run.hi]
        return followed_by_of and (singular(last) in CONTAINERS or last in CONTAINERS)

    @staticmethod
    def generic_run(s: _Sent, run: _Run) -> bool:
        return all(p[2] is None and _generic(s.toks[p[0]].low) for p in run.parts)

    def in_pp(self, s: _Sent, run: _Run, floor: int) -> bool:
        """A run right after a preposition is an object, rarely the subject we want."""
        k = run.lo - 1
        if k < floor or not s.soft[run.lo]:
            return False
        while k >= floor and s.toks[k].low in DETERMINERS and s.soft[k + 1]:
            k -= 1
        if k < floor or s.toks[k].low not in PREPOSITIONS:
            return False
        if s.toks[k].low == "of" and k > floor:
            before = s.toks[k - 1].low
            return not (singular(before) in CONTAINERS or before in CONTAINERS)
        return True

    def segment_end(self, s: _Sent, lo: int, hi: int) -> int:
        """Where the phrase starting at ``lo`` ends: punctuation, a clause word, another cue."""
        for k in range(lo, hi):
            if k > lo and (not s.soft[k] or k in s.blocked or s.toks[k].low in PERSONAL):
                return k
            if s.toks[k].low in RIGHT_STOPS:
                return k
        return hi

    def pick_right(self, s: _Sent, lo: int, hi: int | None = None) -> list[_Arg]:
        """The first concept after a cue, then any coordinated ones ("A, B and C")."""
        hi = len(s.toks) if hi is None else hi
        if lo >= hi:
            return []
        pointed = self.pronoun(s, lo, hi)
        if pointed is not None:
            return pointed
        end = self.segment_end(s, lo, hi)
        runs = self.runs(s, lo, end)
        listed = self.colon_list(s, runs, end, hi)
        if listed is not None:
            return listed
        usable = []
        for run in runs:
            if self.container(s, run, end):
                continue
            if self.generic_run(s, run):
                break  # "the same tools as ...": a generic word, and nothing after it counts
            usable.append(run)
        runs = usable
        chosen = None
        for n, run in enumerate(runs):
            if run.lo - lo > 6:
                break
            if n and self.in_pp(s, run, lo):
                continue  # "applied to the projection matrices for queries": not queries
            arg = self.resolve(s, run)
            if arg and not arg.penalty:
                chosen = (run, arg)
                break
        if chosen is None and runs:
            arg = self.resolve(s, runs[0])
            chosen = (runs[0], arg) if arg else None
        if chosen is None:
            return []
        joined = self.coordinated(s, chosen[0].hi, hi)
        return [chosen[1], *(joined or self.as_well_as(s, chosen[0].hi, hi))]

    def coordinated(self, s: _Sent, k: int, hi: int) -> list[_Arg]:
        """Arguments joined to the one ending at token ``k``: "A, B and C", "A as well as B"."""
        out: list[_Arg] = []
        listed: list[_Arg] = []  # joined by commas only; kept once "and" closes the list
        while k < hi:
            comma = s.comma[k]
            if not s.soft[k] and not comma:
                break
            j, conj = k, False
            if s.toks[j].low in ("and", "or"):
                conj, j = True, j + 1
            elif [t.low for t in s.toks[j : j + 3]] == ["as", "well", "as"]:
                conj, j = True, j + 3
            if not (conj or comma):
                break
            while j < hi and s.toks[j].low in ("a", "an", "the", "also", "both"):
                j += 1
            runs = self.runs(s, j, self.segment_end(s, j, hi))
            if not runs or runs[0].lo != j:
                break
            if not self.usable(s, runs[0], hi) and len(runs) > 1:
                runs = runs[1:]  # "the general principles of LLM evaluation"
            first = s.toks[runs[0].lo]
            if not s.mentions.get(runs[0].lo) and (_gerund(first) or _participle(first.low)):
                break  # ", trading higher cost ..." is a new clause, not a list item
            after = runs[0].hi
            if after < hi and (s.toks[after].low in CLAUSE_VERBS or after in s.blocked):
                break  # ", and an unfaithful answer is ..." starts a new clause
            arg = self.resolve(s, runs[0])
            if arg is None:
                break
            arg = _Arg(arg.cid, arg.lo, arg.hi, arg.penalty + 0.03)
            if conj:
                out.extend(listed)
                listed = []
                out.append(arg)
            else:
                listed.append(arg)
            k = after
        return out

    def as_well_as(self, s: _Sent, k: int, hi: int) -> list[_Arg]:
        """ "X requires A ..., as well as B": B joins A even when words stand between."""
        for j in range(k, hi - 2):
            if not s.soft[j] and not s.comma[j]:
                break
            if s.comma[j] and [t.low for t in s.toks[j : j + 3]] == ["as", "well", "as"]:
                return self.coordinated(s, j, hi)
        return []

    def colon_list(self, s: _Sent, runs: list[_Run], end: int, hi: int) -> list[_Arg] | None:
        """ "made up of three things: A that ..., B ..., and C ..." names A, B and C."""
        if not runs or end >= hi or ":" not in self.text[s.toks[end - 1].end : s.toks[end].start]:
            return None
        first = runs[0]
        words = [s.toks[k].low for k in range(first.lo, first.hi)]
        counted = first.lo > 0 and s.toks[first.lo - 1].low in QUANTITIES
        if not counted or not all(_generic(w) for w in words):
            return None
        out: list[_Arg] = []
        starts = [end] + [j for j in range(end + 1, hi) if s.comma[j]]
        for k in starts:
            last_item = s.toks[k].low in ("and", "or")
            while k < hi and s.toks[k].low in ("and", "or", "a", "an", "the", "all"):
                k += 1
            item = self.runs(s, k, self.segment_end(s, k, hi)) if k < hi else []
            verb = k < hi and (_gerund(s.toks[k]) or _participle(s.toks[k].low))
            if item and item[0].lo == k and not verb:
                arg = self.resolve(s, item[0])
                if arg:
                    out.append(arg)
                    out.extend(a for a in self.coordinated(s, item[0].hi, hi) if a not in out)
            if last_item:
                break
        return out

    def pronoun(self, s: _Sent, lo: int, hi: int) -> list[_Arg] | None:
        """ "it", "this lesson", "these X": what they point at, or None if not a pronoun."""
        tok = s.toks[lo]
        if tok.low not in ANAPHORIC and tok.low not in PERSONAL:
            return None
        nxt = s.toks[lo + 1] if lo + 1 < hi and s.soft[lo + 1] else None
        if tok.low == "this" and nxt is not None and nxt.low in LESSON_WORDS:
            return [_Arg(self.topic, tok.start, nxt.end, 0.05)] if self.topic else []
        if tok.low in ("it", "this") and (nxt is None or nxt.func):
            arg = self.antecedent(s, lo)
            return [arg] if arg else []
        return []  # "they", "these metrics", "its products": nothing we can name

    def subject(self, s: _Sent, lo: int, hi: int) -> _Arg | None:
        """The first concept of a clause that is not inside a prepositional phrase.

        Opening phrases set off by a comma ("In contrast to X, ...", "Because ..., ",
        "..., which ...,") are skipped: the subject follows them.
        """
        starts = [lo] + [j for j in range(lo + 1, hi) if s.comma[j]]
        for seg_lo, seg_hi in zip(starts, [*starts[1:], hi], strict=True):
            first = s.toks[seg_lo].low if seg_lo < hi else ""
            opener = first in PREPOSITIONS or first in SUBORDINATORS or first in ASIDE_STARTS
            if seg_hi < hi and (opener or seg_lo in s.blocked) and first not in ARTICLES:
                continue
            for run in self.runs(s, seg_lo, seg_hi):
                if any(t.low in PERSONAL for t in s.toks[seg_lo : run.lo]):
                    return None  # the subject is a pronoun; "They ..., whereas B" names no A
                if self.in_pp(s, run, seg_lo) or not self.usable(s, run, seg_hi):
                    continue
                return self.resolve(s, run, head=True)
            return None
        return None

    def antecedent(self, s: _Sent, tok: int) -> _Arg | None:
        """What "it" at token ``tok`` points at: this sentence's subject, else the last one's.

        The result carries the pronoun's position (for the reason) and a lower confidence.
        """
        arg = self.subject(s, 0, tok)
        if arg is None and s.index > 0:
            prev = self.sents[s.index - 1]
            if not prev.heading and "\n\n" not in self.text[prev.end : s.start]:
                arg = self.subject(prev, 0, len(prev.toks))
        if arg is None:
            return None
        return _Arg(arg.cid, s.toks[tok].start, s.toks[tok].end, arg.penalty + 0.1)

    def clause_start(self, s: _Sent, k: int) -> int:
        """Where the clause holding token ``k`` begins (commas do not end a clause)."""
        lo = k
        while lo > 0:
            gap = self.text[s.toks[lo - 1].end : s.toks[lo].start]
            if any(c in gap for c in ";:\u2014\u2013") or s.toks[lo - 1].low in CLAUSE_WORDS:
                break
            if s.comma[lo] and s.toks[lo].low in ("and", "but", "so", "yet"):
                break
            lo -= 1
        return lo

    def pick_left(self, s: _Sent, cue: int, *, plural: bool) -> list[_Arg]:
        """The concept before a cue: its subject, looking past asides and relative clauses."""
        floor = self.clause_start(s, cue)
        k = cue - 1
        while k >= floor and s.toks[k].low in BEFORE_CUE:
            k -= 1
        if k >= floor:
            low = s.toks[k].low
            if low in ("it", "this") and s.mentions.get(k) is None:
                arg = self.antecedent(s, k)
                return [arg] if arg else []
            if low in ("they", "these", "them", "those", "both"):
                return []
            if low in ("which", "that", "who"):
                # The relative clause is about the phrase just before the pronoun.
                before = self.runs(s, floor, k)
                if not before or not self.usable(s, before[-1], k):
                    return []
                arg = self.resolve(s, before[-1])
                return [arg] if arg else []
        starts = [floor] + [j for j in range(floor + 1, cue + 1) if s.comma[j]]
        bounds = list(zip(starts, [*starts[1:], cue], strict=False))
        for at, (seg_lo, seg_hi) in reversed(list(enumerate(bounds))):
            cue_segment = at == len(bounds) - 1
            if not cue_segment and at and s.toks[seg_lo].low in ASIDE_STARTS:
                continue
            runs = self.subject_runs(s, seg_lo, seg_hi)
            args = [(r, self.resolve(s, r)) for r in reversed(runs)]
            args = [(r, a) for r, a in args if a]
            if args:
                run, arg = next(((r, a) for r, a in args if not a.penalty), args[0])
                arg = self.gerund_subject(s, run, arg, seg_lo)
                if arg is None:
                    return []
                extra = self.coordinated_left(s, run.lo, seg_lo) if plural else []
                return [arg, *extra]
            if cue_segment:
                continue
            break
        return []

    def subject_runs(self, s: _Sent, lo: int, hi: int) -> list[_Run]:
        """Runs that can be a subject: not "the idea of", not the object of a preposition.

        "In practice LLM-as-a-judge is ..." reads as one run after "In"; the concept the
        run ends with is still the subject.
        """
        out = []
        for run in self.runs(s, lo, hi):
            if not self.usable(s, run, hi):
                continue
            if self.in_pp(s, run, lo):
                later = next((i for i, p in enumerate(run.parts) if i and p[2]), None)
                if later is None:
                    continue
                run = _Run(run.parts[later][0], run.hi, run.parts[later:])
            out.append(run)
        return out

    def gerund_subject(self, s: _Sent, run: _Run, arg: _Arg, floor: int) -> _Arg | None:
        """ "Evaluating a RAG system requires ..." is about RAG evaluation, not RAG."""
        k = run.lo - 1
        while k >= floor and s.toks[k].low in DETERMINERS:
            k -= 1
        if k == floor and _gerund(s.toks[k]) and not s.mentions.get(k):
            verb, object_lo, bare = s.toks[k], run.lo, k + 1 == run.lo
        elif run.lo == floor and _activity(s, run):
            verb, object_lo, bare = s.toks[run.lo], run.parts[1][0], True
            arg = self.resolve(s, _Run(object_lo, run.hi, run.parts[1:])) or arg
        else:
            return arg
        words = [t.low for t in s.toks[object_lo : run.hi]]
        while len(words) > 1 and _generic(words[-1]):
            words.pop()
        stem = verb.low[:-3]
        for noun in (stem + "ion", stem + "ation", stem + "ment", stem + "e", verb.low):
            cid = self.lookup(f"{' '.join(words)} {singular(noun)}")
            if cid:
                return _Arg(cid, verb.start, arg.hi)
        # "Building agents" speaks of agents in general; "Comparing two embeddings" does not.
        return _Arg(arg.cid, arg.lo, arg.hi, arg.penalty + 0.05) if bare else None

    def coordinated_left(self, s: _Sent, k: int, floor: int) -> list[_Arg]:
        out = []
        while k > floor:
            j = k - 1
            while j >= floor and s.toks[j].low in ("a", "an", "the", "both"):
                j -= 1
            if j < floor or not (s.toks[j].low in ("and", "or") or s.comma[j + 1]):
                break
            if s.toks[j].low in ("and", "or"):
                j -= 1
            runs = self.runs(s, floor, j + 1)
            if not runs or runs[-1].hi != j + 1:
                break
            arg = self.resolve(s, runs[-1])
            if arg is None:
                break
            out.append(_Arg(arg.cid, arg.lo, arg.hi, arg.penalty + 0.03))
            k = runs[-1].lo
        return out

    # -- cues --

    def read(self, vocabulary: Sequence[RelationSpec]) -> list[_Raw]:
        cues = COMPILED_CUES + _compiled([c for c in map(_verb_cue, vocabulary) if c])
        raws: list[_Raw] = []
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

    def _lead(self, s: _Sent, cue: _Cue, match: re.Match[str]) -> tuple[int, int] | None:
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
            is_adverb = low.endswith("ly") and _is_function(low)
            if low not in LEAD_WORDS and not is_adverb:
                break
            copula, adverb = copula or low in COPULAS, adverb or is_adverb
            j -= 1
        # "most commonly used for" needs no copula; "are replaced with" is passive.
        if (cue.copula and not (copula or adverb)) or (cue.active and copula):
            return None
        return (s.toks[j].start if j < k else match.start()), match.end()

    def tok_at(self, s: _Sent, char: int) -> int:
        """Index of the first token starting at or after a character offset."""
        for k, tok in enumerate(s.toks):
            if tok.start >= char:
                return k
        return len(s.toks)

    def _cue(self, s: _Sent, cue: _Cue, hit: tuple[int, int]) -> list[_Raw]:
        lo, hi = self.tok_at(s, hit[0]), self.tok_at(s, hit[1])
        if cue.shape in ("contrast", "whereas"):
            pairs = self._contrast(s, cue, lo, hi)
        elif cue.shape == "see_also":
            topic = [_Arg(self.topic, 0, 0)] if self.topic else []
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

    def _contrast(self, s: _Sent, cue: _Cue, lo: int, hi: int) -> list[tuple[_Arg, _Arg]]:
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
        self, s: _Sent, know: list[tuple[int, int]], before: tuple[int, int] | None
    ) -> list[_Raw]:
        """ "Before learning B you should understand A" and "make sure you know A first"."""
        raws = []
        target: _Arg | None = None
        if before:
            got = self.pick_right(s, self.tok_at(s, before[1]))
            target = got[0] if got else None
        elif self.topic:
            target = _Arg(self.topic, 0, 0, 0.05)  # "... first": first before this lesson
        for hit in know:
            if target is None or self._negated(hit):
                continue
            for a in self.pick_right(s, self.tok_at(s, hit[1])):
                raws.append(self._raw(s, "prerequisite", a, target, 0.8, hit))
        return raws

    def _slot(self, s: _Sent, relation: str, confidence: float, match: re.Match[str]) -> list[_Raw]:
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
        self, s: _Sent, relation: str, a: _Arg, b: _Arg, confidence: float, hit: tuple[int, int]
    ) -> _Raw:
        penalty = min(0.3, a.penalty + b.penalty)
        value = round(min(0.99, max(0.05, confidence - penalty)), 2)
        spans = [(x.lo, x.hi) for x in (a, b) if x.hi > x.lo] + [hit]
        lo, hi = min(x for x, _ in spans), max(y for _, y in spans)
        cue = self.text[hit[0] : hit[1]]
        return _Raw(a.cid, relation, b.cid, value, hit[0], s, cue, (lo, hi))

    # -- reporting --

    def reason(self, raw: _Raw) -> str:
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
