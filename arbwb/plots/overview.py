"""Dataset composition figure: samples per repository, stacked by task and no-gold stratum (the
tasks' and strata's fixed colours)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import polars as pl
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from arbwb.analysis.overview import NO_GOLD_STRATA, POSITIVE_TASKS
from arbwb.plots.style import (
    STRATUM_COLORS,
    demo_title,
    fixed_color,
    legend_outside,
    task_color,
    task_order,
)


def composition_bars(table: pl.DataFrame, *, demo: bool = False, ax: Axes | None = None) -> Axes:
    """Horizontal stacked bars per repository from :func:`arbwb.analysis.overview.repo_table`.

    One segment per positive task and per no-gold stratum; the label shows the language.
    """
    columns = [*task_order(POSITIVE_TASKS), *NO_GOLD_STRATA]
    missing = [c for c in ("repo", "language", *columns) if c not in table.columns]
    if missing:
        msg = f"composition_bars needs a repo_table frame; missing columns {missing}"
        raise ValueError(msg)
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.5 * max(table.height, 2) + 1.5))
    rows = table.reverse()
    labels = [f"{r} ({lang})" for r, lang in rows.select("repo", "language").iter_rows()]
    left = [0] * rows.height
    for column in columns:
        colour = (
            fixed_color(STRATUM_COLORS, column) if column in NO_GOLD_STRATA else task_color(column)
        )
        values = rows[column].to_list()
        ax.barh(labels, values, left=left, color=colour, label=column)
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_xlabel("samples")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    legend_outside(ax, fontsize="small", frameon=False)
    title = "Samples per repository by task and stratum"
    ax.set_title(demo_title(title, demo=demo))
    return ax
