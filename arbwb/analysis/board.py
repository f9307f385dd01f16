"""Boards from per-sample metrics (spec §12, §13.1): bootstrap intervals, paired tests, ranks,
for runs of one group on the same samples (arbwb-defined statistics, docs/leaderboard.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations, compress

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.io.release import Release
from arbwb.metrics import DEFAULT_METRICS, stats
from arbwb.metrics.aggregate import group_codes, level_means

BCY_HEADLINE = "bcy@8000"
_LABELS = {"recall": "R", "mrr": "MRR", "bcy": "BCY", "precision": "P", "hit": "Hit"}


def leaderboard_metrics(release: Release) -> tuple[str, ...]:
    """R@5/10/20 and MRR, plus BCY@8k when the release has a corpus."""
    return (*DEFAULT_METRICS, BCY_HEADLINE) if release.corpus is not None else DEFAULT_METRICS


@dataclass(frozen=True)
class _Paired:
    """One group's per-sample values of one metric: samples x runs, plus sample attributes."""

    runs: list[str]
    values: npt.NDArray[np.float64]
    attrs: pl.DataFrame  # sample_id, task, repo, split (+ cluster column), row-aligned
    clusters: list[str] | None  # the cluster value of each sample, when resampling clusters

    @cached_property
    def codes(self) -> dict[str, npt.NDArray[np.int64]]:
        """Dense codes of ``task`` and ``repo`` over all rows, made once for every scope."""
        return {column: group_codes(self.attrs[column]) for column in ("task", "repo")}

    def scope_codes(self, column: str, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        """:func:`group_codes` of ``column`` on the rows in ``mask`` (codes keep value order)."""
        dense: npt.NDArray[np.int64] = np.unique(self.codes[column][mask], return_inverse=True)[1]
        return dense


def _paired(
    metrics: pl.DataFrame,
    samples: pl.DataFrame,
    runs: Sequence[str],
    metric: str,
    cluster: str | None,
) -> _Paired:
    """Samples on which every run has a value for ``metric`` (all of them for rank metrics)."""
    keep = ["sample_id", "task", "repo", "split", *([cluster] if cluster else [])]
    wide = (
        metrics.filter(pl.col("metric") == metric, pl.col("run").is_in(list(runs)))
        .pivot(on="run", index="sample_id", values="value")
        .drop_nulls()
        .join(samples.select(list(dict.fromkeys(keep))), on="sample_id", how="left")
        .sort("sample_id")
    )
    present = [r for r in runs if r in wide.columns]
    values = wide.select(present).to_numpy().astype(np.float64).reshape(wide.height, len(present))
    clusters = None if cluster is None else wide[cluster].cast(pl.String).to_list()
    return _Paired(present, values, wide.select(list(dict.fromkeys(keep))), clusters)


def _paired_cells(
    metrics: pl.DataFrame,
    samples: pl.DataFrame,
    run_group: Mapping[str, str] | None,
    cluster: str | None,
) -> Iterator[tuple[str, str, _Paired]]:
    """``(group, metric, paired values)`` of every comparison group and metric, in order."""
    for group, runs in _groups(metrics, run_group).items():
        for metric in metrics["metric"].unique(maintain_order=True).to_list():
            yield group, metric, _paired(metrics, samples, runs, metric, cluster)


def _scopes(attrs: pl.DataFrame) -> list[tuple[str, str, npt.NDArray[np.bool_]]]:
    scopes = [("overall", "all", np.ones(attrs.height, dtype=bool))]
    for scope in ("task", "split"):
        for value in sorted(attrs[scope].drop_nulls().unique().to_list()):
            scopes.append((scope, str(value), (attrs[scope] == value).to_numpy()))
    return scopes


def scores(
    metrics: pl.DataFrame,
    samples: pl.DataFrame,
    *,
    run_group: Mapping[str, str] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    cluster: str | None = None,
) -> pl.DataFrame:
    """Long leaderboard: one row per (group, run, scope, subset, aggregation, metric) with
    n, n_groups, value and a percentile-bootstrap interval (over ``cluster`` values if given)."""
    rows: list[dict[str, object]] = []
    for group, metric, paired in _paired_cells(metrics, samples, run_group, cluster):
        for scope, subset, mask in _scopes(paired.attrs):
            keys = {"group": group, "scope": scope, "subset": subset, "metric": metric}
            rows += _scope_rows(paired, keys, mask, n_boot, seed, level)
    return pl.DataFrame(rows, schema=SCORES_SCHEMA)


#: Columns of :func:`scores` (one row per group, run, scope, subset, aggregation, metric).
SCORES_SCHEMA = {
    **dict.fromkeys(("group", "run", "scope", "subset", "aggregation", "metric"), pl.String),
    **dict.fromkeys(("n", "n_groups"), pl.Int64),
    **dict.fromkeys(("value", "ci_low", "ci_high"), pl.Float64),
}


def intervals(reps: npt.NDArray[np.float64], level: float = 0.95) -> dict[str, list[float]]:
    """``ci_low`` and ``ci_high``: the percentile interval of each column of replicates."""
    bounds = [stats.percentile_interval(reps[:, j], level=level) for j in range(reps.shape[1])]
    return {"ci_low": [low for low, _ in bounds], "ci_high": [high for _, high in bounds]}


def _scope_rows(
    paired: _Paired,
    keys: Mapping[str, str],
    mask: npt.NDArray[np.bool_],
    n_boot: int,
    seed: int,
    level: float,
) -> list[dict[str, object]]:
    values = paired.values[mask]
    n = values.shape[0]
    clusters = None if paired.clusters is None else list(compress(paired.clusters, mask))
    weights = stats.bootstrap_weights(n, n_boot=n_boot, seed=seed, clusters=clusters)
    levels: dict[str, npt.NDArray[np.int64] | None] = {"weighted": None}
    if keys["scope"] != "task":
        levels["task_macro"] = paired.scope_codes("task", mask)
    levels["repo_macro"] = paired.scope_codes("repo", mask)
    rows: list[dict[str, object]] = []  # rows, not a frame per scope: 4k tiny frames cost seconds
    for aggregation, codes in levels.items():
        point = level_means(np.ones((1, n)), values, codes)[0]
        bounds = intervals(level_means(weights, values, codes), level)
        n_groups = None if codes is None else int(codes.max()) + 1
        rows += [
            {**keys, "run": run, "aggregation": aggregation, "n": n, "n_groups": n_groups}
            | {
                "value": float(point[j]),
                "ci_low": bounds["ci_low"][j],
                "ci_high": bounds["ci_high"][j],
            }
            for j, run in enumerate(paired.runs)
        ]
    return rows


def _groups(metrics: pl.DataFrame, run_group: Mapping[str, str] | None) -> dict[str, list[str]]:
    """Runs per comparison group, in first-seen order (one group "all" when not given)."""
    out: dict[str, list[str]] = {}
    for run in metrics["run"].unique(maintain_order=True).to_list():
        out.setdefault((run_group or {}).get(run, "all"), []).append(run)
    return out


def pairwise_tests(
    metrics: pl.DataFrame,
    samples: pl.DataFrame,
    *,
    run_group: Mapping[str, str] | None = None,
    n_perm: int = 10000,
    seed: int = 0,
    cluster: str | None = None,
    alpha: float = 0.05,
) -> pl.DataFrame:
    """Paired sign-flip test of every pair of runs per (group, metric), Holm-corrected within
    each (group, metric); sign flips are per sample, or per ``cluster`` value."""
    frames = [pl.DataFrame(schema=TESTS_SCHEMA)]
    for group, metric, paired in _paired_cells(metrics, samples, run_group, cluster):
        pairs = list(combinations(range(len(paired.runs)), 2))
        if not pairs:
            continue
        first, second = (list(side) for side in zip(*pairs, strict=True))
        diffs = paired.values[:, first] - paired.values[:, second]
        p = stats.sign_flip_pvalues(diffs, n_perm=n_perm, seed=seed, clusters=paired.clusters)
        means, adjusted = paired.values.mean(axis=0), stats.holm(p)
        frames.append(
            pl.DataFrame(
                {
                    "group": group,
                    "metric": metric,
                    "run_a": [paired.runs[i] for i in first],
                    "run_b": [paired.runs[j] for j in second],
                    "n": paired.values.shape[0],
                    "mean_a": means[first],
                    "mean_b": means[second],
                    "diff": means[first] - means[second],
                    "p_value": p,
                    "p_holm": adjusted,
                    "significant": adjusted < alpha,
                },
                schema=TESTS_SCHEMA,
            )
        )
    return pl.concat(frames)


#: Columns of :func:`pairwise_tests`.
TESTS_SCHEMA = {
    **dict.fromkeys(("group", "metric", "run_a", "run_b"), pl.String),
    "n": pl.Int64,
    **dict.fromkeys(("mean_a", "mean_b", "diff", "p_value", "p_holm"), pl.Float64),
    "significant": pl.Boolean,
}


def rank_table(
    metrics: pl.DataFrame,
    samples: pl.DataFrame,
    tests: pl.DataFrame,
    *,
    run_group: Mapping[str, str] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    cluster: str | None = None,
) -> pl.DataFrame:
    """Per (group, metric, run): mean, rank, bootstrap rank interval and the tie group from
    ``tests`` (runs not separable from the group's leader, arbwb-defined)."""
    schema = {
        **dict.fromkeys(("group", "metric", "run"), pl.String),
        "mean": pl.Float64,
        **dict.fromkeys(("rank", "rank_best", "rank_worst", "tie_group"), pl.Int64),
    }
    frames = [pl.DataFrame(schema=schema)]
    for group, metric, paired in _paired_cells(metrics, samples, run_group, cluster):
        rank, best, worst = stats.rank_intervals(
            paired.values, n_boot=n_boot, seed=seed, clusters=paired.clusters
        )
        means = paired.values.mean(axis=0)
        order = [paired.runs[i] for i in np.argsort(-means, kind="stable")]
        family = tests.filter(pl.col("group") == group, pl.col("metric") == metric)
        adjusted = {
            frozenset((a, b)): p
            for a, b, p in family.select("run_a", "run_b", "p_holm").iter_rows()
        }
        ties = stats.tie_groups(order, adjusted)
        columns = {"mean": means, "rank": rank, "rank_best": best, "rank_worst": worst}
        frames.append(
            pl.DataFrame(
                {"group": group, "metric": metric, "run": paired.runs, **columns}
                | {"tie_group": [ties[run] for run in paired.runs]},
                schema=schema,
            )
        )
    return pl.concat(frames).sort("group", "metric", "rank", "run")


def metric_label(metric: str) -> str:
    """Short column label: recall@20 -> R@20, mrr -> MRR, bcy@8000 -> BCY@8k."""
    family, _, k = metric.partition("@")
    head = _LABELS.get(family, family)
    if k.isdigit() and int(k) >= 1000 and int(k) % 1000 == 0:
        k = f"{int(k) // 1000}k"
    return f"{head}@{k}" if k else head


def summary_table(
    board: pl.DataFrame, *, group: str, scope: str = "overall", subset: str = "all"
) -> pl.DataFrame:
    """Wide table of one group and subset: Run, counts, then ``value [ci_low, ci_high]`` cells
    (spec §5.9), sorted by weighted MRR, R@20, run (spec §13.1)."""
    part = board.filter(
        pl.col("group") == group, pl.col("scope") == scope, pl.col("subset") == subset
    )
    prefix = {"weighted": "", "task_macro": "Macro ", "repo_macro": "Repo "}
    counts = [c for c in ("n", "n_evaluated", "n_missing") if c in part.columns]
    cells = part.select(
        "run",
        *counts,
        "metric",
        pl.concat_str(
            pl.col("aggregation").replace_strict(prefix, return_dtype=pl.String),
            pl.col("metric").map_elements(metric_label, return_dtype=pl.String),
        ).alias("column"),
        pl.struct("value", "ci_low", "ci_high")
        .map_elements(lambda s: "{value:.4f} [{ci_low:.4f}, {ci_high:.4f}]".format(**s), pl.String)
        .alias("cell"),
    )
    sort_by = [c for c in ("mrr", "recall@20") if c in part["metric"].to_list()]
    order_cols = (
        part.filter(pl.col("aggregation") == "weighted")
        .pivot(on="metric", index="run", values="value")
        .select("run", *sort_by)
    )
    wide = cells.pivot(on="column", index=["run", *counts], values="cell").join(
        order_cols, on="run"
    )
    wide = wide.sort([*sort_by, "run"], descending=[*[True] * len(sort_by), False])
    ordered = sorted(
        cells["column"].unique(maintain_order=True),
        key=lambda c: c.startswith("Macro ") + 2 * c.startswith("Repo "),
    )
    return wide.select("run", *counts, *ordered).rename({"run": "Run"})
