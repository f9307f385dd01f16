"""Relevance-taxonomy figures from the annotations of :mod:`arbwb.analysis.relevance` and the slice
scores of :mod:`arbwb.analysis.slices`: labels by task, confidence mix, metric per slice."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from arbwb.analysis.board import metric_label
from arbwb.analysis.relevance import CONFIDENCES, LABELS
from arbwb.analysis.slices import VIEWS
from arbwb.plots import style


def _stacked(
    annotations: pl.DataFrame,
    by: str,
    rows: list[str],
    column: str,
    stacks: tuple[str, ...],
    colors: dict[str, style.Color],
    ax: Axes | None,
) -> Axes:
    """Horizontal stacked bars of annotation counts: one bar per ``rows`` value of ``by``, a
    segment per ``stacks`` value of ``column`` in its fixed colour."""
    if annotations.is_empty():
        raise ValueError("no annotations to plot; annotate samples first")
    counts = annotations.group_by(pl.col(by).alias("row"), column).agg(pl.len().alias("n"))
    ax = style.new_axes(ax, (7.5, 1.2 + 0.5 * len(rows)))
    left = np.zeros(len(rows))
    for stack in stacks:
        got = dict(counts.filter(pl.col(column) == stack).select("row", "n").iter_rows())
        widths = np.array([float(got.get(r, 0)) for r in rows])
        ax.barh(rows, widths, left=left, color=style.fixed_color(colors, stack), label=stack)
        for y, (x0, w) in enumerate(zip(left, widths, strict=True)):
            if w > 0:
                ax.text(x0 + w / 2, y, f"{int(w)}", ha="center", va="center", fontsize="small")
        left += widths
    ax.invert_yaxis()
    ax.set_xlabel("samples")
    ax.set_xlim(0, max(1.0, float(left.max())) * 1.02)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return ax


def label_distribution(
    annotations: pl.DataFrame, *, demo: bool = False, ax: Axes | None = None
) -> Axes:
    """Primary labels per task as stacked bars (spec 13.4's by-task table as a figure)."""
    tasks = style.task_order(annotations["task_type"].to_list())
    primary = "primary_relevance_type"
    ax = _stacked(annotations, "task_type", tasks, primary, LABELS, style.LABEL_COLORS, ax)
    return style.finish(ax, "Primary relevance type by task", demo=demo)


def confidence_mix(
    annotations: pl.DataFrame, *, demo: bool = False, ax: Axes | None = None
) -> Axes:
    """Confidence (high / medium / low) per primary label as stacked bars."""
    primary = "primary_relevance_type"
    labels = [label for label in LABELS if label in set(annotations[primary].to_list())]
    ax = _stacked(
        annotations, primary, labels, "confidence", CONFIDENCES, style.CONFIDENCE_COLORS, ax
    )
    return style.finish(ax, "Annotation confidence per primary label", demo=demo)


def slice_intervals(
    scores: pl.DataFrame,
    *,
    group: str,
    metric: str = "mrr",
    view: str = "primary",
    demo: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Each run's ``metric`` per slice (whole slice, label order) with its 95% bootstrap
    interval; runs are dodged markers, best overall run first."""
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
    ax = style.new_axes(ax, (8.0, 1.2 + 0.35 * len(slices) * max(len(runs), 2)))
    colors = style.run_colors(scores.filter(pl.col("group") == group)["run"].to_list())
    step = 0.8 / max(len(runs), 1)
    for i, run in enumerate(runs):
        ys = np.arange(len(slices)) + (i - (len(runs) - 1) / 2) * step
        values, low, high = style.ci_arrays(part.filter(pl.col("run") == run), "slice", slices)
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
    return style.finish(ax, f"{metric_label(metric)} per {view} slice — {group}", demo=demo)


def slice_interval_views(
    scores: pl.DataFrame,
    *,
    group: str,
    metric: str = "mrr",
    demo: bool = False,
    axes: style.Panels | None = None,
) -> list[Axes]:
    """:func:`slice_intervals` of one group side by side, primary projection then multi-label
    view (empty without scores); ``axes``: one per view, or None for a new row."""
    panels = style.new_panels(axes, len(VIEWS), size=(15 / len(VIEWS), 5), sharex=True)
    for view, ax in zip(VIEWS, panels, strict=True):
        part = scores.filter(pl.col("group") == group, pl.col("view") == view)
        if part.filter(pl.col("task") == "all").height:
            slice_intervals(scores, group=group, metric=metric, view=view, demo=demo, ax=ax)
    return style.finish_panels(panels)
