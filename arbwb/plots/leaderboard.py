"""Leaderboard figures from :mod:`arbwb.analysis.board` (``scores``, ``pairwise_tests``): per-task
bars with intervals, a run x task heatmap, a significance matrix."""

from __future__ import annotations

import numpy as np
import polars as pl
import seaborn as sns
from matplotlib.axes import Axes

from arbwb.analysis.board import metric_label
from arbwb.plots.style import ci_arrays, color, finish, new_axes, task_order


def weighted(
    board: pl.DataFrame, group: str, metrics: list[str], scopes: tuple[str, ...] = ("overall",)
) -> pl.DataFrame:
    """The sample-weighted rows of ``group``'s ``metrics`` at ``scopes``, with a ``task`` column
    (the subset of a task row, else "overall"); ValueError when there are none."""
    part = board.filter(
        pl.col("group") == group,
        pl.col("metric").is_in(metrics),
        pl.col("aggregation") == "weighted",
        pl.col("scope").is_in(scopes),
    )
    if part.is_empty():
        msg = f"no weighted {metrics} scores for group {group!r}; check group and metric names"
        raise ValueError(msg)
    task = pl.when(pl.col("scope") == "overall").then(pl.lit("overall")).otherwise("subset")
    return part.with_columns(task.alias("task"))


def _by_task(
    board: pl.DataFrame, group: str, metric: str
) -> tuple[pl.DataFrame, list[str], list[str]]:
    """Weighted scores of ``group`` with runs best-first (overall) and tasks, overall first."""
    part = weighted(board, group, [metric], ("overall", "task"))
    overall = part.filter(pl.col("task") == "overall").sort(
        ["value", "run"], descending=[True, False]
    )
    tasks = task_order(part["task"].to_list())
    return part, overall["run"].to_list(), tasks


def task_bars(
    board: pl.DataFrame,
    *,
    group: str,
    metric: str = "mrr",
    demo: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Grouped bars of the weighted ``metric`` per task (and overall) with bootstrap intervals."""
    part, runs, tasks = _by_task(board, group, metric)
    ax = new_axes(ax, (1.6 + 1.4 * len(tasks), 4.0))
    width = 0.8 / max(len(runs), 1)
    for i, run in enumerate(runs):
        xs = np.arange(len(tasks)) + (i - (len(runs) - 1) / 2) * width
        values, low, high = ci_arrays(part.filter(pl.col("run") == run), "task", tasks)
        ax.bar(xs, values, width, label=run, color=color(run))
        err = [values - low, high - values]
        ax.errorbar(xs, values, yerr=err, fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
    ax.set_xticks(np.arange(len(tasks)), tasks)
    ax.set_ylabel(f"{metric_label(metric)} (95% bootstrap CI)")
    ax.set_ylim(0, 1.05 * max(1e-9, float(np.nanmax(part["ci_high"].to_numpy()))))
    return finish(ax, f"{metric_label(metric)} by task — {group}", demo=demo)


def run_task_heatmap(
    board: pl.DataFrame,
    *,
    group: str,
    metric: str = "mrr",
    demo: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Heatmap of the weighted ``metric``: runs (rows, best first) x tasks and overall."""
    part, runs, tasks = _by_task(board, group, metric)
    matrix = np.full((len(runs), len(tasks)), np.nan)
    for row in part.iter_rows(named=True):
        matrix[runs.index(row["run"]), tasks.index(row["task"])] = row["value"]
    ax = new_axes(ax, (1.5 + 1.3 * len(tasks), 1.0 + 0.45 * len(runs)))
    sns.heatmap(
        matrix,
        annot=True,
        fmt=".3f",
        cmap="viridis",
        vmin=0.0,
        xticklabels=tasks,
        yticklabels=runs,
        cbar_kws={"label": metric_label(metric)},
        ax=ax,
    )
    return finish(ax, f"{metric_label(metric)}: run x task — {group}", demo=demo, legend=None)


def significance_matrix(
    tests: pl.DataFrame,
    *,
    group: str,
    metric: str = "mrr",
    order: list[str] | None = None,
    demo: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Paired differences between runs, coloured by ``mean(row) - mean(column)`` (the effect);
    cells marked * are significant (Holm-adjusted p < 0.05) and show that p-value below."""
    part = tests.filter(pl.col("group") == group, pl.col("metric") == metric)
    if part.is_empty():
        msg = f"no pairwise tests of {metric!r} for group {group!r}; need at least two runs"
        raise ValueError(msg)
    runs = order or list(dict.fromkeys([*part["run_a"], *part["run_b"]]))
    size = len(runs)
    diffs = np.full((size, size), np.nan)
    notes = np.full((size, size), "", dtype=object)
    for row in part.iter_rows(named=True):
        i, j = runs.index(row["run_a"]), runs.index(row["run_b"])
        star = "*" if row["significant"] else ""
        diffs[i, j], diffs[j, i] = row["diff"], -row["diff"]
        p_text = f"p={row['p_holm']:.3f}{star}"
        notes[i, j] = f"{row['diff']:+.3f}\n{p_text}"
        notes[j, i] = f"{-row['diff']:+.3f}\n{p_text}"
    ax = new_axes(ax, (2.0 + 1.4 * size, 1.2 + 0.9 * size))
    reach = max(1e-9, float(np.nanmax(np.abs(diffs))))
    sns.heatmap(
        diffs,
        annot=notes,
        fmt="",
        cmap="vlag",
        center=0.0,
        vmin=-reach,
        vmax=reach,
        xticklabels=runs,
        yticklabels=runs,
        cbar_kws={"label": f"{metric_label(metric)} difference (row - column); * p_Holm < 0.05"},
        ax=ax,
    )
    title = f"Paired randomization tests, {metric_label(metric)} (row - column) — {group}"
    return finish(ax, title, demo=demo, legend=None)
