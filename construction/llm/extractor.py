"""The model extractor: one conversation per source, retried and corrected in bounds."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TypeVar

from openai.types.chat import ChatCompletionMessageParam
from pydantic import BaseModel, ValidationError

from ..discover import RelationDraft
from ..errors import LLMAnswerInvalid
from ..keys import relation_key
from ..protocols import Lexicon
from ..schema import ConceptAnswer, EdgeAnswer, GraphAnswer, answer_json_schema
from ..text import name_key
from ..types import (
    Candidate,
    ConceptMention,
    Extraction,
    LLMUsage,
    Rejected,
    RelationSpec,
    SourceDoc,
)
from .answers import RelationAnswer, describe_errors, merge_concepts, read_answer, unfence
from .chat import ChatClient
from .prompts import (
    RELATION_SCHEMA,
    RELATION_SYSTEM,
    feedback,
    known_concepts,
    relation_prompt,
    system_prompt,
    user_prompt,
)

SCHEMA_NAME = "graph_extraction"
RELATION_SCHEMA_NAME = "relation_type"
Answer = TypeVar("Answer", bound=BaseModel)


class OpenAIExtractor(ChatClient):
    """Drafts concepts and edges for one source revision with a chat-completions model.

    The client's settings, retries and structured-output mode are ``ChatClient``'s."""

    name = "openai"
    # Calls cost money and seconds: made outside transactions, each paid chunk kept.
    local = False
    # The graph's concept types (``ontology.KnownType``) and relation patterns
    # ((relation, domain, range)): listed in the prompt; each concept's type is asked.
    concept_types: tuple = ()
    relation_patterns: tuple[tuple[str, str, str], ...] = ()

    def extract(
        self,
        doc: SourceDoc,
        *,
        vocabulary: Sequence[RelationSpec],
        lexicon: Lexicon,
        max_edges: int,
    ) -> Extraction:
        """One conversation: at most ``validation_retries`` corrections, each retried on
        transient errors up to ``max_retries`` times."""
        if max_edges < 1:
            raise ValueError("max_edges must be at least 1")
        messages: list[ChatCompletionMessageParam] = [
            {
                "role": "system",
                "content": system_prompt(
                    vocabulary,
                    max_edges=max_edges,
                    types=self.concept_types,
                    patterns=self.relation_patterns,
                ),
            },
            {
                "role": "user",
                "content": user_prompt(
                    doc, known=known_concepts(doc.text, lexicon), max_edges=max_edges
                ),
            },
        ]
        talk = self.converse(
            messages,
            schema=(SCHEMA_NAME, answer_json_schema()),
            read=_graph_answer,
            feedback=feedback,
        )
        if talk.answer is not None:
            return self._extraction(
                talk.answer.concepts, talk.answer.edges, (), talk.usage, max_edges
            )
        data = read_answer(talk.content)[0]
        return self._salvage(data, list(talk.problems), talk.usage, max_edges, talk.attempts)

    # --- Naming a relation type (ontology discovery) --------------------------------------

    def describe_relation(self, draft: RelationDraft) -> tuple[RelationDraft, LLMUsage]:
        """Ask the model to name and describe a relation the vocabulary lacks.

        ``draft`` is a ``construction.discover.RelationDraft``; the answer replaces its
        label, verb, description and shape. Returns the new draft and the usage. Invalid
        answers are retried with the errors fed back like extractions; if they stay
        invalid, ``LLMAnswerInvalid`` is raised and the caller keeps its own draft.
        """
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": RELATION_SYSTEM},
            {"role": "user", "content": relation_prompt(draft)},
        ]
        talk = self.converse(
            messages,
            schema=(RELATION_SCHEMA_NAME, RELATION_SCHEMA),
            read=_relation_answer,
            feedback=feedback,
        )
        answer = talk.answer
        if answer is None:
            raise LLMAnswerInvalid(
                "the model's description of the relation stayed invalid after "
                f"{talk.attempts} attempts: {'; '.join(talk.problems)}",
                usage=talk.usage,
            )
        key = relation_key(answer.label) or draft.key
        symmetric = answer.symmetric
        return (
            replace(
                draft,
                key=key[:64] if key[0].isalpha() else draft.key,
                label=answer.label,
                verb=answer.verb,
                description=answer.description,
                symmetric=symmetric,
                directed=not symmetric,
                acyclic=answer.acyclic and not symmetric,
            ),
            talk.usage,
        )

    # --- From answer to Extraction ---------------------------------------------------------

    def _typed(self, concepts: Sequence[ConceptAnswer]) -> tuple[ConceptMention, ...]:
        """The concepts merged, each with the type key the model gave it when that names
        one of the graph's active types (by key or label), else none."""
        merged = merge_concepts(concepts)
        if not self.concept_types:
            return merged
        from ..ontology.typing import TypeIndex

        index = TypeIndex(self.concept_types)
        keys = {t.key for t in self.concept_types if t.active}
        said: dict[str, str] = {}
        for c in concepts:
            given = c.type.strip()
            found = given if given in keys else index.words.get(name_key(given), "")
            said.setdefault(name_key(c.name), found)
        return tuple(replace(m, type_key=said.get(name_key(m.name), "")) for m in merged)

    def _salvage(
        self, data: Any, problems: list[str], usage: LLMUsage, max_edges: int, attempts: int
    ) -> Extraction:
        """Keep what is valid in the last answer; give up only if it has no usable shape."""
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if not isinstance(data, dict):
            raise LLMAnswerInvalid(f"the model's answer was not JSON after {tries}: {problems[0]}")
        edges_raw, concepts_raw = data.get("edges"), data.get("concepts")
        if not isinstance(edges_raw, list) or not isinstance(concepts_raw, list | None):
            raise LLMAnswerInvalid(
                f"the model's answer had no usable 'edges' list after {tries}: "
                + "; ".join(problems)
            )
        rejected: list[Rejected] = []
        concepts = _valid("concept", concepts_raw or [], ConceptAnswer, rejected)
        edges = _valid("edge", edges_raw, EdgeAnswer, rejected)
        return self._extraction(concepts, edges, tuple(rejected), usage, max_edges)

    def _extraction(
        self,
        concepts: Sequence[ConceptAnswer],
        edges: Sequence[EdgeAnswer],
        rejected: tuple[Rejected, ...],
        usage: LLMUsage,
        max_edges: int,
    ) -> Extraction:
        kept = sorted(edges, key=lambda edge: -edge.confidence)[:max_edges]
        return Extraction(
            concepts=self._typed(concepts),
            candidates=tuple(
                Candidate(
                    source=e.source,
                    target=e.target,
                    relation=e.relation,
                    confidence=e.confidence,
                    reason=e.reason,
                    evidence=e.evidence,
                )
                for e in kept
            ),
            rejected=rejected,
            usage=usage,
            extractor=self.name,
            model=self.model,
        )


def _valid(kind: str, items: list, model: type[Answer], rejected: list[Rejected]) -> list[Answer]:
    """The items that are valid ``model`` answers; each other one is added to ``rejected``."""
    kept: list[Answer] = []
    for item in items:
        try:
            kept.append(model.model_validate(item))
        except ValidationError as err:
            raw = item if isinstance(item, dict) else {"value": item}
            error = "; ".join(describe_errors(err))
            rejected.append(Rejected(raw=raw, error=f"invalid {kind}: {error}"))
    return kept


def _graph_answer(content: str | None) -> tuple[GraphAnswer | None, list[str]]:
    _, answer, problems = read_answer(content)
    return answer, problems


def _relation_answer(content: str | None) -> tuple[RelationAnswer | None, list[str]]:
    try:
        return RelationAnswer.model_validate(json.loads(unfence(content or ""))), []
    except json.JSONDecodeError as err:
        return None, [f"the answer is not JSON: {err.msg} at line {err.lineno}"]
    except ValidationError as err:
        return None, describe_errors(err)
