"""PLAN, offline: deterministic rules over the question's wording (``phrases``), concepts
found through the name index (``names``), walks chosen per family (``walks_for``).

The walks of each family (an edge ``(s, r, t)`` reads "s r t"):
- prerequisites: (prerequisite, in), (builds_on, out); transitive.
- dependents: (prerequisite, out), (builds_on, in); transitive.
- parts: (part_of, in); wholes: (part_of, out); transitive.
- contrasts: (contrasts_with, both); uses: (applies_to, out); one hop.
- connection: every relation of the vocabulary, both ways; a shortest path within
  ``CONNECTION_HOPS``, refined one hop per round.
- outgoing / incoming: one relation of the graph's own, asked in its verb's words
  (``verbs``: "What does X require?", "What is a kind of X?"): out / in; transitive when
  the relation is acyclic, else one hop.
- yes_no: the asked relation out (prerequisite also (builds_on, in), builds_on also
  (prerequisite, in)); transitive, within ``CONNECTION_HOPS`` and refined, only when the
  relation is acyclic; otherwise one hop. "Is X related to Y?" asks for any chain.
A relation missing from the vocabulary is left out of the walks and said in the plan's
note; a plan with no walk left is answered in words, never walked.

The phrasebook's reading comes first, unless the question uses the verb of one of the
graph's relations that the phrasebook's reading does not walk: then the verb's reading
wins ("Is X an alternative to Y?" asks about ``alternative_to`` in a graph that has it,
not about ``contrasts_with``; "What does X require?" asks about ``requires`` in a graph
without ``prerequisite``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..types import LLMUsage, RelationSpec
from .names import find_concepts
from .phrases import Reading, by_cues, read
from .protocols import NameIndex
from .types import PAIR_FAMILIES, Family, Found, Plan, Walk
from .verbs import phrasing_for, read_by_verbs

CONNECTION_HOPS = 3
SET_HOPS = 64  # transitive set questions walk until nothing new (or the concept limit)

SET_WALKS: dict[str, tuple[Walk, ...]] = {
    "prerequisites": (Walk("prerequisite", "in"), Walk("builds_on", "out")),
    "dependents": (Walk("prerequisite", "out"), Walk("builds_on", "in")),
    "parts": (Walk("part_of", "in"),),
    "wholes": (Walk("part_of", "out"),),
    "contrasts": (Walk("contrasts_with", "both"),),
    "uses": (Walk("applies_to", "out"),),
}
TRANSITIVE = frozenset({"prerequisites", "dependents", "parts", "wholes"})
ALSO: dict[str, tuple[Walk, ...]] = {
    "prerequisite": (Walk("builds_on", "in"),),
    "builds_on": (Walk("prerequisite", "in"),),
}
NO_FAMILY = (
    "I could not tell what the question asks. Ask, for example, 'What should I learn "
    "before X?', 'What depends on X?', 'What is part of X?', 'What is X part of?', "
    "'What does X contrast with?', 'What is X used for?', 'How is X connected to Y?' or "
    "'Is X a prerequisite for Y?'."
)
# The examples of NO_FAMILY, each with the relations it needs (None: any vocabulary).
EXAMPLES: tuple[tuple[str, frozenset[str] | None], ...] = (
    ("What should I learn before X?", frozenset({"prerequisite", "builds_on"})),
    ("What depends on X?", frozenset({"prerequisite", "builds_on"})),
    ("What is part of X?", frozenset({"part_of"})),
    ("What is X part of?", frozenset({"part_of"})),
    ("What does X contrast with?", frozenset({"contrasts_with"})),
    ("What is X used for?", frozenset({"applies_to"})),
    ("How is X connected to Y?", None),
    ("Is X a prerequisite for Y?", frozenset({"prerequisite"})),
)


def example_questions(vocabulary: Sequence[RelationSpec]) -> list[str]:
    """Question shapes this vocabulary answers: the phrasebook's examples whose relations
    it holds, then one question in the words of each other relation (but ``related``,
    which connection questions cover), the connection question last."""
    keys = {spec.key for spec in vocabulary}
    shown = [q for q, needs in EXAMPLES if needs is None or needs & keys]
    covered = set().union(*(needs for _, needs in EXAMPLES if needs and needs & keys))
    for spec in vocabulary:
        phrasing = phrasing_for(spec)
        if spec.key not in covered and spec.key != "related" and phrasing is not None:
            shown.insert(-1, phrasing.outgoing("X"))
    return shown


def no_family_words(vocabulary: Sequence[RelationSpec]) -> str:
    """What to ask instead, for this vocabulary (``example_questions``)."""
    quoted = [f"'{q}'" for q in example_questions(vocabulary)]
    listed = ", ".join(quoted[:-1]) + f" or {quoted[-1]}" if len(quoted) > 1 else quoted[0]
    return f"I could not tell what the question asks. Ask, for example, {listed}."


def _in_vocabulary(
    walks: Sequence[Walk], vocabulary: Sequence[RelationSpec]
) -> tuple[tuple[Walk, ...], list[str]]:
    """The walks whose relation the vocabulary holds (symmetric ones walked both ways),
    and the relations it does not hold."""
    specs = {spec.key: spec for spec in vocabulary}
    kept: list[Walk] = []
    missing: list[str] = []
    for walk in walks:
        spec = specs.get(walk.relation)
        if spec is None:
            missing.append(walk.relation)
        else:
            kept.append(Walk(walk.relation, "both") if spec.symmetric else walk)
    return tuple(dict.fromkeys(kept)), missing


def walks_for(
    family: str, relation: str | None, vocabulary: Sequence[RelationSpec]
) -> tuple[tuple[Walk, ...], int, bool, str]:
    """(walks, hop bound, transitive, note) for a family (and a yes/no relation)."""
    if family == "connection" or (family == "yes_no" and relation is None):
        walks = tuple(Walk(spec.key, "both") for spec in sorted(vocabulary, key=lambda s: s.key))
        note = "" if walks else "The graph has no relation types to walk."
        return walks, CONNECTION_HOPS, True, note
    if family in ("outgoing", "incoming"):
        spec = next((s for s in vocabulary if s.key == relation), None)
        if spec is None:
            return (), 1, False, f"The graph holds no relation '{relation}'."
        walk = Walk(spec.key, "out" if family == "outgoing" else "in")
        kept, _ = _in_vocabulary((walk,), vocabulary)
        return kept, SET_HOPS if spec.acyclic else 1, spec.acyclic, ""
    if family == "yes_no" and relation is not None:
        specs = {spec.key: spec for spec in vocabulary}
        if relation not in specs:
            return (), 1, False, f"The graph holds no relation '{relation}'."
        kept, _ = _in_vocabulary((Walk(relation, "out"), *ALSO.get(relation, ())), vocabulary)
        transitive = specs[relation].acyclic
        return kept, CONNECTION_HOPS if transitive else 1, transitive, ""
    kept, missing = _in_vocabulary(SET_WALKS[family], vocabulary)
    note = ""
    if missing:
        names = ", ".join(f"'{m}'" for m in missing)
        note = f"The graph holds no relation {names}; it was left out of the walk."
    transitive = family in TRANSITIVE
    return kept, SET_HOPS if transitive else 1, transitive, note


def _slot_concepts(reading: Reading, index: NameIndex) -> tuple[list[Found], list[str]]:
    """Concepts in the slots, in plan order (start then goal), and unknown names."""
    found: list[Found] = []
    unknown: list[str] = []
    for slot in ("x", "a", "b", "pair"):
        text = reading.slots.get(slot)
        if not text:
            continue
        hits, missing = find_concepts(text, index)
        found.extend(f for _, f in hits if all(f.concept_id != g.concept_id for g in found))
        unknown.extend(missing)
        if not hits and not missing:
            unknown.append(text)
    return found, unknown


class OfflinePlanner:
    """Reads a question with the phrasebook's rules; no network, deterministic."""

    name = "offline"

    def plan(
        self, question: str, *, index: NameIndex, vocabulary: Sequence[RelationSpec]
    ) -> tuple[Plan, LLMUsage]:
        return plan_question(question, index=index, vocabulary=vocabulary), LLMUsage()


def _reading(question: str, vocabulary: Sequence[RelationSpec]) -> Reading | None:
    """The phrasebook's reading, or the verbs' when it names a relation of the graph
    that the phrasebook's reading does not walk (see the module's words)."""
    reading = read(question)
    own = read_by_verbs(question, vocabulary)
    if own is None:
        return reading
    if reading is None:
        return own
    walks, *_ = walks_for(reading.family, reading.relation, vocabulary)
    return reading if any(w.relation == own.relation for w in walks) else own


def plan_question(
    question: str, *, index: NameIndex, vocabulary: Sequence[RelationSpec], planner: str = "offline"
) -> Plan:
    reading = _reading(question, vocabulary)
    if reading is None:
        hits, _unknown = find_concepts(question, index)
        found = [f for _, f in hits]
        cued = by_cues(question, [f.said for f in found])
        if cued is not None:
            # No rule read it; its cue words did. Unknown words cannot be told from cue
            # words here, so only the concepts found count, and the note says so.
            plan = build_plan(
                question, cued.family, None, found, (), vocabulary=vocabulary, planner=planner
            )
            note = f"Read as a {cued.family} question by its cue words."
            return replace(plan, note=f"{note} {plan.note}".strip())
        return Plan(
            question=question,
            family=None,
            concepts=tuple(found),
            planner=planner,
            note=no_family_words(vocabulary),
        )
    return build_plan(
        question,
        reading.family,
        reading.relation,
        *_slot_concepts(reading, index),
        vocabulary=vocabulary,
        planner=planner,
    )


def build_plan(
    question: str,
    family: str,
    relation: str | None,
    found: Sequence[Found],
    unknown: Sequence[str],
    *,
    vocabulary: Sequence[RelationSpec],
    planner: str = "offline",
) -> Plan:
    """A plan for a family and the concepts found for it: the walks, the hop bound, and
    in words what is missing (a second concept, a relation the graph does not hold)."""
    fam: Family = family  # type: ignore[assignment]
    walks, hops, transitive, note = walks_for(family, relation, vocabulary)
    wanted = 2 if family in PAIR_FAMILIES else 1
    concepts = tuple(found[:wanted])
    notes = [note] if note else []
    if len(found) > wanted:
        extra = ", ".join(f"'{f.name}'" for f in found[wanted:])
        notes.append(f"Only the first {wanted} concept(s) are used; {extra} left aside.")
    if not unknown and len(concepts) < wanted:
        notes.append(
            "This question needs two concepts; I found "
            + (f"only '{concepts[0].name}'." if concepts else "none.")
        )
        return Plan(question, None, concepts, (), planner=planner, note=" ".join(notes))
    return Plan(
        question=question,
        family=fam,
        concepts=concepts,
        unknown=tuple(unknown),
        walks=walks,
        hops=hops,
        relation=relation,
        transitive=transitive,
        planner=planner,
        note=" ".join(notes),
    )
