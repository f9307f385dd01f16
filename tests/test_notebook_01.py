"""Papermill run of notebooks/01-leaderboard.ipynb on data/demo; records checked independently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
NOTEBOOK = ROOT / "notebooks" / "01-leaderboard.ipynb"


def _independent_scores(details: Path) -> dict[str, float]:
    """Mean R@k and MRR from a details file with plain Python (gold_ranks give the full depth)."""
    totals = {"recall@5": 0.0, "recall@10": 0.0, "recall@20": 0.0, "mrr": 0.0}
    n = 0
    for line in details.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        gold = set(row["gold_files"])
        if not gold:
            continue
        n += 1
        ranked = list(dict.fromkeys(row["top_files"]))
        for k in (5, 10, 20):
            totals[f"recall@{k}"] += len(gold & set(ranked[:k])) / len(gold)
        ranks = [r for r in (row.get("gold_ranks") or {}).values() if r]
        ranks += [i + 1 for i, path in enumerate(ranked) if path in gold]
        totals["mrr"] += 1 / min(ranks) if ranks else 0.0
    return {key: value / n for key, value in totals.items()}


@pytest.mark.slow
def test_leaderboard_notebook_on_demo(tmp_path: Path) -> None:
    runs = sorted((DEMO / "eval" / "demo").glob("*_details.jsonl"))
    if not runs:
        pytest.skip("data/demo has no eval/demo/*_details.jsonl runs yet")
    import papermill

    out = tmp_path / "out"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(tmp_path / "executed.ipynb"),
        parameters={"out_dir": str(out), "n_boot": 200, "n_perm": 500},
        cwd=str(NOTEBOOK.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    record = json.loads((out / "records" / "01-leaderboard.json").read_text())
    assert "skipped" not in record
    assert record["bcy"] is True  # data/demo ships a corpus
    for details in runs:
        run = details.name.removesuffix("_details.jsonl")
        for metric, expected in _independent_scores(details).items():
            got = record["overall"][f"demo/{run}/weighted/{metric}"]
            assert got == pytest.approx(expected, abs=1e-12), (run, metric)
    for name in ("task_bars__demo", "heatmap__demo", "significance__demo"):
        for ext in ("png", "svg"):
            assert (out / "figures" / f"01-leaderboard__{name}.{ext}").stat().st_size > 1000
    assert (out / "tables" / "01-leaderboard__demo__overall.tex").is_file()
