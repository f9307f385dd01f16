"""Papermill run of notebooks/04-abstention-calibration.ipynb: recorded numbers vs a literal
recomputation from the demo details files, the fold fallback, and the skip path."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import selective_reference as ref

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
NOTEBOOK = ROOT / "notebooks" / "04-abstention-calibration.ipynb"
STEM = "04-abstention-calibration"
FOLDS = 5
METRICS = (
    "positive_pass_rate",
    "no_gold_abstain_rate",
    "balanced_accuracy",
    "selective_accuracy",
    "selective_success@20",
    "coverage",
)


def run_notebook(tmp_path: Path, data_dir: Path) -> dict[str, Any]:
    import papermill

    out = tmp_path / "out"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(tmp_path / "executed.ipynb"),
        parameters={"data_dir": str(data_dir), "out_dir": str(out), "n_boot": 200},
        cwd=str(NOTEBOOK.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    record: dict[str, Any] = json.loads((out / "records" / f"{STEM}.json").read_text())
    return record


def literal_rows(details: Path) -> list[dict[str, Any]]:
    rows = []
    for line in details.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        recall = r["metrics"]["Recall@20"] if r["label"] == "positive" else 0.0
        rows.append(
            {
                "sample_id": r["sample_id"],
                "repo": r["repo"],
                "label": r["label"],
                "reason": r["no_gold_reason"],
                "conf": r["confidence"],
                "recall": recall,
            }
        )
    return rows


@pytest.mark.slow
def test_abstention_notebook_on_demo(tmp_path: Path) -> None:
    runs = sorted((DEMO / "eval").glob("*/*_selective_*_details.jsonl"))
    if not runs:
        pytest.skip("data/demo has no selective runs")
    record = run_notebook(tmp_path, DEMO)
    assert "skipped" not in record
    # the demo's 5 repositories each hold every stratum: upstream's 5 folds, no fallback
    assert record["folds_requested"] == 5 and record["folds_used"] == FOLDS
    assert "folds_fallback" not in record
    names = [d.name.removesuffix("_details.jsonl") for d in runs]
    assert sorted(record["runs"]) == names
    reference = literal_rows(runs[names.index(record["runs"][0])])
    strata = {"positive": 0, "natural": 0, "counterfactual": 0}
    for r in reference:
        key = (
            "positive"
            if r["label"] == "positive"
            else "counterfactual"
            if r["reason"] == "counterfactual_wrong_repo"
            else "natural"
        )
        strata[key] += 1
    assert record["strata"] == strata
    for protocol in ("mixed", "natural"):
        subset = reference if protocol == "mixed" else ref.natural(reference)
        folds = ref.folds(subset, FOLDS)
        assert record[f"repo_folds/{protocol}"] == folds
        for details, name in zip(runs, names, strict=True):
            rows = literal_rows(details)
            rows = rows if protocol == "mixed" else ref.natural(rows)
            expected = ref.out_of_fold(rows, FOLDS)
            key = f"{protocol}/{name}"
            for metric in METRICS:
                got = record[f"{key}/out_of_fold/{metric}"]
                assert got == pytest.approx(expected["out_of_fold"][metric], abs=1e-12), (
                    key,
                    metric,
                )
            no_abstain = expected["no_abstain"]["selective_success@20"]
            assert record[f"{key}/no_abstain/selective_success@20"] == pytest.approx(
                no_abstain, abs=1e-12
            )
            thresholds = [None if t == -math.inf else t for t in expected["thresholds"]]
            assert record[f"{key}/thresholds"] == thresholds
    for details, name in zip(runs, names, strict=True):
        rows = literal_rows(details)
        pos = [r["conf"] for r in rows if r["label"] == "positive"]
        nat = [
            r["conf"]
            for r in rows
            if r["label"] == "no_gold" and r["reason"] != "counterfactual_wrong_repo"
        ]
        pairs = [1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in nat]
        assert record[f"auroc/{name}/natural"] == pytest.approx(sum(pairs) / len(pairs), abs=1e-12)
    for figure in (
        "confidence_by_stratum",
        "risk_coverage",
        "fold_thresholds",
        "protocol_contrast",
        "auroc_by_stratum",
    ):
        assert (tmp_path / "out" / "figures" / f"{STEM}__{figure}.png").stat().st_size > 1000
    assert (tmp_path / "out" / "tables" / f"{STEM}__selective_table.csv").is_file()


def test_fold_fallback_on_demo_names_the_missing_repositories() -> None:
    """More folds than repositories: the largest feasible count, with the reason (arbwb-defined)."""
    from arbwb.analysis import selective_folds as sfolds
    from arbwb.analysis import selective_rows as srows
    from arbwb.io.release import load_release

    release = load_release(DEMO, "eval/*/*_selective_*_details.jsonl")
    run = next(iter(release.runs.values()))
    reference = srows.selective_rows(run, release.samples, release.labels)
    details = sorted(DEMO.glob("eval/*/*_selective_*_details.jsonl"))[0]
    repos = len({r["repo"] for r in literal_rows(details)})
    used, reasons = sfolds.feasible_folds(reference, repos + 1)
    assert used == repos
    assert f"need at least {repos + 1} repositories, got {repos}" in reasons[0]


@pytest.mark.slow
def test_abstention_notebook_without_selective_runs_records_skip(tmp_path: Path) -> None:
    data = tmp_path / "positives_only"
    shutil.copytree(DEMO / "benchmark", data / "benchmark")
    shutil.copytree(DEMO / "eval" / "demo", data / "eval" / "demo")
    record = run_notebook(tmp_path, data)
    glob = "eval/*/*_selective_*_details.jsonl"
    reason = "no selective runs (ranking positives and no-gold samples)"
    assert record == {"skipped": f"{reason} under {data} matching {glob}"}
