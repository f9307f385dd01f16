"""Aggregation levels of per-sample metrics (spec §12): sample-weighted, task-macro, repo-macro.

``samples`` may be the SAMPLES frame of :func:`arbwb.io.samples.load_samples` or the
``details`` frame of :class:`arbwb.io.rankings.RunData`: both carry ``sample_id``, ``task``,
``repo`` and ``split`` (``stratum`` only the SAMPLES frame). Means are plain means over
samples; values that are null (``first_gold_rank`` without a hit) are left out of the mean
while ``n`` still counts every sample.
"""

from __future__ import annotations

import polars as pl

POSITIVE_TASKS: tuple[str, ...] = ("code2test", "comment2context", "trace2code", "edit2ripple")
GROUPINGS = ("task", "repo", "split", "stratum")


def _with_group(metrics: pl.DataFrame, samples: pl.DataFrame, by: str) -> pl.DataFrame:
    """Attach ``by`` from ``samples`` to each metric row; every sample must be known."""
    if by not in GROUPINGS:
        msg = f"cannot group by {by!r}; use one of {GROUPINGS}"
        raise ValueError(msg)
    if by not in samples.columns:
        msg = f"samples frame has no column {by!r}; pass the SAMPLES frame from load_samples"
        raise ValueError(msg)
    keys = samples.select("sample_id", by).unique("sample_id", keep="first")
    joined = metrics.join(keys, on="sample_id", how="left")
    unknown = joined.filter(pl.col(by).is_null())["sample_id"].unique()
    if unknown.len():
        msg = f"{unknown.len()} sample ids have no {by!r} in samples, e.g. {unknown[0]!r}"
        raise ValueError(msg)
    return joined


def aggregate(
    metrics: pl.DataFrame, samples: pl.DataFrame | None = None, *, by: str | None = None
) -> pl.DataFrame:
    """Sample-weighted mean per (run, [by], metric): columns run, [by], metric, n, value."""
    keys = ["run", "metric"]
    if by is not None:
        if samples is None:
            msg = f"grouping by {by!r} needs the samples frame"
            raise ValueError(msg)
        metrics = _with_group(metrics, samples, by)
        keys = ["run", by, "metric"]
    return (
        metrics.group_by(keys, maintain_order=True)
        .agg(n=pl.len().cast(pl.Int64), value=pl.col("value").mean())
        .sort(keys[:-1], maintain_order=True)
    )


def task_macro(
    metrics: pl.DataFrame, samples: pl.DataFrame, *, require_all: bool = False
) -> pl.DataFrame:
    """Unweighted mean of per-task means over the positive tasks present (spec §12).

    Upstream divides by 4 and requires all four positive tasks: ``require_all=True``
    enforces that. By default (arbwb-defined) a partial macro is returned and labelled
    with the tasks it used (``tasks``, ``n_tasks``).
    """
    per_task = aggregate(metrics, samples, by="task").filter(pl.col("task").is_in(POSITIVE_TASKS))
    out = (
        per_task.sort("task", maintain_order=True)
        .group_by("run", "metric", maintain_order=True)
        .agg(
            value=pl.col("value").mean(),
            n_tasks=pl.len().cast(pl.Int64),
            tasks=pl.col("task").str.join(","),
        )
    )
    if require_all:
        partial = out.filter(pl.col("n_tasks") < len(POSITIVE_TASKS))
        if partial.height:
            row = partial.row(0, named=True)
            msg = (
                f"task-macro needs all of {POSITIVE_TASKS}; run {row['run']!r} has only "
                f"{row['tasks']!r}; pass require_all=False for a labelled partial macro"
            )
            raise ValueError(msg)
    return out


def repo_macro(metrics: pl.DataFrame, samples: pl.DataFrame) -> pl.DataFrame:
    """Unweighted mean over repositories of each repository's mean (spec §12)."""
    return (
        aggregate(metrics, samples, by="repo")
        .group_by("run", "metric", maintain_order=True)
        .agg(value=pl.col("value").mean(), n_repos=pl.len().cast(pl.Int64))
    )
