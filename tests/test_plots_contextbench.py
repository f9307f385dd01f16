"""ContextBench figures: the ARB-beside-ContextBench bars draw one bar per scores row."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.patches import Rectangle

from arbwb.contextbench import compare as cc
from arbwb.plots.contextbench import file_level_bars
from arbwb.plots.style import run_colors


def _scores() -> pl.DataFrame:
    rows = [
        ("ARB", "v2", "bm25", "BM25", 0.9),
        ("ARB", "v2", "grep", "Grep", 0.6),
        ("ContextBench", "contextbench", "bm25", "BM25", 0.7),
        ("ContextBench", "contextbench", "agent", "agent", 0.5),
    ]
    return pl.DataFrame(
        [
            {
                "benchmark": b,
                "group": g,
                "run": r,
                "method": m,
                "metric": metric,
                "n": 3,
                "value": v,
                "ci_low": v - 0.1,
                "ci_high": v + 0.05,
            }
            for b, g, r, m, v in rows
            for metric in cc.FILE_METRICS
        ],
        schema=cc.SCORES,
    )


def test_file_level_bars_one_bar_per_row_in_the_shared_colours() -> None:
    ax = file_level_bars(_scores(), demo=True)
    assert isinstance(ax, Axes)
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(bars) == 4
    colors = run_colors(["BM25", "Grep", "agent"])
    # BM25 is on both benchmarks (adjacent bars first), then ARB-only Grep, then ContextBench-only
    want = [("BM25", ""), ("BM25", "//"), ("Grep", ""), ("agent", "//")]
    assert [(to_rgb(b.get_facecolor()), b.get_hatch() or "") for b in bars] == [
        (colors[m], h) for m, h in want
    ]
    assert [b.get_height() for b in bars] == [0.9, 0.7, 0.6, 0.5]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["BM25", "Grep", "agent"]
    assert "arbwb-defined" in ax.get_title() and "demo data" in ax.get_title()
    plt.close(ax.figure)


def test_file_level_bars_draws_on_a_given_axes_and_metric() -> None:
    _, given = plt.subplots()
    ax = file_level_bars(_scores(), metric="file_precision", ax=given)
    assert ax is given and len(ax.patches) == 4
    assert "file precision" in ax.get_ylabel()
    plt.close(given.figure)
