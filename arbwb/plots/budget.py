"""Budget curves (spec §13.2): BCY against the context budget per run and task, from
:func:`arbwb.metrics.budget.bcy_curves`; points that are mostly lower bounds are hollow."""

from __future__ import annotations

import polars as pl
from matplotlib.axes import Axes

from arbwb.plots import style
from arbwb.plots.style import budget_label

__all__ = ["budget_label", "plot_bcy_curves", "plot_bcy_grid"]


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
    """BCY_τ@B with 95% bootstrap intervals per run for ``task``; a point is hollow when at least
    ``lower_bound_at`` of its samples are lower bounds (arbwb-defined display rule)."""
    part = curves.filter(pl.col("task") == task, pl.col("tau") == tau).sort("run", "budget")
    if part.is_empty():
        known = sorted(curves["task"].unique().to_list())
        msg = f"no BCY curve for task {task!r} at tau={tau}; tasks present: {known!r}"
        raise ValueError(msg)
    ax = style.new_axes(ax, (5.5, 3.8))
    runs = part["run"].unique(maintain_order=True).to_list()
    colors = style.run_colors(runs)
    for run in runs:
        line = part.filter(pl.col("run") == run)
        x, y = line["budget"].to_numpy(), line["bcy"].to_numpy()
        err = [y - line["ci_low"].to_numpy(), line["ci_high"].to_numpy() - y]
        color = colors[run]
        ax.errorbar(x, y, yerr=err, color=color, lw=1.5, capsize=3, label=run, zorder=2)
        hollow = line["lower_bound_share"].to_numpy() >= lower_bound_at
        ax.scatter(x[~hollow], y[~hollow], color=color, s=36, zorder=3)
        ax.scatter(x[hollow], y[hollow], facecolors="white", edgecolors=color, s=36, zorder=3)
    style.budget_axis(ax, sorted(part["budget"].unique().to_list()))
    ax.set_ylim(0, 1)
    ax.set_ylabel("BCY@B" if tau == 1 else f"BCY τ={tau} @B")
    n = int(part["n"].to_numpy().max())
    return style.finish(ax, f"{task} (n={n})", demo=demo, legend="small" if legend else None)


def plot_bcy_grid(
    curves: pl.DataFrame,
    *,
    tau: int = 1,
    ncols: int = 3,
    demo: bool = False,
    axes: style.Panels | None = None,
) -> list[Axes]:
    """One :func:`plot_bcy_curves` panel per task (paper order), one legend right of them;
    ``axes``: one per task, or None for a grid of ``ncols`` columns."""
    tasks = style.task_order(curves["task"].to_list())
    panels = style.new_panels(axes, len(tasks), size=(5.2, 4.0), ncols=ncols)
    for task, ax in zip(tasks, panels, strict=True):
        plot_bcy_curves(curves, task=task, tau=tau, demo=demo, legend=False, ax=ax)
    return style.finish_panels(panels, legend=True)
