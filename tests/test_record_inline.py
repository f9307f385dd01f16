"""Recorder.figure shows figures inline only inside a Jupyter kernel (see test_report for one)."""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from arbwb.report.record import Recorder


def test_outside_a_kernel_the_figure_stays_open(tmp_path: Path) -> None:
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    Recorder.create(tmp_path, "nb").figure(fig, "line")
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == [
        "nb__line.png",
        "nb__line.svg",
    ]
    assert plt.fignum_exists(fig.number)  # the caller still owns it, as before
    plt.close(fig)


def test_ipython_is_not_imported_to_decide(tmp_path: Path) -> None:
    loaded = "IPython" in sys.modules
    fig, _ = plt.subplots()
    Recorder.create(tmp_path, "nb").figure(fig, "empty")
    plt.close(fig)
    assert ("IPython" in sys.modules) == loaded
