"""`arbwb report` on a release-shaped root (two subsets from data/demo), with and without
benchmark/: every notebook runs; the joined method, BCY, corpus scale and languages show."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from release_shaped import SUBSETS, build, lexical_reference

from arbwb.paths import NOTEBOOKS_DIR
from arbwb.report.build import ReportConfig, declared_parameters, run_report

NAMES = sorted(p.name for p in NOTEBOOKS_DIR.glob("[0-9][0-9]-*.ipynb"))


def _report(root: Path, out: Path) -> Path:
    config = ReportConfig(data_dir=root, out_dir=out, progress=False, methods=root / "methods.csv")
    result = run_report(config)
    assert not result.failed, [s.describe() for s in result.failed]
    return out


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """Both reports: with benchmark/ and without (stored runs only)."""
    base = tmp_path_factory.mktemp("release")
    out = {}
    for name, benchmark in (("with", True), ("without", False)):
        root = build(base / name / "data", benchmark=benchmark)
        out[name] = (root, _report(root, base / name / "report"))
    return out


def _record(report: Path, notebook: str) -> dict[str, Any]:
    return json.loads((report / "records" / f"{notebook}.json").read_text(encoding="utf-8"))


def test_notebook_01_declares_the_method_parameters() -> None:
    declared = declared_parameters(NOTEBOOKS_DIR / "01-leaderboard.ipynb")
    assert {"methods_path", "missing"} <= declared


@pytest.mark.slow
@pytest.mark.parametrize("which", ["with", "without"])
def test_every_notebook_succeeds(reports: dict[str, tuple[Path, Path]], which: str) -> None:
    root, report = reports[which]
    manifest = json.loads((report / "manifest.json").read_text())
    # without benchmark/: no queries to label, no strata to find no-gold samples by
    skipped = set() if which == "with" else {NAMES[2], NAMES[4]}
    statuses = [(s["notebook"], s["status"]) for s in manifest["notebooks"]]
    assert statuses == [(n, "skipped" if n in skipped else "ok") for n in NAMES]
    assert manifest["parameters"]["methods_path"] == str((root / "methods.csv").resolve())
    assert (which == "with") == any("/benchmark/" in e["path"] for e in manifest["inputs"])


@pytest.mark.slow
@pytest.mark.parametrize("which", ["with", "without"])
def test_joined_method_row_equals_hand_computation(
    reports: dict[str, tuple[Path, Path]], which: str
) -> None:
    root, report = reports[which]
    record = _record(report, "01-leaderboard")
    assert record["bcy"] is True and record["missing_rule"] == "zero"
    methods = record["methods"]
    assert methods["lexical"] == {"method": "Lexical", "family": "lexical", "group": "A"}
    assert methods["lexical_all_files"] == {"method": "Lexical", "family": "lexical", "group": "B"}
    for subset in SUBSETS:  # same stem in both folders: runs named <folder>/<stem>
        assert methods[f"{subset}/dense_hash"]["method"] == "Hash embedding"
        assert methods[f"{subset}/dense_hash"]["family"] == "embedding"
    reference = lexical_reference(root)
    n = len(reference)
    assert record["method_counts"]["A+B/Lexical"] == {"n": n, "n_evaluated": n - 1, "n_missing": 1}
    for metric in ("recall@5", "recall@10", "recall@20", "mrr"):
        expected = sum(v[metric] for v in reference.values()) / n  # zero rule: missing = 0
        got = record["method_overall"][f"A+B/Lexical/weighted/{metric}"]
        assert got == pytest.approx(expected, abs=1e-12), metric
    for budget in (4000, 8000, 16000, 32000):  # BCY in the leaderboard, every budget
        assert 0.0 <= record["method_overall"][f"A+B/Lexical/weighted/bcy@{budget}"] <= 1.0
    with (report / "tables" / "01-leaderboard__v2__A+B.csv").open(encoding="utf-8") as handle:
        v2 = {row["Model"]: row for row in csv.DictReader(handle)}
    assert v2["Lexical"]["Family"] == "lexical" and v2["Hash embedding"]["Family"] == "embedding"
    assert {"BCY@8k", "Macro BCY@8k", "n_missing"} <= set(v2["Lexical"])
    layered = (report / "tables" / "01-leaderboard__layered_bcy__A+B.md").read_text()
    assert "| Rank | Method | Type |" in layered and "BCY@32k" in layered
    for kind in ("methods_mrr", "methods_bcy"):
        assert (report / "figures" / f"01-leaderboard__{kind}__A+B.png").stat().st_size > 1000


@pytest.mark.slow
def test_budget_curves_and_overview_see_every_subset(
    reports: dict[str, tuple[Path, Path]],
) -> None:
    root, report = reports["with"]
    curves = _record(report, "05-budget-curves")
    assert "skipped" not in curves
    for run in ("lexical", "lexical_all_files", "A/dense_hash", "B/dense_hash"):
        assert f"bcy_tau1@8000/{run}" in curves
    board = _record(report, "01-leaderboard")
    for run, method in board["methods"].items():  # each run over its own subset, not diluted
        expected = board["overall"][f"{method['group']}/{run}/weighted/bcy@8000"]
        assert curves[f"bcy_tau1@8000/{run}"] == pytest.approx(expected, abs=1e-12), run
    overview = _record(report, "00-overview")
    manifests = [
        json.loads(line)
        for subset in SUBSETS
        for line in (root / "corpus" / subset / "corpus_manifest.jsonl").open(encoding="utf-8")
    ]
    scale = overview["corpus_scale"]
    assert scale["snapshots_ok"] == len(manifests) and scale["snapshots_missing"] == 0
    assert scale["chunks"] == sum(m["chunk_count"] for m in manifests)
    assert scale["symbol_chunks"] == sum(m["symbol_count"] for m in manifests)
    assert set(overview["language_source"].values()) == {"inferred"}  # no repo_manifest.jsonl
    assert all(lang.endswith("(inferred)") for lang in overview["by_language"])
