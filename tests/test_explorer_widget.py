"""Drive the JupyterLab sample explorer from Python: filters, picker, budget, rendered HTML."""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Iterator
from typing import Any

import ipywidgets as widgets
import polars as pl
import pytest

from arbwb.analysis import explorer, explorer_widget
from arbwb.io.release import Release, load_release
from arbwb.paths import DEMO_DIR


@pytest.fixture(scope="module")
def release() -> Release:
    return load_release(DEMO_DIR)


def _walk(widget: Any) -> Iterator[Any]:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def _controls(box: widgets.VBox) -> tuple[dict[str, Any], widgets.HTML]:
    """The dropdowns by description and the HTML view of an explorer widget."""
    found = list(_walk(box))
    dropdowns = {w.description: w for w in found if isinstance(w, widgets.Dropdown)}
    (view,) = [w for w in found if isinstance(w, widgets.HTML)]
    return dropdowns, view


def test_filter_pick_and_budget_drive_the_view(release: Release) -> None:
    box = explorer_widget.explorer(release, depth=5, budget=300)
    controls, view = _controls(box)
    assert set(controls) == {"task", "repo", "stratum", "sample", "budget"}
    controls["task"].value = "trace2code"
    wanted = release.samples.filter(pl.col("task") == "trace2code")["sample_id"].to_list()
    assert list(controls["sample"].options) == wanted
    assert controls["sample"].value == wanted[0]  # the first match, as notebook 06 picks
    picked = wanted[1]
    controls["sample"].value = picked
    card = explorer.sample_card(release.samples, release.labels, picked)
    shown = view.value
    assert picked in shown and "trace2code" in shown
    assert html.escape(explorer.query_lines(card["query"])[0]) in shown
    gold_style = f'style="{explorer_widget.GOLD_STYLE}"'
    for path in card["gold"]:
        assert f"<span {gold_style}>{html.escape(path)}</span>" in shown
    lists = explorer.ranked_lists(release.rankings, release.labels, picked, depth=5)
    for run, path, gold in lists.filter(pl.col("rank") == 1).select("run", "path", "gold").rows():
        assert f"<th>{html.escape(run)}</th>" in shown
        assert html.escape(path) in shown
        if gold:
            assert f"<td {gold_style}>{html.escape(path)}" in shown
    assert "at budget 300 tokens" in shown
    small = shown.count("[packed]") + shown.count("[partial]")
    controls["budget"].value = 32000
    assert "at budget 32000 tokens" in view.value
    assert view.value.count("[packed]") > small
    assert "[partial]" not in view.value


def test_small_budget_packs_one_partial_file_per_run(release: Release) -> None:
    sample_id = release.samples["sample_id"][0]
    packed = explorer_widget.packed_files(release, sample_id, budget=300)
    assert packed is not None and packed.height
    assert packed.group_by("run").agg(pl.col("partial").sum())["partial"].max() == 1


def test_abstention_sample_says_abstain(release: Release) -> None:
    box = explorer_widget.explorer(release)
    controls, view = _controls(box)
    controls["task"].value = "abstention"
    assert explorer_widget.ABSTAIN in view.value
    assert "<b>gold</b>: []" not in view.value


def test_no_match_says_so(release: Release) -> None:
    controls, view = _controls(explorer_widget.explorer(release))
    controls["task"].value = "abstention"
    controls["stratum"].value = "positive"  # demo abstention samples are natural/counterfactual
    assert not controls["sample"].options
    assert view.value == explorer_widget.NO_MATCH


def test_without_corpus_no_packing_and_budget_disabled(release: Release) -> None:
    bare = dataclasses.replace(release, corpus=None)
    controls, view = _controls(explorer_widget.explorer(bare))
    assert controls["budget"].disabled
    assert "packing not shown" in view.value and "[packed]" not in view.value
