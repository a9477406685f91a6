"""ANSWER: the result in words, with the concept set or the path and every hop cited.

Set questions list their answer set in ``concepts`` (prerequisites in a study order,
foundations first; the others by distance, then name, then id) and one cited path per
member (its breadth-first route from the asked concept). Connection questions give the
shortest chain found. Yes/no questions say yes with the chain, or no when the search is
over. An absence names the instant ("as of ..." or "now") and says whether the graph was
searched to the end ("not connected") or only within a hop bound.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..types import RelationSpec
from .paths import chain_words, facts_of, members, pair_path, problems, tree_routes
from .typed import plural
from .types import PAIR_FAMILIES, Answer, ConceptFact, Plan, Retrieval, Status, Step, Verdict
from .wholes import considered, names_of, pending, whole_routes

# Verbs that take "not" after them; any other verb is negated with "does not".
AUXILIARIES = frozenset({"is", "are", "was", "were", "can", "may", "must", "should", "will"})
SET_FOUND = {
    "prerequisites": "Before {x}, learn (foundations first): {items}.",
    "dependents": "If your understanding of {x} is wrong, these are affected: {items}.",
    "parts": "Part of {x}: {items}.",
    "wholes": "{x} is part of: {items}.",
    "contrasts": "{x} contrasts with: {items}.",
    "uses": "{x} applies to: {items}.",
}
SET_NONE = {
    "prerequisites": "Nothing needs to be learned before {x} {when}.",
    "dependents": "Nothing depends on {x} {when}.",
    "parts": "Nothing is part of {x} {when}.",
    "wholes": "{x} is part of nothing {when}.",
    "contrasts": "{x} contrasts with nothing {when}.",
    "uses": "{x} applies to nothing {when}.",
}
# A relation of the graph's own, asked in its verb's words: {verb} is the relation's verb
# ("requires", "is a kind of"), {not_verb} the same said the other way.
VERB_FOUND = {
    "outgoing": "{x} {verb}: {items}.",
    "incoming": "Each of these {verb} {x}: {items}.",
}
VERB_NONE = {
    "outgoing": "{x} {not_verb} anything {when}.",
    "incoming": "Nothing {verb} {x} {when}.",
}
CUT = " (the walk was cut at the concept limit; there may be more)"


def when(at: str | None) -> str:
    return f"in the graph as of {at}" if at else "in the graph now"


def negated(verb: str) -> str:
    """A relation's verb said the other way: "is a prerequisite for" -> "is not a
    prerequisite for", "builds on" -> "does not build on", "applies to" -> "does not
    apply to"."""
    first, _, rest = verb.partition(" ")
    if first.lower() in AUXILIARIES:
        return f"{first} not {rest}".strip()
    if first.endswith("ies"):
        first = first[:-3] + "y"
    elif first.endswith(("sses", "shes", "ches", "xes", "zes")):
        first = first[:-2]
    elif first.endswith("s") and not first.endswith("ss"):
        first = first[:-1]
    return f"does not {first} {rest}".strip()


def verb(
    relation: str | None, verbs: dict[str, str] | None = None, *, negative: bool = False
) -> str:
    """How a relation reads between two names, from the vocabulary's verb (the key in
    words when the vocabulary does not hold it); None is any relation: "connected to"."""
    if relation is None:
        return "is not connected to" if negative else "is connected to"
    said = (verbs or {}).get(relation) or relation.replace("_", " ")
    return negated(said) if negative else said


def unwalked(plan: Plan, *, at: str | None = None, critique: Sequence[str] = ()) -> Answer:
    """The answer to a plan that is not walked: not understood, or nothing to walk."""
    status: Status = "not_understood"
    if plan.unknown:
        quoted = " and ".join(f"'{u}'" for u in plan.unknown)
        noun = "concept" if len(plan.unknown) == 1 else "concepts"
        message = f"I do not know the {noun} {quoted}."
        why = f"the question names {noun} the graph does not know, so no walk can start"
    elif plan.family is None or not plan.concepts:
        message = plan.note or "I could not tell what the question asks."
        why = "the question was not read as one the graph can answer"
        if plan.family is not None:
            why = "the question names no concept of the graph to start from"
    elif plan.family in PAIR_FAMILIES and len(plan.concepts) < 2:
        message = f"This question needs two concepts; I found only '{plan.concepts[0].name}'."
        why = "a chain needs two concepts to join and the question names one"
    else:  # understood, but the vocabulary holds none of the relations to walk
        status = "no_path"
        message = f"{plan.note or 'There is no relation to walk.'} Nothing to walk {when(at)}."
        why = "the graph holds none of the relations this question walks"
    return Answer(
        question=plan.question, status=status, message=message, plan=plan, at=at,
        critique=tuple(critique) or (f"Round 0: nothing walked: {why}.",),
    )  # fmt: skip


def answer(
    plan: Plan,
    retrieval: Retrieval,
    verdicts: Sequence[Verdict],
    *,
    iterations: int,
    at: str | None = None,
    vocabulary: Sequence[RelationSpec] = (),
    concept_types: dict[int, str | None] | None = None,
) -> Answer:
    """The answer in words; ``vocabulary`` gives the relations' verbs (yes/no, outgoing
    and incoming answers). A plan kept to a type (``plan.types``) answers only the
    concepts whose type (``concept_types``, at the instant) is one of them."""
    critique = tuple(reason for verdict in verdicts for reason in verdict.reasons)
    verbs = {spec.key: spec.verb for spec in vocabulary}
    if plan.family in PAIR_FAMILIES:
        return _pair_answer(plan, retrieval, critique, iterations, at, verbs)
    found = _set_answer(plan, retrieval, critique, iterations, at, verbs)
    return _of_type(found, concept_types or {}) if plan.types else found


def _names(retrieval: Retrieval, paths: Sequence[Sequence[Step]]) -> tuple[tuple[int, str], ...]:
    facts = facts_of(retrieval)
    used = {c for path in paths for s in path for c in (s.edge.source_id, s.edge.target_id)}
    return tuple((c, facts[c].name) for c in sorted(used) if c in facts)


def _set_order(plan: Plan, retrieval: Retrieval, routes: dict[int, tuple[Step, ...]]) -> list[int]:
    facts = facts_of(retrieval)
    rest = sorted(routes, key=lambda c: (len(routes[c]), facts[c].name, c))
    if plan.family != "prerequisites":
        return rest
    ordered = [c for c in dict.fromkeys(retrieval.order) if c in routes]
    placed = set(ordered)
    return ordered + [c for c in rest if c not in placed]


def _set_message(plan: Plan, name: str, items: str, at: str | None, verbs: dict) -> str:
    family = plan.family or "prerequisites"
    if family in VERB_FOUND:
        said = verb(plan.relation, verbs)
        if items:
            return VERB_FOUND[family].format(x=name, verb=said, items=items)
        not_said = verb(plan.relation, verbs, negative=True)
        return VERB_NONE[family].format(x=name, verb=said, not_verb=not_said, when=when(at))
    if items:
        return SET_FOUND[family].format(x=name, items=items)
    return SET_NONE[family].format(x=name, when=when(at))


def _set_answer(
    plan: Plan,
    retrieval: Retrieval,
    critique: tuple[str, ...],
    iterations: int,
    at: str | None,
    verbs: dict[str, str],
) -> Answer:
    start = plan.concepts[0]
    facts = facts_of(retrieval)
    sound, _ = tree_routes(
        retrieval, plan.walks, dict(retrieval.from_start), start.concept_id, facts
    )
    routes = {c: sound[c] for c in members(retrieval, plan) if c in sound}
    if plan.family == "prerequisites" and retrieval.considered:
        for concept, path in whole_routes(plan, retrieval).items():
            routes.setdefault(concept, path)
    order = _set_order(plan, retrieval, routes)
    concepts = tuple(facts[c] for c in order)
    paths = tuple(routes[c] for c in order)
    status: Status = "answered" if concepts else "no_path"
    items = ", ".join(c.name for c in concepts)
    message = _set_message(plan, start.name, items, at, verbs)
    if plan.family == "prerequisites":
        message = _through_wholes(retrieval, start.name, message, [c.name for c in concepts])
    if retrieval.truncated:
        message = message[:-1] + CUT + "."
    return Answer(
        question=plan.question, status=status, message=message, plan=plan,
        concepts=concepts, paths=paths, critique=critique, iterations=iterations, at=at,
        names=_names(retrieval, paths),
    )  # fmt: skip


def type_words(plan: Plan) -> tuple[str, str]:
    """The type a plan keeps to, in the singular and the plural, lower case."""
    label = " ".join((plan.type_label or plan.type_key or "").lower().split())
    head, _, last = label.rpartition(" ")
    return label, f"{head} {plural(last)}".strip()


def _of_type(found: Answer, types: dict[int, str | None]) -> Answer:
    """A set answer kept to the plan's types: the other concepts (and their routes) left
    out, and the message saying which type it kept to."""
    plan = found.plan
    keep = [i for i, c in enumerate(found.concepts) if types.get(c.concept_id) in plan.types]
    concepts = tuple(found.concepts[i] for i in keep)
    paths = tuple(found.paths[i] for i in keep) if found.paths else ()
    one, many = type_words(plan)
    scope = f"{many}: type '{plan.type_key}' or a type below it"
    if concepts:
        message = f"{found.message[:-1]} (only {scope})."
        if len(concepts) < len(found.concepts):
            message = message.replace(
                ", ".join(c.name for c in found.concepts), ", ".join(c.name for c in concepts), 1
            )
        status: Status = "answered"
    else:
        others = ", ".join(c.name for c in found.concepts)
        message = (
            f"No {one} answers this {when(found.at)}: the answer holds only concepts of "
            f"other types ({others})."
            if others
            else f"{found.message[:-1]} (looking only at {scope})."
        )
        status = "no_path"
    return Answer(
        question=found.question, status=status, message=message, plan=plan,
        concepts=concepts, paths=paths, critique=found.critique,
        iterations=found.iterations, at=found.at, names=found.names,
    )  # fmt: skip


def members_answer(
    plan: Plan, members: Sequence[ConceptFact], *, cut: bool, at: str | None
) -> Answer:
    """The answer to "List the lock modes": the type's concepts (and its subtypes'), by
    name, at the instant."""
    one, many = type_words(plan)
    if members:
        items = ", ".join(c.name for c in members)
        message = f"The {many} {when(at)} (with the types below '{plan.type_key}'): {items}."
        if cut:
            message = message[:-1] + CUT + "."
    else:
        below = " or a type below it" if len(plan.types) > 1 else ""
        message = (
            f"There are no {many} {when(at)}: no concept has the type '{plan.type_key}'{below}."
        )
    return Answer(
        question=plan.question, status="answered" if members else "no_path",
        message=message, plan=plan, concepts=tuple(members), at=at,
        critique=(f"Round 0: nothing walked: the question asks for the {many}.",),
    )  # fmt: skip


def _through_wholes(retrieval: Retrieval, name: str, message: str, items: list[str]) -> str:
    """A prerequisites message that says which wholes' needs it holds, and which wholes
    further up the part_of chain were left for want of rounds."""
    done, left = considered(retrieval), pending(retrieval)
    if done and items:
        message = (
            f"{name} is part of {names_of(retrieval, done)}; before it, learn "
            f"(foundations first): {', '.join(items)}."
        )
    elif done:
        need = "needs" if len(done) == 1 else "need"
        wholes = names_of(retrieval, done)
        message = f"{message[:-1]}; it is part of {wholes}, which {need} nothing either."
    if left:
        message = (
            f"{message[:-1]} ({name} is {'also ' if done else ''}part of "
            f"{names_of(retrieval, left)}, whose needs "
            "were not considered within the rounds allowed)."
        )
    return message


def _pair_answer(
    plan: Plan,
    retrieval: Retrieval,
    critique: tuple[str, ...],
    iterations: int,
    at: str | None,
    verbs: dict[str, str],
) -> Answer:
    a, b = plan.concepts[0], plan.concepts[1]
    facts = facts_of(retrieval)
    path = pair_path(plan, retrieval)
    if path is not None and problems(plan, path, facts, start=a.concept_id, goal=b.concept_id):
        path = None  # never cite a broken chain
    yes_no = plan.family == "yes_no"
    if path is None:
        status: Status = "answered" if yes_no else "no_path"
        return Answer(
            question=plan.question, status=status, message=_absence(plan, retrieval, at, verbs),
            plan=plan, yes=False if yes_no else None, critique=critique,
            iterations=iterations, at=at,
        )  # fmt: skip
    names = {c.concept_id: c.name for c in retrieval.concepts}
    ids = [a.concept_id] + [s.to for s in path]
    concepts = tuple(facts.get(c) or ConceptFact(c, names.get(c, "")) for c in ids)
    chain = chain_words(path, names)
    if yes_no:
        message = f"Yes: {a.name} {verb(plan.relation, verbs)} {b.name}: {chain}."
    else:
        message = f"{a.name} is connected to {b.name} in {len(path)} hop(s): {chain}."
    return Answer(
        question=plan.question, status="answered", message=message, plan=plan,
        yes=True if yes_no else None, concepts=concepts, paths=(path,), critique=critique,
        iterations=iterations, at=at, names=_names(retrieval, (path,)),
    )  # fmt: skip


def _absence(plan: Plan, retrieval: Retrieval, at: str | None, verbs: dict[str, str]) -> str:
    a, b = plan.concepts[0].name, plan.concepts[1].name
    cut = CUT if retrieval.truncated else ""
    if plan.family == "yes_no":
        negative = verb(plan.relation, verbs, negative=True)
        if retrieval.exhausted:
            return f"No: {a} {negative} {b} {when(at)}; every chain was searched."
        if not plan.transitive:
            return f"No: {a} {negative} {b} {when(at)}; no edge says so."
        return (
            f"No: no chain shows {a} {verb(plan.relation, verbs)} {b} within "
            f"{retrieval.depth} hops {when(at)}{cut}."
        )
    if retrieval.exhausted:
        return f"{a} and {b} are not connected {when(at)}."
    return f"No path between {a} and {b} within {retrieval.depth} hops {when(at)}{cut}."
