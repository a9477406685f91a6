"""Questions that name a concept type: "Which settings affect checkpoints?", "What
commands are part of VACUUM?", "List the lock modes".

The type is read off the question's opening by its label, its key (``lock_mode`` read as
"lock mode") or the plural of either, the longest first; the rest of the question is
handed to the planner without it ("What affects checkpoints?", "What is part of VACUUM?"),
and the plan it makes keeps only answers of that type or a type below it (``Plan.types``).
A question that only names the type ("List the lock modes", "What are the commands?")
asks for its concepts (``members``). Pure: the vocabulary comes in as ``TypeSpec`` values
(``kgreview.graph.asking`` reads them off the graph), and the planner is whichever the
loop uses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from ..types import LLMUsage, RelationSpec
from .phrases import clean
from .protocols import NameIndex, Planner
from .types import SET_FAMILIES, Plan

#: Verbs whose third person is not the base form plus "s".
THIRD = {"are": "is", "were": "was", "have": "has", "do": "does", "go": "goes"}


@dataclass(frozen=True)
class TypeSpec:
    """A concept type as the ask loop knows it: its key, label and parent's key."""

    key: str
    label: str
    parent: str | None = None


@dataclass(frozen=True)
class TypeReading:
    """A question's type: the type, the keys it covers (it and every type below it), the
    words the question used for it, the question without them for the planner (tried in
    order), and whether the question only asks for the type's concepts."""

    spec: TypeSpec
    keys: tuple[str, ...]
    said: str
    rewrites: tuple[str, ...] = ()
    listing: bool = False


def plural(word: str) -> str:
    """The plural of a type's last word: "setting" -> "settings", "process" ->
    "processes", "policy" -> "policies"; a word already ending in s is kept."""
    if word.endswith(("ss", "sh", "ch", "x", "z")):
        return word + "es"
    if word.endswith("s"):
        return word
    if len(word) > 1 and word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def plural_label(spec: TypeSpec) -> str:
    """The type's label in the plural, in lower case ("Lock mode" -> "lock modes")."""
    head, _, last = spec.label.lower().rpartition(" ")
    return f"{head} {plural(last)}".strip()


def forms(spec: TypeSpec) -> set[str]:
    """Every way a question may name the type: label and key (underscores as spaces),
    each in the singular and the plural, in lower case."""
    said = {" ".join(spec.label.lower().split()), spec.key.replace("_", " ")}
    out = set()
    for name in said:
        head, _, last = name.rpartition(" ")
        out.add(name)
        out.add(f"{head} {plural(last)}".strip())
    return {f for f in out if f}


def family(key: str, types: Sequence[TypeSpec]) -> tuple[str, ...]:
    """The keys of ``key`` and every type below it, in key order."""
    children: dict[str, list[str]] = {}
    for t in types:
        if t.parent:
            children.setdefault(t.parent, []).append(t.key)
    found, todo = {key}, [key]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:  # the vocabulary refuses loops; never walk one twice
                found.add(child)
                todo.append(child)
    return tuple(sorted(found))


@lru_cache(maxsize=32)
def _patterns(types: tuple[TypeSpec, ...]) -> tuple[re.Pattern[str], re.Pattern[str], dict]:
    """(the listing pattern, the set pattern, each form -> its type) for a vocabulary."""
    by_form: dict[str, TypeSpec] = {}
    for spec in sorted(types, key=lambda t: t.key):
        for form in forms(spec):
            by_form.setdefault(form, spec)
    names = "|".join(re.escape(f) for f in sorted(by_form, key=lambda f: (-len(f), f)))
    t = rf"(?P<t>{names})"
    t2 = rf"(?P<t2>{names})"
    # The phrasebook's cleaning has already taken "list", "show me", "give me" off.
    listing = re.compile(
        rf"(?:(?:list|show|name|give|enumerate|find)(?: me| us)? |(?:what|which) (?:are|were|is) )?"
        rf"(?:(?:all|every|each)(?: of)? )?(?:the )?{t}(?: (?:are )?there)?(?: in the graph)?",
        re.IGNORECASE,
    )
    typed = re.compile(
        rf"(?:(?:what|which) (?:are|were|is) (?:the |all the )?{t} (?:that|which|who) "
        rf"|(?:what|which)(?: of the)? {t2}(?: that| which)? )(?P<rest>.+)",
        re.IGNORECASE,
    )
    return listing, typed, by_form


def _third_person(rest: str) -> str:
    """The rest of the question with its first verb in the third person singular, as
    the phrasebooks read it after "What": "affect X" -> "affects X", "are part of X" ->
    "is part of X"."""
    first, _, after = rest.partition(" ")
    low = first.lower()
    if low in THIRD:
        verb = THIRD[low]
    elif low.endswith("s"):
        return rest
    elif len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        verb = low[:-1] + "ies"
    elif low.endswith(("sh", "ch", "x", "z", "o")):
        verb = low + "es"
    else:
        verb = low + "s"
    return f"{verb} {after}".strip()


def read_type(question: str, types: Sequence[TypeSpec]) -> TypeReading | None:
    """The type a question names at its opening, or None (no type, or no vocabulary)."""
    if not types:
        return None
    text = clean(question)
    listing, typed, by_form = _patterns(tuple(types))
    match = listing.fullmatch(text)
    if match:
        spec = by_form[match.group("t").lower()]
        return TypeReading(spec, family(spec.key, types), match.group("t"), listing=True)
    match = typed.fullmatch(text)
    if match is None:
        return None
    said = match.group("t") or match.group("t2")
    spec = by_form[said.lower()]
    rest = match.group("rest")
    rewrites = tuple(dict.fromkeys((f"What {_third_person(rest)}?", f"What {rest}?")))
    return TypeReading(spec, family(spec.key, types), said, rewrites=rewrites)


def with_type(plan: Plan, reading: TypeReading, question: str) -> Plan:
    """The plan the planner made of the question without its type, for the question as
    asked: its answers kept to the type's keys, and said so in its note."""
    note = (
        f"Only {plural_label(reading.spec)} are kept: concepts of type "
        f"'{reading.spec.key}' or a type below it."
    )
    return replace(
        plan,
        question=question,
        type_key=reading.spec.key,
        type_label=reading.spec.label,
        types=reading.keys,
        note=f"{plan.note} {note}".strip(),
    )


def plan_typed(
    question: str,
    reading: TypeReading | None,
    *,
    planner: Planner,
    index: NameIndex,
    vocabulary: Sequence[RelationSpec],
) -> tuple[Plan, LLMUsage]:
    """PLAN with the type: each rewrite in turn, the first the planner reads as a set
    question wins, kept to the type; else the question as asked (the type's words may be
    a concept's own name)."""
    usage = LLMUsage()
    if reading is not None:
        for rewrite in reading.rewrites:
            plan, used = planner.plan(rewrite, index=index, vocabulary=vocabulary)
            usage += used
            if plan.family in SET_FAMILIES:
                return with_type(plan, reading, question), usage
    plan, used = planner.plan(question, index=index, vocabulary=vocabulary)
    return plan, usage + used


def members_plan(question: str, reading: TypeReading) -> Plan:
    """The plan of a question that only asks for a type's concepts: nothing to walk."""
    return Plan(
        question=question,
        family="members",
        type_key=reading.spec.key,
        type_label=reading.spec.label,
        types=reading.keys,
        hops=0,
        transitive=False,
        note=f"Read as a list of the {plural_label(reading.spec)}, with the types below it.",
    )
