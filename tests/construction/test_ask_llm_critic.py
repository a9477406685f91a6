"""The ask loop's model critic: the offline verdict first, the model's words and wish to
search further added under rules it cannot break, through the real openai client and
the scripted local server (tests/construction/fake_llm.py)."""

from __future__ import annotations

from construction.ask.critic import OfflineCritic
from construction.ask.llm import OpenAICritic
from construction.ask.planner_offline import walks_for
from construction.ask.types import EdgeFact, Found, Plan, Retrieval, Verdict, Walk
from construction.types import LLMUsage
from tests.construction.ask_llm import VOCABULARY, client_options, critique, last_message
from tests.construction.fake_llm import reply, status

# --- CRITIQUE ---------------------------------------------------------------------------------


class FixedCritic:
    """A stand-in for the offline critic: always the same verdict, some usage."""

    name = "offline"

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        self.calls: list[int] = []

    def critique(self, plan, retrieval, *, names, round):
        self.calls.append(round)
        return self.verdict, LLMUsage()


PAIR_PLAN = Plan(
    question="How is RAG connected to embeddings?",
    family="connection",
    concepts=(
        Found("RAG", 3, "Retrieval-augmented generation", "alias"),
        Found("embeddings", 4, "Embedding", "exact"),
    ),
    walks=walks_for("connection", None, VOCABULARY)[0],
    transitive=True,
    hops=3,
)
NAMES = {3: "Retrieval-augmented generation", 4: "Embedding", 8: "Vector database", 9: "Index"}
HALFWAY = Retrieval(
    edges=(EdgeFact(11, 3, 8, "builds_on"), EdgeFact(12, 9, 4, "related", symmetric=True)),
    from_start=((3, 0), (8, 1)),
    from_goal=((4, 0), (9, 1)),
    frontier=(8,),
    goal_frontier=(9,),
    depth=1,
)
NO_PATH_YET = Verdict(False, ("no chain from RAG to Embedding within 1 hop",))


def critic(fake_llm, base: Verdict, **options) -> OpenAICritic:
    return OpenAICritic(base=FixedCritic(base), **client_options(fake_llm, **options))


def judge(llm: OpenAICritic, retrieval: Retrieval = HALFWAY) -> tuple[Verdict, LLMUsage]:
    return llm.critique(PAIR_PLAN, retrieval, names=NAMES, round=1)


def test_the_critic_asking_for_a_refinement_refines_from_the_dead_end(fake_llm):
    """The offline checks stop short; the model asks for one more hop from both dead ends."""
    fake_llm.push(reply(critique(False, True, "Vector databases store embeddings; look further.")))

    verdict, usage = judge(critic(fake_llm, NO_PATH_YET))

    assert verdict.complete is False
    assert verdict.refine_from == (8, 9)
    assert verdict.critic == "openai"
    assert verdict.reasons == (
        "no chain from RAG to Embedding within 1 hop",
        "Round 1: the model says: Vector databases store embeddings; look further.",
        "Round 1: the model asked to search one hop further from 2 concepts at the dead end.",
    )
    assert usage.calls == 1


def test_the_critic_prompt_shows_the_edges_by_name_and_the_offline_verdict(fake_llm):
    """The model judges what was found, named, with the offline reasons and a strict schema."""
    fake_llm.push(reply(critique(False, False)))

    judge(critic(fake_llm, NO_PATH_YET))

    request = fake_llm.requests[0]
    assert request["response_format"]["json_schema"]["name"] == "chain_critique"
    user = request["messages"][1]["content"]
    assert "- Retrieval-augmented generation --builds_on--> Vector database" in user
    assert "Dead end (where a further hop would start): Vector database, Index" in user
    assert "Offline checks: incomplete (no chain from RAG to Embedding within 1 hop)." in user


def test_a_critic_accepting_a_broken_chain_is_overruled(fake_llm):
    """The model says complete, the offline checks say not: it stays incomplete, in words."""
    broken = Verdict(False, ("the path steps through the retired concept 'Index'",))
    fake_llm.push(reply(critique(True, False, "RAG is clearly connected to embeddings.")))

    verdict, _ = judge(critic(fake_llm, broken), HALFWAY)

    assert verdict.complete is False
    assert verdict.refine_from == ()
    assert verdict.reasons[-1] == (
        "Round 1: the model called the chain complete, but the offline checks found it "
        "incomplete, so it is not accepted."
    )
    assert "Round 1: the model says: RAG is clearly connected to embeddings." in verdict.reasons


def test_the_critic_cannot_stop_a_search_the_offline_checks_go_on_with(fake_llm):
    """An absence must be checked: the offline refinement stands when the model declines."""
    going_on = Verdict(False, ("no chain yet",), refine_from=(8, 9))
    fake_llm.push(reply(critique(False, False, "There is no link.")))

    verdict, _ = judge(critic(fake_llm, going_on))

    assert verdict.refine_from == (8, 9)
    assert verdict.reasons[-1] == (
        "Round 1: the model saw no need to search further, but the search is not over."
    )


def test_a_refinement_asked_for_when_the_search_is_over_is_refused(fake_llm):
    """Nothing lies further once the walk is exhausted, whatever the model wishes."""
    fake_llm.push(reply(critique(False, True)))
    exhausted = Retrieval(frontier=(8,), exhausted=True)

    verdict, _ = judge(critic(fake_llm, NO_PATH_YET), exhausted)

    assert verdict.refine_from == ()
    assert verdict.reasons[-1] == (
        "Round 1: the model asked to search further, but the walk can go no further."
    )


def test_a_refinement_asked_for_on_a_relation_that_does_not_chain_is_refused(fake_llm):
    """A one-hop question (contrasts) is answered by a direct edge only: no further search."""
    fake_llm.push(reply(critique(False, True)))
    one_hop = Plan(
        question="Does fine-tuning contrast with RAG?",
        family="yes_no",
        concepts=PAIR_PLAN.concepts,
        walks=(Walk("contrasts_with", "both"),),
        relation="contrasts_with",
        transitive=False,
    )

    verdict, _ = critic(fake_llm, NO_PATH_YET).critique(one_hop, HALFWAY, names=NAMES, round=1)

    assert verdict.refine_from == ()
    assert "does not chain, so only a direct edge answers" in verdict.reasons[-1]


def test_a_complete_chain_stays_complete_and_the_model_only_adds_words(fake_llm):
    """The model's doubts about a chain the offline checks passed are words, not a veto."""
    done = Verdict(True, ("both ends reached",))
    fake_llm.push(reply(critique(False, True, "Seems thin.")))

    verdict, _ = judge(critic(fake_llm, done))

    assert (verdict.complete, verdict.refine_from) == (True, ())
    assert verdict.reasons == (
        "both ends reached",
        "Round 1: the model says: Seems thin.",
        "Round 1: the model doubted the chain, but every offline check passed.",
    )


def test_a_malformed_critique_is_retried_with_feedback_then_used(fake_llm):
    """A critique with a string for a boolean goes back with the error; the fix is used."""
    fake_llm.push(
        reply({"complete": "no", "refine": True, "reasons": []}),
        reply(critique(False, True, "Look further.")),
    )

    verdict, usage = judge(critic(fake_llm, NO_PATH_YET))

    fed_back = last_message(fake_llm, 1)
    assert "Your critique could not be used" in fed_back
    assert "complete: Input should be a valid boolean" in fed_back
    assert verdict.refine_from == (8, 9)
    assert (usage.calls, usage.validation_retries) == (2, 1)


def test_a_critique_unusable_after_every_retry_leaves_the_offline_verdict(fake_llm):
    """After the retries, the offline verdict stands with a reason saying why."""
    fake_llm.push(*[reply("I think it is fine.")] * 3)

    verdict, usage = judge(critic(fake_llm, NO_PATH_YET, validation_retries=2))

    assert (verdict.complete, verdict.refine_from, verdict.critic) == (False, (), "openai")
    assert verdict.reasons == (
        "no chain from RAG to Embedding within 1 hop",
        "Round 1: the model's critique was unusable after 3 attempts (the answer is not "
        "JSON: Expecting value at line 1 column 1); the offline verdict stands.",
    )
    assert (usage.calls, usage.validation_retries) == (3, 2)


def test_a_critic_endpoint_that_keeps_failing_leaves_the_offline_verdict(fake_llm):
    """Rate-limited past the retries: the offline verdict stands, the calls are counted."""
    fake_llm.push(*[status(429, "slow down")] * 3)
    going_on = Verdict(False, ("no chain yet",), refine_from=(8,))

    verdict, usage = judge(critic(fake_llm, going_on, max_retries=2))

    assert verdict.refine_from == (8,)
    assert verdict.reasons[-1] == (
        "Round 1: the model could not be asked for a critique (the model endpoint kept "
        "rate-limiting (HTTP 429) after 3 attempts: slow down); the offline verdict stands."
    )
    assert (usage.calls, usage.retries) == (3, 2)


def test_the_offline_checks_run_first_and_their_usage_is_added(fake_llm):
    """The base critic is asked first, for the same round; its usage and the model's add up."""

    class CountingCritic(FixedCritic):
        def critique(self, plan, retrieval, *, names, round):
            verdict, _ = super().critique(plan, retrieval, names=names, round=round)
            return verdict, LLMUsage(calls=1, total_tokens=7)

    base = CountingCritic(NO_PATH_YET)
    llm = OpenAICritic(base=base, **client_options(fake_llm))
    fake_llm.push(reply(critique(False, False), prompt_tokens=20, completion_tokens=4))

    _, usage = llm.critique(PAIR_PLAN, HALFWAY, names=NAMES, round=2)

    assert base.calls == [2]
    assert usage == LLMUsage(calls=2, prompt_tokens=20, completion_tokens=4, total_tokens=31)


def test_the_model_critic_wraps_the_offline_critic_by_default(fake_llm):
    """Without a base, the offline checks are the ones that run first."""
    assert isinstance(OpenAICritic(**client_options(fake_llm)).base, OfflineCritic)
