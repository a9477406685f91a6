"""PLAN and CRITIQUE through an OpenAI-compatible chat-completions model.

Both talk through ``construction.llm.chat.ChatClient`` (the extractor's client settings,
transient retries with backoff, json_schema with its json_object fallback, and
validation retries with the problems fed back in words).

The model never decides what exists: it reads the question's family and copies the names
the question writes (a name the question does not write is sent back); those names are
found through the name index (``names.find_concepts``), and the plan is built as the
offline planner builds its own (``planner_offline.build_plan``: the same walks, hop
bounds and notes). The critic wraps the offline checks, which always run first:
the model may add words, or ask to search further, but never accept a chain they found
incomplete. Whatever goes wrong with the model ends in words, never in an exception:
a plan the model could not make is ``not_understood``; a critique it could not give
leaves the offline verdict standing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from openai.types.chat import ChatCompletionMessageParam
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from ..errors import LLMError
from ..keys import relation_key
from ..llm.answers import describe_errors, unfence
from ..llm.chat import ChatClient
from ..text import name_key, name_keys, singular, words
from ..types import LLMUsage, RelationSpec
from .critic import OfflineCritic
from .names import find_concepts
from .planner_offline import build_plan, no_family_words
from .prompts import (
    CRITIC_SYSTEM,
    CRITIQUE_SCHEMA,
    critic_user,
    critique_feedback,
    plan_feedback,
    plan_schema,
    plan_system,
    plan_user,
)
from .protocols import Critic, NameIndex
from .types import FAMILIES, PAIR_FAMILIES, RELATION_FAMILIES, Found, Plan, Retrieval, Verdict

PLAN_SCHEMA_NAME = "question_plan"
CRITIQUE_SCHEMA_NAME = "chain_critique"
MAX_HOPS = 6
REASONS_KEPT = 5  # the model's reasons added to a verdict, at most
REASON_MAX = 300  # characters of one reason


class PlanAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    family: str | None
    concepts: list[str] = Field(max_length=4)
    relation: str | None = None
    hops: int | None = Field(default=None, ge=1, le=MAX_HOPS)


class CritiqueAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    complete: StrictBool
    refine: StrictBool
    reasons: list[str] = Field(default_factory=list, max_length=20)


def _json(content: str | None) -> tuple[object, list[str]]:
    if content is None or not content.strip():
        return None, ["the answer was empty"]
    try:
        data = json.loads(unfence(content))
    except json.JSONDecodeError as err:
        return None, [f"the answer is not JSON: {err.msg} at line {err.lineno} column {err.colno}"]
    if not isinstance(data, dict):
        return None, [f"expected a JSON object, got {type(data).__name__}"]
    return data, []


# --- PLAN ---------------------------------------------------------------------------------


class OpenAIPlanner(ChatClient):
    """Reads a question into a ``Plan`` with a model; takes ``ChatClient``'s settings."""

    name = "openai"

    def plan(
        self, question: str, *, index: NameIndex, vocabulary: Sequence[RelationSpec]
    ) -> tuple[Plan, LLMUsage]:
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": plan_system(vocabulary)},
            {"role": "user", "content": plan_user(question)},
        ]
        keys = {spec.key for spec in vocabulary}
        try:
            talk = self.converse(
                messages,
                schema=(PLAN_SCHEMA_NAME, plan_schema(vocabulary)),
                read=lambda content: read_plan(content, question=question, relations=keys),
                feedback=plan_feedback,
            )
        except LLMError as err:
            note = f"I could not read the question: the model could not be asked ({err})."
            return self._unread(question, note), err.usage
        if talk.answer is None:
            said = "; ".join(talk.problems)
            note = (
                f"I could not read the question: the model's plan was unusable after "
                f"{talk.tries} ({said})."
            )
            return self._unread(question, note), talk.usage
        return self._plan(question, talk.answer, index, vocabulary, talk.tries), talk.usage

    def _unread(self, question: str, note: str) -> Plan:
        return Plan(question=question, family=None, planner=self.name, note=note)

    def _plan(
        self,
        question: str,
        answer: PlanAnswer,
        index: NameIndex,
        vocabulary: Sequence[RelationSpec],
        tries: str,
    ) -> Plan:
        read = f"Read by the model {self.model} in {tries}."
        if answer.family is None:
            return self._unread(question, f"{no_family_words(vocabulary)} ({read})")
        found: list[Found] = []
        unknown: list[str] = []
        for said in answer.concepts:
            hits, missing = find_concepts(said, index)
            found.extend(f for _, f in hits if all(f.concept_id != g.concept_id for g in found))
            unknown.extend(missing if hits or missing else [said])
        relation = _relation_key(answer.relation) if answer.family in RELATION_FAMILIES else None
        plan = build_plan(
            question,
            answer.family,
            relation,
            found,
            unknown,
            vocabulary=vocabulary,
            planner=self.name,
        )
        hops = plan.hops if answer.hops is None else max(1, min(plan.hops, answer.hops))
        return replace(plan, hops=hops, note=" ".join(filter(None, (read, plan.note))))


def read_plan(
    content: str | None, *, question: str, relations: set[str]
) -> tuple[PlanAnswer | None, list[str]]:
    """The model's plan if usable, else what is wrong with it, in words for the model."""
    data, problems = _json(content)
    if data is None:
        return None, problems
    try:
        answer = PlanAnswer.model_validate(data)
    except ValidationError as err:
        return None, describe_errors(err)
    if answer.family is None:
        return answer, []
    problems = _plan_problems(answer, question, relations)
    return (None, problems) if problems else (answer, [])


def _plan_problems(answer: PlanAnswer, question: str, relations: set[str]) -> list[str]:
    family = answer.family
    if family not in FAMILIES:
        return [f"family: {family!r} is not one of {', '.join(FAMILIES)} (or null)"]
    problems = []
    wanted = 2 if family in PAIR_FAMILIES else 1
    names = [name for name in answer.concepts if name]
    if len(names) != wanted:
        problems.append(
            f"concepts: a {family} question names {wanted} concept{'s' if wanted > 1 else ''}, "
            f"the plan gave {len(names)}"
        )
    for i, name in enumerate(names):
        if not occurs_in(name, question):
            problems.append(
                f"concepts.{i}: {name!r} is not written in the question; "
                "copy each name as the question writes it"
            )
    if family in RELATION_FAMILIES:
        key = _relation_key(answer.relation)
        if key not in relations:
            known = ", ".join(sorted(relations)) or "none"
            problems.append(
                f"relation: {answer.relation!r} is not one of the graph's relations ({known})"
            )
    return problems


def _relation_key(relation: str | None) -> str | None:
    return relation_key(relation) if relation else None


def occurs_in(said: str, question: str) -> bool:
    """Whether the question writes ``said`` (or either half of "X (Y)"), ignoring case,
    punctuation, articles and plurals: the model names what was asked, never a substitute."""
    asked = _stems(question)
    for key in name_keys(said):
        stems = _stems(key)
        size = len(stems)
        if size and any(asked[i : i + size] == stems for i in range(len(asked) - size + 1)):
            return True
    return False


def _stems(text: str) -> list[str]:
    return [singular(word) for word in words(name_key(text))]


# --- CRITIQUE -----------------------------------------------------------------------------


class OpenAICritic(ChatClient):
    """The offline critic's verdict, with a model's words and its wish to search further.

    ``base`` is the offline critic (``construction.ask.critic.OfflineCritic``); the other
    arguments are ``ChatClient``'s.
    """

    name = "openai"

    def __init__(self, *, base: Critic | None = None, **client: Any) -> None:
        super().__init__(**client)
        self.base: Critic = base if base is not None else OfflineCritic()

    def critique(
        self, plan: Plan, retrieval: Retrieval, *, names: dict[int, str], round: int
    ) -> tuple[Verdict, LLMUsage]:
        verdict, usage = self.base.critique(plan, retrieval, names=names, round=round)
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": CRITIC_SYSTEM},
            {"role": "user", "content": critic_user(plan, retrieval, names, verdict)},
        ]
        try:
            talk = self.converse(
                messages,
                schema=(CRITIQUE_SCHEMA_NAME, CRITIQUE_SCHEMA),
                read=read_critique,
                feedback=critique_feedback,
            )
        except LLMError as err:
            why = f"the model could not be asked for a critique ({err})"
            return self._alone(verdict, round, why), usage + err.usage
        usage += talk.usage
        if talk.answer is None:
            said = "; ".join(talk.problems)
            why = f"the model's critique was unusable after {talk.tries} ({said})"
            return self._alone(verdict, round, why), usage
        added, refine_from = judged(verdict, talk.answer, plan, retrieval)
        reasons = (*verdict.reasons, *(f"Round {round}: {words}" for words in added))
        return Verdict(verdict.complete, reasons, refine_from, self.name), usage

    def _alone(self, verdict: Verdict, round: int, why: str) -> Verdict:
        reason = f"Round {round}: {why}; the offline verdict stands."
        return Verdict(verdict.complete, (*verdict.reasons, reason), verdict.refine_from, self.name)


def read_critique(content: str | None) -> tuple[CritiqueAnswer | None, list[str]]:
    data, problems = _json(content)
    if data is None:
        return None, problems
    try:
        return CritiqueAnswer.model_validate(data), []
    except ValidationError as err:
        return None, describe_errors(err)


def judged(
    base: Verdict, answer: CritiqueAnswer, plan: Plan, retrieval: Retrieval
) -> tuple[list[str], tuple[int, ...]]:
    """What the model's critique adds to the offline verdict (reasons, in words) and where
    to refine from, under its rules: the model may add words and ask to search further; it
    can neither accept an incomplete chain nor stop a search the offline checks would go
    on with (an absence must be checked). The verdict's completeness is never changed.

    A further search the offline checks did not ask for is only made where one can help:
    a transitive plan (a one-hop relation does not chain), a walk neither exhausted nor
    cut at the concept limit, and a dead end to start from."""
    added = [f"the model says: {r[:REASON_MAX]}" for r in answer.reasons[:REASONS_KEPT] if r]
    refine_from = base.refine_from
    if base.complete:
        if not answer.complete:
            added.append("the model doubted the chain, but every offline check passed.")
        return added, refine_from
    if answer.complete:
        added.append(
            "the model called the chain complete, but the offline checks found it "
            "incomplete, so it is not accepted."
        )
    if refine_from and not answer.refine:
        added.append("the model saw no need to search further, but the search is not over.")
    elif answer.refine and not refine_from:
        dead_end = tuple(sorted({*retrieval.frontier, *retrieval.goal_frontier}))
        if not plan.transitive:
            added.append(
                "the model asked to search further, but the relation asked about does not "
                "chain, so only a direct edge answers."
            )
        elif retrieval.exhausted or retrieval.truncated or not dead_end:
            added.append("the model asked to search further, but the walk can go no further.")
        else:
            refine_from = dead_end
            added.append(
                f"the model asked to search one hop further from {len(dead_end)} "
                f"concept{'s' if len(dead_end) != 1 else ''} at the dead end."
            )
    return added, refine_from
