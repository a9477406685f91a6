"""The ask loop: plan -> retrieve -> critique -> (refine -> critique)* -> answer.

``ask`` is the one entry point (the Django service, the command, competency questions
and the benchmarks call it). The offline planner and critic are the defaults; with them
the same question on the same graph and instant gives the same answer, ordering included.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..types import LLMUsage
from .answer import answer, members_answer, unwalked
from .critic import OfflineCritic
from .planner_offline import OfflinePlanner
from .protocols import Critic, GraphReader, NameIndex, Planner
from .stages import refine, retrieve
from .typed import TypeSpec, members_plan, plan_typed, read_type
from .types import PAIR_FAMILIES, Answer, Plan, Retrieval, Verdict

DEFAULT_MAX_ITERATIONS = 3
DEFAULT_LIMIT = 2000
DEFAULT_SET_LIMIT = 200


def _names(retrieval: Retrieval) -> dict[int, str]:
    return {c.concept_id: c.name for c in retrieval.concepts}


def within_budget(usage: LLMUsage, max_tokens: int) -> bool:
    """Whether an ask that spent ``usage`` may call a model again (0: no budget)."""
    return max_tokens <= 0 or usage.total_tokens < max_tokens


def walkable(plan: Plan) -> bool:
    """Whether a plan (from any planner) can be walked: understood, with walks, and with
    the concepts its family needs (two for a pair question)."""
    wanted = 2 if plan.family in PAIR_FAMILIES else 1
    return plan.understood and bool(plan.walks) and len(plan.concepts) >= wanted


def ask(
    question: str,
    *,
    reader: GraphReader,
    index: NameIndex,
    planner: Planner | None = None,
    critic: Critic | None = None,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    limit: int = DEFAULT_LIMIT,
    set_limit: int = DEFAULT_SET_LIMIT,
    at: str | None = None,
    max_tokens: int = 0,
    types: Sequence[TypeSpec] = (),
) -> tuple[Answer, LLMUsage]:
    """Answer ``question`` from the graph ``reader`` reads (bound to one instant; ``at``
    only names it in the answer's words). Returns the answer and the model usage (zero
    offline). At most ``max_iterations`` refinement rounds; a pair question's walks meet
    at most ``limit`` concepts, a set question's at most ``set_limit`` (an answer cut
    there says so: a person reads two hundred names, a full closure is the learning-path
    API's, in pages). ``max_tokens`` (0: no limit) is the ask's model budget: once the
    calls so far spent it, the rounds left are critiqued by the offline critic, which
    calls no model (so one call may overshoot it, never two). ``types`` is the concept
    vocabulary: a question that names a type keeps to it (``typed``)."""
    planner = planner or OfflinePlanner()
    critic = critic or OfflineCritic()
    vocabulary = reader.relations()
    reading = read_type(question, types)
    if reading is not None and reading.listing:
        members, cut = reader.concepts_of_types(reading.keys, limit=set_limit)
        return members_answer(members_plan(question, reading), members, cut=cut, at=at), LLMUsage()
    plan, usage = plan_typed(question, reading, planner=planner, index=index, vocabulary=vocabulary)
    if not walkable(plan):
        return unwalked(plan, at=at), usage
    if plan.family not in PAIR_FAMILIES:
        limit = min(limit, set_limit)
    retrieval = retrieve(plan, reader, limit)
    verdicts: list[Verdict] = []
    rounds = 0
    while True:
        judge = critic if within_budget(usage, max_tokens) else OfflineCritic()
        verdict, used = judge.critique(plan, retrieval, names=_names(retrieval), round=rounds)
        usage += used
        verdicts.append(verdict)
        if verdict.complete or not verdict.refine_from or rounds >= max(0, max_iterations):
            break
        retrieval = refine(plan, retrieval, verdict, reader, limit)
        rounds += 1
    typed = reader.concept_types([c.concept_id for c in retrieval.concepts]) if plan.types else None
    found = answer(
        plan,
        retrieval,
        verdicts,
        iterations=rounds,
        at=at,
        vocabulary=vocabulary,
        concept_types=typed,
    )
    return found, usage
