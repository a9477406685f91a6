"""Patterns the graph's accepted edges ask for (``construction.ontology.usage``): an open
relation whose typed edges join the same two types twice is proposed that pattern with
their quotes; nothing a pattern covers, nothing known, nothing seen once; a subtype's
edges count toward its parent's pattern; a symmetric pair either way round is one."""

from __future__ import annotations

from construction.ontology.types import KnownOntology, KnownType, Quote
from construction.ontology.usage import UsedGroup, patterns_in_use

TYPES = (
    KnownType("setting", "Setting"),
    KnownType("memory_setting", "Memory setting", parent_key="setting"),
    KnownType("process", "Process"),
    KnownType("command", "Command"),
)


def group(relation, domain, range_, n, *, symmetric=False, slug="manual"):
    g = UsedGroup(relation, domain, range_, symmetric=symmetric)
    for i in range(n):
        g.add(Quote(slug, 1, i, i + 5, f"{domain} {i} {relation} {range_}.", "a", "b"))
    return g


def keys(drafts):
    return [(p.relation_key, p.domain_key, p.range_key, p.support) for p in drafts]


def test_a_relation_used_twice_between_two_types_is_proposed_that_pattern_with_its_quotes():
    (p,) = patterns_in_use([group("affects", "setting", "process", 2)], KnownOntology(TYPES))
    assert (p.relation_key, p.domain_key, p.range_key, p.support, p.sources) == (
        "affects",
        "setting",
        "process",
        2,
        1,
    )
    assert p.from_graph and [q.quote for q in p.quotes] == [
        "setting 0 affects process.",
        "setting 1 affects process.",
    ]


def test_a_pair_used_once_is_not_proposed():
    assert patterns_in_use([group("affects", "setting", "process", 1)], KnownOntology(TYPES)) == ()


def test_a_known_or_covered_pattern_is_not_proposed_again():
    known = KnownOntology(TYPES, patterns=frozenset({("affects", "setting", "process")}))
    used = [
        group("affects", "setting", "process", 3),
        group("affects", "memory_setting", "process", 3),
    ]
    assert patterns_in_use(used, known) == ()


def test_a_subtypes_edges_count_toward_the_parents_pattern_and_only_the_parent_is_proposed():
    used = [
        group("affects", "setting", "process", 1),
        group("affects", "memory_setting", "process", 2),
    ]
    assert keys(patterns_in_use(used, KnownOntology(TYPES))) == [
        ("affects", "setting", "process", 3)
    ]


def test_a_symmetric_pair_either_way_round_is_one_group():
    used = [
        group("related", "process", "command", 1, symmetric=True),
        group("related", "command", "process", 1, symmetric=True, slug="other"),
    ]
    (p,) = patterns_in_use(used, KnownOntology(TYPES))
    assert (p.domain_key, p.range_key, p.support, p.sources) == ("command", "process", 2, 2)


def test_each_relation_is_judged_on_its_own_edges():
    used = [group("affects", "setting", "process", 2), group("uses", "command", "setting", 1)]
    assert keys(patterns_in_use(used, KnownOntology(TYPES))) == [
        ("affects", "setting", "process", 2)
    ]
