"""Synthetic concept names for benchmarks and scale tests: plausible, distinct, and the
same for the same seed ("Adaptive sparse token search"). Pure Python."""

from __future__ import annotations

import random

__all__ = ["ADJECTIVES", "NOUNS", "TAILS", "concept_names", "typo"]

ADJECTIVES = [
    "adaptive",
    "sparse",
    "dense",
    "causal",
    "contrastive",
    "hierarchical",
    "latent",
    "recurrent",
    "residual",
    "quantized",
    "federated",
    "streaming",
    "incremental",
    "probabilistic",
    "structured",
    "semantic",
    "lexical",
    "neural",
    "symbolic",
    "distributed",
    "cached",
    "batched",
    "masked",
    "multimodal",
    "retrieval",
    "generative",
    "discriminative",
    "supervised",
    "unsupervised",
    "reinforced",
    "curriculum",
    "gradient",
    "stochastic",
    "bayesian",
    "spectral",
    "temporal",
    "spatial",
    "graph",
    "relational",
    "differentiable",
    "modular",
    "robust",
    "calibrated",
    "hybrid",
    "weighted",
    "normalized",
    "factorized",
    "compressed",
    "pruned",
    "distilled",
    "autoregressive",
    "bidirectional",
    "convolutional",
    "attentive",
    "sequential",
    "parallel",
]
NOUNS = [
    "token",
    "embedding",
    "attention",
    "memory",
    "policy",
    "reward",
    "gradient",
    "kernel",
    "index",
    "cache",
    "router",
    "encoder",
    "decoder",
    "planner",
    "critic",
    "retriever",
    "ranker",
    "tokenizer",
    "sampler",
    "optimizer",
    "scheduler",
    "evaluator",
    "verifier",
    "parser",
    "chunker",
    "aligner",
    "adapter",
    "projector",
    "classifier",
    "regressor",
    "estimator",
    "controller",
    "buffer",
    "graph",
    "tree",
    "sketch",
    "filter",
    "bloom",
    "hash",
    "shard",
    "replica",
    "queue",
    "stream",
    "window",
    "pool",
    "layer",
    "block",
    "head",
    "mixture",
    "expert",
    "prompt",
    "context",
]
TAILS = [
    "search",
    "learning",
    "training",
    "inference",
    "decoding",
    "alignment",
    "compression",
    "estimation",
    "routing",
    "ranking",
    "retrieval",
    "fusion",
    "tuning",
    "distillation",
    "sampling",
    "regularization",
    "initialization",
    "normalization",
    "quantization",
    "indexing",
    "caching",
    "planning",
    "reasoning",
]


def concept_names(n: int, *, seed: int = 7) -> list[str]:
    """``n`` distinct, plausible concept names, the same ones for the same seed."""
    rng = random.Random(seed)
    names: list[str] = []
    seen: set[str] = set()
    attempts = 0
    while len(names) < n:
        attempts += 1
        if attempts > 50 * n + 1000:
            raise RuntimeError(f"cannot make {n} distinct names from the word lists")
        words = [rng.choice(ADJECTIVES)]
        if rng.random() < 0.5:
            words.append(rng.choice(ADJECTIVES))
        words += [rng.choice(NOUNS), rng.choice(TAILS)]
        name = " ".join(words)
        if name not in seen:
            seen.add(name)
            names.append(name[0].upper() + name[1:])
    return names


def typo(name: str, rng: random.Random) -> str:
    """One dropped or doubled letter inside a long word: a realistic near miss."""
    words = name.split()
    choices = [i for i, w in enumerate(words) if len(w) >= 6]
    if not choices:
        return name + "s"
    i = rng.choice(choices)
    w = words[i]
    j = rng.randrange(1, len(w) - 1)
    words[i] = w[:j] + w[j + 1 :] if rng.random() < 0.5 else w[:j] + w[j] + w[j:]
    return " ".join(words)
