"""Composition frames: hand-built samples with known counts, language fallback, real manifest."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl
import pytest

from arbwb.analysis import overview as ov
from arbwb.errors import InputError
from arbwb.io.release import load_release
from arbwb.paths import DEMO_DIR
from arbwb.plots.overview import composition_bars


def _samples() -> pl.DataFrame:
    rows = [
        ("s1", "code2test", "a/x", "a/x@1", "positive"),
        ("s2", "code2test", "a/x", "a/x@2", "positive"),
        ("s3", "trace2code", "a/x", "a/x@1", "positive"),
        ("s4", "abstention", "a/x", "a/x@1", "natural"),
        ("s5", "edit2ripple", "b/y", "b/y@1", "positive"),
        ("s6", "abstention", "b/y", "b/y@1", "counterfactual"),
        ("s7", "comment2context", "c/z", "c/z@9", "positive"),
    ]
    return pl.DataFrame(
        rows, schema=["sample_id", "task", "repo", "snapshot_id", "stratum"], orient="row"
    )


def test_repo_table_counts_and_order() -> None:
    languages = pl.DataFrame({"repo": ["a/x", "b/y"], "language": ["Python", "Go"]})
    table = ov.repo_table(_samples(), languages)
    assert table["repo"].to_list() == ["a/x", "b/y", "c/z"]  # total desc, then repo
    first = table.row(0, named=True)
    assert first == {
        "repo": "a/x",
        "language": "Python",
        "snapshots": 2,
        "code2test": 2,
        "comment2context": 0,
        "trace2code": 1,
        "edit2ripple": 0,
        "natural": 1,
        "counterfactual": 0,
        "positives": 3,
        "total": 4,
    }
    assert table.filter(pl.col("repo") == "c/z")["language"].item() == "unknown"
    total = ov.totals_row(table, _samples()).row(-1, named=True)
    assert (total["repo"], total["snapshots"], total["total"], total["positives"]) == (
        "all",
        4,
        7,
        5,
    )
    assert total["language"] == "3 languages"


def test_task_strata_and_languages() -> None:
    strata = ov.task_strata(_samples())
    assert strata.filter(pl.col("task") == "abstention")["n"].to_list() == [1, 1]
    assert strata["n"].sum() == 7
    assert strata.filter(pl.col("task") == "code2test")["share"].item() == pytest.approx(2 / 7)
    langs = ov.language_table(_samples(), pl.DataFrame({"repo": ["a/x"], "language": ["Python"]}))
    assert langs.rows() == [("Python", 1, 4), ("unknown", 2, 3)]


def test_repo_languages_reads_manifest_and_rejects_bad_rows(tmp_path: Path) -> None:
    assert ov.repo_languages(tmp_path).is_empty()
    (tmp_path / "repo_manifest.jsonl").write_text(
        '{"repo": "a/x", "language": "Rust"}\n{"repo": "b/y"}\n', encoding="utf-8"
    )
    assert ov.repo_languages(tmp_path).rows() == [("a/x", "Rust"), ("b/y", "unknown")]
    (tmp_path / "repo_manifest.jsonl").write_text(
        '{"repo": "noslash", "language": "Go"}\n', encoding="utf-8"
    )
    with pytest.raises(InputError, match=r"repo_manifest\.jsonl:1"):
        ov.repo_languages(tmp_path)


def test_real_repo_manifest_languages(shared_dir: Path) -> None:
    languages = ov.repo_languages(shared_dir)
    assert languages.filter(pl.col("repo") == "pytest-dev/pytest")["language"].item() == "Python"
    assert languages.height == len((shared_dir / "repo_manifest.jsonl").read_text().splitlines())


def test_composition_bars_labels_demo() -> None:
    table = ov.repo_table(_samples())
    ax = composition_bars(table, demo=True)
    assert "demo data" in ax.get_title()
    assert len(ax.patches) == 6 * table.height
    widths = {}
    for patch in ax.patches:
        widths[patch.get_y()] = widths.get(patch.get_y(), 0) + patch.get_width()
    assert sorted(widths.values()) == [1, 2, 4]
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="missing columns"):
        composition_bars(table.drop("natural"))


def test_run_on_demo_writes_every_table_and_record() -> None:
    result = ov.run(load_release(DEMO_DIR), ov.OverviewOptions())
    names = [t.name for t in result.tables()]
    assert names == [
        "repositories",
        "task_strata",
        "languages",
        "corpus_snapshots",
        "corpus_scale",
        "corpus_extensions",
    ]
    assert result.repositories["repo"].to_list() == [*result.repos["repo"], "all"]
    records = result.records()
    assert records["n_samples"] == result.samples.height == result.repositories["total"][-1]
    assert set(records["language_source"].values()) == {"repo_manifest"}
    assert records["corpus_scale"] == result.corpus_table.row(0, named=True)
    assert "skipped" not in records and "corpus_skipped" not in records
    assert result.corpus_lines[-1].startswith("duplicated chunk text across snapshots: ")


def test_run_without_corpus_or_samples_says_what_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "benchmark").mkdir()
    result = ov.run(load_release(tmp_path), ov.OverviewOptions())
    assert [t.name for t in result.tables()] == ["repositories", "task_strata", "languages"]
    records = result.records()
    assert records["skipped"] == f"no samples found under {tmp_path}/benchmark or in run details"
    assert records["corpus_scale"] == {} and "corpus_manifest" in records["corpus_skipped"]
    assert result.corpus_lines == [f"corpus scale skipped: {records['corpus_skipped']}"]
