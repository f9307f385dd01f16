"""``arbwb contextbench score`` end to end on the demo rows and predictions."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from arbwb import cli

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo" / "contextbench"


def _norm(raw: str) -> str:
    """Gold path normalisation of contextbench-spec §2.1, written out again for the test."""
    if raw.startswith("/workspace/"):
        rest = raw[len("/workspace/") :]
        return rest.split("/", 1)[1] if "/" in rest else rest
    return raw.lstrip("./")


def _gold_files() -> dict[str, set[str]]:
    rows = pl.read_parquet(DEMO / "rows.parquet")
    return {
        r["instance_id"]: {_norm(s["file"]) for s in json.loads(r["gold_context"])}
        for r in rows.iter_rows(named=True)
    }


def test_score_json_and_per_instance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    per = tmp_path / "per.jsonl"
    code = cli.main(
        [
            "contextbench",
            "score",
            str(DEMO / "predictions" / "demo-broad.json"),
            str(DEMO / "predictions" / "demo-mini-swe"),
            "--rows",
            str(DEMO / "rows.parquet"),
            "--corpus",
            str(DEMO.parent / "corpus" / "demo"),
            "--per-instance",
            str(per),
        ]
    )
    assert code == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    runs = {r["run"]: r for r in doc["runs"]}
    assert runs["demo-mini-swe"]["errors"] == {"missing_gold": 1, "no_context_extracted": 1}
    assert (
        runs["demo-broad"]["n_valid"] == 6 and runs["demo-broad"]["path_resolution"] == "checkout"
    )
    assert "no_context_extracted" in out.err
    # micro file level of demo-broad, recomputed from the files alone
    gold = _gold_files()
    preds = json.loads((DEMO / "predictions" / "demo-broad.json").read_text())
    inter = sum(len(gold[p["instance_id"]] & set(p["traj_data"]["pred_files"])) for p in preds)
    n_gold = sum(len(gold[p["instance_id"]]) for p in preds)
    n_pred = sum(len(set(p["traj_data"]["pred_files"])) for p in preds)
    micro = runs["demo-broad"]["levels"]["file"]["micro"]
    assert micro["coverage"] == pytest.approx(inter / n_gold, abs=1e-12)
    assert micro["precision"] == pytest.approx(inter / n_pred, abs=1e-12)
    records = [json.loads(line) for line in per.read_text().splitlines()]
    assert len(records) == 6 + 7
    assert {r["run"] for r in records} == {"demo-broad", "demo-mini-swe"}
    assert all(
        set(r) >= {"instance_id", "final", "trajectory", "num_steps"}
        for r in records
        if "error" not in r
    )


def test_score_markdown_without_a_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        [
            "contextbench",
            "score",
            str(DEMO / "predictions" / "demo-precise.jsonl"),
            "--rows",
            str(DEMO / "rows.parquet"),
            "--format",
            "markdown",
        ]
    )
    assert code == 0
    out = capsys.readouterr()
    assert "| demo-precise | 6 | 0 |" in out.out
    assert "paths resolved lexically" in out.err


def test_bad_rows_exit_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = pl.read_parquet(DEMO / "rows.parquet").with_columns(
        gold_context=pl.when(pl.int_range(pl.len()) == 3)
        .then(pl.lit("{broken"))
        .otherwise(pl.col("gold_context"))
    )
    bad = tmp_path / "bad.parquet"
    rows.write_parquet(bad)
    code = cli.main(
        ["contextbench", "score", str(DEMO / "predictions" / "demo-broad.json"), "--rows", str(bad)]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "bad.parquet:4: field 'gold_context'" in err
