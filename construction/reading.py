"""READ for a long document: plan its chunks, and merge what was read from each.

A revision is split into bounded chunks (``construction.chunks``); each is read as a
document of its own, with the document's title and the chunk's heading path as context
and its own candidate budget. Every chunk's reading is cached under a key made of
everything its answer depends on, so a new revision re-reads only changed chunks. The
merged extraction keeps, for each candidate, the chunk it came from, so its quote is
anchored in that chunk of *this* revision, whatever revision the reading was cached for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from .chunks import Chunk, chunk_document
from .definitions import defined_before, definitions, with_definitions
from .keys import new_concept_key
from .resolve import OverlayIndex
from .text import name_key, name_keys
from .types import (
    Candidate,
    ConceptMention,
    Extraction,
    IndexEntry,
    LLMUsage,
    Rejected,
    Section,
    SourceDoc,
)

# Tokens a model call spends besides the chunk: instructions, vocabulary, known names.
PROMPT_OVERHEAD_TOKENS = 900
# Tokens an answer may take per drafted edge (names, reason, quote, concept entries).
ANSWER_TOKENS_PER_EDGE = 160


@dataclass(frozen=True)
class ChunkPlan:
    """One chunk as the extractor reads it, and the key its reading is cached under."""

    chunk: Chunk
    doc: SourceDoc
    key: str

    @property
    def window(self) -> tuple[int, int]:
        return (self.chunk.start, self.chunk.end)


def cache_key(doc: SourceDoc, extractor_key: str) -> str:
    """Everything a chunk's answer depends on: the text, its context (title, heading
    path, the names the document defined so far), the extractor."""
    digest = hashlib.sha256()
    defined = "\x1e".join(f"{name}\x1f{alias}" for name, alias in doc.defined)
    for part in (extractor_key, doc.title, "\x1f".join(doc.section), defined, doc.text):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def plan_chunks(
    doc: SourceDoc,
    *,
    sections: Sequence[Section],
    max_tokens: int,
    overlap_tokens: int,
    extractor_key: str,
) -> list[ChunkPlan]:
    """The chunks of one revision, each ready to be read (or found in the cache), each
    knowing the names the document defines up to its end."""
    plans = []
    found = definitions(doc.text)
    for chunk in chunk_document(
        doc.text, sections=sections, max_tokens=max_tokens, overlap_tokens=overlap_tokens
    ):
        defined = tuple(defined_before(found, chunk.end))
        part = replace(doc, text=chunk.text, section=chunk.section, defined=defined)
        plans.append(ChunkPlan(chunk=chunk, doc=part, key=cache_key(part, extractor_key)))
    return plans


def read_in_order(
    plans: Sequence[ChunkPlan],
    extract: Callable[[SourceDoc, OverlayIndex], Extraction],
    lexicon,
) -> list[Extraction]:
    """Read chunks one after another, each knowing the concepts earlier chunks named.

    A concept a handbook defines in chapter 3 ("Reinforcement learning from human
    feedback (RLHF)") is then found by that name in chapter 9, where it is only "RLHF",
    just as a separate lesson finds it in the graph: by the names the extractor gave it
    and those the chunk defines (``construction.definitions``), whatever the extractor.
    ``extract(doc, lexicon)`` reads one.
    """
    known = OverlayIndex(lexicon)
    readings = []
    for plan in plans:
        reading = extract(plan.doc, known)
        mentions = with_definitions(reading.concepts, definitions(plan.doc.text))
        for mention in mentions:
            entry = IndexEntry(
                name=mention.name, canonical=mention.name, key=new_concept_key(mention.name)
            )
            names = (mention.name, *mention.aliases)
            keys: list[str] = []
            for name in names:
                keys += [k for k in name_keys(name) if k not in keys]
            known.add(entry, keys=keys, names=names)
        readings.append(reading)
    return readings


def call_estimate(plan: ChunkPlan, *, max_edges: int) -> int:
    """Tokens one model call on this chunk may spend: a bound reserved before calling."""
    return PROMPT_OVERHEAD_TOKENS + plan.chunk.tokens + ANSWER_TOKENS_PER_EDGE * max_edges


def merge_extractions(
    plans: Sequence[ChunkPlan],
    readings: Sequence[Extraction],
    *,
    extractor: str,
    model: str,
    usage: LLMUsage | None = None,
) -> Extraction:
    """One extraction for the whole revision, from its chunks' readings in order.

    The same concept named in many chunks is one mention (its aliases and the first
    description joined); each candidate remembers its chunk as the window where its
    quote is looked for first. ``usage`` is what this run paid (cached chunks cost
    nothing); by default the readings' own usage is summed.
    """
    concepts: dict[str, ConceptMention] = {}
    order: list[str] = []
    candidates: list[Candidate] = []
    rejected: list[Rejected] = []
    total = LLMUsage()
    for plan, reading in zip(plans, readings, strict=True):
        total += reading.usage
        for mention in reading.concepts:
            key = name_key(mention.name) or mention.name
            known = concepts.get(key)
            if known is None:
                concepts[key] = mention
                order.append(key)
                continue
            aliases = list(known.aliases)
            aliases += [a for a in mention.aliases if a not in aliases and a != known.name]
            concepts[key] = ConceptMention(
                name=known.name,
                aliases=tuple(aliases),
                description=known.description or mention.description,
                verbatim=known.verbatim or mention.verbatim,
                type_key=known.type_key or mention.type_key,
            )
        candidates += [replace(c, window=plan.window) for c in reading.candidates]
        rejected += reading.rejected
    return Extraction(
        concepts=tuple(concepts[k] for k in order),
        candidates=tuple(candidates),
        rejected=tuple(rejected),
        usage=total if usage is None else usage,
        extractor=extractor,
        model=model,
    )
