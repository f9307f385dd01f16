"""What every figure shares (the visual grammar): new axes when none is given, the demo-data
label in titles, one colour per method in every figure of a report, the paper's task order, and
legends outside the data."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import matplotlib.pyplot as plt
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

Color = tuple[float, float, float]


def new_axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    """``ax``, or the axes of a new figure of ``size`` inches."""
    if ax is not None:
        return ax
    _, new = plt.subplots(figsize=size)
    return new


def demo_title(text: str, *, demo: bool) -> str:
    """``text``, marked " — demo data" when the figure is fed by the embedded demo release (a
    trailing " — demo" group name is dropped so the title does not say "demo" twice)."""
    return f"{text.removesuffix(' — demo')} — demo data" if demo else text


#: The paper's task order; every figure and table that lists tasks uses it ("overall" first).
TASK_ORDER = ("code2test", "comment2context", "trace2code", "edit2ripple", "abstention")

#: Retrieval methods with a fixed colour, family by family (lexical, grep, structure, dense,
#: fusion, then the paper's models); the colour of a name never depends on which other runs a
#: figure shows. A name not listed gets a colour from the rest of the palette by a stable hash.
KNOWN_METHODS = (
    "lexical",
    "bm25-arb",
    "bm25",
    "lexical_code_only",
    "grep",
    "grep-expanded",
    "repomap",
    "dense_hash",
    "dense",
    "rrf_lexical_dense_hash",
    "Qwen3-Embedding-8B",
    "Qwen3-Embedding-4B",
    "pplx-embed-v1-4b",
    "jina-code-embeddings-0.5b",
    "nomic-embed-code",
)
#: Stem spellings of the same methods (upstream's stems and the paper's labels).
ALIASES = {
    "lexical_all_files": "lexical",
    "bm25_all_files": "bm25",
    "repomap_all_files": "repomap",
    "Lexical": "lexical",
    "BM25": "bm25",
    "RepoMap": "repomap",
    "v1_3_grep_strict": "grep",
    "Grep strict": "grep",
    "qwen3-8b": "Qwen3-Embedding-8B",
    "qwen3-4b": "Qwen3-Embedding-4B",
    "pplx-4b": "pplx-embed-v1-4b",
    "nomic": "nomic-embed-code",
}


def _palette() -> list[Color]:
    """Colour-blind-safe colours first, then their darker and paler siblings: 30 in all."""
    return [
        *sns.color_palette("colorblind", 10),
        *sns.color_palette("dark", 10),
        *sns.color_palette("pastel", 10),
    ]


def method_key(name: str) -> str:
    """The method a run name stands for: the part after a group prefix (``v1/lexical``) or a
    selective prefix (``demo_all_files_selective_lexical``), stem spellings folded."""
    base = name.rsplit("/", 1)[-1]
    base = base.split("_selective_", 1)[-1]
    return ALIASES.get(base, base)


def color(name: str) -> Color:
    """One colour per method, the same in every figure and report."""
    palette = _palette()
    key = method_key(name)
    if key in KNOWN_METHODS:
        return palette[KNOWN_METHODS.index(key)]
    rest = palette[len(KNOWN_METHODS) :]
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=4).digest()
    return rest[int.from_bytes(digest, "big") % len(rest)]


def run_colors(names: Iterable[str]) -> dict[str, Color]:
    """:func:`color` of each name."""
    return {name: color(name) for name in dict.fromkeys(names)}


#: One fixed colour per task (and "overall"), for figures whose hue is the task.
TASK_COLORS: dict[str, Color] = dict(
    zip(("overall", *TASK_ORDER), sns.color_palette("Set2", 6), strict=True)
)
#: One fixed colour per sample stratum (positive gold, the two no-gold strata).
STRATUM_COLORS: dict[str, Color] = {
    "positive": sns.color_palette("colorblind")[2],
    "natural": sns.color_palette("colorblind")[7],
    "counterfactual": sns.color_palette("colorblind")[4],
}
#: One fixed colour per calibration protocol of the abstention analysis.
PROTOCOL_COLORS: dict[str, Color] = {
    "mixed": sns.color_palette("colorblind")[0],
    "natural": sns.color_palette("colorblind")[7],
}
#: One fixed colour per benchmark when a figure's hue is the benchmark.
BENCHMARK_COLORS: dict[str, Color] = {
    "ARB": sns.color_palette("colorblind")[0],
    "ContextBench": sns.color_palette("colorblind")[1],
}
#: One fixed colour per relevance label (the taxonomy's primary labels).
LABEL_COLORS: dict[str, Color] = dict(
    zip(
        ("semantic_direct", "structural_indirect", "workflow_conventional", "causal_indirect"),
        sns.color_palette("Dark2", 4),
        strict=True,
    )
)
#: An ordered variable gets a sequential palette, darkest for its first (strongest) level.
CONFIDENCE_COLORS: dict[str, Color] = dict(
    zip(("high", "medium", "low"), sns.color_palette("Blues_r", 4)[:3], strict=True)
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


def legend_outside(ax: Axes, **kwargs: Any) -> None:
    """The legend to the right of the axes, clear of bars, lines and whiskers."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kwargs)


def figure_legend_outside(fig: Figure, ax: Axes, **kwargs: Any) -> None:
    """One legend for a grid of panels (the handles of ``ax``), right of every panel."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.95), **kwargs)
