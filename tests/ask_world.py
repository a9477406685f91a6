"""A small curriculum for the ask tests (reader, service, API, command, page): every edge
quotes its sentence in one lesson, so answers can be checked hop by hop.

    Tokenization -prerequisite-> Embeddings -prerequisite-> Attention -prerequisite->
    Transformer;  Embeddings -prerequisite-> Vector search;  RAG -builds_on-> Vector search;
    Positional encoding, Attention -part_of-> Transformer;  Fine-tuning -builds_on->
    Transformer;  LoRA -builds_on-> Fine-tuning;  Fine-tuning -contrasts_with- Prompting;
    RLHF -applies_to-> Alignment;  Quantization stands alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests import factories as f

FACTS = [
    (
        "Tokenization",
        "prerequisite",
        "Embeddings",
        "Tokenization is a prerequisite for embeddings.",
    ),
    ("Embeddings", "prerequisite", "Attention", "Embeddings are a prerequisite for attention."),
    (
        "Attention",
        "prerequisite",
        "Transformer",
        "Attention is a prerequisite for the transformer.",
    ),
    (
        "Embeddings",
        "prerequisite",
        "Vector search",
        "Embeddings are a prerequisite for vector search.",
    ),
    ("RAG", "builds_on", "Vector search", "RAG builds on vector search."),
    (
        "Positional encoding",
        "part_of",
        "Transformer",
        "Positional encoding is part of the transformer.",
    ),
    ("Attention", "part_of", "Transformer", "Attention is part of the transformer."),
    ("Fine-tuning", "builds_on", "Transformer", "Fine-tuning builds on the transformer."),
    ("LoRA", "builds_on", "Fine-tuning", "LoRA builds on fine-tuning."),
    ("Fine-tuning", "contrasts_with", "Prompting", "Fine-tuning contrasts with prompting."),
    ("RLHF", "applies_to", "Alignment", "RLHF is used for alignment."),
]
ALIASES = {
    "RAG": ["Retrieval-augmented generation"],
    "LoRA": ["Low-rank adaptation"],
    "RLHF": ["Reinforcement learning from human feedback"],
}
LONERS = ["Quantization"]


@dataclass
class World:
    concepts: dict
    edges: dict  # (source, relation, target) -> Edge
    source: object

    def id(self, name: str) -> int:
        return self.concepts[name].pk

    def edge(self, src: str, rel: str, dst: str):
        return self.edges[(src, rel, dst)]


def backdate(hours: float = 2) -> None:
    """Move every edge's recording and validity back by ``hours``, so the graph of an
    hour ago holds the whole world."""
    from datetime import timedelta

    from django.db.models import F

    from kgreview.graph.models import Edge

    shift = timedelta(hours=hours)
    Edge.objects.update(recorded_at=F("recorded_at") - shift, valid_at=F("valid_at") - shift)


def build() -> World:
    text = "# Transformers and friends\n\n" + "\n".join(quote for *_, quote in FACTS) + "\n"
    lesson = f.source(slug="transformers-and-friends", text=text)
    revision = lesson.current_revision
    names = sorted({n for s, _r, t, _q in FACTS for n in (s, t)} | set(LONERS))
    concepts = {n: f.concept(n, aliases=ALIASES.get(n, ())) for n in names}
    edges = {}
    for src, rel, dst, quote in FACTS:
        edges[(src, rel, dst)] = f.edge(
            concepts[src], concepts[dst], rel, evidence=f.evidence(revision, quote)
        )
    return World(concepts=concepts, edges=edges, source=lesson)
