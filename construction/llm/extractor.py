"""The model extractor: one conversation per source, retried and corrected in bounds."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import openai
from openai.types.chat import ChatCompletionMessageParam
from openai.types.chat.completion_create_params import ResponseFormat
from pydantic import BaseModel, ValidationError

from ..discover import RelationDraft
from ..errors import LLMAnswerInvalid, LLMConfigurationError, LLMTransientError
from ..keys import relation_key
from ..protocols import Lexicon
from ..schema import ConceptAnswer, EdgeAnswer, answer_json_schema
from ..types import Candidate, Extraction, LLMUsage, Rejected, RelationSpec, SourceDoc
from .answers import RelationAnswer, describe_errors, merge_concepts, read_answer, unfence
from .endpoint import content_of, endpoint_message, is_transient, refused, retry_after, usage_of
from .prompts import (
    RELATION_SCHEMA,
    RELATION_SYSTEM,
    feedback,
    known_concepts,
    relation_prompt,
    system_prompt,
    user_prompt,
)

JSON_MODES = ("auto", "json_schema", "json_object")
SCHEMA_NAME = "graph_extraction"
Answer = TypeVar("Answer", bound=BaseModel)
FALLBACK_HINTS = ("response_format", "json_schema", "not supported", "unsupported")


class OpenAIExtractor:
    """Drafts concepts and edges for one source revision with a chat-completions model."""

    name = "openai"
    # Calls cost money and seconds: made outside transactions, each paid chunk kept.
    local = False

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None,
        model: str,
        timeout: float = 60.0,
        max_retries: int = 3,
        validation_retries: int = 2,
        json_mode: str = "auto",
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        sleep: Callable[[float], None] = time.sleep,
        http_client: Any = None,
        temperature: float = 0.0,
    ) -> None:
        if json_mode not in JSON_MODES:
            raise ValueError(f"json_mode must be one of {', '.join(JSON_MODES)}, not {json_mode!r}")
        if max_retries < 0 or validation_retries < 0:
            raise ValueError("max_retries and validation_retries cannot be negative")
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self.validation_retries = validation_retries
        self.json_mode = json_mode
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.temperature = temperature
        self._sleep = sleep
        # Learned per instance: once an endpoint has refused json_schema, asking again on
        # every call would double the requests for the rest of the run.
        self._format = "json_object" if json_mode == "json_object" else "json_schema"
        self._client = openai.OpenAI(
            # Local servers (Ollama, vLLM) need no key, but the SDK refuses to start without one.
            api_key=api_key or "unused",
            base_url=base_url or None,
            timeout=timeout,
            # The SDK's own retries are off: this class retries with its own backoff so
            # that every retry is counted in LLMUsage and bounded by our settings, and so
            # that SDK and class retries do not multiply.
            max_retries=0,
            http_client=http_client,
        )

    @property
    def response_format_type(self) -> str:
        """The structured-output mode the next request will use."""
        return self._format

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
            {"role": "system", "content": system_prompt(vocabulary, max_edges=max_edges)},
            {
                "role": "user",
                "content": user_prompt(
                    doc, known=known_concepts(doc.text, lexicon), max_edges=max_edges
                ),
            },
        ]
        usage = LLMUsage()
        attempts = self.validation_retries + 1
        for attempt in range(1, attempts + 1):
            content, spent = self._complete(messages)
            usage += spent
            data, answer, problems = read_answer(content)
            if answer is not None:
                return self._extraction(answer.concepts, answer.edges, (), usage, max_edges)
            if attempt == attempts:
                return self._salvage(data, problems, usage, max_edges, attempts)
            usage += LLMUsage(validation_retries=1)
            messages = [
                *messages,
                {"role": "assistant", "content": content or ""},
                {"role": "user", "content": feedback(problems)},
            ]
        raise AssertionError("unreachable: the last attempt returns or raises")

    # --- One answer, with transient retries ------------------------------------------------

    def _complete(
        self, messages: list[ChatCompletionMessageParam], *, schema: tuple[str, dict] | None = None
    ) -> tuple[str | None, LLMUsage]:
        """Send the conversation until the endpoint answers; count calls, retries, tokens."""
        calls = retries = 0
        while True:
            calls += 1
            try:
                response = self._client.chat.completions.create(
                    model=self.model,
                    messages=messages,
                    temperature=self.temperature,
                    response_format=self._response_format(schema),
                )
            except openai.BadRequestError as err:
                if self._should_fall_back(err):
                    self._format = "json_object"
                    continue
                raise LLMConfigurationError(refused(err)) from err
            except (openai.APIConnectionError, openai.APIStatusError) as err:
                if isinstance(err, openai.APIStatusError) and not is_transient(err):
                    raise LLMConfigurationError(refused(err)) from err
                if retries >= self.max_retries:
                    raise LLMTransientError(self._gave_up(err, attempts=retries + 1)) from err
                self._sleep(self._delay(retries, err))
                retries += 1
                continue
            if not hasattr(response, "choices"):
                # The SDK hands back the raw text of a non-JSON 200, typically a web page
                # served at a base URL that lacks its /v1; retrying cannot help.
                where = self.base_url or "the default OpenAI endpoint"
                raise LLMConfigurationError(
                    f"the model endpoint at {where} did not answer with a chat completion "
                    f"(got {str(response)[:80]!r}); check OPENAI_BASE_URL"
                )
            return content_of(response), LLMUsage(calls=calls, retries=retries) + usage_of(response)

    def _response_format(self, schema: tuple[str, dict] | None = None) -> ResponseFormat:
        if self._format == "json_object":
            return {"type": "json_object"}
        name, body = schema or (SCHEMA_NAME, answer_json_schema())
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": body, "strict": True},
        }

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
        usage = LLMUsage()
        attempts = self.validation_retries + 1
        for attempt in range(1, attempts + 1):
            content, spent = self._complete(messages, schema=("relation_type", RELATION_SCHEMA))
            usage += spent
            problems: list[str] = []
            try:
                answer = RelationAnswer.model_validate(json.loads(unfence(content or "")))
            except json.JSONDecodeError as err:
                problems = [f"the answer is not JSON: {err.msg} at line {err.lineno}"]
            except ValidationError as err:
                problems = describe_errors(err)
            else:
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
                    usage,
                )
            if attempt == attempts:
                raise LLMAnswerInvalid(
                    "the model's description of the relation stayed invalid after "
                    f"{attempts} attempts: {'; '.join(problems)}"
                )
            usage += LLMUsage(validation_retries=1)
            messages = [
                *messages,
                {"role": "assistant", "content": content or ""},
                {"role": "user", "content": feedback(problems)},
            ]
        raise AssertionError("unreachable")

    def _should_fall_back(self, err: openai.BadRequestError) -> bool:
        if self.json_mode != "auto" or self._format != "json_schema":
            return False
        # A complaint about another parameter ("temperature is not supported") is no reason
        # to give up structured output.
        if err.param and not err.param.startswith("response_format"):
            return False
        said = f"{err.message} {json.dumps(err.body, default=str)} {err.param or ''}".lower()
        return any(hint in said for hint in FALLBACK_HINTS)

    def _delay(self, retry: int, err: Exception) -> float:
        """Seconds before retry number ``retry`` (0-based): the server's word, else backoff."""
        asked = retry_after(err)
        if asked is not None:
            return min(self.backoff_max, asked)
        ceiling = min(self.backoff_max, self.backoff_base * 2**retry)
        # Half fixed, half random: workers that failed together do not retry together.
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def _gave_up(self, err: Exception, *, attempts: int) -> str:
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(err, openai.APITimeoutError):
            return f"the model endpoint timed out after {self.timeout:g} s, {tries}"
        if isinstance(err, openai.APIConnectionError):
            where = self.base_url or "the default OpenAI endpoint"
            return f"could not connect to the model endpoint at {where} after {tries}"
        assert isinstance(err, openai.APIStatusError)
        what = "kept rate-limiting" if err.status_code == 429 else "kept failing"
        detail = endpoint_message(err)
        return f"the model endpoint {what} (HTTP {err.status_code}) after {tries}" + (
            f": {detail}" if detail else ""
        )

    # --- From answer to Extraction ---------------------------------------------------------

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
            concepts=merge_concepts(concepts),
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
