"""Shared by the model planner and critic tests: a vocabulary, a name index, a client
pointed at the scripted server (tests/construction/fake_llm.py), answers as a model
would write them."""

from __future__ import annotations

from construction.ask.llm import OpenAIPlanner
from construction.ask.types import Plan
from construction.resolve import InMemoryConceptIndex
from construction.types import IndexEntry, LLMUsage, RelationSpec


def spec(key: str, *, symmetric: bool = False, acyclic: bool = False) -> RelationSpec:
    verb = key.replace("_", " ")
    return RelationSpec(
        key, verb.title(), verb, f"the source {verb} the target", symmetric, acyclic
    )


VOCABULARY = (
    spec("prerequisite", acyclic=True),
    spec("builds_on", acyclic=True),
    spec("part_of", acyclic=True),
    spec("contrasts_with", symmetric=True),
    spec("applies_to"),
    spec("related", symmetric=True),
)
CONCEPTS = {
    1: ("Low-Rank Adaptation (LoRA)", ()),
    2: ("Fine-tuning", ()),
    3: ("Retrieval-augmented generation", ("RAG",)),
    4: ("Embedding", ()),
    5: ("Attention", ()),
    6: ("Positional encoding", ()),
    7: ("Transformer", ()),
}


def name_index() -> InMemoryConceptIndex:
    index = InMemoryConceptIndex()
    for concept_id, (name, aliases) in CONCEPTS.items():
        entry = IndexEntry(name=name, canonical=name, key=f"c{concept_id}", concept_id=concept_id)
        index.add_name(entry)
        for alias in aliases:
            index.add_name(
                IndexEntry(
                    name=alias,
                    canonical=name,
                    key=f"c{concept_id}",
                    concept_id=concept_id,
                    is_canonical=False,
                )
            )
    # A concept only proposed so far is not in the graph: a question cannot start there.
    index.add_name(IndexEntry(name="Quantum networking", canonical="Quantum networking", key="n:q"))
    return index


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client_options(fake_llm, **options) -> dict:
    options.setdefault("sleep", Sleeps())
    return {"api_key": "k", "base_url": fake_llm.base_url, "model": "m", **options}


def planner(fake_llm, **options) -> OpenAIPlanner:
    return OpenAIPlanner(**client_options(fake_llm, **options))


def plan(llm: OpenAIPlanner, question: str) -> tuple[Plan, LLMUsage]:
    return llm.plan(question, index=name_index(), vocabulary=VOCABULARY)


def plan_answer(family, *concepts, relation=None, hops=None) -> dict:
    return {"family": family, "concepts": list(concepts), "relation": relation, "hops": hops}


def last_message(fake_llm, request: int) -> str:
    return fake_llm.requests[request]["messages"][-1]["content"]


def critique(complete: bool, refine: bool, *reasons: str) -> dict:
    return {"complete": complete, "refine": refine, "reasons": list(reasons)}
