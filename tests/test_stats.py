"""arbwb.metrics.stats against hand-computed values and scipy's independent implementations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from arbwb.metrics.stats import (
    bootstrap_ci,
    bootstrap_means,
    bootstrap_weights,
    holm,
    paired_randomization_test,
    rank_intervals,
    sign_flip_pvalues,
    tie_groups,
    wilson_interval,
)


def test_bootstrap_weights_plain_rows_sum_to_n() -> None:
    weights = bootstrap_weights(7, n_boot=50, seed=3)
    assert weights.shape == (50, 7)
    assert np.all(weights.sum(axis=1) == 7)
    assert np.array_equal(weights, bootstrap_weights(7, n_boot=50, seed=3))


def test_bootstrap_weights_cluster_constant_within_cluster() -> None:
    clusters = ["a", "a", "b", "c", "c", "c"]
    weights = bootstrap_weights(6, n_boot=40, seed=1, clusters=clusters)
    assert np.array_equal(weights[:, 0], weights[:, 1])
    assert np.array_equal(weights[:, 3], weights[:, 5])
    # three clusters are drawn per resample
    assert np.all(weights[:, [0, 2, 3]].sum(axis=1) == 3)


def test_bootstrap_ci_constant_values_is_a_point() -> None:
    assert bootstrap_ci([0.25] * 12) == (0.25, 0.25)


def test_bootstrap_ci_close_to_scipy_percentile() -> None:
    values = np.random.default_rng(11).random(200)
    low, high = bootstrap_ci(values, n_boot=4000, seed=5)
    ref = sps.bootstrap(
        (values,), np.mean, n_resamples=4000, method="percentile", random_state=7
    ).confidence_interval
    assert low == pytest.approx(ref.low, abs=0.006)
    assert high == pytest.approx(ref.high, abs=0.006)
    assert low < values.mean() < high


def test_cluster_bootstrap_equals_plain_bootstrap_of_equal_size_cluster_means() -> None:
    # 4 clusters of 3 identical values: resampling clusters == resampling cluster means.
    cluster_means = np.array([0.0, 0.5, 1.0, 0.2])
    values = np.repeat(cluster_means, 3)
    clusters = np.repeat(["r1", "r2", "r3", "r4"], 3)
    expected = bootstrap_ci(cluster_means, n_boot=500, seed=9)
    got = bootstrap_ci(values, n_boot=500, seed=9, clusters=clusters)
    assert got == pytest.approx(expected, abs=1e-12)


def test_bootstrap_means_two_columns_share_resamples() -> None:
    values = np.column_stack([np.arange(10.0), np.arange(10.0) + 1.0])
    reps = bootstrap_means(values, n_boot=100, seed=2)
    assert reps.shape == (100, 2)
    assert np.allclose(reps[:, 1] - reps[:, 0], 1.0)


def test_identical_runs_have_p_one() -> None:
    a = np.random.default_rng(0).random(40)
    assert paired_randomization_test(a, a.copy(), n_perm=2000) == 1.0


def test_dominating_run_is_significant_after_holm() -> None:
    b = np.random.default_rng(1).random(30) * 0.5
    a = b + 0.1  # better on every sample
    c = b + 0.05
    p_rand = paired_randomization_test(a, b, n_perm=2000, seed=0)
    assert p_rand < 0.001
    adjusted = holm([p_rand, paired_randomization_test(a, c), paired_randomization_test(c, b)])
    assert np.all(adjusted < 0.05)


def test_randomization_matches_scipy_exact_permutation_test() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.random(10), rng.random(10)
    exact = sps.permutation_test(
        (a, b),
        lambda x, y: np.mean(x - y),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    ).pvalue
    ours = paired_randomization_test(a, b, n_perm=20000, seed=2)
    assert ours == pytest.approx(exact, abs=0.012)


def test_sign_flip_columns_and_clusters() -> None:
    diffs = np.column_stack([np.zeros(8), np.full(8, 0.3)])
    p = sign_flip_pvalues(diffs, n_perm=999, seed=0, clusters=list("aabbccdd"))
    assert p[0] == 1.0
    # 4 clusters all positive: only the all-plus and all-minus patterns (2 of 16) reach |mean|
    assert p[1] == pytest.approx(2 / 16, abs=0.03)


def test_holm_hand_vector() -> None:
    assert np.allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    assert np.array_equal(holm([0.5, 0.6]), [1.0, 1.0])
    assert np.array_equal(holm([0.2]), [0.2])
    with pytest.raises(ValueError, match="p-values"):
        holm([0.1, 1.5])


def test_wilson_interval_matches_scipy_and_hand_values() -> None:
    low, high = wilson_interval(5, 10)
    assert (low, high) == pytest.approx((0.2365931, 0.7634069), abs=1e-6)
    ref = sps.binomtest(17, 40).proportion_ci(confidence_level=0.9, method="wilson")
    assert wilson_interval(17, 40, level=0.9) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert wilson_interval(0, 10)[0] == 0.0
    with pytest.raises(ValueError, match="k <= n"):
        wilson_interval(3, 2)


def test_rank_intervals_separated_and_tied_runs() -> None:
    base = np.random.default_rng(8).random(50)
    values = np.column_stack([base + 1.0, base + 2.0, base, base])
    observed, best, worst = rank_intervals(values, n_boot=300, seed=0)
    assert observed.tolist() == [2, 1, 3, 3]
    assert best.tolist() == [2, 1, 3, 3]
    assert worst.tolist() == [2, 1, 3, 3]


def test_rank_intervals_overlap_for_noisy_close_runs() -> None:
    rng = np.random.default_rng(3)
    values = np.column_stack([rng.random(20), rng.random(20)])
    _, best, worst = rank_intervals(values, n_boot=500, seed=0)
    assert best.tolist() == [1, 1]
    assert worst.tolist() == [2, 2]


def test_tie_groups_start_at_first_significant_difference() -> None:
    p = {
        frozenset(("A", "B")): 0.2,
        frozenset(("A", "C")): 0.01,
        frozenset(("A", "D")): 0.001,
        frozenset(("B", "C")): 0.04,
        frozenset(("B", "D")): 0.02,
        frozenset(("C", "D")): 0.3,
    }
    assert tie_groups(["A", "B", "C", "D"], p) == {"A": 1, "B": 1, "C": 2, "D": 2}
    assert tie_groups(["A", "B", "C", "D"], p, alpha=0.005) == {"A": 1, "B": 1, "C": 1, "D": 2}
    with pytest.raises(ValueError, match="every pair"):
        tie_groups(["A", "E"], p)
