"""Duplicate concepts: what the finder proposes, whom it keeps, what it never proposes."""

from __future__ import annotations

import random

from benchmarks.synthetic import concept_names
from construction.dedupe import ConceptRecord, find_duplicates, find_duplicates_with_stats

# --- Helpers ----------------------------------------------------------------------------


def concept(cid, name, aliases=(), *, edges=0, sources=0, neighbours=()):
    return ConceptRecord(
        id=cid,
        name=name,
        aliases=tuple(aliases),
        edge_count=edges,
        source_count=sources,
        neighbours=frozenset(neighbours),
    )


def pairs(candidates):
    return {frozenset((c.survivor_id, c.loser_id)) for c in candidates}


def drop_a_letter(name, rng):
    """A typo: one letter dropped inside the longest word (never its first letter)."""
    words = name.split()
    i = max(range(len(words)), key=lambda k: len(words[k]))
    w = words[i]
    j = rng.randrange(2, len(w) - 1)
    words[i] = w[:j] + w[j + 1 :]
    return " ".join(words)


# --- Duplicates: what is found ------------------------------------------------------------


def test_plural_spelling_and_hyphen_variants_are_found():
    """Plural, British/American spelling, typo and hyphen/space variants are paired."""
    concepts = [
        concept(1, "Vector database"),
        concept(2, "Vector databases"),
        concept(3, "Normalisation"),
        concept(4, "Normalization"),
        concept(5, "Fine-tuning"),
        concept(6, "Finetuning"),
        concept(7, "Multi-head attention"),
        concept(8, "Multihead attention"),
        concept(9, "Embedding model"),
        concept(10, "Embeding model"),
    ]
    found = {frozenset((c.survivor_id, c.loser_id)): c for c in find_duplicates(concepts)}
    assert set(found) == {
        frozenset({1, 2}),
        frozenset({3, 4}),
        frozenset({5, 6}),
        frozenset({7, 8}),
        frozenset({9, 10}),
    }
    assert found[frozenset({1, 2})].score == 100.0
    assert found[frozenset({5, 6})].score == 98.0
    assert "spaces or hyphens" in found[frozenset({5, 6})].reasons[0]
    assert found[frozenset({3, 4})].reasons[0].startswith("The names are 92% alike")
    assert found[frozenset({3, 4})].matched == ("Normalisation", "Normalization")


def test_abbreviation_given_as_an_alias_pairs_with_its_long_form():
    """An alias "RAG" of one concept abbreviates another's multi-word name: a candidate."""
    concepts = [
        concept(1, "Retrieval-augmented generation", edges=5),
        concept(2, "Grounded answering", ["RAG"], edges=1),
    ]
    [candidate] = find_duplicates(concepts)
    assert (candidate.survivor_id, candidate.loser_id) == (1, 2)
    assert candidate.score == 92.0
    assert candidate.reasons[0] == '"RAG" abbreviates "Retrieval-augmented generation".'
    assert candidate.matched == ("Retrieval-augmented generation", "RAG")


def test_abbreviations_with_inner_letters_and_small_words_are_found():
    """LoRA, kNN and BoW abbreviate Low-rank adaptation, k-nearest neighbours, Bag of words."""
    concepts = [
        concept(1, "Low-rank adaptation"),
        concept(2, "LoRA"),
        concept(3, "k-nearest neighbours"),
        concept(4, "kNN"),
        concept(5, "Bag of words"),
        concept(6, "BoW"),
    ]
    assert pairs(find_duplicates(concepts)) == {
        frozenset({1, 2}),
        frozenset({3, 4}),
        frozenset({5, 6}),
    }


def test_acronym_its_own_concept_expands_is_not_paired_with_another_expansion():
    """An acronym explained by its own concept is not paired with another expansion."""
    concepts = [
        concept(1, "Learning rate", ["LR"]),
        concept(2, "Logistic regression"),
    ]
    assert find_duplicates(concepts) == []
    found = {
        frozenset((c.survivor_id, c.loser_id)): c
        for c in find_duplicates([*concepts, concept(3, "LR")])
    }
    assert set(found) == {frozenset({1, 3}), frozenset({2, 3})}
    assert found[frozenset({1, 3})].reasons[0] == 'Both are named "LR".'
    assert found[frozenset({2, 3})].reasons[0] == '"LR" abbreviates "Logistic regression".'


def test_reordered_words_are_a_weak_candidate():
    """The same words in another order score weak, and drop between well-connected strangers."""
    concepts = [
        concept(1, "Reinforced semantic alignment"),
        concept(2, "Semantic reinforced alignment"),
    ]
    [candidate] = find_duplicates(concepts)
    assert candidate.score == 90.0
    assert candidate.reasons[0].startswith("The names have the same words in another order")
    strangers = [
        concept(1, "Reinforced semantic alignment", neighbours={7, 8}),
        concept(2, "Semantic reinforced alignment", neighbours={9, 10}),
    ]
    assert find_duplicates(strangers) == []


def test_colliding_aliases_score_100():
    """Aliases equal once plural and article are set aside make a certain candidate."""
    concepts = [
        concept(1, "Vector index", ["The vector stores"]),
        concept(2, "Embedding database", ["Vector store"]),
    ]
    [candidate] = find_duplicates(concepts)
    assert candidate.score == 100.0
    assert candidate.matched == ("The vector stores", "Vector store")


def test_long_form_with_abbreviation_in_brackets_matches_the_bare_abbreviation():
    """ "Change Data Capture (CDC)" splits into both names, so a concept "CDC" matches."""
    concepts = [concept(1, "Change Data Capture (CDC)"), concept(2, "CDC")]
    [candidate] = find_duplicates(concepts)
    assert candidate.score == 100.0 and candidate.survivor_id == 1


def test_chained_duplicates_are_reported_pair_by_pair():
    """A~B and B~C are both reported, once each, for the reviewer to decide."""
    concepts = [
        concept(1, "Tokenization"),
        concept(2, "Tokenisation"),
        concept(3, "Tokenisations", ["Tokenizations"]),
    ]
    found = find_duplicates(concepts)
    assert pairs(found) == {frozenset({1, 2}), frozenset({1, 3}), frozenset({2, 3})}
    assert len(found) == 3


# --- Duplicates: survivor -----------------------------------------------------------------


def test_survivor_has_more_edges_before_more_sources():
    """More active edges wins even against more sources, and the reason says so."""
    concepts = [
        concept(1, "Vector databases", edges=2, sources=9),
        concept(2, "Vector database", edges=12, sources=4),
    ]
    [candidate] = find_duplicates(concepts)
    assert (candidate.survivor_id, candidate.loser_id) == (2, 1)
    assert candidate.why_survivor == (
        '"Vector database" is kept: 12 edges and 4 sources against 2 and 9.'
    )


def test_survivor_on_equal_edges_has_more_sources():
    """With edges equal, more sources decide."""
    concepts = [
        concept(1, "Vector databases", edges=3, sources=1),
        concept(2, "Vector database", edges=3, sources=2),
    ]
    [candidate] = find_duplicates(concepts)
    assert candidate.survivor_id == 2


def test_survivor_on_equal_counts_has_more_aliases_then_lower_id():
    """Then more aliases, then the older (lower id) concept."""
    with_alias = [concept(1, "Reranking"), concept(2, "Re-ranking", ["Reranker step"])]
    [candidate] = find_duplicates(with_alias)
    assert candidate.survivor_id == 2
    assert "more other names (1 against 0)" in candidate.why_survivor
    tie = [concept(7, "Reranking"), concept(3, "Re-ranking")]
    [candidate] = find_duplicates(tie)
    assert (candidate.survivor_id, candidate.loser_id) == (3, 7)
    assert candidate.why_survivor.endswith("it is the older concept.")


# --- Duplicates: what is never proposed -------------------------------------------------


def test_names_differing_in_a_number_or_identifier_are_never_proposed():
    """GPT-3/GPT-4, Llama 2/Llama 3, Layer 1/Layer 2 stay apart, even with a shared alias."""
    concepts = [
        concept(1, "GPT-3", ["GPT"]),
        concept(2, "GPT-4", ["GPT"]),
        concept(3, "Llama 2"),
        concept(4, "Llama 3"),
        concept(5, "Layer 1 normalization"),
        concept(6, "Layer 2 normalization"),
        concept(7, "Vitamin A"),
        concept(8, "Vitamin B"),
    ]
    assert find_duplicates(concepts) == []


def test_glued_and_hyphenated_versions_are_the_same_identifier():
    """ "GPT-4 model" and "GPT4 model" both say 4: they are paired."""
    concepts = [concept(1, "GPT-4 model"), concept(2, "GPT4 model")]
    assert pairs(find_duplicates(concepts)) == {frozenset({1, 2})}


def test_one_name_plus_a_distinguishing_word_is_not_a_duplicate():
    """A name plus one more word is another concept, even when token_sort_ratio says 91%."""
    concepts = [
        concept(1, "Causal sampler regularization"),
        concept(2, "Dense causal sampler regularization"),
        concept(3, "Vector search"),
        concept(4, "Hybrid vector search"),
    ]
    assert find_duplicates(concepts) == []


def test_a_different_word_is_not_a_spelling_variant():
    """Names that differ by a whole other word are different concepts, however alike."""
    concepts = [
        concept(1, "Transformer encoder"),
        concept(2, "Transformer decoder"),
        concept(3, "Supervised learning"),
        concept(4, "Unsupervised learning"),
        concept(5, "Normalized planner search"),
        concept(6, "Normalized ranker search"),
        concept(7, "Multimodal attention ranking"),
        concept(8, "Multimodal attention training"),
    ]
    assert find_duplicates(concepts) == []


def test_clean_curriculum_yields_no_candidates():
    """Distinct concepts of a curriculum, related names included, produce nothing."""
    names = [
        "Embeddings",
        "Vector search",
        "Vector database",
        "Hybrid search",
        "Keyword search",
        "Semantic search",
        "Retrieval-augmented generation (RAG)",
        "Reranking",
        "Chunking",
        "Fine-tuning",
        "Instruction tuning",
        "Prompt engineering",
        "Prompt injection",
        "Large language model (LLM)",
        "Small language model",
        "Tokenization",
        "Attention",
        "Self-attention",
        "Multi-head attention",
        "Transformer",
        "Encoder",
        "Decoder",
        "GPT-3",
        "GPT-4",
        "Knowledge graph",
        "Graph neural network",
        "Agents",
        "Tool use",
        "Evaluation",
        "Guardrails",
        "Quantization",
        "Distillation",
        "Supervised learning",
        "Unsupervised learning",
        "Reinforcement learning from human feedback (RLHF)",
    ]
    concepts = [concept(i, n) for i, n in enumerate(names, start=1)]
    assert find_duplicates(concepts) == []


# --- Duplicates: neighbours ---------------------------------------------------------------


def test_shared_neighbours_raise_the_score_and_are_listed():
    """Jaccard of the neighbour sets adds up to 6 points; shared ids are returned."""
    alone = [concept(1, "Tokeniser"), concept(2, "Tokenizer")]
    [plain] = find_duplicates(alone)
    shared = [
        concept(1, "Tokeniser", neighbours={10, 11, 12}),
        concept(2, "Tokenizer", neighbours={10, 11, 13}),
    ]
    [boosted] = find_duplicates(shared)
    assert boosted.shared_neighbours == (10, 11)
    assert boosted.score == round(plain.score + 6 * 2 / 4, 1)
    assert "They share 2 neighbours" in boosted.reasons[1]
    full = [
        concept(1, "Vector database", neighbours={5, 6}),
        concept(2, "Vector databases", neighbours={5, 6}),
    ]
    assert find_duplicates(full)[0].score == 100.0  # capped


def test_weak_match_between_well_connected_strangers_is_dropped():
    """A weak fuzzy match is dropped when both have 2+ neighbours and share none."""
    strangers = [
        concept(1, "Tokeniser", neighbours={10, 11}),
        concept(2, "Tokenizer", neighbours={12, 13}),
    ]
    assert find_duplicates(strangers) == []
    one_sided = [
        concept(1, "Tokeniser", neighbours={10, 11}),
        concept(2, "Tokenizer", neighbours={12}),
    ]
    assert len(find_duplicates(one_sided)) == 1


def test_strong_match_survives_without_shared_neighbours():
    """No shared neighbours never blocks a strong name match."""
    concepts = [
        concept(1, "Vector database", neighbours={10, 11}),
        concept(2, "Vector databse", neighbours={12, 13}),
    ]
    [candidate] = find_duplicates(concepts)
    assert candidate.score > 92
    assert candidate.shared_neighbours == ()
    assert "They share no neighbours." in candidate.reasons


# --- Duplicates: scale and order ----------------------------------------------------------


def test_blocking_keeps_comparisons_far_below_all_pairs():
    """20,000 synthetic concepts: under 2% of all pairs compared, planted typos found."""
    n = 20_000
    names = concept_names(n, seed=11)
    concepts = [concept(i, name) for i, name in enumerate(names, start=1)]
    rng = random.Random(5)
    planted = {}
    for k, original in enumerate(rng.sample(range(1, n + 1), 25)):
        cid = n + 1 + k
        concepts.append(concept(cid, drop_a_letter(names[original - 1], rng)))
        planted[cid] = original
    found, stats = find_duplicates_with_stats(concepts)
    assert stats["pairs_compared"] < n * n / 2 * 0.02
    assert stats["blocks"] > 0
    found_pairs = pairs(found)
    for cid, original in planted.items():
        assert frozenset({cid, original}) in found_pairs


def test_oversized_blocks_are_skipped_and_counted():
    """A block over max_block is left out, and the stats say how many were."""
    concepts = [concept(i, f"Model family {chr(96 + i)}x", ["model"]) for i in range(1, 11)]
    found, stats = find_duplicates_with_stats(concepts, max_block=5)
    assert found == []
    assert stats["oversized_blocks_skipped"] >= 1


def test_order_is_by_score_then_ids_whatever_the_input_order():
    """Candidates come best first, ties by ids, the same for any input order."""
    concepts = [
        concept(1, "Vector database"),
        concept(2, "Vector databases"),
        concept(3, "Normalisation"),
        concept(4, "Normalization"),
        concept(5, "Fine-tuning"),
        concept(6, "Finetuning"),
        concept(7, "Chunking"),
        concept(8, "Chunkings"),
    ]
    expected = find_duplicates(concepts)
    assert [c.score for c in expected] == sorted((c.score for c in expected), reverse=True)
    assert [(c.survivor_id, c.loser_id) for c in expected[:2]] == [(1, 2), (7, 8)]
    for seed in range(3):
        shuffled = concepts[:]
        random.Random(seed).shuffle(shuffled)
        assert find_duplicates(shuffled) == expected


def test_merge_and_relation_type_dedup_keys_keep_their_format():
    """The queue's stored keys must not change: one pair either way, the type by its key."""
    from construction.keys import merge_dedup_key, relation_type_dedup_key

    assert merge_dedup_key(12, 3) == merge_dedup_key(3, 12) == "merge_concepts:3|12"
    assert relation_type_dedup_key("alternative_to") == "add_relation_type:alternative_to"
