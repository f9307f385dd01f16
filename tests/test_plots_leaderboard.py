"""Leaderboard figures draw what the frames say (bars, heatmap cells, significance stars)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl
import pytest

from arbwb.analysis import board as boards
from arbwb.plots.leaderboard import run_task_heatmap, significance_matrix, task_bars


@pytest.fixture
def frames() -> tuple[pl.DataFrame, pl.DataFrame]:
    values = {"A": [1.0, 0.5, 0.0, 0.5, 1.0, 0.5], "B": [0.0, 0.0, 0.0, 0.5, 0.0, 0.0]}
    metrics = pl.DataFrame(
        [
            {"run": run, "sample_id": f"s{i}", "metric": "mrr", "value": v}
            for run, vs in values.items()
            for i, v in enumerate(vs)
        ]
    )
    samples = pl.DataFrame(
        {
            "sample_id": [f"s{i}" for i in range(6)],
            "task": ["code2test", "trace2code"] * 3,
            "repo": ["r1", "r1", "r2", "r2", "r3", "r3"],
            "split": ["dev", "heldout"] * 3,
        }
    )
    board = boards.scores(metrics, samples, n_boot=100)
    tests = boards.pairwise_tests(metrics, samples, n_perm=500)
    return board, tests


def test_task_bars_one_bar_per_run_and_task(frames: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    board, _ = frames
    ax = task_bars(board, group="all", demo=True)
    heights = sorted(round(p.get_height(), 6) for p in ax.patches)
    # A: overall 7/12, code2test 2/3, trace2code 1/2; B: overall 1/12, code2test 0, trace2code 1/6
    assert heights == sorted(round(v, 6) for v in [7 / 12, 2 / 3, 0.5, 1 / 12, 0.0, 1 / 6])
    assert "demo data" in ax.get_title()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["overall", "code2test", "trace2code"]
    plt.close(ax.figure)


def test_heatmap_cells_hold_values(frames: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    board, _ = frames
    ax = run_task_heatmap(board, group="all")
    assert [t.get_text() for t in ax.texts] == [
        "0.583",
        "0.667",
        "0.500",
        "0.083",
        "0.000",
        "0.167",
    ]
    assert "demo data" not in ax.get_title()
    plt.close(ax.figure)


def test_significance_matrix_annotations(frames: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    board, tests = frames
    p, diff = tests["p_holm"][0], tests["diff"][0]
    assert tests["run_a"][0] == "A"
    ax = significance_matrix(tests, group="all", order=["A", "B"])
    star = "*" if p < 0.05 else ""
    assert sorted(t.get_text() for t in ax.texts) == sorted(
        [f"{diff:+.3f}\np={p:.3f}{star}", f"{-diff:+.3f}\np={p:.3f}{star}"]
    )
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="no pairwise tests"):
        significance_matrix(tests, group="missing")
    with pytest.raises(ValueError, match="no weighted"):
        task_bars(board, group="all", metric="recall@5")
