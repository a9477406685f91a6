"""The agreement statistics against worked examples from the literature, exact to three
decimals, their undefined cases in words, and reproducible bootstrap intervals."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kgreview.core import agreement as ag
from kgreview.core.agreement import (
    bootstrap_interval,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    observed_agreement,
    units_from_matrix,
)

# Wikipedia, "Cohen's kappa", the worked example: 50 proposals read by A and B; 20 both
# yes, 5 A yes / B no, 10 A no / B yes, 15 both no. p_o = 0.7, p_e = 0.5, kappa = 0.4.
COHEN_PAIRS = (
    [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", C.: four observers,
# twelve units, nominal values with missing data (None). Unit 12 has a single value and
# is not pairable. Published: alpha = 0.743.
KRIPPENDORFF = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]

# Fleiss (1971) as Wikipedia's "Fleiss' kappa" works it: 10 subjects, 14 raters each, 5
# categories; each row counts the raters who chose each category. Published: 0.210.
FLEISS_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def fleiss_units() -> list[list[int]]:
    return [[c for c, n in enumerate(row, 1) for _ in range(n)] for row in FLEISS_COUNTS]


def test_cohens_kappa_of_the_textbook_yes_no_table_is_0_40():
    """Wikipedia's worked example: kappa 0.40 over 50 items, observed agreement 0.70."""
    kappa = cohen_kappa(COHEN_PAIRS)
    assert round(kappa.value, 3) == 0.400
    assert kappa.items == 50
    assert round(observed_agreement([list(p) for p in COHEN_PAIRS]).value, 3) == 0.700


def test_cohens_kappa_depends_on_which_rater_is_which():
    """Cohen's chance agreement comes from each rater's own marginals, so the pairs are
    ordered: swapping the raters of one pair changes kappa, swapping all does not."""
    swapped = [(b, a) for a, b in COHEN_PAIRS]
    assert round(cohen_kappa(swapped).value, 6) == round(cohen_kappa(COHEN_PAIRS).value, 6)
    one_flipped = [("no", "yes"), *COHEN_PAIRS[1:]]
    assert cohen_kappa(one_flipped).value != cohen_kappa(COHEN_PAIRS).value


def test_krippendorffs_alpha_of_his_own_worked_example_with_missing_data_is_0_743():
    """Four observers, twelve units, missing values; the single-value unit is dropped."""
    units = units_from_matrix(KRIPPENDORFF)
    alpha = krippendorff_alpha(units)
    assert round(alpha.value, 3) == 0.743
    assert alpha.items == 11


def test_fleiss_kappa_of_the_fleiss_1971_table_is_0_210():
    units = fleiss_units()
    kappa = fleiss_kappa(units)
    assert round(kappa.value, 3) == 0.210
    assert kappa.items == 10


def test_alpha_for_two_raters_without_missing_data_is_scotts_pi_corrected_for_sample_size():
    """For two raters and n values, alpha = 1 - (n - 1)/n * (1 - pi) (Krippendorff 2011)."""
    units = [list(p) for p in COHEN_PAIRS]
    pi = fleiss_kappa(units).value
    n = 2 * len(units)
    assert krippendorff_alpha(units).value == pytest.approx(1 - (n - 1) / n * (1 - pi))


def test_perfect_agreement_over_two_categories_is_one():
    units = [["accept", "accept"]] * 5 + [["reject:vague", "reject:vague"]] * 3
    assert krippendorff_alpha(units).value == pytest.approx(1.0)
    assert fleiss_kappa(units).value == pytest.approx(1.0)
    assert cohen_kappa([tuple(u) for u in units]).value == pytest.approx(1.0)
    assert observed_agreement(units).value == 1.0


def test_one_category_only_leaves_kappa_and_alpha_undefined_and_says_why():
    """Everyone accepted everything: nothing to expect by chance, so None with a note."""
    units = [["accept", "accept"]] * 6
    for estimate in (krippendorff_alpha(units), fleiss_kappa(units)):
        assert estimate.value is None
        assert estimate.items == 6
        assert "Every rating was accept" in estimate.note
        assert "undefined" in estimate.note
    kappa = cohen_kappa([("accept", "accept")] * 6)
    assert kappa.value is None and "one category" in kappa.note
    assert observed_agreement(units).value == 1.0


def test_no_pairable_unit_is_none_with_words():
    """Units with one label (or none) are not pairable: nothing to compute."""
    units = [["accept"], [], ["reject:vague", None]]
    alpha = krippendorff_alpha(units)
    assert alpha.value is None and alpha.items == 0
    assert "No unit was rated by two people" in alpha.note
    assert observed_agreement(units).value is None
    assert cohen_kappa([]).value is None
    assert "No unit" in cohen_kappa([]).note


def test_single_label_units_are_dropped_and_change_nothing():
    units = units_from_matrix(KRIPPENDORFF)
    padded = [*units, ["lonely"], ["other"]]
    assert krippendorff_alpha(padded) == krippendorff_alpha(units)


def test_systematic_disagreement_is_below_zero():
    units = [["a", "b"], ["b", "a"]] * 5
    assert krippendorff_alpha(units).value < 0
    assert cohen_kappa([("a", "b"), ("b", "a")] * 5).value == pytest.approx(-1.0)


def test_the_bootstrap_is_reproducible_and_contains_the_point_estimate():
    """Same data and seed: the same interval; another seed: another one; the point
    estimate lies inside it; 1,000 resamples at 95% by default."""
    units = units_from_matrix(KRIPPENDORFF) * 4
    first = bootstrap_interval(units, "alpha")
    assert first == bootstrap_interval(units, "alpha")
    assert first.resamples == 1000 and first.level == 0.95 and first.seed == 0
    assert first.contains(krippendorff_alpha(units).value)
    assert first.low < first.high <= 1.0
    assert bootstrap_interval(units, "alpha", seed=1) != first
    kappa = bootstrap_interval(COHEN_PAIRS, "cohen")
    assert kappa.contains(0.4)
    assert kappa == bootstrap_interval(COHEN_PAIRS, "cohen")
    assert bootstrap_interval(fleiss_units(), "fleiss").contains(fleiss_kappa(fleiss_units()).value)


def test_the_bootstrap_interval_narrows_with_more_units():
    small = bootstrap_interval([list(p) for p in COHEN_PAIRS], "alpha")
    large = bootstrap_interval([list(p) for p in COHEN_PAIRS] * 16, "alpha")
    assert (large.high - large.low) < (small.high - small.low) / 2


def test_the_bootstrap_says_why_it_has_no_interval():
    one = bootstrap_interval([["accept", "reject:vague"]])
    assert one.low is None and "at least two units" in one.note
    same = bootstrap_interval([["accept", "accept"]] * 5)
    assert same.low is None and "undefined" in same.note
    assert same.as_json()["method"] == "percentile bootstrap over units"


def test_the_bootstrap_leaves_out_resamples_where_the_statistic_is_undefined():
    """Nine agreeing units and one disagreeing: some resamples miss the disagreement and
    hold one category only; they are counted out, not turned into numbers."""
    units = [["accept", "accept"]] * 9 + [["accept", "reject:vague"]]
    interval = bootstrap_interval(units, "alpha")
    assert 0 < interval.used < interval.resamples


def test_bad_arguments_are_refused_in_words():
    with pytest.raises(ValueError, match="Unknown statistic"):
        bootstrap_interval([], "gamma")
    with pytest.raises(ValueError, match="between 0 and 1"):
        bootstrap_interval([], "alpha", level=95)


def test_the_module_imports_no_django():
    tree = ast.parse(Path(ag.__file__).read_text())
    nodes = list(ast.walk(tree))
    names = [a.name for n in nodes if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in nodes if isinstance(n, ast.ImportFrom)]
    assert not [n for n in names if n.startswith(("django", "kgreview"))]


def reference_alpha(units) -> float:
    """Krippendorff's alpha straight from the coincidence matrix, unit by unit."""
    from collections import Counter, defaultdict

    o: dict = defaultdict(float)
    for unit in units:
        if len(unit) < 2:
            continue
        for i, c in enumerate(unit):
            for j, k in enumerate(unit):
                if i != j:
                    o[c, k] += 1 / (len(unit) - 1)
    n_c: Counter = Counter()
    for (c, _k), v in o.items():
        n_c[c] += v
    n = sum(n_c.values())
    d_o = sum(v for (c, k), v in o.items() if c != k)
    d_e = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k)
    return 1 - (n - 1) * d_o / d_e


def reference_cohen(pairs) -> float:
    from collections import Counter

    n = len(pairs)
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    p_o = sum(a == b for a, b in pairs) / n
    p_e = sum(first[c] * second[c] for c in first) / (n * n)
    return (p_o - p_e) / (1 - p_e)


@pytest.mark.parametrize("seed", range(5))
def test_many_distinct_edits_give_the_definitions_values(seed):
    """Edits nearly all differ, so most categories occur in one unit only: the folded
    sums give what the coincidence matrix and Cohen's marginals give, for units of two
    to four votes."""
    import random

    rng = random.Random(seed)
    common = ["accept", "reject:vague", "reject:wrong_relation"]
    units = []
    for _ in range(150):
        size = rng.choice((2, 2, 2, 3, 4))
        units.append(
            [
                f"edit:{rng.randrange(400)}" if rng.random() < 0.3 else rng.choice(common)
                for _ in range(size)
            ]
        )
    assert krippendorff_alpha(units).value == pytest.approx(reference_alpha(units))
    pairs = [(u[0], u[1]) for u in units]
    assert cohen_kappa(pairs).value == pytest.approx(reference_cohen(pairs))
    same = [[f"edit:{i}", f"edit:{i}"] for i in range(5)] + units
    assert krippendorff_alpha(same).value == pytest.approx(reference_alpha(same))
    same_pairs = [(f"edit:{i}", f"edit:{i}") for i in range(5)] + pairs
    assert cohen_kappa(same_pairs).value == pytest.approx(reference_cohen(same_pairs))


def test_summarise_gives_what_each_function_gives_alone():
    """One tally for alpha, Fleiss' kappa, observed agreement and alpha's interval."""
    units = units_from_matrix(KRIPPENDORFF)
    found = ag.summarise(units, seed=3)
    assert found.alpha == krippendorff_alpha(units)
    assert found.fleiss == fleiss_kappa(units)
    assert found.observed == observed_agreement(units)
    assert found.interval == bootstrap_interval(units, "alpha", seed=3)
