"""Span-granularity figures (spec §11, §13.5) from :mod:`arbwb.analysis.granularity` and
:func:`arbwb.analysis.spanyield.packing_summary`: sizes, evidence ratios, file vs line, yield."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from arbwb.plots import style


def plot_file_lines(
    sizes: pl.DataFrame,
    *,
    tasks: Sequence[str] | None = None,
    demo: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Gold-file line counts per task (resolved occurrences), log-scale strip + box plot."""
    resolved = sizes.filter(pl.col("file_lines").is_not_null())
    if resolved.is_empty():
        msg = "no resolved gold-file occurrences to plot; check the corpus (see `unresolved`)"
        raise ValueError(msg)
    order = style.task_order(tasks or resolved["task"].to_list())
    ax = style.new_axes(ax, (6.0, 3.8))
    data = resolved.select("task", "file_lines").to_pandas()
    common: dict[str, Any] = {
        "data": data,
        "x": "task",
        "y": "file_lines",
        "order": order,
        "ax": ax,
    }
    sns.boxplot(**common, color="0.9", fliersize=0)
    palette = {t: style.task_color(t) for t in order}
    state = np.random.get_state()  # seaborn jitters from numpy's global generator:
    np.random.seed(0)  # seeded here, so the figure is the same in every run
    try:
        sns.stripplot(**common, hue="task", palette=palette, legend=False, size=3, alpha=0.6)
    finally:
        np.random.set_state(state)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("")
    ax.set_ylabel("gold file lines (log scale)")
    title = f"gold-file size (n={resolved.height} occurrences)"
    return style.finish(ax, title, demo=demo, legend=None)


def plot_evidence_ratio(
    density: pl.DataFrame, *, demo: bool = False, ax: Axes | None = None
) -> Axes:
    """Histogram of evidence lines / file lines per span-file pair, one colour per task."""
    if density.is_empty():
        msg = "no span-file pairs with a known file size to plot"
        raise ValueError(msg)
    ax = style.new_axes(ax, (6.0, 3.8))
    data = density.select("task", "ratio").to_pandas()
    order = style.task_order(density["task"].to_list())
    sns.histplot(
        data=data,
        x="ratio",
        hue="task",
        hue_order=order,
        palette={t: style.task_color(t) for t in order},
        bins=20,
        binrange=(0, 1),
        multiple="stack",
        ax=ax,
    )
    for threshold, dash in ((0.10, "--"), (0.25, ":")):
        ax.axvline(threshold, color="0.4", lw=0.8, ls=dash)
        ax.annotate(
            f"{threshold:.0%} of the file",
            (threshold, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(2, -10),
            textcoords="offset points",
            fontsize="x-small",
            color="0.3",
        )
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(0, 1)
    ax.set_xlabel("evidence lines / gold file lines")
    ax.set_ylabel("span-file pairs")
    return style.finish(ax, f"evidence density (n={density.height})", demo=demo, legend=None)


def sizes_and_density(
    sizes: pl.DataFrame,
    density: pl.DataFrame,
    *,
    tasks: Sequence[str] | None = None,
    demo: bool = False,
    axes: style.Panels | None = None,
) -> list[Axes]:
    """Two panels: :func:`plot_file_lines` and :func:`plot_evidence_ratio` (a note when no
    span-file pair has a known file size). ``axes``: two, or None for a new row; returns them."""
    panels = style.new_panels(axes, 2, size=(6.0, 4.0))
    plot_file_lines(sizes, tasks=tasks, demo=demo, ax=panels[0])
    if density.height:
        plot_evidence_ratio(density, demo=demo, ax=panels[1])
    else:
        panels[1].axis("off")
        panels[1].text(0.5, 0.5, "no gold spans with a known file size", ha="center")
    return style.finish_panels(panels)


def plot_file_vs_line(
    rows: Sequence[Mapping[str, Any]],
    *,
    intervals: Mapping[str, Mapping[str, Sequence[float] | None]] | None = None,
    demo: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """File recall@20 against line F1 (legacy 8k chars) per span-capable run, with intervals;
    other runs are listed in the axes' note, not drawn."""
    capable = [r for r in rows if r["span_capable"]]
    ax = style.new_axes(ax, (6.0, 4.2))
    for row in capable:
        x, y = row["file_recall@20"], row["line_f1@8k_chars"]
        got = (intervals or {}).get(row["method"], {})
        xi, yi = got.get("file_recall@20"), got.get("line_f1@8k_chars")
        xerr = None if xi is None else [[x - xi[0]], [xi[1] - x]]
        yerr = None if yi is None else [[y - yi[0]], [yi[1] - y]]
        name = row["method"]
        ax.errorbar(
            x, y, xerr=xerr, yerr=yerr, fmt="o", color=style.color(name), capsize=3, label=name
        )
    not_capable = [r["method"] for r in rows if not r["span_capable"]]
    if not_capable:
        note = "not span-capable: " + ", ".join(not_capable)
        ax.text(0.01, 0.01, note, transform=ax.transAxes, fontsize="x-small", va="bottom")
    ax.set_xlabel("file recall@20")
    ax.set_ylabel("line F1 @8k chars")
    return style.finish(
        ax, "file-level vs line-level", demo=demo, legend="small" if capable else None
    )


def plot_span_yield(
    summary: pl.DataFrame,
    *,
    metric: str = "line_recall",
    demo: bool = False,
    legend: bool = True,
    ax: Axes | None = None,
) -> Axes:
    """Span yield (mean ``metric`` with intervals) against token budget per run: whole files
    in rank order (solid) vs top chunks (dashed); arbwb-defined."""
    part = summary.filter(pl.col("packing").is_in(["files", "chunks"])).sort(
        "run", "packing", "budget"
    )
    if part.is_empty():
        msg = "no token-packing rows: no run could be re-ranked (see arbwb.reranked)"
        raise ValueError(msg)
    ax = style.new_axes(ax, (7.0, 4.5))
    runs = part["run"].unique(maintain_order=True).to_list()
    colors = style.run_colors(runs)
    for (run, packing), line in part.group_by("run", "packing", maintain_order=True):
        x, y = line["budget"].to_numpy(), line[metric].to_numpy()
        err = [y - line[f"{metric}_low"].to_numpy(), line[f"{metric}_high"].to_numpy() - y]
        dash, label = "-" if packing == "files" else "--", f"{run} ({packing})"
        shade = colors[str(run)]
        ax.errorbar(x, y, yerr=err, color=shade, ls=dash, marker="o", ms=4, capsize=2, label=label)
    style.budget_axis(ax, sorted(part["budget"].unique().to_list()))
    if metric == "line_recall":
        ax.set_ylim(0, 1)
    ax.set_ylabel({"line_recall": "gold evidence lines packed (share)"}.get(metric, metric))
    title = "span yield: whole files vs chunks"
    return style.finish(ax, title, demo=demo, legend="x-small" if legend else None)
