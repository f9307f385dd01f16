"""analysis.contextbench.run on the demo release: its parts, records and skips; the source
choice and the optional block level it relies on."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import polars as pl
import pytest

from arbwb.analysis import contextbench as acb
from arbwb.analysis.result import Resampling
from arbwb.contextbench.sources import choose_source
from arbwb.contextbench.symbols import INSTALL_HINT, optional_finder
from arbwb.io.release import load_release

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
FAST = Resampling(n_boot=50, n_perm=50)


def _run(root: Path, **options: object) -> acb.ContextBenchResult:
    opts = acb.ContextBenchOptions(root, resampling=FAST, **options)  # type: ignore[arg-type]
    return acb.run(load_release(root), opts)


def test_run_on_demo_has_every_part_and_the_notebook_records() -> None:
    result = _run(DEMO)
    assert result.skipped is None
    records = result.records()
    assert list(records) == [
        "n_instances",
        "n_excluded",
        "n_spans",
        "languages",
        "benchmarks",
        "quirks",
        "sources",
        "runs",
        "errors",
        "aggregate",
        "scores",
        "ranked",
        "ceilings",
        "auc_line_macro",
        "side_by_side",
    ]
    assert records["sources"] == {
        "repos": False,
        "demo_bytes": True,
        "corpus": True,
        "symbols": False,
    }
    assert [t.name for t in result.tables()] == [
        "composition",
        "spans_per_row",
        "path_forms",
        "aggregate",
        "editloc",
        "errors",
        "scores",
        "significance",
        "ranked_lists",
        "ceilings",
        "file_level",
        "file_level_scores",
        "file_level_significance",
    ]
    assert "files from demo bytes, then corpus file lists" in result.notes
    agents = result.agents
    assert agents is not None and set(agents.macro["aggregation"]) == {"macro"}
    assert set(agents.multi_step["run"]) == {"demo-mini-swe", "demo-precise"}
    assert result.ranked is not None
    curve = result.ranked.curve("file")
    assert curve.columns == ["run", "k", "coverage", "precision"] and curve.height == 4


def test_corpus_dir_alone_gives_file_lists_and_no_span_level(tmp_path: Path) -> None:
    """Demo rows without commits.json: only the corpus; span level needs bytes."""
    data = tmp_path / "data"
    shutil.copytree(DEMO / "contextbench", data / "contextbench")
    (data / "contextbench" / "commits.json").unlink()
    result = _run(data, corpus_dir=str(DEMO))
    sources = result.records()["sources"]
    assert sources == {"repos": False, "demo_bytes": False, "corpus": True, "symbols": False}
    assert result.agents is not None
    assert set(result.agents.aggregate["level"]) == {"file", "line"}
    assert result.side is None  # no ARB runs under data
    assert result.records()["side_by_side"] == {"skipped": acb.SIDE_SKIP}


def test_no_rows_skips_every_contextbench_part(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "eval" / "demo").mkdir(parents=True)
    shutil.copy(DEMO / "eval" / "demo" / "grep_details.jsonl", data / "eval" / "demo")
    result = _run(data)
    assert result.skipped is not None and result.skipped.startswith("no ContextBench rows at")
    assert result.records() == {
        "skipped": result.skipped,
        "side_by_side": {"skipped": acb.SIDE_SKIP},
    }
    assert result.tables() == []


def test_block_level_without_tree_sitter_is_a_skip_not_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "tree_sitter_languages", None)  # import fails
    finder, why = optional_finder(True)
    assert finder is None and why is not None and INSTALL_HINT in why
    assert optional_finder(False) == (None, None)
    result = _run(DEMO, symbols=True)
    assert result.records()["sources"]["symbols"] is False
    assert why in result.notes
    assert result.agents is not None and "symbol" not in set(result.agents.aggregate["level"])


def test_block_level_with_tree_sitter() -> None:
    pytest.importorskip("tree_sitter_languages")
    result = _run(DEMO, symbols=True)
    assert result.records()["sources"]["symbols"] is True
    assert result.agents is not None
    assert "symbol" in result.agents.aggregate.filter(pl.col("run") == "demo-precise")["level"]


def test_choose_source_says_which_it_used(tmp_path: Path) -> None:
    none = choose_source()
    assert none.source is None and "lexically" in none.used
    demo = choose_source(demo_dir=DEMO / "contextbench")
    assert demo.demo_bytes and demo.source is not None and demo.used == "files from demo bytes"
    assert not choose_source(demo_dir=tmp_path).demo_bytes  # no commits.json there
