"""The budget-curve plot draws what the curves frame says (values, hollow lower bounds)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest

from arbwb.plots.budget import budget_label, plot_bcy_curves


def curves() -> pl.DataFrame:
    rows = []
    for run, base in (("a", 0.2), ("b", 0.4)):
        for i, budget in enumerate((4000, 8000, 16000)):
            value = base + 0.1 * i
            rows.append(
                {
                    "run": run,
                    "task": "overall",
                    "budget": budget,
                    "tau": 1,
                    "n": 10,
                    "bcy": value,
                    "ci_low": value - 0.05,
                    "ci_high": value + 0.05,
                    "lower_bound_share": 1.0 if budget == 16000 else 0.0,
                    "missing_snapshots": 0,
                    "used_tokens": 1.0,
                }
            )
    return pl.DataFrame(rows)


def test_budget_label() -> None:
    assert [budget_label(b) for b in (4000, 32000, 1500)] == ["4k", "32k", "1500"]


def test_plot_values_and_hollow_markers() -> None:
    ax = plot_bcy_curves(curves(), demo=True)
    assert ax.get_title() == "overall (n=10) — demo data"
    lines = ax.get_lines()  # per run: data line, then its two cap lines
    np.testing.assert_allclose(np.asarray(lines[0].get_ydata(), dtype=float), [0.2, 0.3, 0.4])
    np.testing.assert_allclose(np.asarray(lines[3].get_ydata(), dtype=float), [0.4, 0.5, 0.6])
    filled, hollow = ax.collections[-2], ax.collections[-1]  # run b: solid points, hollow points
    assert filled.get_offsets().shape[0] == 2 and hollow.get_offsets().shape[0] == 1
    np.testing.assert_allclose(np.asarray(hollow.get_offsets()[0], dtype=float), [16000, 0.6])
    np.testing.assert_allclose(hollow.get_facecolor()[0], [1, 1, 1, 1])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4k", "8k", "16k"]
    plt.close("all")


def test_unknown_task_names_the_fix() -> None:
    with pytest.raises(ValueError, match="tasks present: \\['overall'\\]"):
        plot_bcy_curves(curves(), task="code2test")
