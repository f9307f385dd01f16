"""Papermill run of notebooks/05-budget-curves.ipynb: demo numbers checked; the skip path."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
NOTEBOOK = ROOT / "notebooks" / "05-budget-curves.ipynb"
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^A-Za-z0-9_\s]")


def run_notebook(tmp_path: Path, data_dir: Path) -> dict[str, object]:
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
    record: dict[str, object] = json.loads((out / "records" / "05-budget-curves.json").read_text())
    return record


def literal_bcy(details: Path, corpus: Path, budget: int) -> float:
    """Mean BCY@budget of a details file, spec §5.7 read literally (json lines, re.findall)."""
    paths = {}
    for line in (corpus / "corpus_manifest.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        paths[(row["repo"], row["base_commit"])] = (
            corpus / row["repo"].replace("/", "__") / f"{row['base_commit']}.chunks.jsonl"
        )
    values = []
    for line in details.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        gold = set(row["gold_files"])
        if not gold:
            continue
        texts = {}
        for chunk_line in (
            paths[(row["repo"], row["base_commit"])].read_text(encoding="utf-8").split("\n")
        ):
            if chunk_line:
                chunk = json.loads(chunk_line)
                if chunk["kind"] == "file":
                    texts[chunk["path"]] = chunk["text"]
        used, covered = 0, 0
        for path in list(dict.fromkeys(p for p in row["top_files"] if p))[:20]:
            if path not in texts:
                continue
            h, c = len(TOKEN.findall(f"### {path}\n")), len(TOKEN.findall(texts[path]))
            total = h + c + (1 if texts[path] else 0)
            if budget - used <= 0:
                break
            m = c if total <= budget - used else min(c, max(0, budget - used - h))
            used = used + total if total <= budget - used else budget
            covered += path in gold and c > 0 and m >= 1
            if used >= budget:
                break
        values.append(covered / len(gold))
    return sum(values) / len(values)


@pytest.mark.slow
def test_budget_notebook_on_demo(tmp_path: Path) -> None:
    runs = sorted((DEMO / "eval" / "demo").glob("*_details.jsonl"))
    if not runs or not (DEMO / "corpus" / "demo" / "corpus_manifest.jsonl").is_file():
        pytest.skip("data/demo has no eval/demo runs or corpus yet")
    record = run_notebook(tmp_path, DEMO)
    assert "skipped" not in record
    assert record["missing_snapshot_samples"] == 0
    for details in runs:
        run = details.name.removesuffix("_details.jsonl")
        for budget in (250, 8000):
            expected = literal_bcy(details, DEMO / "corpus" / "demo", budget)
            assert record[f"bcy_tau1@{budget}/{run}"] == pytest.approx(expected, abs=1e-12), run
    # At 250 tokens the demo runs differ (at 8000 every run packs all its gold files).
    at_250 = {record[f"bcy_tau1@250/{d.name.removesuffix('_details.jsonl')}"] for d in runs}
    assert len(at_250) > 1
    for ext in ("png", "svg"):
        assert (
            tmp_path / "out" / "figures" / f"05-budget-curves__bcy_by_task.{ext}"
        ).stat().st_size > 1000
    assert (tmp_path / "out" / "tables" / "05-budget-curves__bcy_curves.csv").is_file()


@pytest.mark.slow
def test_budget_notebook_without_corpus_records_skip(tmp_path: Path) -> None:
    if not (DEMO / "eval" / "demo").is_dir():
        pytest.skip("data/demo has no eval/demo runs yet")
    data = tmp_path / "nocorpus"
    shutil.copytree(DEMO / "benchmark", data / "benchmark")
    shutil.copytree(DEMO / "eval" / "demo", data / "eval" / "demo")
    record = run_notebook(tmp_path, data)
    assert record == {
        "skipped": f"no corpus in {data}: BCY needs corpus/<release>/corpus_manifest.jsonl"
    }
