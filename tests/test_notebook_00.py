"""Run 00-overview with papermill on the demo release; check its records against the files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import nbformat
import papermill as pm

from arbwb.paths import DEMO_DIR, NOTEBOOKS_DIR

NOTEBOOK = NOTEBOOKS_DIR / "00-overview.ipynb"


def test_committed_without_outputs_and_with_parameters() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code)
    assert sum("parameters" in c.metadata.get("tags", []) for c in code) == 1
    assert not any(
        line.lstrip().startswith(("def ", "class ")) for c in code for line in c.source.splitlines()
    )
    assert "Question" in nb.cells[0].source


def test_records_match_demo_files(tmp_path: Path) -> None:
    pm.execute_notebook(
        str(NOTEBOOK),
        str(tmp_path / "out.ipynb"),
        parameters={"out_dir": str(tmp_path)},
        kernel_name="python3",
        cwd=str(NOTEBOOKS_DIR),
        progress_bar=False,
    )
    record = json.loads((tmp_path / "records" / "00-overview.json").read_text(encoding="utf-8"))
    rows = [
        json.loads(line)
        for line in (DEMO_DIR / "benchmark/demo/samples.jsonl").open(encoding="utf-8")
    ]
    languages = {
        json.loads(line)["repo"]: json.loads(line)["language"]
        for line in (DEMO_DIR / "repo_manifest.jsonl").open(encoding="utf-8")
    }
    assert record["n_samples"] == len(rows)
    assert record["n_repos"] == len({r["repo"] for r in rows})
    assert record["n_snapshots"] == len({(r["repo"], r["base_commit"]) for r in rows})
    assert record["by_task"] == dict(Counter(r["task_type"] for r in rows))
    strata = Counter(
        "positive"
        if not r["gold"].get("no_gold")
        else ("natural" if r["metadata"]["organic"] else "counterfactual")
        for r in rows
    )
    assert record["by_stratum"] == dict(strata)
    assert record["by_language"] == dict(Counter(languages[r["repo"]] for r in rows))
    per_repo = {row["repo"]: row for row in record["repositories"]}
    for repo in languages:
        mine = [r for r in rows if r["repo"] == repo]
        assert per_repo[repo]["total"] == len(mine)
        assert per_repo[repo]["edit2ripple"] == sum(r["task_type"] == "edit2ripple" for r in mine)
    assert (tmp_path / "figures" / "00-overview__composition.png").is_file()
    assert (tmp_path / "tables" / "00-overview__repositories.md").is_file()


def test_skips_with_reason_without_samples(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "benchmark").mkdir(parents=True)
    pm.execute_notebook(
        str(NOTEBOOK),
        str(tmp_path / "out.ipynb"),
        parameters={"out_dir": str(tmp_path), "data_dir": str(empty)},
        kernel_name="python3",
        cwd=str(NOTEBOOKS_DIR),
        progress_bar=False,
    )
    record = json.loads((tmp_path / "records" / "00-overview.json").read_text(encoding="utf-8"))
    assert "no samples" in record["skipped"]
