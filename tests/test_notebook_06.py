"""Run 06-sample-explorer with papermill; check its records against the demo details files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import nbformat
import papermill as pm

from arbwb.paths import DEMO_DIR, NOTEBOOKS_DIR

NOTEBOOK = NOTEBOOKS_DIR / "06-sample-explorer.ipynb"


def _run(tmp_path: Path, **parameters: Any) -> dict[str, Any]:
    pm.execute_notebook(
        str(NOTEBOOK),
        str(tmp_path / "out.ipynb"),
        parameters={"out_dir": str(tmp_path), **parameters},
        kernel_name="python3",
        cwd=str(NOTEBOOKS_DIR),
        progress_bar=False,
    )
    record: dict[str, Any] = json.loads(
        (tmp_path / "records" / "06-sample-explorer.json").read_text(encoding="utf-8")
    )
    return record


def test_committed_without_outputs_and_with_parameters() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code)
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and 'sample_id: str = ""' in params[0].source
    assert not any(
        line.lstrip().startswith(("def ", "class ")) for c in code for line in c.source.splitlines()
    )


def test_filtered_sample_matches_details(tmp_path: Path) -> None:
    record = _run(tmp_path, task="trace2code", repo="arbdemo/kvcache")
    samples = [
        json.loads(line)
        for line in (DEMO_DIR / "benchmark/demo/samples.jsonl").open(encoding="utf-8")
    ]
    expected = next(
        s for s in samples if s["task_type"] == "trace2code" and s["repo"] == "arbdemo/kvcache"
    )
    assert record["sample_id"] == expected["id"]
    assert record["gold"] == expected["gold"]["root_cause_files"]
    for run in ("lexical", "bm25-arb", "bm25", "dense_hash"):
        rows = [
            json.loads(line)
            for line in (DEMO_DIR / f"eval/demo/{run}_details.jsonl").open(encoding="utf-8")
        ]
        row = next(r for r in rows if r["sample_id"] == expected["id"])
        ranks = [v for v in row["gold_ranks"].values() if v is not None]
        assert record["first_gold_rank"][run] == (min(ranks) if ranks else None)
        assert record["top1"][run] == row["top_files"][0]
    assert record["query_available"] is True


def test_sample_by_id_with_given_file(tmp_path: Path) -> None:
    samples = [
        json.loads(line)
        for line in (DEMO_DIR / "benchmark/demo/samples.jsonl").open(encoding="utf-8")
    ]
    target = [s for s in samples if s["task_type"] == "edit2ripple"][3]
    record = _run(tmp_path, sample_id=target["id"])
    assert (record["task"], record["gold"], record["given"]) == (
        "edit2ripple",
        target["gold"]["files"],
        [target["query"]["anchor_file"]],
    )


def test_skips_with_reason_without_samples(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "benchmark").mkdir(parents=True)
    record = _run(tmp_path, data_dir=str(empty))
    assert "no samples" in record["skipped"]


def test_without_benchmark_says_queries_are_unavailable(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(DEMO_DIR, data, ignore=shutil.ignore_patterns("benchmark"))
    record = _run(tmp_path, data_dir=str(data), task="trace2code")
    rows = [
        json.loads(line)
        for line in (DEMO_DIR / "eval/demo/lexical_details.jsonl").open(encoding="utf-8")
    ]
    expected = next(r for r in rows if r["task_type"] == "trace2code")
    assert (record["sample_id"], record["query_available"]) == (expected["sample_id"], False)
    assert sorted(record["gold"]) == sorted(expected["gold_files"])
    executed = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    printed = "".join(
        o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.outputs
    )
    assert "query: unavailable (no benchmark/<release>/ sample files" in printed
