"""Papermill run of notebooks/08-rank-analysis.ipynb on data/demo; records checked independently."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
NOTEBOOK = ROOT / "notebooks" / "08-rank-analysis.ipynb"
STEM = "08-rank-analysis"


def _execute(tmp_path: Path, **parameters: Any) -> dict[str, Any]:
    import papermill

    out = tmp_path / "out"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(tmp_path / "executed.ipynb"),
        parameters={"out_dir": str(out), **parameters},
        cwd=str(NOTEBOOK.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    record: dict[str, Any] = json.loads((out / "records" / f"{STEM}.json").read_text())
    return record


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _first(row: dict[str, Any]) -> int | None:
    """First-gold rank: gold_ranks where given, else the gold's position in top_files."""
    ranks = [r for r in (row.get("gold_ranks") or {}).values() if r]
    top = list(dict.fromkeys(row["top_files"]))
    ranks += [i + 1 for i, p in enumerate(top) if p in set(row["gold_files"])]
    return min(ranks) if ranks else None


def _nearest(values: list[int], q: float) -> int | None:
    values = sorted(values)
    if not values:
        return None
    return values[min(max(math.ceil(q * len(values)) - 1, 0), len(values) - 1)]


def _independent_depth(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault("overall", []).append(row)
        groups.setdefault(row["task_type"], []).append(row)
    out = {}
    for task, members in groups.items():
        firsts = [_first(r) for r in members]
        hits = [f for f in firsts if f is not None]
        n = len(members)
        recall20 = 0.0
        for row in members:
            gold = list(dict.fromkeys(row["gold_files"]))
            top = list(dict.fromkeys(row["top_files"]))[:20]
            recall20 += sum(1 for p in gold if p in top) / len(gold)
        out[task] = {
            "samples": n,
            "missing_first_gold_rank": n - len(hits),
            "median_first_gold_rank_hit_only": _nearest(hits, 0.5),
            "p90_first_gold_rank_hit_only": _nearest(hits, 0.9),
            "mean_mrr": sum(1 / f for f in hits) / n,
            **{f"any_gold@{k}": sum(1 for f in hits if f <= k) / n for k in (1, 5, 20, 50)},
            "gold_recall@20": recall20 / n,
        }
    return out


def _given(record: dict[str, Any]) -> list[str]:
    """Spec §2.7: gold.given_files, else (comment2context) query.given_file or query.path."""
    listed = [p for p in record["gold"].get("given_files") or [] if p]
    if listed:
        return listed
    query = record["query"]
    fallback = query.get("given_file") or query.get("path")
    return [fallback] if fallback else []


def _independent_rrf(folder: Path, runs: list[str]) -> dict[str, float]:
    """RRF (k = 60) of the runs' top 20 per sample, then mean fusion R@5, MRR, nDCG@20, Any@20."""
    lists = [{r["sample_id"]: r for r in _rows(folder / f"{run}_details.jsonl")} for run in runs]
    common = sorted(set(lists[0]).intersection(*lists[1:]))
    totals = {"recall@5": 0.0, "mrr": 0.0, "ndcg@20": 0.0, "any@20": 0.0}
    for sid in common:
        scores: dict[str, float] = {}
        for ranked in lists:
            top = list(dict.fromkeys(p for p in ranked[sid]["top_files"] if p))[:20]
            for rank, path in enumerate(top, start=1):
                scores[path] = scores.get(path, 0.0) + 1.0 / (60 + rank)
        fused = [p for p, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))][:20]
        gold = set(lists[0][sid]["gold_files"])
        hits = [i for i, p in enumerate(fused, start=1) if p in gold]
        totals["recall@5"] += sum(1 for i in hits if i <= 5) / len(gold)
        totals["mrr"] += 1 / hits[0] if hits else 0.0
        totals["any@20"] += 1.0 if hits else 0.0
        ideal = sum(1 / math.log2(r + 1) for r in range(1, min(len(gold), 20) + 1))
        totals["ndcg@20"] += sum(1 / math.log2(i + 1) for i in hits) / ideal
    return {key: value / len(common) for key, value in totals.items()}


def _independent_ablation(runs: list[Path]) -> dict[str, dict[str, Any]]:
    """Spec 13.8 rows: method = stem without its filter suffix, deltas vs the all_files run."""
    out: dict[str, dict[str, Any]] = {}
    for path in runs:
        stem = path.name.removesuffix("_details.jsonl")
        summary = json.loads(path.with_name(f"{stem}_summary.json").read_text())
        cfilter = summary.get("candidate_filter") or "all_files"
        method = stem.removesuffix(f"_{cfilter}")
        rows = _rows(path)
        depth = _independent_depth(rows)
        stored = [r["metrics"].get("gold_coverage@8k") for r in rows]
        for task in depth:
            members = [r for r in rows if task in ("overall", r["task_type"])]
            row: dict[str, Any] = {
                "samples": depth[task]["samples"],
                "recall@20": depth[task]["gold_recall@20"],
                "mrr": depth[task]["mean_mrr"],
            }
            for k in (5, 10):
                row[f"recall@{k}"] = sum(
                    len(set(r["gold_files"]) & set(list(dict.fromkeys(r["top_files"]))[:k]))
                    / len(set(r["gold_files"]))
                    for r in members
                ) / len(members)
            coverage = [r["metrics"].get("gold_coverage@8k") or 0.0 for r in members]
            has = any(v is not None for v in stored)
            row["gold_coverage@8k"] = sum(coverage) / len(coverage) if has else None
            out[f"demo/{method}/{cfilter}/{task}"] = row
    for key, row in out.items():
        _, method, _, task = key.split("/")
        base = out.get(f"demo/{method}/all_files/{task}")
        row["delta_mrr_vs_all_files"] = None if base is None else row["mrr"] - base["mrr"]
    return out


@pytest.mark.slow
def test_rank_analysis_notebook_on_demo(tmp_path: Path) -> None:
    runs = sorted((DEMO / "eval" / "demo").glob("*_details.jsonl"))
    if not runs:
        pytest.skip("data/demo has no eval/demo/*_details.jsonl runs")
    record = _execute(tmp_path, fuse_runs="lexical+bm25")
    assert "skipped" not in record
    coverage_hits: dict[str, int] = {}
    tasks: dict[str, str] = {}
    given = {
        r["id"]: set(_given(r))
        for r in _rows(DEMO / "benchmark" / "demo" / "comment2context.jsonl")
    }
    pairs = traps = 0
    for path in runs:
        run = path.name.removesuffix("_details.jsonl")
        rows = _rows(path)
        for task, expected in _independent_depth(rows).items():
            got = record["depth"][f"demo/{run}/{task}"]
            for key, value in expected.items():
                assert got[key] == pytest.approx(value, abs=1e-12), (run, task, key)
            assert got["unanswered"] == 0
        for row in rows:
            tasks[row["sample_id"]] = row["task_type"]
            first = _first(row)
            coverage_hits[row["sample_id"]] = coverage_hits.get(row["sample_id"], 0) + int(
                first is not None and first <= 20
            )
            top = list(dict.fromkeys(row["top_files"]))
            if row["sample_id"] in given and top and top[0] in given[row["sample_id"]]:
                pairs += 1
                traps += int(not set(top[:20]) & set(row["gold_files"]))
    overall = record["coverage"]["demo/overall"]
    assert overall["samples"] == len(coverage_hits)
    assert overall["runs"] == len(runs)
    assert overall["all_models_miss@20"] == sum(1 for h in coverage_hits.values() if h == 0)
    for task in set(tasks.values()):
        row = record["coverage"][f"demo/{task}"]
        assert row["samples"] == sum(1 for t in tasks.values() if t == task)
    assert record["given_at_rank_1"]["demo"] == {"pairs": pairs, "traps": traps}
    assert pairs > 0
    fusion_rows = _rows(DEMO / "eval" / "demo" / "rrf_lexical_dense_hash_details.jsonl")
    fused = record["rank_fusion"]["demo/rrf_lexical_dense_hash/overall"]
    assert fused["samples"] == len(fusion_rows)
    for key, stored in (("mrr", "MRR"), ("ndcg@20", "nDCG@20"), ("any@20", "Any@20")):
        expected = sum(r["metrics"][stored] for r in fusion_rows) / len(fusion_rows)
        assert fused[key] == pytest.approx(expected, abs=1e-12), key
    expected_ablation = _independent_ablation(runs)
    assert set(record["ablation"]) == set(expected_ablation)
    for key, expected in expected_ablation.items():
        got = record["ablation"][key]
        for field, value in expected.items():
            assert got[field] == pytest.approx(value, abs=1e-12), (key, field)
    # lexical_code_only against lexical: the filter moves MRR on some task
    assert any(
        v["delta_mrr_vs_all_files"] != 0.0
        for k, v in expected_ablation.items()
        if k.startswith("demo/lexical/code_only/")
    )
    made = record["arbwb_fusion"]["demo/arbwb:rrf_lexical_bm25/overall"]
    for key, value in _independent_rrf(DEMO / "eval" / "demo", ["lexical", "bm25"]).items():
        assert made[key] == pytest.approx(value, abs=1e-12), key
    out = tmp_path / "out"
    for name in ("first_gold_cdf__demo", "coverage__demo"):
        for ext in ("png", "svg"):
            assert (out / "figures" / f"{STEM}__{name}.{ext}").stat().st_size > 1000
    assert (out / "tables" / f"{STEM}__demo__rank_fusion.tex").is_file()


@pytest.mark.slow
def test_rank_analysis_notebook_without_runs(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    record = _execute(tmp_path, data_dir=str(empty))
    assert record["skipped"].startswith("no runs found")
    assert record["depth"] == {} and record["rank_fusion"] == {}
