"""`arbwb report`: end to end on a release laid out from ../shared, failure atomicity, index."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from test_leaderboard import V1_1, shared_layout

from arbwb.cli import main
from arbwb.jsonio import sha256_file
from arbwb.report import render_index

ROOT = Path(__file__).resolve().parents[1]


def _notebooks(folder: Path, *cells: str) -> Path:
    folder.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# 01 · Tiny\n\nDoes the report runner work?"),
        nbformat.v4.new_code_cell(
            'data_dir: str = "../data/demo"  # release\nout_dir: str = "."  # output',
            metadata={"tags": ["parameters"]},
        ),
        *[nbformat.v4.new_code_cell(c) for c in cells],
    ]
    nbformat.write(nb, folder / "01-tiny.ipynb")
    return folder


@pytest.mark.slow
def test_report_on_shared_layout_without_corpus(
    tmp_path: Path, shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = shared_layout(tmp_path / "release", shared_dir)
    out = tmp_path / "report"
    notebooks = tmp_path / "nbs"
    notebooks.mkdir()
    (notebooks / "01-leaderboard.ipynb").symlink_to(ROOT / "notebooks" / "01-leaderboard.ipynb")
    code = main(
        ["report", "--data", str(data), "--out", str(out), "--notebooks", str(notebooks),
         "--no-progress"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    record = json.loads((out / "records" / "01-leaderboard.json").read_text())
    assert record["bcy"] is False
    assert any("no corpus" in note and "BCY" in note for note in record["notes"])
    for run in ("lexical_code_only", "repomap_tests_only"):
        summary = json.loads((shared_dir / "eval" / V1_1 / f"{run}_summary.json").read_text())
        got = record["overall"][f"{V1_1}/{run}/weighted/mrr"]
        assert got == pytest.approx(summary["metrics"]["overall"]["MRR"], abs=1e-9)
    index = (out / "index.html").read_text()
    assert "no corpus/&lt;release&gt;/ found: budget (BCY) metrics and curves skipped" in index
    assert "Traceback" not in index
    pngs = sorted((out / "figures").glob("*.png"))
    assert [p.name for p in pngs] == [
        f"01-leaderboard__{kind}__{V1_1}.png" for kind in ("heatmap", "significance", "task_bars")
    ]
    assert all(p.stat().st_size > 5000 and p.with_suffix(".svg").is_file() for p in pngs)
    for png in pngs:
        assert f"figures/{png.name}" in index
    manifest = json.loads((out / "manifest.json").read_text())
    details = data / "eval" / V1_1 / "lexical_code_only_details.jsonl"
    assert {"path": str(details), "sha256": sha256_file(details)} in manifest["inputs"]
    assert manifest["parameters"]["seed"] == 0 and manifest["packages"]["polars"]
    assert (out / "notebooks" / "01-leaderboard.ipynb").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nbs", "release", "report"]


@pytest.mark.slow
def test_failed_notebook_leaves_no_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notebooks = _notebooks(tmp_path / "nbs", "x = 1", 'raise ValueError("boom in cell")')
    data = tmp_path / "data"
    data.mkdir()
    out = tmp_path / "report"
    code = main(
        ["report", "--data", str(data), "--out", str(out), "--notebooks", str(notebooks),
         "--no-progress"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert "01-tiny.ipynb failed in cell" in err and "ValueError: boom in cell" in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "nbs"]


def test_refuses_to_replace_a_folder_that_is_not_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("keep me")
    code = main(["report", "--data", str(tmp_path), "--out", str(out), "--no-progress"])
    assert code == 2
    assert "not an arbwb report" in capsys.readouterr().err
    assert (out / "thesis.tex").read_text() == "keep me"


def test_index_shows_question_skips_records_figures_and_tables(tmp_path: Path) -> None:
    notebooks = _notebooks(tmp_path / "nbs", "x = 1")
    report = tmp_path / "report"
    (report / "records").mkdir(parents=True)
    (report / "figures").mkdir()
    (report / "tables").mkdir()
    (report / "records" / "01-tiny.json").write_text(
        json.dumps({"skipped": "no corpus <here>", "mrr": 0.25})
    )
    (report / "figures" / "01-tiny__curve.png").write_bytes(b"png")
    (report / "figures" / "01-tiny__curve.svg").write_text("<svg/>")
    (report / "tables" / "01-tiny__board.csv").write_text("run,mrr\nA,0.25\n")
    (report / "tables" / "01-tiny__board.md").write_text("| run | mrr |\n")
    page = render_index(report, [notebooks / "01-tiny.ipynb"])
    assert "Does the report runner work?" in page
    assert "Skipped: no corpus &lt;here&gt;" in page
    assert "<th>mrr</th><td><code>0.25</code></td>" in page
    assert "<a href='figures/01-tiny__curve.svg'><img src='figures/01-tiny__curve.png'" in page
    assert "<td>A</td><td>0.25</td>" in page
    assert "href='tables/01-tiny__board.md'" in page
    assert "href='notebooks/01-tiny.ipynb'" in page
