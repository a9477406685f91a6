"""The offline planner's phrasebook: which question family a question's wording asks,
and where in it the concepts are named.

Each rule is one regular expression over the whole (cleaned) question with named slots:
``x`` for the one concept of a set question; ``a`` / ``b`` for the start and goal of a
pair question (a reversed wording such as "Does Y require X?" puts ``b`` first); ``pair``
for two concepts named in reading order ("between X and Y"). The first rule that matches
wins: yes/no rules first (they start with an auxiliary verb), then connection, then the
set families.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import TYPOGRAPHIC

X = r"(?P<x>.+?)"
A = r"(?P<a>.+?)"
B = r"(?P<b>.+?)"
PAIR = r"(?P<pair>.+?)"
ING = r"(?: learning| studying| understanding| reading| tackling| starting| mastering)?"
WHO = r"(?:i|we|you|one|someone|a learner|a student)"
LEARN = r"(?:learn|know|study|understand|master|read|cover|review)"
PART = (
    r"(?:parts?|components?|pieces?|elements?|sub-?parts?|sub-?components?|building blocks?"
    r"|constituents?|modules?|sub-?topics?|members?)"
)
BAD = r"(?:wrong|weak|shaky|missing|incorrect|flawed|off|bad|poor|mistaken|broken|lacking)"

# (family, relation asked about (yes/no), pattern): one rule per line, unwrapped, so the
# phrasebook reads as a table (E501 is off for this file in pyproject.toml).
# fmt: off
RULES: tuple[tuple[str, str | None, str], ...] = (
    # --- yes/no: one relation between two concepts -------------------------------------
    ("yes_no", "prerequisite", rf"(?:is|are) {A} (?:an? |the )?(?:prerequisites?|prereqs?|requirements?|foundations?|basis) (?:for|of|to){ING} {B}"),
    ("yes_no", "prerequisite", rf"(?:is|are) {A} (?:required|needed|necessary|essential) (?:for|before|to {LEARN}){ING} {B}"),
    ("yes_no", "prerequisite", rf"(?:do|does|should|must) {WHO} (?:need to |have to )?{LEARN} {A} (?:before|for|to {LEARN}|first to {LEARN}){ING} {B}"),
    ("yes_no", "prerequisite", rf"(?:do|does) {WHO} need {A} (?:for|before|to {LEARN}){ING} {B}"),
    ("yes_no", "prerequisite", rf"(?:does|do) {B} (?:require|need|presuppose|assume) {A}"),
    ("yes_no", "prerequisite", rf"(?:does|do|should|must) {A} come (?:before|ahead of) {B}"),
    ("yes_no", "builds_on", rf"(?:does|do) {A} (?:build|depend|rely|rest)s? (?:up)?on {B}"),
    ("yes_no", "builds_on", rf"(?:is|are) {A} (?:built|based|founded) (?:up)?on {B}"),
    ("yes_no", "part_of", rf"(?:is|are) {A} (?:a |an |one )?{PART} (?:of|in) {B}"),
    ("yes_no", "part_of", rf"(?:does|do) {A} belong (?:to|in) {B}"),
    ("yes_no", "part_of", rf"(?:does|do) {B} (?:contain|include|consist of|comprise|incorporate|have) {A}"),
    ("yes_no", "part_of", rf"(?:is|are) {A} (?:inside|within|contained in) {B}"),
    ("yes_no", "applies_to", rf"(?:does|do|can) {A} (?:apply|applies|help with|help) (?:to )?{B}"),
    ("yes_no", "applies_to", rf"(?:is|are|can) {A} (?:be )?(?:used|applied|employed|useful) (?:for|to|in|on) {B}"),
    ("yes_no", "contrasts_with", rf"(?:is|are) {A} (?:an? |the )?(?:alternatives?|contrast|opposite|counterpart) (?:to|of|with|for) {B}"),
    ("yes_no", "contrasts_with", rf"(?:does|do) {A} (?:contrast|differ) (?:with|from) {B}"),
    ("yes_no", "contrasts_with", rf"(?:is|are) {A} (?:different from|contrasted with|in contrast (?:to|with)) {B}"),
    ("yes_no", None, rf"(?:is|are) {A} (?:related|connected|linked) (?:to|with) {B}"),
    # --- contrast with a vague other side: a set question, not a pair -------------------
    ("contrasts", None, rf"how (?:does|do|is|are) {X} (?:differ|different|contrast)(?: from (?:what|others|the others|the alternatives|its alternatives|alternatives|other (?:approaches|methods|techniques)))?"),
    ("contrasts", None, rf"compare {X} (?:with|to|against) (?:what|others|the alternatives|alternatives)"),
    ("contrasts", None, rf"{X} (?:vs\.?|versus) what"),
    # --- connection between two concepts ------------------------------------------------
    ("connection", None, rf"how (?:is|are|does|do) {A} (?:connected|linked|related|tied|relate|connect|link|tie)(?: in)? (?:to|with) {B}"),
    ("connection", None, rf"what (?:links|connects|relates|ties|joins|bridges) {PAIR}"),
    ("connection", None, rf"(?:the |a )?(?:shortest )?(?:path|route|chain|link|connection)s? (?:from|between) {PAIR}"),
    ("connection", None, rf"what(?:'s| is| are) (?:the )?(?:connections?|links?|relationships?|relations?|paths?|chains?) (?:between|from) {PAIR}"),
    ("connection", None, rf"how (?:do|can|would) {WHO} get from {A} to {B}"),
    ("connection", None, rf"how (?:does|do|is|are) {A} (?:differ|different) from {B}"),
    ("connection", None, rf"what(?:'s| is| are) (?:the )?differences? between {PAIR}"),
    ("connection", None, rf"(?:compare|connect|link) {PAIR}"),
    ("connection", None, rf"{A} (?:vs\.?|versus) {B}"),
    # --- prerequisites -------------------------------------------------------------------
    ("prerequisites", None, rf"(?:what|which)(?: \w+)? (?:should|must|do|does|would|will|need|have)\b.*?\b{LEARN}\b(?: first)? (?:before|to {LEARN}|in order to {LEARN}|for){ING} {X}"),
    ("prerequisites", None, rf"(?:what (?:are|is) )?(?:the |some )?(?:prerequisites?|prereqs?|requirements|foundations|dependencies) (?:for|of|to|behind){ING} {X}"),
    ("prerequisites", None, rf"(?:what (?:are|is) )?(?:the )?{X}(?:'s)? (?:prerequisites?|prereqs?|requirements|foundations|dependencies)"),
    ("prerequisites", None, rf"what (?:comes|goes|should come|must come|to {LEARN}|is learned|do {WHO} {LEARN}) (?:before|ahead of|prior to){ING} {X}"),
    ("prerequisites", None, rf"(?:a |the |my )?(?:learning|study|reading) (?:path|plan|order|route|roadmap|sequence|list) (?:to|for|towards?|into|up to){ING} {X}"),
    ("prerequisites", None, rf"(?:a |the )?roadmap (?:to|for|towards?){ING} {X}"),
    ("prerequisites", None, rf"what (?:does|do) {X} (?:require|need|depend on|build on|rely on|assume|presuppose|build upon)"),
    ("prerequisites", None, rf"what (?:is|are) (?:needed|required|necessary|assumed) (?:for|before|to {LEARN}){ING} {X}"),
    ("prerequisites", None, rf"how (?:do|can|should) {WHO} (?:prepare for|get to|get ready for|build up to|work up to){ING} {X}"),
    ("prerequisites", None, rf"what (?:is|are) {X} (?:built|based) (?:up)?on"),
    ("prerequisites", None, rf"where (?:do|should) {WHO} start (?:for|to {LEARN}|before|with){ING} {X}"),
    # --- dependents ----------------------------------------------------------------------
    ("dependents", None, rf"(?:which|what)(?: \w+)? (?:is|are|would be|will be|gets?|could be|might be) (?:affected|impacted|broken|at risk|hurt|harmed) (?:if|when|by)(?: (?:my|our|your|the|one's|a|someone's))?(?: (?:understanding|knowledge|grasp|model|mental model) of)? {X}(?: (?:is|was|are|were) {BAD})?"),
    ("dependents", None, rf"what (?:\w+ )?(?:depends|depend|builds|build|relies|rely|rests|rest|is based|are based|is built|are built) (?:up)?on {X}"),
    ("dependents", None, rf"what (?:can|should|could|do|might|would) {WHO} (?:learn|study|tackle|read|do|explore|take on) (?:after|next after|once {WHO} (?:know|understand|learn)s?){ING} {X}"),
    ("dependents", None, rf"what (?:comes|goes|follows|is next) (?:after|from){ING} {X}"),
    ("dependents", None, rf"what (?:does|do) {X} (?:unlock|enable|lead to|open up)"),
    ("dependents", None, rf"if {WHO} (?:skips?|miss(?:es)?|ignores?|don't (?:know|understand|learn)|do not (?:know|understand|learn)|misunderstands?|gets?|never learns?|do(?:n't| not) get) {X}(?: wrong)?,? (?:what|which)\b.*"),
    ("dependents", None, rf"what (?:requires|needs|presupposes|assumes) {X}"),
    ("dependents", None, rf"(?:the )?(?:dependents|consequences|impact|downstream topics|downstream) of(?: (?:misunderstanding|skipping|not knowing|getting))? {X}(?: wrong)?"),
    ("dependents", None, rf"what (?:is|are) {X} (?:an? |the )?(?:prerequisites?|foundations?|requirements?|basis) (?:for|of|to)"),
    ("dependents", None, rf"what (?:is|are) downstream (?:of|from) {X}"),
    ("dependents", None, rf"what (?:breaks|suffers|fails) if {X} is (?:{BAD}|misunderstood|skipped)"),
    # --- wholes (before parts: "what is X part of" ends where "what is part of X" starts) -
    ("wholes", None, rf"(?:what|which)(?: \w+)? (?:is|are) {X} (?:a |an |one )?{PART} of"),
    ("wholes", None, rf"where (?:does|do|is|are) {X} (?:belong|fit|sit|live|go|located)(?: in)?"),
    ("wholes", None, rf"{X} (?:is|are) (?:a |an |one )?{PART} of (?:what|which \w+)"),
    ("wholes", None, rf"(?:what|which)(?: \w+)? (?:contains?|includes?|incorporates?|has|have) {X}(?: as (?:a|an|one) \w+)?"),
    ("wholes", None, rf"what (?:does|do) {X} belong to"),
    ("wholes", None, rf"what (?:is|are) {X} (?:inside|within|contained in|under)"),
    ("wholes", None, rf"(?:the )?(?:wholes?|parents?|containers?) of {X}"),
    # --- parts ---------------------------------------------------------------------------
    ("parts", None, rf"(?:what|which)(?: \w+)? (?:is|are) (?:the |a |an |all )?{PART} of {X}"),
    ("parts", None, rf"what (?:does|do) {X} (?:consist of|contain|include|comprise|have inside|break down into|consist in|is made of|have as (?:parts|components))"),
    ("parts", None, rf"what (?:makes|make) up {X}"),
    ("parts", None, rf"what goes into {X}"),
    ("parts", None, rf"what (?:is|are) {X} (?:made|composed|built) (?:up )?(?:of|from)"),
    ("parts", None, rf"(?:list |show |name )?(?:the |all )?{PART} of {X}"),
    ("parts", None, rf"(?:what(?:'s| is| are) )?inside {X}"),
    ("parts", None, rf"break down {X}"),
    ("parts", None, rf"(?:what are )?(?:the )?{X}(?:'s)? (?:components|parts|pieces|building blocks)"),
    # --- contrasts -----------------------------------------------------------------------
    ("contrasts", None, rf"what (?:does|do) {X} (?:contrast|compare|differ) (?:with|to|from)"),
    ("contrasts", None, rf"what (?:is|are) {X} (?:an? |the )?(?:alternatives?|contrasts?|counterparts?|opposites?) (?:to|of|for|with)"),
    ("contrasts", None, rf"(?:what (?:are|is) )?(?:the |some )?(?:alternatives?|contrasts?|opposites?|counterparts?|competitors?) (?:to|of|for|with) {X}"),
    ("contrasts", None, rf"what (?:contrasts|compares) with {X}"),
    ("contrasts", None, rf"what (?:can|could|should|might) {WHO} use instead of {X}"),
    ("contrasts", None, rf"what (?:is|are) (?:different from|the opposite of|contrasted with) {X}"),
    ("contrasts", None, rf"what (?:is|are) {X} contrasted with"),
    # --- uses ----------------------------------------------------------------------------
    ("uses", None, rf"what (?:is|are) {X} (?:used|applied|employed|good|useful|helpful|utili[sz]ed) (?:for|to|in|on)"),
    ("uses", None, rf"what (?:can|could|should|might) {X} be (?:used|applied|employed) (?:for|to|in|on)"),
    ("uses", None, rf"what (?:does|do) {X} (?:apply|applies) to"),
    ("uses", None, rf"where (?:is|are|can|could) {X} (?:be )?(?:applied|used|employed)"),
    ("uses", None, rf"(?:what (?:are|is) )?(?:the |some )?(?:applications?|uses|use cases|usages|application areas) (?:of|for) {X}"),
    ("uses", None, rf"(?:what (?:are|is) )?(?:the )?{X}(?:'s)? (?:applications|uses|use cases)"),
    ("uses", None, rf"what (?:is|are) {X} for"),
    ("uses", None, rf"how (?:is|are|can) {X} (?:be )?(?:used|applied)"),
    ("uses", None, rf"what (?:can|do) {WHO} (?:do|build|achieve) with {X}"),
)
# fmt: on
COMPILED = tuple(
    (family, relation, re.compile(rf"^{pattern}$", re.IGNORECASE))
    for family, relation, pattern in RULES
)
POLITE = re.compile(
    r"^(?:(?:hey|hi|ok|okay|so|and|please|quick question)[:,]?\s+)*"
    r"(?:(?:can|could|would) you (?:please )?(?:tell me|show me|explain|list|give me)\s+"
    r"|(?:please )?(?:tell me|show me|explain|list|give me|i want to know|i'd like to know"
    r"|i wonder|i am wondering|i'm wondering)[:,]?\s+)?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Reading:
    """What a rule read: the family, the relation asked about, and the slot texts."""

    family: str
    relation: str | None
    slots: dict[str, str]


def clean(question: str) -> str:
    """The question as the rules read it: typographic quotes and dashes plain, one space
    between words, no polite opening, no closing punctuation."""
    text = " ".join(question.translate(TYPOGRAPHIC).split())
    text = POLITE.sub("", text).strip()
    return text.rstrip(" ?!.;:").strip()


def read(question: str) -> Reading | None:
    """The first rule the question matches, or None (no family)."""
    text = clean(question)
    for family, relation, pattern in COMPILED:
        match = pattern.match(text)
        if match:
            slots = {k: v.strip() for k, v in match.groupdict().items() if v is not None}
            return Reading(family, relation, slots)
    return None
