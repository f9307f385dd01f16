"""Intervals and paired tests for comparing runs on the same samples (arbwb-defined, spec §12),
vectorised over an ``(n_boot, n)`` weight matrix, seeded and deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
_KEPT_DRAWS = 16  # sets of draws kept (2,000 x 1,000 samples: 16 MB each)


def _codes(clusters: Sequence[object] | npt.ArrayLike, n: int) -> npt.NDArray[np.int64]:
    """Integer cluster codes 0..k-1 (first-seen order) for ``n`` samples."""
    labels = list(np.asarray(clusters, dtype=object))
    if len(labels) != n:
        msg = f"clusters must have one label per sample ({n}), got {len(labels)}"
        raise ValueError(msg)
    index: dict[object, int] = {}
    return np.array([index.setdefault(label, len(index)) for label in labels], dtype=np.int64)


def _as_values(values: npt.ArrayLike) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim not in (1, 2) or array.shape[0] == 0:
        msg = (
            f"values must be a non-empty 1-D or 2-D array (samples first), got shape {array.shape}"
        )
        raise ValueError(msg)
    if np.isnan(array).any():
        msg = "values contain NaN; drop or score those samples before resampling"
        raise ValueError(msg)
    return array


def bootstrap_weights(
    n: int, *, n_boot: int = 2000, seed: int = 0, clusters: npt.ArrayLike | None = None
) -> FloatArray:
    """Draw counts of ``n`` samples in ``n_boot`` resamples, shape (n_boot, n); with
    ``clusters`` whole clusters are drawn and each sample inherits its cluster's count."""
    if n <= 0 or n_boot <= 0:
        msg = f"need n > 0 samples and n_boot > 0 resamples, got n={n}, n_boot={n_boot}"
        raise ValueError(msg)
    if clusters is None:
        return _multinomial_counts(n, n_boot, seed)
    codes = _codes(clusters, n)
    counts: FloatArray = _multinomial_counts(int(codes.max()) + 1, n_boot, seed)[:, codes]
    return counts


@lru_cache(maxsize=_KEPT_DRAWS)
def _multinomial_counts(k: int, n_boot: int, seed: int) -> FloatArray:
    """``n_boot`` multinomial draws of ``k`` items from ``k`` equally likely ones, as floats
    ready for the products (read-only).

    Kept because a report asks for the same draws for every run, metric and budget over one
    sample set, and drawing them costs far more than the products that use them.
    """
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(k, np.full(k, 1.0 / k), size=n_boot).astype(np.float64)
    counts.flags.writeable = False
    return counts


def bootstrap_means(
    values: npt.ArrayLike,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    clusters: npt.ArrayLike | None = None,
) -> FloatArray:
    """Resampled means ``(W @ v) / W.sum(1)``, (n_boot,) or (n_boot, m); columns share the
    resamples, so differences between columns are paired."""
    array = _as_values(values)
    weights = bootstrap_weights(array.shape[0], n_boot=n_boot, seed=seed, clusters=clusters)
    totals = weights.sum(axis=1)
    out: FloatArray = (weights @ array) / (totals[:, None] if array.ndim == 2 else totals)
    return out


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        msg = f"level must be in (0, 1), e.g. 0.95, got {level!r}"
        raise ValueError(msg)


def percentile_interval(replicates: npt.ArrayLike, *, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval ``[q_{a/2}, q_{1-a/2}]`` of bootstrap replicates, a = 1 - level."""
    _check_level(level)
    alpha = 1.0 - level
    low, high = np.quantile(np.asarray(replicates, dtype=np.float64), [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def bootstrap_ci(
    values: npt.ArrayLike,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    clusters: npt.ArrayLike | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of 1-D ``values`` (cluster bootstrap if given)."""
    array = _as_values(values)
    if array.ndim != 1:
        msg = f"bootstrap_ci takes 1-D values, got shape {array.shape}; use bootstrap_means"
        raise ValueError(msg)
    replicates = bootstrap_means(array, n_boot=n_boot, seed=seed, clusters=clusters)
    return percentile_interval(replicates, level=level)


def sign_flip_pvalues(
    diffs: npt.ArrayLike,
    *,
    n_perm: int = 10000,
    seed: int = 0,
    clusters: npt.ArrayLike | None = None,
) -> FloatArray:
    """Paired randomization p-values per column of per-sample differences ``diffs`` (n, m): signs
    flipped per sample (or cluster), statistic ``|mean(s*d)|``, p = (1 + #{as extreme}) / (R + 1).
    """
    array = _as_values(diffs)
    matrix = array if array.ndim == 2 else array[:, None]
    n = matrix.shape[0]
    rng = np.random.default_rng(seed)
    if clusters is None:
        signs = rng.choice(np.array([-1.0, 1.0]), size=(n_perm, n))
    else:
        codes = _codes(clusters, n)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(n_perm, int(codes.max()) + 1))[:, codes]
    null_stats = (signs @ matrix) / n
    threshold = np.abs(matrix.mean(axis=0)) * (1 - 1e-12) - 1e-15  # ulp-tolerant ">="
    hits = (np.abs(null_stats) >= threshold).sum(axis=0)
    out: FloatArray = (1.0 + hits) / (null_stats.shape[0] + 1.0)
    return out


def paired_randomization_test(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    n_perm: int = 10000,
    seed: int = 0,
    clusters: npt.ArrayLike | None = None,
) -> float:
    """Two-sided paired randomization (sign-flip) test of mean(a) = mean(b); p has the +1 rule."""
    left, right = _as_values(a), _as_values(b)
    if left.shape != right.shape or left.ndim != 1:
        msg = (
            f"paired tests need two 1-D arrays of equal length, got {left.shape} and {right.shape}"
        )
        raise ValueError(msg)
    diffs = left - right
    return float(sign_flip_pvalues(diffs, n_perm=n_perm, seed=seed, clusters=clusters)[0])


def holm(pvalues: npt.ArrayLike) -> FloatArray:
    """Holm step-down adjusted p-values ``q_(i) = max_{j<=i} min(1, (m - j + 1)*p_(j))``, in
    the input order."""
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1 or np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        msg = f"holm needs a 1-D array of p-values in [0, 1], got {p!r}"
        raise ValueError(msg)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m, dtype=np.float64)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def wilson_interval(k: int, n: int, *, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for k/n at ``level`` (exact bounds 0 and 1 at the ends)."""
    _check_level(level)
    if n <= 0 or not 0 <= k <= n:
        msg = f"wilson_interval needs 0 <= k <= n and n > 0, got k={k}, n={n}"
        raise ValueError(msg)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if k == 0 else max(0.0, center - half)  # exact bounds at the ends
    high = 1.0 if k == n else min(1.0, center + half)
    return low, high


def rank_intervals(
    values: npt.ArrayLike,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    clusters: npt.ArrayLike | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Observed rank (1 = highest mean, ties share the best) and bootstrap rank interval
    [best, worst] of each column of ``values`` (n, m)."""
    _check_level(level)
    array = _as_values(values)
    if array.ndim != 2:
        msg = f"rank_intervals needs a 2-D array (samples x runs), got shape {array.shape}"
        raise ValueError(msg)
    replicates = bootstrap_means(array, n_boot=n_boot, seed=seed, clusters=clusters)
    observed = _min_ranks(array.mean(axis=0)[None, :])[0]
    ranks = _min_ranks(replicates)
    alpha = 1.0 - level
    best = np.quantile(ranks, alpha / 2, axis=0, method="lower").astype(np.int64)
    worst = np.quantile(ranks, 1 - alpha / 2, axis=0, method="higher").astype(np.int64)
    return observed, best, worst


def _min_ranks(means: FloatArray) -> npt.NDArray[np.int64]:
    """Row-wise descending ranks with ties sharing the best rank: 1 + #{others strictly higher}."""
    out: npt.NDArray[np.int64] = 1 + (means[:, None, :] > means[:, :, None]).sum(axis=2)
    return out


def tie_groups(
    names_by_mean: Sequence[str], adjusted_p: Mapping[frozenset[str], float], *, alpha: float = 0.05
) -> dict[str, int]:
    """Tie groups numbered from the best: a new group starts at the first run significantly
    different (adjusted p < alpha) from the current group's leader (arbwb-defined)."""
    groups: dict[str, int] = {}
    leader, group = "", 0
    for name in names_by_mean:
        key = frozenset((leader, name))
        if group and key not in adjusted_p:
            msg = f"no adjusted p-value for the pair {sorted(key)}; pass every pair of runs"
            raise ValueError(msg)
        if group == 0 or adjusted_p[key] < alpha:
            leader, group = name, group + 1
        groups[name] = group
    return groups
