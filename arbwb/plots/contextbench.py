"""ContextBench figures (contextbench-spec §5, §6, §13): composition, R/P/F1 per granularity
from a leaderboard of ``<level>.<stat>`` metrics, the recall-precision trade-off, coverage by
trajectory step, and ARB beside ContextBench at file level (:mod:`arbwb.contextbench.compare`)."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from arbwb.contextbench.compare import ARB, CONTEXTBENCH
from arbwb.plots import style

LEVEL_ORDER = ("file", "symbol", "span", "line")
STATS = ("coverage", "precision", "f1")
BENCHMARK_HATCH = {ARB: "", CONTEXTBENCH: "//"}


def composition(
    instances: pl.DataFrame,
    *,
    by: str = "language",
    hue: str = "benchmark",
    demo: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Stacked counts of instances per ``by`` value, split by ``hue`` (e.g. source benchmark)."""
    counts = instances.group_by(by, hue).len().sort(by, hue)
    ax = style.new_axes(ax, (5.5, 3.2))
    keys = counts.group_by(by).agg(pl.col("len").sum()).sort("len", descending=True)[by].to_list()
    hues = sorted(counts[hue].unique().to_list())
    bottom = np.zeros(len(keys))
    for value in hues:
        part = dict(counts.filter(pl.col(hue) == value).select(by, "len").iter_rows())
        heights = np.array([part.get(k, 0) for k in keys], dtype=float)
        shade = style.fixed_color(style.BENCHMARK_COLORS, str(value))
        ax.bar(keys, heights, bottom=bottom, color=shade, label=str(value))
        bottom += heights
    ax.set_ylabel("instances")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(by)
    ax.tick_params(axis="x", rotation=30)
    ax.legend(title=hue, fontsize="small", frameon=False)
    ax.set_title(
        style.demo_title(f"ContextBench instances by {by} (n={instances.height})", demo=demo)
    )
    return ax


def granularity_bars(
    board: pl.DataFrame, *, demo: bool = False, axes: style.Panels | None = None
) -> list[Axes]:
    """Coverage, precision and per-instance F1 (a panel each) per level and run with the board's
    intervals (its weighted overall rows); ``axes``: three, or None for a row sharing y."""
    part = board.filter(pl.col("scope") == "overall", pl.col("aggregation") == "weighted")
    part = part.with_columns(
        level=pl.col("metric").str.split(".").list.first(),
        stat=pl.col("metric").str.split(".").list.last(),
    ).filter(pl.col("stat").is_in(list(STATS)), pl.col("level").is_in(list(LEVEL_ORDER)))
    levels = [lv for lv in LEVEL_ORDER if lv in part["level"].to_list()]
    runs = part["run"].unique(maintain_order=True).to_list()
    colors = style.run_colors(runs)
    panels = style.new_panels(axes, len(STATS), size=(4.0, 3.4), sharey=True)
    width = 0.8 / max(1, len(runs))
    for ax, stat in zip(panels, STATS, strict=True):
        for j, run in enumerate(runs):
            mine = part.filter(pl.col("run") == run, pl.col("stat") == stat)
            x = np.arange(len(levels)) + (j - (len(runs) - 1) / 2) * width
            y, low, high = style.ci_arrays(mine, "level", levels)
            ax.bar(x, y, width, color=colors[run], label=run)
            ax.errorbar(
                x, y, yerr=[y - low, high - y], fmt="none", ecolor="black", capsize=2, lw=0.8
            )
        ax.set_xticks(np.arange(len(levels)), levels)
        ax.set_title("F1 (mean per instance)" if stat == "f1" else stat)
        ax.set_ylim(0, 1.05)
    panels[0].set_ylabel("macro mean, 95% bootstrap CI")
    title = style.demo_title("ContextBench final context per granularity", demo=demo)
    return style.finish_panels(panels, title=title, legend=True)


def recall_precision(
    points: pl.DataFrame,
    *,
    level: str = "line",
    ranked: pl.DataFrame | None = None,
    demo: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Coverage (recall) against precision per run at ``level`` (``points``: run, level,
    coverage, precision) with iso-F1 curves; ``ranked`` (run, k, coverage, precision of ranked
    file lists, §13) is drawn as a line through k (its line precision a lower bound)."""
    part = points.filter(pl.col("level") == level)
    ax = style.new_axes(ax, (4.8, 4.2))
    grid = np.linspace(0.01, 1, 200)
    for value in (0.2, 0.4, 0.6, 0.8):
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = value * grid / (2 * grid - value)
        keep = (prec > 0) & (prec <= 1)
        ax.plot(grid[keep], prec[keep], color="0.85", lw=0.8, zorder=1)
        ax.annotate(
            f"F1={value}",
            (1.0, value / (2 - value)),
            xytext=(-2, 2),
            textcoords="offset points",
            ha="right",
            fontsize=7,
            color="0.6",
        )
    runs = part["run"].unique(maintain_order=True).to_list()
    names = runs + ([] if ranked is None else ranked["run"].unique(maintain_order=True).to_list())
    colors = style.run_colors(names)
    for run, x, y in part.select("run", "coverage", "precision").iter_rows():
        ax.scatter(x, y, s=50, color=colors[run], label=run, zorder=3, clip_on=False)
    if ranked is not None:
        for run in ranked["run"].unique(maintain_order=True).to_list():
            line = ranked.filter(pl.col("run") == run).sort("k")
            ax.plot(
                line["coverage"],
                line["precision"],
                "o--",
                ms=4,
                color=colors[run],
                label=f"{run} (whole files, P lower bound)",
                zorder=2,
                clip_on=False,
            )
            for k, x, y in line.select("k", "coverage", "precision").iter_rows():
                ax.annotate(f"k={k}", (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(f"{level} coverage (recall)")
    ax.set_ylabel(f"{level} precision")
    title = f"Recall-precision trade-off, {level} level"
    return style.finish(ax, title, demo=demo, legend="x-small")


def coverage_by_step(
    steps: pl.DataFrame, *, level: str = "line", demo: bool = False, ax: Axes | None = None
) -> Axes:
    """Mean cumulative coverage at step t per run (§6); an instance with fewer steps keeps its
    last value (arbwb-defined carry-forward so every step averages all instances)."""
    part = steps.filter(pl.col("level") == level)
    ax = style.new_axes(ax, (5.0, 3.4))
    runs = part["run"].unique(maintain_order=True).to_list()
    colors = style.run_colors(runs)
    horizons = part.group_by("run").agg(step=pl.int_ranges(1, pl.col("step").max() + 1))
    key = ["run", "sample_id", "step"]
    curves = (
        part.select("run", "sample_id")
        .unique()
        .join(horizons.explode("step"), on="run")
        .join(part.select(*key, "coverage"), on=key, how="left")
        .sort(key)
        .with_columns(pl.col("coverage").forward_fill().over("run", "sample_id"))
        .group_by("run", "step")
        .agg(pl.col("coverage").mean())
        .sort("step")
    )
    for run in runs:
        curve = curves.filter(pl.col("run") == run)
        ax.plot(curve["step"], curve["coverage"], "o-", ms=3, color=colors[run], label=run)
    ax.set_ylim(0, 1.02)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("step t")
    ax.set_ylabel(f"cumulative {level} coverage (mean)")
    return style.finish(ax, f"Coverage by trajectory step, {level} level", demo=demo)


def file_level_bars(
    scores: pl.DataFrame, *, metric: str = "file_recall", demo: bool = False, ax: Axes | None = None
) -> Axes:
    """A bar per (benchmark, group, run) row of ``metric`` with its interval, grouped by method
    (on both benchmarks first, then ARB-only, then ContextBench-only; colour the method, hatching
    the benchmark). The comparison is arbwb-defined."""
    part = scores.filter(pl.col("metric") == metric)
    arb = set(part.filter(pl.col("benchmark") == ARB)["method"].to_list())
    both = arb & set(part.filter(pl.col("benchmark") == CONTEXTBENCH)["method"].to_list())
    methods = sorted(
        part["method"].unique().to_list(), key=lambda m: (m not in both, m not in arb, m)
    )
    colors = style.run_colors(methods)
    ax = style.new_axes(ax, (max(5.0, 0.7 * part.height + 1.5), 3.6))
    x, ticks = 0.0, []
    for method in methods:
        rows = part.filter(pl.col("method") == method).sort("benchmark", "group", "run")
        start = x
        for row in rows.iter_rows(named=True):
            value, hatch = row["value"], BENCHMARK_HATCH.get(row["benchmark"], "")
            ax.bar(x, value, 0.8, color=colors[method], hatch=hatch, edgecolor="black", lw=0.5)
            err = [[value - row["ci_low"]], [row["ci_high"] - value]]
            ax.errorbar(x, value, yerr=err, fmt="none", ecolor="black", capsize=2, lw=0.8)
            x += 1.0
        ticks.append(((start + x - 1.0) / 2, method))
        x += 0.5
    ax.set_xticks([t for t, _ in ticks], [m for _, m in ticks], rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(f"{metric.replace('_', ' ')} (mean, 95% bootstrap CI)")
    ax.legend(
        handles=[
            Patch(facecolor="white", edgecolor="black", hatch=hatch, label=name)
            for name, hatch in BENCHMARK_HATCH.items()
        ],
        fontsize="small",
        frameon=False,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
    )
    ax.set_title(style.demo_title("ARB beside ContextBench, file level (arbwb-defined)", demo=demo))
    return ax
