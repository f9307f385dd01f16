"""Leaderboards (spec §12, §13.1) with bootstrap intervals, paired tests and rank intervals.

Point values are upstream's aggregation levels: sample-weighted (pooled) mean,
task-macro (unweighted mean of the per-task means of the tasks present) and
repo-macro. Intervals, paired tests, Holm correction, rank intervals, tie groups
and the dev/held-out split are arbwb-defined (spec §12 has no upstream rule).
Runs are only compared within one group (the ``eval/<release>`` folder) on the
same samples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb import schemas
from arbwb.analysis.result import Resampling, Table
from arbwb.io.release import Release, check_missing
from arbwb.metrics import DEFAULT_METRICS, evaluate
from arbwb.metrics.aggregate import group_codes, level_means
from arbwb.metrics.stats import (
    bootstrap_weights,
    holm,
    percentile_interval,
    rank_intervals,
    sign_flip_pvalues,
    tie_groups,
)

if TYPE_CHECKING:
    from arbwb.analysis.method_leaderboard import Comparison, Methods

BCY_HEADLINE = "bcy@8000"
AGGREGATIONS = ("weighted", "task_macro", "repo_macro")
_LABELS = {"recall": "R", "mrr": "MRR", "bcy": "BCY", "precision": "P", "hit": "Hit"}


def leaderboard_metrics(release: Release) -> tuple[str, ...]:
    """R@5/10/20 and MRR, plus BCY@8k when the release has a corpus."""
    return (*DEFAULT_METRICS, BCY_HEADLINE) if release.corpus is not None else DEFAULT_METRICS


def release_metrics(release: Release, *, metrics: Sequence[str] | None = None) -> pl.DataFrame:
    """Per-sample METRICS of every run over its own universe (its group's gold samples;
    absent = zeros, the ``zero`` rule: :meth:`Release.units`)."""
    names = leaderboard_metrics(release) if metrics is None else tuple(metrics)
    frames = [
        evaluate(
            run.rankings,
            release.gold_of(name),
            metrics=names,
            samples=release.run_universe(name),
            stored=run.stored_for(release.gold_of(name)),
            corpus=release.corpus,
            runs=[name],
        )
        for name, run in release.runs.items()
    ]
    return pl.concat(frames) if frames else schemas.empty(schemas.METRICS)


@dataclass(frozen=True)
class _Paired:
    """One group's per-sample values of one metric: samples x runs, plus sample attributes."""

    runs: list[str]
    values: npt.NDArray[np.float64]
    attrs: pl.DataFrame  # sample_id, task, repo, split (+ cluster column), row-aligned


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
    return _Paired(present, values, wide.select(list(dict.fromkeys(keep))))


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
    """Long leaderboard: one row per (group, run, scope, subset, aggregation, metric).

    Columns: group, run, scope (overall | task | split), subset, aggregation
    (weighted | task_macro | repo_macro), metric, n, n_groups (tasks or repos
    averaged; null for weighted), value, ci_low, ci_high. Intervals are
    percentile bootstrap over samples, or over ``cluster`` values (e.g. "repo")
    when given; macros of a resample average the groups drawn (arbwb-defined).
    """
    groups = _groups(metrics, run_group)
    rows: list[dict[str, object]] = []
    for group, runs in groups.items():
        for metric in metrics["metric"].unique(maintain_order=True).to_list():
            paired = _paired(metrics, samples, runs, metric, cluster)
            for scope, subset, mask in _scopes(paired.attrs):
                rows.extend(
                    _scope_rows(
                        paired,
                        group,
                        metric,
                        scope,
                        subset,
                        mask,
                        cluster,
                        n_boot=n_boot,
                        seed=seed,
                        level=level,
                    )
                )
    return pl.DataFrame(rows, schema=SCORES_SCHEMA, orient="row")


#: Columns of :func:`scores` (one row per group, run, scope, subset, aggregation, metric).
SCORES_SCHEMA = {
    "group": pl.String,
    "run": pl.String,
    "scope": pl.String,
    "subset": pl.String,
    "aggregation": pl.String,
    "metric": pl.String,
    "n": pl.Int64,
    "n_groups": pl.Int64,
    "value": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
}


def _scope_rows(
    paired: _Paired,
    group: str,
    metric: str,
    scope: str,
    subset: str,
    mask: npt.NDArray[np.bool_],
    cluster: str | None,
    *,
    n_boot: int,
    seed: int,
    level: float,
) -> list[dict[str, object]]:
    values = paired.values[mask]
    attrs = paired.attrs.filter(pl.Series(mask))
    n = values.shape[0]
    clusters = None if cluster is None else attrs[cluster].cast(pl.String).to_list()
    weights = bootstrap_weights(n, n_boot=n_boot, seed=seed, clusters=clusters)
    ones = np.ones((1, n))
    levels: dict[str, tuple[npt.NDArray[np.int64] | None, int | None]] = {"weighted": (None, None)}
    if scope != "task":
        task_codes = group_codes(attrs["task"])
        levels["task_macro"] = (task_codes, int(task_codes.max()) + 1)
    repo_codes = group_codes(attrs["repo"])
    levels["repo_macro"] = (repo_codes, int(repo_codes.max()) + 1)
    rows: list[dict[str, object]] = []
    for aggregation, (codes, n_groups) in levels.items():
        point = level_means(ones, values, codes)[0]
        reps = level_means(weights, values, codes)
        for j, run in enumerate(paired.runs):
            low, high = percentile_interval(reps[:, j], level=level)
            rows.append(
                {
                    "group": group,
                    "run": run,
                    "scope": scope,
                    "subset": subset,
                    "aggregation": aggregation,
                    "metric": metric,
                    "n": n,
                    "n_groups": n_groups,
                    "value": float(point[j]),
                    "ci_low": low,
                    "ci_high": high,
                }
            )
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
    """Paired randomization test of every pair of runs per (group, metric), Holm-corrected.

    Columns: group, metric, run_a, run_b, n, mean_a, mean_b, diff (a - b), p_value,
    p_holm, significant (p_holm < alpha). The Holm family is all pairs of a
    (group, metric). Sign flips are per sample, or per ``cluster`` value.
    """
    rows: list[dict[str, object]] = []
    for group, runs in _groups(metrics, run_group).items():
        for metric in metrics["metric"].unique(maintain_order=True).to_list():
            paired = _paired(metrics, samples, runs, metric, cluster)
            pairs = list(combinations(range(len(paired.runs)), 2))
            if not pairs:
                continue
            diffs = np.column_stack([paired.values[:, i] - paired.values[:, j] for i, j in pairs])
            clusters = None if cluster is None else paired.attrs[cluster].cast(pl.String).to_list()
            p = sign_flip_pvalues(diffs, n_perm=n_perm, seed=seed, clusters=clusters)
            adjusted = holm(p)
            means = paired.values.mean(axis=0)
            for (i, j), p_value, p_holm in zip(pairs, p, adjusted, strict=True):
                rows.append(
                    {
                        "group": group,
                        "metric": metric,
                        "run_a": paired.runs[i],
                        "run_b": paired.runs[j],
                        "n": paired.values.shape[0],
                        "mean_a": float(means[i]),
                        "mean_b": float(means[j]),
                        "diff": float(means[i] - means[j]),
                        "p_value": float(p_value),
                        "p_holm": float(p_holm),
                        "significant": bool(p_holm < alpha),
                    }
                )
    return pl.DataFrame(rows, schema=TESTS_SCHEMA, orient="row")


#: Columns of :func:`pairwise_tests`.
TESTS_SCHEMA = {
    "group": pl.String,
    "metric": pl.String,
    "run_a": pl.String,
    "run_b": pl.String,
    "n": pl.Int64,
    "mean_a": pl.Float64,
    "mean_b": pl.Float64,
    "diff": pl.Float64,
    "p_value": pl.Float64,
    "p_holm": pl.Float64,
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
    level: float = 0.95,
    cluster: str | None = None,
    alpha: float = 0.05,
) -> pl.DataFrame:
    """Per (group, metric, run): mean, rank, bootstrap rank interval and tie group.

    Tie groups come from ``tests`` (Holm-adjusted p of :func:`pairwise_tests`): runs
    in one group cannot be separated from the group's best run (arbwb-defined).
    """
    rows: list[dict[str, object]] = []
    for group, runs in _groups(metrics, run_group).items():
        for metric in metrics["metric"].unique(maintain_order=True).to_list():
            paired = _paired(metrics, samples, runs, metric, cluster)
            clusters = None if cluster is None else paired.attrs[cluster].cast(pl.String).to_list()
            rank, best, worst = rank_intervals(
                paired.values, n_boot=n_boot, seed=seed, level=level, clusters=clusters
            )
            means = paired.values.mean(axis=0)
            order = [paired.runs[i] for i in np.argsort(-means, kind="stable")]
            family = tests.filter(pl.col("group") == group, pl.col("metric") == metric)
            adjusted = {
                frozenset((a, b)): p
                for a, b, p in family.select("run_a", "run_b", "p_holm").iter_rows()
            }
            ties = tie_groups(order, adjusted, alpha=alpha)
            for j, run in enumerate(paired.runs):
                rows.append(
                    {
                        "group": group,
                        "metric": metric,
                        "run": run,
                        "mean": float(means[j]),
                        "rank": int(rank[j]),
                        "rank_best": int(best[j]),
                        "rank_worst": int(worst[j]),
                        "tie_group": ties[run],
                    }
                )
    schema = {
        "group": pl.String,
        "metric": pl.String,
        "run": pl.String,
        "mean": pl.Float64,
        "rank": pl.Int64,
        "rank_best": pl.Int64,
        "rank_worst": pl.Int64,
        "tie_group": pl.Int64,
    }
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    return frame.sort("group", "metric", "rank", "run")


def metric_label(metric: str) -> str:
    """Short column label: recall@20 -> R@20, mrr -> MRR, bcy@8000 -> BCY@8k."""
    family, _, k = metric.partition("@")
    head = _LABELS.get(family, family)
    if k.isdigit() and int(k) >= 1000 and int(k) % 1000 == 0:
        k = f"{int(k) // 1000}k"
    return f"{head}@{k}" if k else head


def _cell(value: float, low: float, high: float) -> str:
    return f"{value:.4f} [{low:.4f}, {high:.4f}]"


def summary_table(
    board: pl.DataFrame, *, group: str, scope: str = "overall", subset: str = "all"
) -> pl.DataFrame:
    """Wide table for one group and subset: Run, n (and n_evaluated, n_missing when the board
    has them), then weighted metrics and the macros.

    Cells read ``value [ci_low, ci_high]`` (4 decimals, spec §5.9); rows sorted by
    weighted MRR desc, R@20 desc, run (spec §13.1 order).
    """
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
        .map_elements(lambda s: _cell(s["value"], s["ci_low"], s["ci_high"]), pl.String)
        .alias("cell"),
    )
    order_cols = (
        part.filter(pl.col("aggregation") == "weighted")
        .pivot(on="metric", index="run", values="value")
        .select("run", *[c for c in ("mrr", "recall@20") if c in part["metric"].to_list()])
    )
    wide = cells.pivot(on="column", index=["run", *counts], values="cell").join(
        order_cols, on="run"
    )
    sort_by = [c for c in ("mrr", "recall@20") if c in wide.columns]
    wide = wide.sort([*sort_by, "run"], descending=[*[True] * len(sort_by), False])
    columns = cells.unique(["column"], maintain_order=True).with_columns(
        rank=pl.col("column").str.starts_with("Macro ").cast(pl.Int8)
        + 2 * pl.col("column").str.starts_with("Repo ").cast(pl.Int8)
    )
    ordered = columns.sort("rank", maintain_order=True)["column"].to_list()
    return wide.select("run", *counts, *ordered).rename({"run": "Run"})


@dataclass(frozen=True)
class LeaderboardOptions:
    """Options of :func:`run`: the method table (``arbwb.io.method_table.read_methods``; None
    makes every run its own method), the missing rule and the resampling of intervals/tests."""

    methods: pl.DataFrame | None = None
    missing: str = "zero"
    resampling: Resampling = field(default_factory=Resampling)


@dataclass(frozen=True)
class LeaderboardResult:
    """Notebook 01's numbers: per-sample metrics, the run and method comparisons, and the
    tables shown per group (``summaries`` per run group; ``v2``, ``layered``, ``layered_bcy``
    per method group; ``subset_tables`` the per-task and per-split ones, by table name)."""

    notes: list[str]
    runs: list[str]
    missing: str
    bcy: bool
    skipped: str | None
    metrics: pl.DataFrame  # METRICS of every run over its own universe, every board metric
    methods: Methods
    run_level: Comparison
    method_level: Comparison
    summaries: dict[str, pl.DataFrame]
    v2: dict[str, pl.DataFrame]
    layered: dict[str, pl.DataFrame]
    layered_bcy: dict[str, pl.DataFrame]
    subset_tables: dict[str, pl.DataFrame]

    def tables(self) -> list[Table]:
        """Methods, run board/tests/ranks, group summaries, then the method tables."""
        runs, methods = self.run_level, self.method_level
        out = [Table("methods", self.methods.runs), Table("scores", runs.board)]
        out += [Table("significance", runs.tests), Table("ranks", runs.ranks)]
        out += [Table(f"{g}__overall", frame) for g, frame in self.summaries.items()]
        out += [Table("method_scores", methods.board), Table("method_significance", methods.tests)]
        out.append(Table("method_ranks", methods.ranks))
        out += [Table(f"v2__{g}", frame) for g, frame in self.v2.items()]
        out += [Table(f"layered__{g}", frame) for g, frame in self.layered.items()]
        out += [Table(f"layered_bcy__{g}", f) for g, f in self.layered_bcy.items() if f.height]
        out += [Table(name, frame) for name, frame in self.subset_tables.items()]
        return out

    def records(self) -> dict[str, Any]:
        """The key numbers of notebook 01 (``skipped`` only when there are no runs)."""
        board = self.run_level.board.filter(pl.col("scope") == "overall")
        method_board = self.method_level.board.filter(pl.col("scope") == "overall")
        mrr_ranks = self.run_level.ranks.filter(pl.col("metric") == "mrr")
        ties = mrr_ranks.select("group", "run", "tie_group").iter_rows()
        n_max = board.group_by("group", maintain_order=True).agg(pl.col("n").max())
        labels = self.methods.runs.select("run", "group", "method", "family").iter_rows()
        mrr_tests = self.run_level.tests.filter(pl.col("metric") == "mrr")
        skipped = {"skipped": self.skipped} if self.skipped else {}
        return {
            "notes": self.notes,
            "runs": self.runs,
            "missing_rule": self.missing,
            **skipped,
            "overall": _values(board),
            "n_samples": {g: int(n) for g, n in n_max.iter_rows()},
            "counts": _counts(board),
            "tie_groups_mrr": {f"{g}/{r}": t for g, r, t in ties},
            "significant_pairs_mrr": int(mrr_tests["significant"].sum()),
            "bcy": self.bcy,
            "methods": {r: {"method": m, "family": f, "group": g} for r, g, m, f in labels},
            "method_overall": _values(method_board),
            "method_counts": _counts(method_board),
        }


def _values(board: pl.DataFrame) -> dict[str, float]:
    """``group/run/aggregation/metric`` -> value of a board's rows."""
    keys = board.select("group", "run", "aggregation", "metric", "value").iter_rows()
    return {f"{g}/{r}/{a}/{m}": v for g, r, a, m, v in keys}


def _counts(board: pl.DataFrame) -> dict[str, dict[str, int]]:
    """``group/run`` -> n, n_evaluated, n_missing of a board's rows."""
    rows = board.select("group", "run", "n", "n_evaluated", "n_missing").unique(maintain_order=True)
    return {
        f"{g}/{r}": {"n": n, "n_evaluated": e, "n_missing": m} for g, r, n, e, m in rows.iter_rows()
    }


def _subset_tables(runs: Comparison, methods: Comparison) -> dict[str, pl.DataFrame]:
    """Per-task and per-split run summaries, per-task v2 method tables, by table name."""
    from arbwb.analysis.method_leaderboard import task_table

    out = {
        f"{group}__{subset}": summary_table(runs.board, group=group, scope=scope, subset=subset)
        for group in runs.groups
        for scope in ("task", "split")
        for subset in runs.subsets(group, scope)
    }
    for group in methods.groups:
        for task in methods.subsets(group, "task"):
            out[f"v2__{group}__{task}"] = task_table(methods.board, group=group, task=task)
    return out


def run(release: Release, options: LeaderboardOptions) -> LeaderboardResult:
    """Notebook 01: each run scored over its own universe and compared within its group;
    methods joined across groups by the method table, compared within method groups."""
    from arbwb.analysis import method_leaderboard as mb  # it builds on this module's scores

    missing = check_missing(options.missing)
    headline = leaderboard_metrics(release)
    methods = mb.resolve_methods(release, options.methods)
    metrics = release_metrics(release, metrics=mb.board_metrics(release))
    done = release.answered()
    run_level = mb.compare(
        metrics.filter(pl.col("metric").is_in(list(headline))),
        release.samples,
        done,
        groups=release.run_group,
        headline=headline,
        missing=missing,
        resampling=options.resampling,
    )
    method_level = mb.compare(
        mb.method_metrics(metrics, methods.runs),
        release.samples,
        mb.method_answered(done, methods.runs),
        groups=methods.groups,
        headline=headline,
        missing=missing,
        resampling=options.resampling,
    )
    board, families = method_level.board, methods.families
    return LeaderboardResult(
        notes=list(release.notes),
        runs=sorted(release.runs),
        missing=missing,
        bcy=BCY_HEADLINE in headline,
        skipped=None
        if release.runs
        else f"no runs found under {release.root} ({release.runs_glob})",
        metrics=metrics,
        methods=methods,
        run_level=run_level,
        method_level=method_level,
        summaries={g: summary_table(run_level.board, group=g) for g in run_level.groups},
        v2={g: mb.v2_table(board, families, group=g) for g in method_level.groups},
        layered={g: mb.layered_table(board, families, group=g) for g in method_level.groups},
        layered_bcy={g: mb.bcy_table(board, families, group=g) for g in method_level.groups},
        subset_tables=_subset_tables(run_level, method_level),
    )
