"""What every figure shares: new axes or panels when none are given, demo-marked titles, one
colour per method in every figure of a report, the paper's task order, legends outside the data."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt
import polars as pl
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb

from arbwb.analysis.relevance import CONFIDENCES, LABELS

Color = tuple[float, float, float]
#: The panels a multi-panel function may be given: a list of Axes, or the array ``plt.subplots``
#: returns (any shape; read row by row).
Panels = Sequence[Axes] | npt.NDArray[Any]
#: Legends sit right of the data, unframed, so they hide no bar, line or whisker.
_OUTSIDE: dict[str, Any] = {"loc": "upper left", "frameon": False}


def new_axes(ax: Axes | None, size: tuple[float, float], **subplots: Any) -> Axes:
    """``ax``, or the axes of a new figure of ``size`` inches (``subplots`` to plt.subplots)."""
    if ax is not None:
        return ax
    new: Axes = plt.subplots(figsize=size, **subplots)[1]
    return new


def new_panels(
    axes: Panels | None,
    count: int,
    *,
    size: tuple[float, float],
    ncols: int | None = None,
    **subplots: Any,
) -> list[Axes]:
    """The ``count`` panels of a figure in reading order: ``axes`` (exactly ``count``), or a new
    grid of ``ncols`` columns (default one row) of ``size``-inch panels, spare cells hidden."""
    if axes is not None:
        given: list[Axes] = list(np.ravel(np.asarray(axes, dtype=object)))
        if len(given) != count:
            msg = (
                f"this figure draws {count} panel(s) but got {len(given)} axes; pass {count} "
                f"(e.g. plt.subplots(1, {count})[1]) or axes=None for a new figure"
            )
            raise ValueError(msg)
        return given
    cols = max(1, min(ncols or count, count))
    rows = -(-count // cols)
    width, height = size
    _, grid = plt.subplots(
        rows, cols, figsize=(width * cols, height * rows), squeeze=False, **subplots
    )
    cells: list[Axes] = list(grid.flat)
    for spare in cells[count:]:
        spare.set_visible(False)
    return cells[:count]


def finish_panels(
    panels: list[Axes], *, title: str | None = None, legend: bool = False
) -> list[Axes]:
    """``panels`` with ``title`` above, tight layout (unless the figure has a layout engine) and,
    with ``legend``, the first panel's legend right of every panel."""
    fig = panels[0].get_figure(root=True)
    if fig is None:
        msg = "the panels belong to no figure; make them with plt.subplots"
        raise ValueError(msg)
    if title is not None:
        fig.suptitle(title)
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    if legend:
        handles, labels = panels[0].get_legend_handles_labels()
        fig.legend(handles, labels, bbox_to_anchor=(1.0, 0.95), fontsize="small", **_OUTSIDE)
    return panels


def budget_label(budget: int) -> str:
    """``8000`` -> ``8k`` when divisible by 1000 (spec §13.1), else the number."""
    return f"{budget // 1000}k" if budget % 1000 == 0 else str(budget)


def budget_axis(
    ax: Axes, budgets: list[int], label: str = "context budget B (regex_code_tokenizer_v1 tokens)"
) -> None:
    """A log-2 x axis ticked at ``budgets`` (labelled ``8k``), no minor ticks."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(budgets, [budget_label(b) for b in budgets])
    ax.minorticks_off()
    ax.set_xlabel(label)


def ci_arrays(part: pl.DataFrame, key: str, keys: list[str]) -> list[npt.NDArray[Any]]:
    """``value``, ``ci_low`` and ``ci_high`` of ``part``'s row at each of ``keys`` (NaN if none)."""
    rows = {r[key]: r for r in part.iter_rows(named=True)}
    columns = ("value", "ci_low", "ci_high")
    return [np.array([rows[k][c] if k in rows else np.nan for k in keys]) for c in columns]


def finish(ax: Axes, title: str, *, demo: bool, legend: str | None = "small") -> Axes:
    """``ax`` with its demo-marked ``title`` and, unless ``legend`` is None, a frameless legend
    of that font size right of the axes."""
    ax.set_title(demo_title(title, demo=demo))
    if legend is not None:
        ax.legend(bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=legend, **_OUTSIDE)
    return ax


def demo_title(text: str, *, demo: bool) -> str:
    """``text``, marked " — demo data" when the figure is fed by the embedded demo release (a
    trailing " — demo" group name is dropped so the title does not say "demo" twice)."""
    return f"{text.removesuffix(' — demo')} — demo data" if demo else text


#: The paper's task order; every figure and table that lists tasks uses it ("overall" first).
TASK_ORDER = ("code2test", "comment2context", "trace2code", "edit2ripple", "abstention")

#: Retrieval methods with a fixed colour, family by family (lexical, grep, structure, dense,
#: fusion, then the paper's models); the colour of a name never depends on which other runs a
#: figure shows. Every pair is at least 20 CIEDE2000 units apart (clearly different side by side,
#: tests/test_plots_style.py), none too pale for a line on white; the first colours are seaborn's
#: colour-blind palette. A name not listed gets one of :data:`OTHER_COLORS` by a stable hash.
METHOD_COLORS: dict[str, str] = {
    "lexical": "#0173b2", "bm25-arb": "#de8f05", "bm25": "#029e73", "lexical_code_only": "#a5694b",
    "grep": "#cc78bc", "grep-expanded": "#962d5a", "repomap": "#5a4b00", "dense_hash": "#949494",
    "dense": "#a5c300", "rrf_lexical_dense_hash": "#56b4e9", "Qwen3-Embedding-8B": "#ff2d5a",
    "Qwen3-Embedding-4B": "#f0a596", "pplx-embed-v1-4b": "#005a2d",
    "jina-code-embeddings-0.5b": "#8c0800", "nomic-embed-code": "#6900b4",
}  # fmt: skip
KNOWN_METHODS = tuple(METHOD_COLORS)
#: Colours for methods without a fixed one: seaborn's darker and paler siblings, 15 in all.
OTHER_COLORS: tuple[Color, ...] = (
    *sns.color_palette("dark", 10)[5:],
    *sns.color_palette("pastel", 10),
)
#: Stem spellings of the same methods (upstream's stems and the paper's labels).
ALIASES = {
    "lexical_all_files": "lexical", "bm25_all_files": "bm25", "repomap_all_files": "repomap",
    "Lexical": "lexical", "BM25": "bm25", "RepoMap": "repomap", "v1_3_grep_strict": "grep",
    "Grep strict": "grep", "qwen3-8b": "Qwen3-Embedding-8B", "qwen3-4b": "Qwen3-Embedding-4B",
    "pplx-4b": "pplx-embed-v1-4b", "nomic": "nomic-embed-code",
}  # fmt: skip


def method_key(name: str) -> str:
    """The method a run name stands for: the part after a group prefix (``v1/lexical``) or a
    selective prefix (``demo_all_files_selective_lexical``), stem spellings folded."""
    base = name.rsplit("/", 1)[-1]
    base = base.split("_selective_", 1)[-1]
    return ALIASES.get(base, base)


def color(name: str) -> Color:
    """One colour per method, the same in every figure and report."""
    key = method_key(name)
    if key in METHOD_COLORS:
        return to_rgb(METHOD_COLORS[key])
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=4).digest()
    return OTHER_COLORS[int.from_bytes(digest, "big") % len(OTHER_COLORS)]


def run_colors(names: Iterable[str]) -> dict[str, Color]:
    """:func:`color` of each name."""
    return {name: color(name) for name in dict.fromkeys(names)}


#: One fixed colour per task (and "overall"), for figures whose hue is the task.
TASK_COLORS: dict[str, Color] = dict(
    zip(("overall", *TASK_ORDER), sns.color_palette("Set2", 6), strict=True)
)
_BLIND = sns.color_palette("colorblind")
#: One fixed colour per sample stratum (positive gold, the two no-gold strata).
STRATUM_COLORS: dict[str, Color] = {
    "positive": _BLIND[2],
    "natural": _BLIND[7],
    "counterfactual": _BLIND[4],
}
#: One fixed colour per calibration protocol of the abstention analysis.
PROTOCOL_COLORS: dict[str, Color] = {"mixed": _BLIND[0], "natural": _BLIND[7]}
#: One fixed colour per benchmark when a figure's hue is the benchmark.
BENCHMARK_COLORS: dict[str, Color] = {"ARB": _BLIND[0], "ContextBench": _BLIND[1]}
#: One fixed colour per relevance label (the taxonomy's primary labels).
LABEL_COLORS: dict[str, Color] = dict(zip(LABELS, sns.color_palette("Dark2", 4), strict=True))
#: An ordered variable gets a sequential palette, darkest for its first (strongest) level.
CONFIDENCE_COLORS: dict[str, Color] = dict(
    zip(CONFIDENCES, sns.color_palette("Blues_r", 4)[:3], strict=True)
)


def fixed_color(mapping: dict[str, Color], name: str) -> Color:
    """``mapping[name]``, or a grey for a value the mapping does not know."""
    return mapping.get(name, (0.6, 0.6, 0.6))


def task_color(task: str) -> Color:
    """The fixed colour of a task (:data:`TASK_COLORS`); unknown tasks share a grey."""
    return fixed_color(TASK_COLORS, task)


def task_order(tasks: Iterable[str]) -> list[str]:
    """``tasks`` in the paper's order: "overall" first, then :data:`TASK_ORDER`, then others
    sorted."""
    present = list(dict.fromkeys(tasks))
    known = [t for t in ("overall", *TASK_ORDER) if t in present]
    return known + sorted(t for t in present if t not in known)
