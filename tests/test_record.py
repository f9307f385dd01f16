"""Recorder writes stable names, merged records and exact tables."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl
import pytest

from arbwb.report.record import Recorder
from arbwb.tables import latex_escape, render, to_csv, to_latex, to_markdown


def test_figure_table_and_record_names(tmp_path: Path) -> None:
    rec = Recorder.create(tmp_path, "05-budget-curves")
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    assert rec.figure(fig, "bcy_by_task") is None  # a cell ending in it shows no paths
    plt.close(fig)
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == [
        "05-budget-curves__bcy_by_task.png",
        "05-budget-curves__bcy_by_task.svg",
    ]
    assert (tmp_path / "figures" / "05-budget-curves__bcy_by_task.png").read_bytes()[:4] == (
        b"\x89PNG"
    )
    frame = pl.DataFrame({"run": ["bm25"], "mrr": [0.123456]})
    assert rec.table(frame, "lb", latex=True) is None
    tables = sorted((tmp_path / "tables").iterdir())
    assert [p.name for p in tables] == ["05-budget-curves__lb.csv", "05-budget-curves__lb.md",
                                        "05-budget-curves__lb.tex"]  # fmt: skip
    assert tables[0].read_text() == "run,mrr\nbm25,0.123456\n"
    rec.record("n", 3)
    rec.record("mrr", 0.5)
    assert json.loads(rec.record_path.read_text()) == {"mrr": 0.5, "n": 3}


def test_svg_is_deterministic(tmp_path: Path) -> None:
    outputs = []
    for sub in ("a", "b"):
        fig, ax = plt.subplots()
        ax.bar(["x", "y"], [1, 2])
        Recorder.create(tmp_path / sub, "nb").figure(fig, "f")
        outputs.append((tmp_path / sub / "figures" / "nb__f.svg").read_bytes())
        plt.close(fig)
    assert outputs[0] == outputs[1]


def test_markdown_and_latex_formatting() -> None:
    frame = pl.DataFrame(
        {"model": ["a_b"], "R@20": [0.5], "n": [3], "x": [None]}, schema_overrides={"x": pl.Float64}
    )
    assert (
        to_markdown(frame)
        == "| model | R@20 | n | x |\n|---|---:|---:|---:|\n| a_b | 0.5000 | 3 | n/a |\n"
    )
    tex = to_latex(frame, decimals=2)
    assert r"a\_b & 0.50 & 3 & n/a \\" in tex
    assert tex.startswith(r"\begin{tabular}{lrrr}")


def test_every_latex_special_character_is_escaped() -> None:
    assert latex_escape(r"a&b%c$d#e_f{g}h~i^j\k") == (
        r"a\&b\%c\$d\#e\_f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k"
    )


def test_markdown_escapes_pipes_and_csv_keeps_precision() -> None:
    frame = pl.DataFrame({"run": ["a|b"], "value": [1 / 3], "ks": [[1, 2]]})
    assert "| a\\|b | 0.3333 |" in to_markdown(frame.drop("ks"))
    assert to_csv(frame) == 'run,value,ks\na|b,0.3333333333333333,"[1, 2]"\n'
    assert render(frame.drop("ks"), "csv") == to_csv(frame.drop("ks"))
    with pytest.raises(ValueError, match="unknown table format"):
        render(frame, "html")
