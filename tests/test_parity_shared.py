"""`arbwb score` reproduces upstream's stored summaries on the real runs in ../shared (1e-9)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb import cli
from arbwb.io.rankings import load_rankings
from arbwb.metrics import evaluate

pytestmark = pytest.mark.shared
TOL = 1e-9
UPSTREAM_KEYS = {
    "Recall@5": "recall@5",
    "Recall@10": "recall@10",
    "Recall@20": "recall@20",
    "MRR": "mrr",
}
ABLATION = ["lexical_code_only", "lexical_tests_only", "repomap_code_only", "repomap_tests_only"]


def _score(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert cli.main(["score", *argv, "--format", "json"]) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def _assert_matches_summary(run: dict[str, Any], summary_path: Path) -> None:
    upstream = json.loads(summary_path.read_text(encoding="utf-8"))["metrics"]
    groups = {"overall": {"n": run["n"], **run["overall"]}, **run["by_task"]}
    assert set(groups) == set(upstream)
    for group, values in upstream.items():
        assert groups[group]["n"] == values["samples"], group
        for key, name in UPSTREAM_KEYS.items():
            assert groups[group][name] == pytest.approx(values[key], abs=TOL), (group, key)
    assert (run["n_missing"], run["n_error"]) == (0, 0)


def test_ablation_runs_match_summaries(
    shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = shared_dir / "eval" / "v1_1_candidate_filter_ablation"
    document = _score([str(folder / f"{stem}_details.jsonl") for stem in ABLATION], capsys)
    assert [run["run"] for run in document["runs"]] == ABLATION
    for run in document["runs"]:
        _assert_matches_summary(run, folder / f"{run['run']}_summary.json")


def test_v0_1_matches_with_and_without_samples(
    shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    details = shared_dir / "eval" / "v0_1" / "lexical_details.jsonl"
    summary = shared_dir / "eval" / "v0_1" / "lexical_summary.json"
    embedded = _score([str(details)], capsys)["runs"][0]
    _assert_matches_summary(embedded, summary)
    samples = shared_dir / "benchmark" / "v0_1" / "samples.jsonl"
    with_samples = _score([str(details), "--samples", str(samples)], capsys)["runs"][0]
    _assert_matches_summary(with_samples, summary)
    assert with_samples["overall"] == embedded["overall"]


def test_v0_1_uses_stored_mrr_for_gold_past_top20(shared_dir: Path) -> None:
    run = load_rankings(shared_dir / "eval" / "v0_1" / "lexical_details.jsonl")
    assert run.labels is not None and run.stored is not None
    plain = evaluate(run.rankings, run.labels, metrics=["mrr"])
    with_stored = evaluate(run.rankings, run.labels, metrics=["mrr"], stored=run.stored)
    changed = plain.join(with_stored, on=["run", "sample_id", "metric"]).filter(
        pl.col("value") != pl.col("value_right")
    )
    assert changed.height == 9
    assert with_stored["value"].mean() == pytest.approx(0.5546076899362868, abs=TOL)


def test_tv19_mrr_needs_full_ranking(shared_dir: Path) -> None:
    folder = shared_dir / "eval" / "v1_1_candidate_filter_ablation"
    expected = {
        "lexical_code_only": (0.16200440756071394, 0.15427858623064192),
        "lexical_tests_only": (0.15624054279517255, 0.1538751753473008),
        "repomap_code_only": (0.2282538668781462, 0.22298586342083757),
    }
    for stem, (full, top20) in expected.items():
        run = load_rankings(folder / f"{stem}_details.jsonl")
        assert run.labels is not None
        mrr = float(evaluate(run.rankings, run.labels, metrics=["mrr"])["value"].mean())  # type: ignore[arg-type]
        prefix = run.rankings.filter(pl.col("rank") <= 20)
        truncated = float(evaluate(prefix, run.labels, metrics=["mrr"])["value"].mean())  # type: ignore[arg-type]
        assert mrr == pytest.approx(full, abs=1e-12)
        assert truncated == pytest.approx(top20, abs=1e-12)
        assert abs(mrr - truncated) > 1e-3


def test_console_script_subprocess(shared_dir: Path) -> None:
    details = (
        shared_dir / "eval" / "v1_1_candidate_filter_ablation" / "repomap_tests_only_details.jsonl"
    )
    script = Path(sys.executable).with_name("arbwb")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "arbwb.cli"]
    result = subprocess.run(
        [*command, "score", str(details), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)["runs"][0]
    _assert_matches_summary(run, details.with_name("repomap_tests_only_summary.json"))
