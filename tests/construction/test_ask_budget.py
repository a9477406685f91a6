"""An ask's model budget: once the calls so far spent ``max_tokens``, the rounds left are
critiqued offline, so a question never costs more than one call past its budget."""

from __future__ import annotations

from construction.ask.critic import OfflineCritic
from construction.ask.loop import ask, within_budget
from construction.types import LLMUsage
from tests.construction.ask_memory import curriculum, curriculum_index

QUESTION = "How is tokenization connected to RLHF?"  # three critique rounds offline


class PaidCritic:
    """The offline verdicts, each billed as a model call of 1,000 tokens."""

    name = "model"

    def __init__(self) -> None:
        self.rounds: list[int] = []

    def critique(self, plan, retrieval, *, names, round):
        self.rounds.append(round)
        verdict, _ = OfflineCritic().critique(plan, retrieval, names=names, round=round)
        return verdict, LLMUsage(calls=1, total_tokens=1000)


def asked(max_tokens: int):
    critic = PaidCritic()
    reader, index = curriculum(), curriculum_index()
    answer, usage = ask(QUESTION, reader=reader, index=index, critic=critic, max_tokens=max_tokens)
    return answer, usage, critic.rounds


def test_past_its_budget_an_ask_calls_no_model_and_still_answers():
    answer, usage, rounds = asked(max_tokens=1500)
    assert rounds == [0, 1]  # round 2 was critiqued offline
    assert usage.total_tokens == 2000 and usage.calls == 2
    assert answer.status == "answered" and answer.iterations == 2


def test_without_a_budget_every_round_asks_the_model():
    answer, usage, rounds = asked(max_tokens=0)
    assert rounds == [0, 1, 2]
    assert usage.total_tokens == 3000 and answer.status == "answered"


def test_the_budget_is_spent_when_the_tokens_reach_it():
    assert within_budget(LLMUsage(total_tokens=999), 1000)
    assert not within_budget(LLMUsage(total_tokens=1000), 1000)
    assert within_budget(LLMUsage(total_tokens=10**9), 0)
