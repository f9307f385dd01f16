"""Papermill runs of notebooks/02-relevance-taxonomy.ipynb on data/demo and on ../shared/arb-data
(no corpus); recorded numbers checked against independent computations."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from test_taxonomy import spec_annotate

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
NOTEBOOK = ROOT / "notebooks" / "02-relevance-taxonomy.ipynb"
STEM = "02-relevance-taxonomy"
CORE = ("code2test", "comment2context", "trace2code")
RRF_MAX = 20


def _run(tmp_path: Path, **parameters: Any) -> dict[str, Any]:
    import papermill

    out = tmp_path / "out"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(tmp_path / "executed.ipynb"),
        parameters={"out_dir": str(out), "n_boot": 200, "n_perm": 500, **parameters},
        cwd=str(NOTEBOOK.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    record: dict[str, Any] = json.loads((out / "records" / f"{STEM}.json").read_text())
    record["_out"] = str(out)
    return record


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _means(details_dir: Path, labels: dict[str, str]) -> dict[str, dict[str, list[float]]]:
    """run/label -> metric -> per-sample values from the details rows (spec 10.7)."""
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for details in sorted(details_dir.glob("*_details.jsonl")):
        if "_selective_" in details.name:
            continue
        run = details.name.removesuffix("_details.jsonl")
        for row in _records(details):
            if row["sample_id"] in labels and row["gold_files"]:
                key = f"{run}/{labels[row['sample_id']]}"
                out[key]["recall@20"].append(row["metrics"]["Recall@20"])
                out[key]["mrr"].append(row["metrics"]["MRR"])
    return out


@pytest.mark.slow
def test_taxonomy_notebook_on_demo(tmp_path: Path) -> None:
    if not (DEMO / "eval" / "demo").is_dir():
        pytest.skip("data/demo has no runs")
    record = _run(tmp_path, rrf_max=RRF_MAX)
    assert "skipped" not in record and "skipped_slices" not in record
    samples = _records(DEMO / "benchmark" / "demo" / "samples.jsonl")
    spec = {s["id"]: spec_annotate(s) for s in samples}
    assert record["distribution"] == dict(
        Counter(a["primary_relevance_type"] for a in spec.values())
    )
    for task, counts in record["by_task"].items():
        want = Counter(a["primary_relevance_type"] for a in spec.values() if a["task_type"] == task)
        assert counts == {label: want.get(label, 0) for label in counts}
    assert record["labels_missing"] == []
    assert record["bcy"] is True
    labels = {i: a["primary_relevance_type"] for i, a in spec.items() if a["task_type"] in CORE}
    means = _means(DEMO / "eval" / "demo", labels)
    for key, by_metric in means.items():
        for metric, values in by_metric.items():
            got = record["slice_table"][f"demo/{key}/all/{metric}"]
            assert got == pytest.approx(sum(values) / len(values), abs=1e-12), (key, metric)
        assert record["slice_samples"][f"demo/{key}/all"] == len(by_metric["mrr"])
        assert f"demo/{key}/all/bcy@8000" in record["slice_table"]
    for label in set(labels.values()):
        ranked = sorted(
            (k.split("/")[0] for k in means if k.endswith(f"/{label}")),
            key=lambda run: (
                -sum(means[f"{run}/{label}"]["mrr"]) / len(means[f"{run}/{label}"]["mrr"]),
                -sum(means[f"{run}/{label}"]["recall@20"]),
                run,
            ),
        )
        best = record["best"][f"demo/primary/{label}"]
        assert (best["best"], best["runner_up"]) == (ranked[0], ranked[1])
        assert 0.0 < best["p_value"] <= best["p_holm"] <= 1.0
    outside = Counter(a["task_type"] for a in spec.values() if a["task_type"] not in CORE)
    assert record["left_out"] == {
        f"{task}/task outside the sliced tasks": n for task, n in outside.items()
    }
    # pairs, then triples, of the stored non-fusion runs, cut at the notebook's rrf_max = 20
    stored = [
        p.name.removesuffix("_details.jsonl")
        for p in (DEMO / "eval" / "demo").glob("*_details.jsonl")
    ]
    n = sum(1 for run in stored if not run.startswith("rrf"))
    assert len(record["rrf_runs"]) == min(20, math.comb(n, 2) + math.comb(n, 3))
    figures = Path(record["_out"]) / "figures"
    for name in ("label_distribution", "confidence_mix", "slice_intervals__demo"):
        assert (figures / f"{STEM}__{name}.png").stat().st_size > 1000


@pytest.mark.slow
@pytest.mark.shared
def test_taxonomy_notebook_on_shared_root_without_corpus(tmp_path: Path, shared_dir: Path) -> None:
    record = _run(tmp_path, data_dir=str(shared_dir), demo=False)
    assert record["bcy"] is False
    assert not any("bcy" in key for key in record["slice_table"])
    samples = _records(shared_dir / "benchmark" / "v0_1" / "samples.jsonl")
    samples += _records(shared_dir / "benchmark" / "v2_abstention_pilot" / "abstention.jsonl")
    spec = {s["id"]: spec_annotate(s) for s in samples}
    assert record["distribution"] == dict(
        Counter(a["primary_relevance_type"] for a in spec.values())
    )
    details = {
        r["sample_id"]
        for r in _records(
            shared_dir
            / "eval"
            / "v1_1_candidate_filter_ablation"
            / "lexical_code_only_details.jsonl"
        )
    }
    assert record["n_incomplete"] == len(details - set(spec))  # known only from details rows
    labels = {i: a["primary_relevance_type"] for i, a in spec.items() if a["task_type"] in CORE}
    for key, by_metric in _means(shared_dir / "eval" / "v0_1", labels).items():
        got = record["slice_table"][f"v0_1/{key}/all/mrr"]
        assert got == pytest.approx(sum(by_metric["mrr"]) / len(by_metric["mrr"]), abs=1e-12)
