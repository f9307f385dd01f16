"""Dataset composition figure: samples per repository, stacked by task and no-gold stratum."""

from __future__ import annotations

import polars as pl
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from arbwb.analysis.overview import NO_GOLD_STRATA, POSITIVE_TASKS
from arbwb.plots import style


def composition_bars(table: pl.DataFrame, *, demo: bool = False, ax: Axes | None = None) -> Axes:
    """Horizontal stacked bars per repository (and language) from
    :func:`arbwb.analysis.overview.repo_table`: a segment per positive task and no-gold stratum."""
    columns = [*style.task_order(POSITIVE_TASKS), *NO_GOLD_STRATA]
    missing = [c for c in ("repo", "language", *columns) if c not in table.columns]
    if missing:
        msg = f"composition_bars needs a repo_table frame; missing columns {missing}"
        raise ValueError(msg)
    ax = style.new_axes(ax, (8, 0.5 * max(table.height, 2) + 1.5))
    rows = table.reverse()
    labels = [f"{r} ({lang})" for r, lang in rows.select("repo", "language").iter_rows()]
    left = [0] * rows.height
    for column in columns:
        strata = column in NO_GOLD_STRATA
        colour = (
            style.fixed_color(style.STRATUM_COLORS, column) if strata else style.task_color(column)
        )
        values = rows[column].to_list()
        ax.barh(labels, values, left=left, color=colour, label=column)
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_xlabel("samples")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return style.finish(ax, "Samples per repository by task and stratum", demo=demo)
