"""ARB file ``recall@k``/``precision@k`` beside ContextBench file coverage/precision (error rows
as zeros), per sample, with the leaderboard's means, intervals and paired tests per benchmark
and comparison group, never across benchmarks (arbwb-defined comparison)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import polars as pl

from arbwb import schemas
from arbwb.analysis import board as lb

ARB = "ARB"
CONTEXTBENCH = "ContextBench"
CONTEXTBENCH_GROUP = "contextbench"
FILE_METRICS = ("file_recall", "file_precision")

#: Columns of :func:`file_level_frame`: one row per (benchmark, group, run, sample_id).
FILE_LEVEL: schemas.Schema = {
    "benchmark": pl.String,
    "group": pl.String,
    "run": pl.String,
    "method": pl.String,
    "sample_id": pl.String,
    "repo": pl.String,
    "file_recall": pl.Float64,
    "file_precision": pl.Float64,
}
#: Columns of :func:`file_level_tests`: the leaderboard's tests with the benchmark first.
TESTS: schemas.Schema = {"benchmark": pl.String, **lb.TESTS_SCHEMA}
#: Columns of :func:`file_level_scores`.
SCORES: schemas.Schema = {
    "benchmark": pl.String,
    "group": pl.String,
    "run": pl.String,
    "method": pl.String,
    "metric": pl.String,
    "n": pl.Int64,
    "value": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
}


def arb_metric_names(k: int) -> tuple[str, str]:
    """The ARB metrics read as file recall and file precision: ``recall@k``, ``precision@k``."""
    return f"recall@{k}", f"precision@{k}"


def _wide(metrics: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    """run, sample_id and one column per metric in ``names`` (renamed to its value)."""
    part = metrics.filter(pl.col("metric").is_in(list(names)))
    wide = part.pivot(on="metric", index=["run", "sample_id"], values="value")
    absent = [pl.lit(None, dtype=pl.Float64).alias(m) for m in names if m not in wide.columns]
    return wide.with_columns(absent).rename(names)


def ranked_metrics(ranked: pl.DataFrame, k: int) -> pl.DataFrame:
    """METRICS file.coverage/file.precision of ranked lists cut at ``k`` (§13); errors are 0."""
    return (
        ranked.filter(pl.col("k") == k)
        .unpivot(
            on=["file_coverage", "file_precision"],
            index=["run", "sample_id"],
            variable_name="metric",
        )
        .select(
            "run",
            "sample_id",
            pl.col("metric").str.replace("file_", "file."),
            pl.col("value").fill_null(0.0),
        )
    )


def file_level_frame(
    arb_metrics: pl.DataFrame,
    arb_samples: pl.DataFrame,
    cb_metrics: pl.DataFrame,
    cb_samples: pl.DataFrame,
    *,
    arb_runs: pl.DataFrame | None = None,
    cb_ranked: pl.DataFrame | None = None,
    k: int = 20,
) -> pl.DataFrame:
    """FILE_LEVEL rows of METRICS frames; ``arb_runs`` (run, group, method) names ARB groups and
    methods (default: group "ARB"), ``cb_ranked`` (score_ranked) adds ContextBench runs at ``k``."""
    recall, precision = arb_metric_names(k)
    arb = _wide(arb_metrics, {recall: "file_recall", precision: "file_precision"})
    runs = (
        arb_runs.select("run", "group", "method")
        if arb_runs is not None
        else arb.select("run", group=pl.lit(ARB), method=pl.col("run")).unique()
    )
    arb = arb.join(runs, on="run", how="left").with_columns(benchmark=pl.lit(ARB))
    if cb_ranked is not None:
        cb_metrics = pl.concat([cb_metrics, ranked_metrics(cb_ranked, k)])
    cb = _wide(cb_metrics, {"file.coverage": "file_recall", "file.precision": "file_precision"})
    cb = cb.with_columns(
        benchmark=pl.lit(CONTEXTBENCH), group=pl.lit(CONTEXTBENCH_GROUP), method=pl.col("run")
    )
    parts = [
        part.join(samples.select("sample_id", "repo"), on="sample_id", how="left")
        for part, samples in ((arb, arb_samples), (cb, cb_samples))
    ]
    frame = pl.concat([p.select(list(FILE_LEVEL)).cast(pl.Schema(FILE_LEVEL)) for p in parts])
    return frame.sort("benchmark", "group", "run", "sample_id")


def _benchmarks(
    frame: pl.DataFrame,
) -> Iterator[tuple[str, pl.DataFrame, pl.DataFrame, pl.DataFrame, dict[str, str]]]:
    """Per benchmark present (ARB first): its name, rows, and those rows as leaderboard inputs:
    METRICS, samples (task = benchmark), run groups."""
    for name in (ARB, CONTEXTBENCH):
        part = frame.filter(pl.col("benchmark") == name)
        if part.is_empty():
            continue
        metrics = (
            part.unpivot(on=list(FILE_METRICS), index=["run", "sample_id"], variable_name="metric")
            .drop_nulls("value")
            .select("run", "sample_id", "metric", "value")
        )
        samples = part.select(
            "sample_id", "repo", task=pl.col("benchmark"), split=pl.lit(None, dtype=pl.String)
        ).unique("sample_id", maintain_order=True)
        yield name, part, metrics, samples, dict(part.select("run", "group").unique().iter_rows())


def file_level_scores(
    frame: pl.DataFrame, *, n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> pl.DataFrame:
    """SCORES: mean and percentile-bootstrap interval per (benchmark, group, run, metric): the
    weighted overall rows of :func:`arbwb.analysis.board.scores` on each benchmark."""
    out = []
    for name, part, metrics, samples, groups in _benchmarks(frame):
        board = lb.scores(
            metrics, samples, run_group=groups, n_boot=n_boot, seed=seed, level=level
        ).filter(pl.col("scope") == "overall", pl.col("aggregation") == "weighted")
        methods = part.select("run", "method").unique()
        out.append(
            board.join(methods, on="run", how="left")
            .with_columns(benchmark=pl.lit(name))
            .select(list(SCORES))
        )
    return pl.concat(out).cast(pl.Schema(SCORES)) if out else schemas.empty(SCORES)


def file_level_tests(
    frame: pl.DataFrame, *, n_perm: int = 10000, seed: int = 0, alpha: float = 0.05
) -> pl.DataFrame:
    """TESTS: :func:`arbwb.analysis.board.pairwise_tests` between the runs of each
    benchmark."""
    out = []
    for name, _, metrics, samples, groups in _benchmarks(frame):
        tests = lb.pairwise_tests(
            metrics, samples, run_group=groups, n_perm=n_perm, seed=seed, alpha=alpha
        )
        out.append(tests.select(pl.lit(name).alias("benchmark"), pl.all()))
    return pl.concat(out) if out else schemas.empty(TESTS)


@dataclass(frozen=True)
class Comparison:
    """The per-sample frame of both benchmarks, its scores and its paired tests."""

    frame: pl.DataFrame  # FILE_LEVEL
    scores: pl.DataFrame  # SCORES
    tests: pl.DataFrame  # leaderboard tests + benchmark


def compare(
    *inputs: pl.DataFrame, n_boot: int = 2000, n_perm: int = 10000, seed: int = 0, **options: Any
) -> Comparison:
    """:func:`file_level_frame` of ``inputs`` and ``options`` with its :func:`file_level_scores`
    and :func:`file_level_tests`."""
    frame = file_level_frame(*inputs, **options)
    return Comparison(
        frame,
        file_level_scores(frame, n_boot=n_boot, seed=seed),
        file_level_tests(frame, n_perm=n_perm, seed=seed),
    )
