"""Rank analysis figures (spec §13.3) from :mod:`arbwb.analysis.rank_analysis`: first-gold rank
CDF per run (one panel, or one per task), cross-run coverage bars."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from matplotlib.axes import Axes

from arbwb.analysis.rank_analysis import DEPTHS
from arbwb.plots import style


def plot_first_gold_cdf(
    per: pl.DataFrame,
    *,
    task: str = "overall",
    max_rank: int = 200,
    demo: bool = False,
    legend: bool = True,
    ax: Axes | None = None,
) -> Axes:
    """Share of samples whose first gold file is at rank <= K (any_gold@K) against K, a step
    line per run; ``task="overall"`` uses every sample."""
    part = per if task == "overall" else per.filter(pl.col("task") == task)
    if part.is_empty():
        known = sorted(per["task"].unique().to_list())
        msg = f"no samples for task {task!r}; tasks present: {known!r}"
        raise ValueError(msg)
    ax = style.new_axes(ax, (5.5, 3.8))
    runs = sorted(part["run"].unique().to_list())
    colors = style.run_colors(runs)
    ks = np.arange(1, max_rank + 1)
    for run in runs:
        ranks = part.filter(pl.col("run") == run)["first_gold_rank"]
        found = np.sort(ranks.drop_nulls().to_numpy())
        share = np.searchsorted(found, ks, side="right") / ranks.len()
        ax.step(ks, share, where="post", color=colors[run], lw=1.5, label=run)
    ticks = [k for k in DEPTHS if k <= max_rank]
    ax.set_xscale("log")
    ax.set_xticks(ticks, [str(k) for k in ticks])
    ax.minorticks_off()
    ax.set_xlim(1, max_rank)
    ax.set_ylim(0, 1)
    ax.set_xlabel("rank K (full ranking)")
    ax.set_ylabel("share of samples with first gold <= K")
    n = part["sample_id"].n_unique()
    return style.finish(ax, f"{task} (n={n})", demo=demo, legend="small" if legend else None)


def plot_first_gold_cdf_grid(
    per: pl.DataFrame,
    *,
    tasks: Sequence[str],
    title: str,
    ncols: int = 3,
    demo: bool = False,
    axes: style.Panels | None = None,
) -> list[Axes]:
    """One :func:`plot_first_gold_cdf` panel per task (paper order), ``title`` above, one legend
    right of them; ``axes``: one per task, or None for a grid of ``ncols`` columns."""
    if not tasks:
        msg = "plot_first_gold_cdf_grid needs at least one task, e.g. ['overall']"
        raise ValueError(msg)
    tasks = style.task_order(tasks)
    panels = style.new_panels(axes, len(tasks), size=(4.6, 3.6), ncols=ncols)
    for ax, task in zip(panels, tasks, strict=True):
        plot_first_gold_cdf(per, task=task, demo=demo, legend=False, ax=ax)
    return style.finish_panels(panels, title=title, legend=True)


def plot_coverage_distribution(
    dist: pl.DataFrame, *, k: int = 20, demo: bool = False, ax: Axes | None = None
) -> Axes:
    """Per task ("overall" only when alone), the share of samples hit at ``k`` by exactly h runs,
    h = 0..runs (grouped bars; h = 0 is the all-run miss set)."""
    tasks = style.task_order(t for t in dist["task"].to_list() if t != "overall") or ["overall"]
    ax = style.new_axes(ax, (5.5, 3.8))
    hits = sorted(dist["hit_models"].unique().to_list())
    width = 0.8 / len(tasks)
    for i, task in enumerate(tasks):
        part = dist.filter(pl.col("task") == task).sort("hit_models")
        share = part["samples"].to_numpy() / max(int(part["samples"].sum()), 1)
        x = part["hit_models"].to_numpy() + (i - (len(tasks) - 1) / 2) * width
        n = int(part["samples"].sum())
        ax.bar(x, share, width=width, color=style.task_color(task), label=f"{task} (n={n})")
    ax.set_xticks(hits, [str(h) for h in hits])
    ax.set_ylim(0, 1)
    ax.set_xlabel(f"runs with Recall@{k} > 0")
    ax.set_ylabel("share of samples")
    return style.finish(ax, f"cross-run coverage at {k}", demo=demo)
