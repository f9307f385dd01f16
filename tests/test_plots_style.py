"""Shared figure style: a run keeps its colour whatever subset or order a panel shows."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # tests draw off-screen; notebooks keep the inline backend

from arbwb.plots.style import (
    KNOWN_METHODS,
    color,
    demo_title,
    method_key,
    new_axes,
    run_colors,
    task_order,
)


def test_run_colors_depend_on_names_not_order() -> None:
    everything = run_colors(["lexical", "bm25", "grep", "repomap"])
    assert run_colors(["repomap", "bm25", "grep", "lexical"]) == everything
    assert len(set(everything.values())) == 4
    assert everything["bm25"] == run_colors(["grep", "bm25", "lexical", "repomap"])["bm25"]


def test_demo_title_and_new_axes() -> None:
    assert demo_title("MRR by task", demo=True) == "MRR by task — demo data"
    assert demo_title("MRR by task", demo=False) == "MRR by task"
    assert demo_title("MRR by task — demo", demo=True) == "MRR by task — demo data"
    ax = new_axes(None, (3.0, 2.0))
    assert new_axes(ax, (9.0, 9.0)) is ax
    assert tuple(ax.figure.get_size_inches()) == (3.0, 2.0)


def test_a_method_has_one_colour_whatever_the_figure_or_spelling() -> None:
    assert color("lexical") == color("v1_1/lexical") == color("demo_all_files_selective_lexical")
    assert color("lexical_all_files") == color("Lexical") == color("lexical")
    assert method_key("demo_all_files_selective_bm25-arb") == "bm25-arb"
    known = {color(name) for name in KNOWN_METHODS}
    assert len(known) == len(KNOWN_METHODS)  # no two known methods share a colour
    assert color("my_new_method") == color("my_new_method")  # unknown: stable, not in order
    assert color("my_new_method") not in known


def test_tasks_in_the_papers_order() -> None:
    tasks = ["edit2ripple", "zeta", "code2test", "overall", "abstention", "trace2code"]
    assert task_order(tasks) == [
        "overall", "code2test", "trace2code", "edit2ripple", "abstention", "zeta"
    ]  # fmt: skip
