"""Method leaderboard figures from a method board and a method -> family mapping: ranked bars
with intervals (colour the method, label its family), BCY per budget."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl
from matplotlib.axes import Axes

from arbwb.analysis.board import metric_label
from arbwb.plots.leaderboard import weighted
from arbwb.plots.style import budget_axis, finish, new_axes, run_colors


def method_bars(
    board: pl.DataFrame,
    family: Mapping[str, str],
    *,
    group: str,
    metric: str = "mrr",
    demo: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Horizontal bars of the weighted ``metric`` per method (its report colour), best on top,
    95% intervals; the tick label names its family (the v2 leaderboard's Family column)."""
    part = weighted(board, group, [metric]).sort(["value", "run"], descending=[False, True])
    methods = part["run"].to_list()
    colors = run_colors(methods)
    ax = new_axes(ax, (6.0, 1.2 + 0.4 * len(methods)))
    values = part["value"].to_numpy()
    err = [values - part["ci_low"].to_numpy(), part["ci_high"].to_numpy() - values]
    ys = np.arange(len(methods))
    ax.barh(ys, values, color=[colors[m] for m in methods])
    ax.errorbar(values, ys, xerr=err, fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
    ax.set_yticks(ys, [f"{m} ({family.get(m, '?')})" for m in methods])
    ax.set_xlabel(f"{metric_label(metric)} (sample-weighted, 95% bootstrap CI)")
    return finish(ax, f"{metric_label(metric)} by method — {group}", demo=demo, legend=None)


def bcy_by_budget(
    board: pl.DataFrame,
    family: Mapping[str, str],
    *,
    group: str,
    metrics: tuple[str, ...] = ("bcy@4000", "bcy@8000", "bcy@16000", "bcy@32000"),
    demo: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Weighted BCY per method at each budget (the layered BCY table as lines), 95% intervals;
    line style follows the family, colour the method."""
    part = weighted(board, group, list(metrics))
    budgets = {m: int(m.partition("@")[2]) for m in metrics}
    part = part.with_columns(
        pl.col("metric").replace_strict(budgets, return_dtype=pl.Int64).alias("budget")
    )
    methods = (
        part.filter(pl.col("budget") == max(budgets.values()))
        .sort(["value", "run"], descending=[True, False])["run"]
        .to_list()
    )
    methods += [m for m in part["run"].unique(maintain_order=True) if m not in methods]
    colors = run_colors(methods)
    kinds = sorted({family.get(m, "?") for m in methods})
    styles = dict(zip(kinds, ["-", "--", ":", "-."] * len(kinds), strict=False))
    ax = new_axes(ax, (6.0, 4.0))
    for method in methods:
        line = part.filter(pl.col("run") == method).sort("budget")
        x, y = line["budget"].to_numpy(), line["value"].to_numpy()
        err = [y - line["ci_low"].to_numpy(), line["ci_high"].to_numpy() - y]
        style = styles[family.get(method, "?")]
        label = f"{method} ({family.get(method, '?')})"
        ax.errorbar(x, y, yerr=err, color=colors[method], ls=style, capsize=3, label=label)
    budget_axis(ax, sorted(budgets.values()), "context budget (regex_code_tokenizer_v1 tokens)")
    ax.set_ylim(0, 1)
    ax.set_ylabel("BCY (sample-weighted, 95% bootstrap CI)")
    return finish(ax, f"BCY by budget and method — {group}", demo=demo)
