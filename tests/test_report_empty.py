"""`arbwb report` that finds nothing fails before any notebook runs; a section whose input kind
is absent shows as skipped, not ok; ``--runs`` keeps the abstention section; files respect the
umask."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest
from test_cli_boundary import arbwb, assert_one_line
from test_report import _notebooks

from arbwb.paths import DEMO_DIR, NOTEBOOKS_DIR
from arbwb.report.build import declared_parameters

RECORD = 'from arbwb.report.record import Recorder\nrec = Recorder.create(out_dir, "{stem}")\n'
ABSTENTION = "04-abstention-calibration.ipynb"


def _report(data: Path, out: Path, *extra: str | Path, umask: int = -1) -> tuple[int, str, str]:
    """``arbwb report`` in a subprocess; returns exit code, stdout and stderr."""
    result = arbwb("report", "--data", data, "--out", out, "--no-progress", *extra, umask=umask)
    return result.returncode, result.stdout, result.stderr


def test_empty_root_fails_before_running_notebooks(tmp_path: Path) -> None:
    (tmp_path / "data" / "benchmark").mkdir(parents=True)
    result = arbwb("report", "--data", tmp_path / "data", "--out", tmp_path / "report")
    line = assert_one_line(result, tmp_path / "data")
    assert "found no samples (benchmark/*/*.jsonl)" in line and "ContextBench rows" in line
    assert not (tmp_path / "report").exists()


def test_runs_glob_matching_nothing_fails_and_keeps_the_old_report(tmp_path: Path) -> None:
    old = tmp_path / "report"
    old.mkdir()
    (old / "manifest.json").write_text("{}")
    (old / "index.html").write_text("old")
    result = arbwb("report", "--data", DEMO_DIR, "--runs", "x/*.jsonl", "--out", old)
    line = assert_one_line(result)
    assert f"--runs 'x/*.jsonl' matched no file under {DEMO_DIR}" in line
    assert (old / "index.html").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # no partial folder


def test_a_skipped_section_is_not_ok(tmp_path: Path) -> None:
    notebooks = _notebooks(
        tmp_path / "nbs", RECORD.format(stem="01-ran") + 'rec.record("n", 1)', name="01-ran"
    )
    skip = RECORD.format(stem="02-skip") + 'rec.record("skipped", "no abstention runs")'
    _notebooks(notebooks, skip, name="02-skip", title="02 · Skip")
    out = tmp_path / "report"
    code, stdout, _ = _report(DEMO_DIR, out, "--notebooks", notebooks)
    assert code == 0
    assert stdout.startswith("1 notebook ran, 1 skipped (02-skip: no abstention runs); report")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["notebooks"] == [
        {"notebook": "01-ran.ipynb", "status": "ok"},
        {"notebook": "02-skip.ipynb", "status": "skipped", "reason": "no abstention runs"},
    ]
    index = (out / "index.html").read_text()
    assert "<span class='skipped'>(skipped)</span>" in index
    assert "<span class='ok'>(ok)</span>" in index
    assert "All 2 notebooks ran" not in index
    assert (
        "<p class='skipped'>1 notebook ran, 1 skipped (02-skip: no abstention runs).</p>" in index
    )


@pytest.mark.parametrize(
    ("umask", "file_mode", "dir_mode"), [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700)]
)
def test_report_files_respect_the_umask(
    umask: int, file_mode: int, dir_mode: int, tmp_path: Path
) -> None:
    cells = RECORD.format(stem="01-tiny") + (
        'import polars as pl\nrec.record("n", 1)\nrec.table(pl.DataFrame({"a": [1]}), "t")'
    )
    out = tmp_path / "report"
    code, _, err = _report(
        DEMO_DIR, out, "--notebooks", _notebooks(tmp_path / "nbs", cells), umask=umask
    )
    assert code == 0, err
    files = {p for p in out.rglob("*") if p.is_file()}
    assert {"index.html", "manifest.json", "01-tiny.json", "01-tiny__t.csv", "01-tiny.html"} <= {
        p.name for p in files
    }
    modes = {str(p.relative_to(out)): stat.S_IMODE(p.stat().st_mode) for p in files}
    assert modes == dict.fromkeys(modes, file_mode)
    folders = [out, *(p for p in out.rglob("*") if p.is_dir())]
    assert {stat.S_IMODE(p.stat().st_mode) for p in folders} == {dir_mode}


def test_abstention_takes_its_own_glob_not_runs_glob() -> None:
    """``arbwb report --runs`` passes ``runs_glob`` only; notebook 04 reads selective runs."""
    declared = declared_parameters(NOTEBOOKS_DIR / ABSTENTION)
    assert "runs_glob" not in declared and "selective_glob" in declared


@pytest.mark.slow
def test_runs_glob_keeps_the_abstention_section(tmp_path: Path) -> None:
    notebooks = tmp_path / "nbs"
    notebooks.mkdir()
    shutil.copy(NOTEBOOKS_DIR / ABSTENTION, notebooks / ABSTENTION)
    out = tmp_path / "report"
    runs = "eval/demo/lexical_details.jsonl"
    code, stdout, err = _report(DEMO_DIR, out, "--runs", runs, "--notebooks", notebooks)
    assert code == 0, err
    assert stdout.startswith("All 1 notebook ran")
    record = json.loads((out / "records" / "04-abstention-calibration.json").read_text())
    assert "skipped" not in record and record["runs"]
