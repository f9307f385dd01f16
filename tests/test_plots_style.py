"""Shared figure style: a run keeps its colour whatever subset or order a panel shows."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # tests draw off-screen; notebooks keep the inline backend

from arbwb.plots.style import demo_title, new_axes, run_colors


def test_run_colors_depend_on_names_not_order() -> None:
    everything = run_colors(["lexical", "bm25", "grep", "repomap"])
    assert run_colors(["repomap", "bm25", "grep", "lexical"]) == everything
    assert len(set(everything.values())) == 4
    assert everything["bm25"] == run_colors(["grep", "bm25", "lexical", "repomap"])["bm25"]


def test_demo_title_and_new_axes() -> None:
    assert demo_title("MRR by task", demo=True) == "MRR by task — demo data"
    assert demo_title("MRR by task", demo=False) == "MRR by task"
    ax = new_axes(None, (3.0, 2.0))
    assert new_axes(ax, (9.0, 9.0)) is ax
    assert tuple(ax.figure.get_size_inches()) == (3.0, 2.0)
