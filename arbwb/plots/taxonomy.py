"""Relevance-taxonomy figures: labels by task, run metric per slice with intervals, confidence mix.

Inputs are the annotation frame of :mod:`arbwb.analysis.relevance` and the ``slice_scores`` frame of
:mod:`arbwb.analysis.slices`.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from arbwb.analysis.board import metric_label
from arbwb.analysis.relevance import CONFIDENCES, LABELS
from arbwb.analysis.slices import VIEWS
from arbwb.plots.style import (
    CONFIDENCE_COLORS,
    LABEL_COLORS,
    Color,
    Panels,
    demo_title,
    finish_panels,
    fixed_color,
    legend_outside,
    new_axes,
    new_panels,
    run_colors,
    task_order,
)


def _stacked(
    ax: Axes,
    counts: pl.DataFrame,
    rows: list[str],
    column: str,
    stacks: list[str],
    colors: dict[str, Color],
) -> None:
    """Horizontal stacked bars: one bar per ``rows`` value, segments per ``stacks`` value in
    its fixed colour."""
    left = np.zeros(len(rows))
    for stack in stacks:
        got = dict(counts.filter(pl.col(column) == stack).select("row", "n").iter_rows())
        widths = np.array([float(got.get(r, 0)) for r in rows])
        ax.barh(rows, widths, left=left, color=fixed_color(colors, stack), label=stack)
        for y, (x0, w) in enumerate(zip(left, widths, strict=True)):
            if w > 0:
                ax.text(x0 + w / 2, y, f"{int(w)}", ha="center", va="center", fontsize="small")
        left += widths
    ax.invert_yaxis()
    ax.set_xlabel("samples")
    ax.set_xlim(0, max(1.0, float(left.max())) * 1.02)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    legend_outside(ax, fontsize="small", frameon=False)


def label_distribution(
    annotations: pl.DataFrame, *, demo: bool = False, ax: Axes | None = None
) -> Axes:
    """Primary labels per task as stacked bars (spec 13.4's by-task table as a figure)."""
    if annotations.is_empty():
        raise ValueError("no annotations to plot; annotate samples first")
    counts = annotations.group_by(pl.col("task_type").alias("row"), "primary_relevance_type").agg(
        pl.len().alias("n")
    )
    tasks = task_order(annotations["task_type"].to_list())
    ax = new_axes(ax, (7.5, 1.2 + 0.5 * len(tasks)))
    _stacked(ax, counts, tasks, "primary_relevance_type", list(LABELS), LABEL_COLORS)
    ax.set_title(demo_title("Primary relevance type by task", demo=demo))
    return ax


def confidence_mix(
    annotations: pl.DataFrame, *, demo: bool = False, ax: Axes | None = None
) -> Axes:
    """Confidence (high / medium / low) per primary label as stacked bars."""
    if annotations.is_empty():
        raise ValueError("no annotations to plot; annotate samples first")
    counts = annotations.group_by(pl.col("primary_relevance_type").alias("row"), "confidence").agg(
        pl.len().alias("n")
    )
    present = set(annotations["primary_relevance_type"].to_list())
    labels = [label for label in LABELS if label in present]
    ax = new_axes(ax, (7.5, 1.2 + 0.5 * len(labels)))
    _stacked(ax, counts, labels, "confidence", list(CONFIDENCES), CONFIDENCE_COLORS)
    ax.set_title(demo_title("Annotation confidence per primary label", demo=demo))
    return ax


def slice_intervals(
    scores: pl.DataFrame,
    *,
    group: str,
    metric: str = "mrr",
    view: str = "primary",
    demo: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Each run's ``metric`` per slice (whole slice) with its 95% bootstrap interval.

    Rows are slices (label order); runs are dodged markers, best overall run first.
    """
    part = scores.filter(
        pl.col("group") == group,
        pl.col("metric") == metric,
        pl.col("view") == view,
        pl.col("task") == "all",
    )
    if part.is_empty():
        msg = f"no {view} slice scores of {metric!r} for group {group!r}; check names"
        raise ValueError(msg)
    present = set(part["slice"].to_list())
    slices = [label for label in LABELS if label in present]
    runs = (
        part.group_by("run")
        .agg(pl.col("value").mean())
        .sort(["value", "run"], descending=[True, False])["run"]
        .to_list()
    )
    ax = new_axes(ax, (8.0, 1.2 + 0.35 * len(slices) * max(len(runs), 2)))
    colors = run_colors(scores.filter(pl.col("group") == group)["run"].to_list())
    step = 0.8 / max(len(runs), 1)
    for i, run in enumerate(runs):
        rows = {r["slice"]: r for r in part.filter(pl.col("run") == run).iter_rows(named=True)}
        ys = np.arange(len(slices)) + (i - (len(runs) - 1) / 2) * step
        values = np.array([rows[s]["value"] if s in rows else np.nan for s in slices])
        low = np.array([rows[s]["ci_low"] if s in rows else np.nan for s in slices])
        high = np.array([rows[s]["ci_high"] if s in rows else np.nan for s in slices])
        ax.errorbar(
            values,
            ys,
            xerr=[values - low, high - values],
            fmt="o",
            color=colors[run],
            ecolor=colors[run],
            elinewidth=1.0,
            capsize=2,
            markersize=4,
            label=run,
        )
    counts = dict(part.group_by("slice").agg(pl.col("n").max()).iter_rows())
    ax.set_yticks(np.arange(len(slices)), [f"{s}\n(n={counts[s]})" for s in slices])
    ax.invert_yaxis()
    ax.set_xlabel(f"{metric_label(metric)} (95% bootstrap CI, arbwb-defined)")
    ax.set_xlim(0, 1.02)
    legend_outside(ax, fontsize="small", frameon=False)
    ax.set_title(demo_title(f"{metric_label(metric)} per {view} slice — {group}", demo=demo))
    return ax


def slice_interval_views(
    scores: pl.DataFrame,
    *,
    group: str,
    metric: str = "mrr",
    demo: bool = False,
    axes: Panels | None = None,
) -> list[Axes]:
    """:func:`slice_intervals` of one group side by side: primary projection, multi-label view
    (a view without scores leaves its panel empty). ``axes``: one per view, or None for a new
    row; returns the panels."""
    panels = new_panels(axes, len(VIEWS), size=(15 / len(VIEWS), 5), sharex=True)
    for view, ax in zip(VIEWS, panels, strict=True):
        part = scores.filter(pl.col("group") == group, pl.col("view") == view)
        if part.filter(pl.col("task") == "all").height:
            slice_intervals(scores, group=group, metric=metric, view=view, demo=demo, ax=ax)
    return finish_panels(panels)
