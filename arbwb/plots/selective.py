"""Abstention calibration figures (spec §9; views arbwb-defined) from the frames of
:class:`arbwb.analysis.selective.SelectiveResult`; an empty frame (a skipped analysis) draws a
panel that says so, and the ``*_panels`` functions draw one panel per run (or metric)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl
from matplotlib.axes import Axes

from arbwb.plots import style

STRATUM_ORDER = ("positive", "natural", "counterfactual")
NOTHING = "analysis skipped: nothing to draw"


def _nothing(ax: Axes) -> Axes:
    """A blank panel saying there is no data (the analysis was skipped)."""
    ax.axis("off")
    ax.text(0.5, 0.5, NOTHING, ha="center", va="center", transform=ax.transAxes)
    return ax


def _run_panels(
    draw: Callable[..., Axes],
    frame: pl.DataFrame,
    axes: style.Panels | None,
    size: tuple[float, float],
    demo: bool,
) -> list[Axes]:
    """``draw(frame, run=..., ...)`` on one panel per run of ``frame`` (``axes``, or a new row
    of panels ``size`` inches each); one blank panel saying so when there are no runs."""
    runs = [] if frame.is_empty() else frame["run"].unique(maintain_order=True).to_list()
    panels = style.new_panels(axes, max(1, len(runs)), size=size)
    if not runs:
        _nothing(panels[0])
    for ax, run in zip(panels, runs, strict=False):
        draw(frame, run=run, demo=demo, ax=ax)
    return style.finish_panels(panels)


def plot_confidence_by_stratum(
    rows: pl.DataFrame, *, run: str, demo: bool = False, ax: Axes | None = None
) -> Axes:
    """Confidence of one run's samples per stratum: box plus every sample as a point."""
    part = rows.filter(pl.col("run") == run)
    if part.is_empty():
        msg = f"no rows for run {run!r}; runs present: {sorted(set(rows['run']))!r}"
        raise ValueError(msg)
    ax = style.new_axes(ax, (4.5, 3.6))
    present = [s for s in STRATUM_ORDER if (part["stratum"] == s).any()]
    data = [part.filter(pl.col("stratum") == s)["confidence"].to_numpy() for s in present]
    ax.boxplot(data, positions=range(len(present)), widths=0.5, showfliers=False)
    rng = np.random.default_rng(0)
    for i, (stratum, values) in enumerate(zip(present, data, strict=True)):
        jitter = rng.uniform(-0.15, 0.15, values.size)
        shade = style.fixed_color(style.STRATUM_COLORS, stratum)
        ax.scatter(i + jitter, values, s=12, alpha=0.7, color=shade, zorder=3)
    ax.set_xticks(
        range(len(present)), [f"{s}\n(n={d.size})" for s, d in zip(present, data, strict=True)]
    )
    ax.set_ylabel("confidence (top chunk score)")
    return style.finish(ax, run, demo=demo, legend=None)


def plot_risk_coverage(
    curves: pl.DataFrame,
    *,
    metric: str = "selective_success@20",
    demo: bool = False,
    legend: bool = True,
    ax: Axes | None = None,
) -> Axes:
    """``metric`` against coverage per run over the §9.4 thresholds, with bootstrap bands."""
    bands = {"selective_success@20": "success", "accepted_positive_hit@20": "hit"}
    if metric not in bands:
        msg = f"metric must be one of {list(bands)}, got {metric!r}"
        raise ValueError(msg)
    ax = style.new_axes(ax, (5.5, 3.8))
    if curves.is_empty():
        return _nothing(ax)
    runs = curves["run"].unique(maintain_order=True).to_list()
    colors = style.run_colors(runs)
    for run in runs:
        line = curves.filter(pl.col("run") == run).sort("coverage")
        if metric == "accepted_positive_hit@20":
            line = line.filter(pl.col("positive_returned") > 0)
        x = line["coverage"].to_numpy()
        ax.plot(
            x, line[metric].to_numpy(), color=colors[run], lw=1.5, label=run, drawstyle="steps-post"
        )
        low = line[f"{bands[metric]}_low"].to_numpy()
        high = line[f"{bands[metric]}_high"].to_numpy()
        ax.fill_between(x, low, high, color=colors[run], alpha=0.15, step="post", lw=0)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("coverage (share of samples returned)")
    ax.set_ylabel(metric)
    ax.set_title(style.demo_title(f"{metric} vs coverage", demo=demo))
    if legend:
        ax.legend(fontsize="small", frameon=False)
    return ax


def plot_fold_thresholds(
    folds: pl.DataFrame, *, run: str, demo: bool = False, ax: Axes | None = None
) -> Axes:
    """Each fold's calibrated threshold for one run, mixed and natural protocols side by side."""
    part = folds.filter(pl.col("run") == run)
    ax = style.new_axes(ax, (4.5, 3.4))
    protocols = part["protocol"].unique(maintain_order=True).to_list()
    for i, protocol in enumerate(protocols):
        rows = part.filter(pl.col("protocol") == protocol).sort("fold")
        x = rows["fold"].to_numpy() + (i - (len(protocols) - 1) / 2) * 0.15
        y = rows["threshold"].to_numpy()  # null (-inf: never abstain) is not drawn
        shade = style.fixed_color(style.PROTOCOL_COLORS, protocol)
        ax.scatter(x, y, s=40, marker="os"[i % 2], label=protocol, color=shade, zorder=3)
        finite = y[np.isfinite(y.astype(float))] if y.size else y
        if finite.size:
            mean = float(np.mean(finite))
            ax.axhline(mean, lw=0.8, ls="--", color=shade, label=f"{protocol}: mean of folds")
    ax.set_xticks(sorted(set(part["fold"].to_list())))
    ax.set_xlabel("fold (held-out repositories)")
    ax.set_ylabel("threshold selected on the other folds")
    return style.finish(ax, run, demo=demo)


def plot_protocol_contrast(
    table: pl.DataFrame,
    *,
    metric: str = "selective_success@20",
    demo: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Bars per run: no-abstain vs out-of-fold ``metric`` under the mixed and natural protocols."""
    ax = style.new_axes(ax, (6.5, 4.0), layout="tight")
    if table.is_empty():
        return _nothing(ax)
    runs = table["run"].unique(maintain_order=True).to_list()
    groups = [(p, q) for p in ("mixed", "natural") for q in ("no abstain", "out-of-fold")]
    width = 0.8 / len(groups)
    for i, (protocol, point) in enumerate(groups):
        part = table.filter(pl.col("protocol") == protocol, pl.col("point") == point)
        values = [part.filter(pl.col("run") == r)[metric].to_list() for r in runs]
        heights = [v[0] if v else np.nan for v in values]
        x = np.arange(len(runs)) + (i - (len(groups) - 1) / 2) * width
        hatch = "" if point == "out-of-fold" else "//"
        shade, label = style.fixed_color(style.PROTOCOL_COLORS, protocol), f"{protocol}: {point}"
        ax.bar(x, heights, width, label=label, color=shade, hatch=hatch, alpha=0.85)
    ax.set_xticks(range(len(runs)), runs, rotation=15, ha="right", fontsize="small")
    ax.set_ylim(0, 1)
    ax.set_ylabel(metric)
    return style.finish(ax, "mixed vs natural-only evidence", demo=demo, legend="x-small")


def plot_auroc(separability: pl.DataFrame, *, demo: bool = False, ax: Axes | None = None) -> Axes:
    """AUROC of confidence (positive vs no-gold) per run and stratum with bootstrap intervals."""
    ax = style.new_axes(ax, (6.0, 3.8), layout="tight")
    if separability.is_empty():
        return _nothing(ax)
    runs = separability["run"].unique(maintain_order=True).to_list()
    strata = separability["stratum"].unique(maintain_order=True).to_list()
    width = 0.8 / max(1, len(strata))
    for i, stratum in enumerate(strata):
        part = separability.filter(pl.col("stratum") == stratum, pl.col("auroc").is_not_null())
        index = {r: k for k, r in enumerate(runs)}
        x = np.array([index[r] for r in part["run"]]) + (i - (len(strata) - 1) / 2) * width
        y = part["auroc"].to_numpy()
        err = [y - part["auroc_low"].to_numpy(), part["auroc_high"].to_numpy() - y]
        shade = style.fixed_color(style.STRATUM_COLORS, stratum)
        ax.errorbar(x, y, yerr=err, fmt="o", capsize=3, label=stratum, color=shade)
    ax.axhline(0.5, color="grey", lw=0.8, ls=":", label="chance (0.5)")
    ax.set_xticks(range(len(runs)), runs, rotation=15, ha="right", fontsize="small")
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("AUROC (positive vs no-gold)")
    return style.finish(ax, "separability by no-gold stratum", demo=demo)


def plot_confidence_panels(
    rows: pl.DataFrame, *, demo: bool = False, axes: style.Panels | None = None
) -> list[Axes]:
    """One :func:`plot_confidence_by_stratum` panel per run of the selective ROWS frame
    (``axes``: one per run, or None for a new row); returns the panels."""
    return _run_panels(plot_confidence_by_stratum, rows, axes, (4.6, 3.8), demo)


def plot_fold_threshold_panels(
    folds: pl.DataFrame, *, demo: bool = False, axes: style.Panels | None = None
) -> list[Axes]:
    """One :func:`plot_fold_thresholds` panel per run of the fold-thresholds table
    (``axes``: one per run, or None for a new row); returns the panels."""
    return _run_panels(plot_fold_thresholds, folds, axes, (4.6, 3.6), demo)


def plot_risk_coverage_panels(
    curves: pl.DataFrame, *, demo: bool = False, axes: style.Panels | None = None
) -> list[Axes]:
    """Risk-coverage of selective success@20 and of the accepted-positive hit rate, side by side
    (``axes``: two, or None for a new row); returns the two panels."""
    panels = style.new_panels(axes, 2, size=(5.5, 3.9))
    plot_risk_coverage(curves, metric="selective_success@20", demo=demo, ax=panels[0])
    plot_risk_coverage(
        curves, metric="accepted_positive_hit@20", demo=demo, legend=False, ax=panels[1]
    )
    return style.finish_panels(panels)
