"""Slice leaderboard (spec §10.7, §13.4): run metrics per agentic-relevance slice; beyond the
point table everything is arbwb-defined (docs/taxonomy.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl

from arbwb import schemas
from arbwb.analysis.board import intervals
from arbwb.analysis.fusion_report import fused_rankings
from arbwb.analysis.leaderboard import release_metrics
from arbwb.analysis.relevance import CORE_TASKS, LABELS
from arbwb.analysis.result import Resampling, Table
from arbwb.io.release import Release
from arbwb.metrics import evaluate
from arbwb.metrics.stats import bootstrap_means, holm, sign_flip_pvalues
from arbwb.retrievers.fusion import top_lists

SLICE_METRICS: tuple[str, ...] = ("recall@20", "mrr")
BCY_METRIC = "bcy@8000"
VIEWS: tuple[str, ...] = ("primary", "multi")
ALL = "all"  # the ``task`` value of a whole slice


def slice_metric_names(release: Release) -> tuple[str, ...]:
    """R@20 and MRR, plus BCY@8000 only when the release has a corpus (spec 10.7)."""
    return (*SLICE_METRICS, BCY_METRIC) if release.corpus is not None else SLICE_METRICS


def membership(annotations: pl.DataFrame) -> pl.DataFrame:
    """``sample_id, task, view, slice``: one ``primary`` row per sample of the core tasks with
    complete annotations, one ``multi`` row per label (:func:`exclusions` counts the rest)."""
    kept = annotations.filter(pl.col("task_type").is_in(CORE_TASKS), pl.col("complete"))
    views = {"primary": "primary_relevance_type", "multi": "relevance_types"}
    return pl.concat(
        kept.select(
            "sample_id", task="task_type", view=pl.lit(view), slice=pl.concat_list(column)
        ).explode("slice")
        for view, column in views.items()
    )


def exclusions(annotations: pl.DataFrame) -> pl.DataFrame:
    """``task, why, samples``: annotated samples left out of the slices, counted by reason."""
    why = (
        pl.when(pl.col("task_type").is_in(CORE_TASKS).not_())
        .then(pl.lit("task outside the sliced tasks"))
        .when(pl.col("complete").not_())
        .then(pl.lit("no query or gold object: labels would come from empty inputs"))
    )
    return (
        annotations.select(pl.col("task_type").alias("task"), why.alias("why"))
        .drop_nulls("why")
        .group_by("task", "why")
        .agg(pl.len().cast(pl.Int64).alias("samples"))
        .sort("task", "why")
    )


def _joined(
    metrics: pl.DataFrame, annotations: pl.DataFrame, run_group: Mapping[str, str] | None
) -> pl.DataFrame:
    """METRICS rows with group, task, view and slice attached (inner join on sample_id)."""
    group = pl.col("run").replace_strict(
        dict(run_group or {}), default="all", return_dtype=pl.String
    )
    joined = metrics.with_columns(group=group)
    return joined.join(membership(annotations), on="sample_id", how="inner")


def slice_table(
    metrics: pl.DataFrame, annotations: pl.DataFrame, *, run_group: Mapping[str, str] | None = None
) -> pl.DataFrame:
    """Spec 10.7 point table: group, run, relevance_type, task (``all`` = whole slice),
    samples and one mean per metric (nulls ignored)."""
    joined = _joined(metrics, annotations, run_group).filter(pl.col("view") == "primary")
    names = metrics["metric"].unique(maintain_order=True).to_list()
    keys = ["group", "run", "slice", "task"]
    if joined.is_empty():
        schema = (
            {k: pl.String for k in keys} | {"samples": pl.Int64} | dict.fromkeys(names, pl.Float64)
        )
        return pl.DataFrame(schema=schema).rename({"slice": "relevance_type"})
    parts = [joined, joined.with_columns(pl.lit(ALL).alias("task"))]
    long = pl.concat(parts).group_by([*keys, "metric"]).agg(pl.col("value").mean())
    counts = (
        pl.concat(parts)
        .group_by(keys)
        .agg(pl.col("sample_id").n_unique().cast(pl.Int64).alias("samples"))
    )
    wide = long.pivot(on="metric", index=keys, values="value")
    table = counts.join(wide, on=keys).select(*keys, "samples", *names)
    order = pl.col("task").replace_strict({ALL: 0}, default=1, return_dtype=pl.Int64)
    return table.sort("group", _label_order("slice"), "run", order, "task").rename(
        {"slice": "relevance_type"}
    )


def _label_order(column: str) -> pl.Expr:
    """Sort key of ``column``'s labels in :data:`LABELS` order (others last)."""
    ranks = {label: i for i, label in enumerate(LABELS)}
    return pl.col(column).replace_strict(ranks, default=len(LABELS), return_dtype=pl.Int64)


def label_leaderboard(table: pl.DataFrame, *, label: str, top: int = 8) -> pl.DataFrame:
    """Spec 13.4 per-label table (Rank, Method, Family = the run's group, n, R@20, MRR,
    BCY@8k): the top ``top`` runs by MRR, R@20, name."""
    rows = table.filter(pl.col("relevance_type") == label, pl.col("task") == ALL)
    rows = rows.sort(["mrr", "recall@20", "run"], descending=[True, True, False], nulls_last=True)
    columns = [
        pl.col("run").alias("Method"),
        pl.col("group").alias("Family"),
        pl.col("samples").alias("n"),
        pl.col("recall@20").alias("R@20"),
        pl.col("mrr").alias("MRR"),
    ]
    if BCY_METRIC in rows.columns:
        columns.append(pl.col(BCY_METRIC).alias("BCY@8k"))
    out = rows.head(top).select(columns)
    return out.with_row_index("Rank", offset=1).with_columns(pl.col("Rank").cast(pl.Int64))


def best_by_mode(table: pl.DataFrame) -> pl.DataFrame:
    """Paper's best-by-mode table (spec 13.4) per group: per primary label, the largest sample
    count and the best run means (Mode, n, Best MRR, Best R@20)."""
    rows = table.filter(pl.col("task") == ALL)
    out = rows.group_by("group", "relevance_type").agg(
        pl.col("samples").max().alias("n"),
        pl.col("mrr").max().alias("Best MRR"),
        pl.col("recall@20").max().alias("Best R@20"),
    )
    return out.sort("group", _label_order("relevance_type")).rename({"relevance_type": "Mode"})


@dataclass(frozen=True)
class _Cell:
    """One (group, view, slice, task, metric) cell: runs and their paired samples x runs values."""

    key: tuple[str, str, str, str, str]
    runs: list[str]
    values: np.ndarray


def _cells(joined: pl.DataFrame) -> list[_Cell]:
    """Paired cells: samples on which every run of the group has a value (like the leaderboard)."""
    both = pl.concat([joined, joined.with_columns(pl.lit(ALL).alias("task"))])
    cells = []
    keys = ["group", "view", "slice", "task", "metric"]
    for key, part in both.group_by(keys, maintain_order=True):
        wide = part.pivot(on="run", index="sample_id", values="value").drop_nulls()
        runs = [c for c in wide.columns if c != "sample_id"]
        if wide.height == 0 or not runs:
            continue
        values = wide.select(runs).to_numpy().astype(np.float64).reshape(wide.height, len(runs))
        k = tuple(str(v) for v in key)
        cells.append(_Cell((k[0], k[1], k[2], k[3], k[4]), runs, values))
    return cells


def slice_scores(
    metrics: pl.DataFrame,
    annotations: pl.DataFrame,
    *,
    run_group: Mapping[str, str] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> pl.DataFrame:
    """Per (group, view, slice, task, run, metric): n, mean and a percentile-bootstrap
    interval over the cell's samples, shared by its runs (arbwb-defined)."""
    keys = ("group", "view", "slice", "task", "run", "metric")
    schema: dict[str, type[pl.DataType]] = {**dict.fromkeys(keys, pl.String), "n": pl.Int64}
    schema |= dict.fromkeys(("value", "ci_low", "ci_high"), pl.Float64)
    frames = [pl.DataFrame(schema=schema)]
    for cell in _cells(_joined(metrics, annotations, run_group)):
        reps = bootstrap_means(cell.values, n_boot=n_boot, seed=seed)
        columns = {"run": cell.runs, "n": cell.values.shape[0], "value": cell.values.mean(axis=0)}
        cell_keys = dict(zip(("group", "view", "slice", "task", "metric"), cell.key, strict=True))
        frames.append(pl.DataFrame(cell_keys | columns | intervals(reps), schema=schema))
    return pl.concat(frames).sort("group", "view", _label_order("slice"), "task", "metric", "run")


_BEST_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    **dict.fromkeys(("group", "view", "slice", "metric"), pl.String),
    **dict.fromkeys(("n", "runs"), pl.Int64),
    "best": pl.String,
    "best_value": pl.Float64,
    "runner_up": pl.String,
    **dict.fromkeys(("runner_up_value", "diff", "p_value", "p_holm"), pl.Float64),
    "significant": pl.Boolean,
}


def best_per_slice(
    metrics: pl.DataFrame,
    annotations: pl.DataFrame,
    *,
    run_group: Mapping[str, str] | None = None,
    n_perm: int = 10000,
    seed: int = 0,
) -> pl.DataFrame:
    """Best run per (group, view, slice) by MRR (then R@20, name), with a sign-flip test
    against the runner-up, Holm-corrected per (group, view)."""
    joined = _joined(metrics, annotations, run_group).filter(
        pl.col("metric").is_in(["mrr", "recall@20"])
    )
    cells = {c.key: c for c in _cells(joined)}
    rows: list[dict[str, object]] = []
    for (group, view, name, task, metric), cell in cells.items():
        if task != ALL or metric != "mrr":
            continue
        tiebreak = cells.get((group, view, name, ALL, "recall@20"))
        best, *rest = _order(cell, [] if tiebreak is None else [tiebreak])
        means = cell.values.mean(axis=0)
        row: dict[str, object] = {"group": group, "view": view, "slice": name, "metric": metric}
        row |= {"n": cell.values.shape[0], "runs": len(cell.runs)}
        row |= {"best": cell.runs[best], "best_value": float(means[best])}
        if rest:
            second = rest[0]
            diffs = cell.values[:, best] - cell.values[:, second]
            row["runner_up"] = cell.runs[second]
            row["runner_up_value"] = float(means[second])
            row["diff"] = float(means[best] - means[second])
            row["p_value"] = float(sign_flip_pvalues(diffs, n_perm=n_perm, seed=seed)[0])
        rows.append(row)
    schema = {k: v for k, v in _BEST_SCHEMA.items() if k not in ("p_holm", "significant")}
    return _with_holm(pl.DataFrame(rows, schema=schema))


def _order(cell: _Cell, tiebreak: Sequence[_Cell]) -> list[int]:
    """Run indices of ``cell`` best first: its mean desc, tiebreak means desc, then name."""
    means = cell.values.mean(axis=0)
    extra = []
    for other in tiebreak:
        by_run = dict(zip(other.runs, other.values.mean(axis=0), strict=True))
        extra.append([float(by_run.get(run, float("-inf"))) for run in cell.runs])

    def sort_key(j: int) -> tuple[object, ...]:
        return (-float(means[j]), *(-values[j] for values in extra), cell.runs[j])

    return sorted(range(len(cell.runs)), key=sort_key)


def _with_holm(frame: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Holm-adjusted p over the tested slices of each (group, view, metric)."""
    parts = []
    for _, part in frame.group_by("group", "view", "metric", maintain_order=True):
        tested = part["p_value"].is_not_null().to_numpy()
        adjusted = np.full(part.height, np.nan)
        if tested.any():
            adjusted[tested] = holm(part["p_value"].to_numpy()[tested])
        parts.append(part.with_columns(pl.Series("p_holm", adjusted).fill_nan(None)))
    if not parts:
        return pl.DataFrame(schema=_BEST_SCHEMA)
    out = pl.concat(parts).with_columns(
        pl.when(pl.col("p_holm").is_null())
        .then(None)
        .otherwise(pl.col("p_holm") < alpha)
        .alias("significant")
    )
    return out.sort("group", "view", "metric", _label_order("slice")).select(list(_BEST_SCHEMA))


def rrf_combinations(runs: Sequence[str], *, limit: int | None = None) -> list[tuple[str, ...]]:
    """Every pair, then every triple of ``runs``, in order; at most ``limit``."""
    out = [combo for size in (2, 3) for combo in combinations(runs, size)]
    return out if limit is None else out[:limit]


@dataclass(frozen=True)
class Fused:
    """RRF runs: their METRICS rows, their groups, and samples left out per fused run."""

    metrics: pl.DataFrame
    run_group: dict[str, str]
    not_in_every_run: dict[str, int]


def fused_name(combo: Sequence[str]) -> str:
    """``rrf(a+b+c)``: the run name of a fusion of stored runs (arbwb-defined)."""
    return "rrf(" + "+".join(combo) + ")"


def rrf_metrics(
    release: Release, combos: Sequence[Sequence[str]], *, metrics: Sequence[str] | None = None
) -> Fused:
    """Score RRF fusions of stored runs of one group (spec §8) on the gold samples every
    component answered; the others are counted in ``not_in_every_run``."""
    names = tuple(metrics) if metrics is not None else slice_metric_names(release)
    frames: list[pl.DataFrame] = []
    groups: dict[str, str] = {}
    skipped: dict[str, int] = {}
    for combo in combos:
        unknown = [r for r in combo if r not in release.runs]
        if unknown:
            msg = f"RRF component runs not in the release: {unknown}; known: {sorted(release.runs)}"
            raise ValueError(msg)
        group_names = {release.run_group[r] for r in combo}
        if len(group_names) != 1:
            msg = f"RRF components must share one eval group, got {sorted(group_names)}"
            raise ValueError(msg)
        group = group_names.pop()
        gold = release.gold[group]
        lists = [top_lists(release.runs[r].rankings) for r in combo]
        with_gold = set(gold["sample_id"].to_list())
        common = sorted(with_gold.intersection(*(_answered(release, r) for r in combo)))
        name = fused_name(combo)
        groups[name] = group
        skipped[name] = len(with_gold) - len(common)
        rankings = fused_rankings(lists, common, name)
        labels = gold.filter(pl.col("sample_id").is_in(common))
        if labels.height == 0:
            continue
        frames.append(
            evaluate(
                rankings,
                labels,
                metrics=names,
                samples=release.samples,
                corpus=release.corpus,
                fusion=True,
                runs=[name],
            )
        )
    frame = pl.concat(frames) if frames else schemas.empty(schemas.METRICS)
    return Fused(frame, groups, skipped)


def _answered(release: Release, run: str) -> set[str]:
    data = release.runs[run]
    return set(data.submitted["sample_id"].to_list()) | set(data.rankings["sample_id"].to_list())


#: Columns of a best-per-slice row that notebook 02 records.
BEST_RECORDED = ("best", "best_value", "runner_up", "runner_up_value", "p_value", "p_holm", "n")


@dataclass(frozen=True)
class SliceBoard:
    """Every slice table of notebook 02: spec 10.7's point table, the best-by-mode and
    per-label boards, bootstrap scores, RRF fusions, and the best run per slice without and
    with the fusions."""

    metric_names: tuple[str, ...]
    table: pl.DataFrame
    modes: pl.DataFrame
    boards: dict[str, pl.DataFrame]
    scores: pl.DataFrame
    combos: list[tuple[str, ...]]
    fused: Fused
    best: pl.DataFrame
    best_rrf: pl.DataFrame

    @property
    def groups(self) -> list[str]:
        """Groups with whole-slice scores, in table order (one interval figure each)."""
        whole = self.scores.filter(pl.col("task") == ALL)
        return [str(g) for g in whole["group"].unique(maintain_order=True).to_list()]

    def tables(self) -> list[Table]:
        """Point table, best by mode, non-empty per-label boards, scores, best per slice."""
        boards = [Table(f"leaderboard__{label}", b) for label, b in self.boards.items()]
        return [
            Table("slice_table", self.table),
            Table("best_by_mode", self.modes),
            *boards,
            Table("slice_scores", self.scores),
            Table("best_per_slice", self.best),
            Table("best_per_slice_with_rrf", self.best_rrf),
        ]

    def records(self) -> dict[str, Any]:
        """The slice numbers notebook 02 records, keyed ``group/run/slice/task/metric`` etc."""
        rows = list(self.table.iter_rows(named=True))
        metric_cols = [m for m in self.metric_names if m in self.table.columns]
        whole = self.scores.filter(pl.col("task") == ALL).iter_rows(named=True)
        return {
            "slice_table": {
                f"{r['group']}/{r['run']}/{r['relevance_type']}/{r['task']}/{m}": r[m]
                for r in rows
                for m in metric_cols
            },
            "slice_samples": {
                f"{r['group']}/{r['run']}/{r['relevance_type']}/{r['task']}": r["samples"]
                for r in rows
            },
            "best_by_mode": {
                f"{r['group']}/{r['Mode']}": [r["n"], r["Best MRR"], r["Best R@20"]]
                for r in self.modes.iter_rows(named=True)
            },
            "slice_scores": {
                f"{r['group']}/{r['view']}/{r['slice']}/{r['run']}/{r['metric']}": [
                    r[k] for k in ("value", "ci_low", "ci_high", "n")
                ]
                for r in whole
            },
            "rrf_runs": sorted(self.fused.run_group),
            "rrf_not_in_every_run": self.fused.not_in_every_run,
            "best": _best_record(self.best),
            "best_with_rrf": _best_record(self.best_rrf),
        }


def _best_record(frame: pl.DataFrame) -> dict[str, dict[str, Any]]:
    return {
        f"{r['group']}/{r['view']}/{r['slice']}": {k: r[k] for k in BEST_RECORDED}
        for r in frame.iter_rows(named=True)
    }


def slice_board(
    release: Release,
    annotations: pl.DataFrame,
    *,
    rrf_max: int = 20,
    resampling: Resampling | None = None,
) -> SliceBoard:
    """All slice tables of the release's runs (each scored on its own group's samples) and of
    up to ``rrf_max`` RRF pairs/triples per group of stored runs (fusions named ``rrf*`` are
    not re-fused)."""
    boot = resampling or Resampling()
    names = slice_metric_names(release)
    metrics = release_metrics(release, metrics=names)
    groups = release.run_group
    table = slice_table(metrics, annotations, run_group=groups)
    boards = {label: label_leaderboard(table, label=label) for label in LABELS}
    combos = [
        combo
        for members in release.groups.values()
        for combo in rrf_combinations(
            [r for r in members if not r.startswith("rrf")], limit=rrf_max
        )
    ]
    fused = rrf_metrics(release, combos, metrics=names)
    best = partial(best_per_slice, annotations=annotations, n_perm=boot.n_perm, seed=boot.seed)
    return SliceBoard(
        metric_names=names,
        table=table,
        modes=best_by_mode(table),
        boards={label: board for label, board in boards.items() if board.height},
        scores=slice_scores(
            metrics, annotations, run_group=groups, n_boot=boot.n_boot, seed=boot.seed
        ),
        combos=combos,
        fused=fused,
        best=best(metrics, run_group=groups),
        best_rrf=best(pl.concat([metrics, fused.metrics]), run_group=groups | fused.run_group),
    )
