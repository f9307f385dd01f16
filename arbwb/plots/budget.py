"""Budget curves: BCY against the context budget, one line per run, for one task (spec §13.2).

Input is the frame of :func:`arbwb.metrics.budget.bcy_curves`. Points whose value is mostly a lower
bound (the stored top-20 files did not fill the budget) are drawn hollow.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import polars as pl
from matplotlib.axes import Axes

from arbwb.plots.style import (
    Panels,
    demo_title,
    finish_panels,
    legend_outside,
    new_panels,
    run_colors,
    task_order,
)


def budget_label(budget: int) -> str:
    """``8000`` -> ``8k`` when divisible by 1000 (spec §13.1), else the number."""
    return f"{budget // 1000}k" if budget % 1000 == 0 else str(budget)


def plot_bcy_curves(
    curves: pl.DataFrame,
    *,
    task: str = "overall",
    tau: int = 1,
    lower_bound_at: float = 0.5,
    demo: bool = False,
    legend: bool = True,
    ax: Axes | None = None,
) -> Axes:
    """BCY_τ@B with 95% bootstrap intervals per run for ``task``; hollow = lower bound.

    A point is hollow when at least ``lower_bound_at`` of its samples are lower bounds
    (arbwb-defined display rule).
    """
    part = curves.filter(pl.col("task") == task, pl.col("tau") == tau).sort("run", "budget")
    if part.is_empty():
        known = sorted(curves["task"].unique().to_list())
        msg = f"no BCY curve for task {task!r} at tau={tau}; tasks present: {known!r}"
        raise ValueError(msg)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.8))
    runs = part["run"].unique(maintain_order=True).to_list()
    colors = run_colors(runs)
    for run in runs:
        line = part.filter(pl.col("run") == run)
        x, y = line["budget"].to_numpy(), line["bcy"].to_numpy()
        err = [y - line["ci_low"].to_numpy(), line["ci_high"].to_numpy() - y]
        color = colors[run]
        ax.errorbar(x, y, yerr=err, color=color, lw=1.5, capsize=3, label=run, zorder=2)
        hollow = line["lower_bound_share"].to_numpy() >= lower_bound_at
        ax.scatter(x[~hollow], y[~hollow], color=color, s=36, zorder=3)
        ax.scatter(x[hollow], y[hollow], facecolors="white", edgecolors=color, s=36, zorder=3)
    budgets = sorted(part["budget"].unique().to_list())
    ax.set_xscale("log", base=2)
    ax.set_xticks(budgets, [budget_label(b) for b in budgets])
    ax.minorticks_off()
    ax.set_ylim(0, 1)
    ax.set_xlabel("context budget B (regex_code_tokenizer_v1 tokens)")
    ax.set_ylabel("BCY@B" if tau == 1 else f"BCY τ={tau} @B")
    n = int(part["n"].to_numpy().max())
    title = f"{task} (n={n})"
    ax.set_title(demo_title(title, demo=demo))
    if legend:
        legend_outside(ax, fontsize="small", frameon=False)
    return ax


def plot_bcy_grid(
    curves: pl.DataFrame,
    *,
    tau: int = 1,
    ncols: int = 3,
    demo: bool = False,
    axes: Panels | None = None,
) -> list[Axes]:
    """One :func:`plot_bcy_curves` panel per task (paper order, "overall" first), one shared
    legend right of the panels.

    ``axes``: one Axes per task, or None for a new grid of ``ncols`` columns. Returns the
    panels, one per task; ``axes[0].figure`` is the figure.
    """
    tasks = task_order(curves["task"].to_list())
    panels = new_panels(axes, len(tasks), size=(5.2, 4.0), ncols=ncols)
    for task, ax in zip(tasks, panels, strict=True):
        plot_bcy_curves(curves, task=task, tau=tau, demo=demo, legend=False, ax=ax)
    return finish_panels(panels, legend=True)
