"""Papermill run of notebooks/07-contextbench.ipynb on data/demo; records checked independently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
CB = DEMO / "contextbench"
NOTEBOOK = ROOT / "notebooks" / "07-contextbench.ipynb"


def _norm(raw: str) -> str:
    """contextbench-spec §2.1 for the path forms the demo uses."""
    if raw.startswith("/workspace/"):
        rest = raw[len("/workspace/") :]
        return rest.split("/", 1)[1] if "/" in rest else rest
    return raw.lstrip("./")


def _merge(ivs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(ivs):
        if out and s <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    return sum(max(0, min(e1, e2) - max(s1, s2) + 1) for s1, e1 in a for s2, e2 in b)


def _gold() -> dict[str, dict[str, list[tuple[int, int]]]]:
    out: dict[str, dict[str, list[tuple[int, int]]]] = {}
    for row in pl.read_parquet(CB / "rows.parquet").iter_rows(named=True):
        spans: dict[str, list[tuple[int, int]]] = {}
        for s in json.loads(row["gold_context"]):
            spans.setdefault(_norm(s["file"]), []).append((s["start_line"], s["end_line"]))
        out[row["instance_id"]] = {p: _merge(v) for p, v in spans.items()}
    return out


def _macro(records: list[dict], gold: dict) -> dict[str, float]:
    """Macro file/line coverage and precision of unified records (paths exist in the demo)."""
    sums = dict.fromkeys(("file_c", "file_p", "line_c", "line_p"), 0.0)
    for rec in records:
        g = gold[rec["instance_id"]]
        files = set(rec["traj_data"]["pred_files"])
        pred = {
            p: _merge([(x["start"], x["end"]) for x in v])
            for p, v in rec["traj_data"]["pred_spans"].items()
        }
        inter = sum(_overlap(pred[p], g[p]) for p in pred if p in g)
        g_size = sum(e - s + 1 for v in g.values() for s, e in v)
        p_size = sum(e - s + 1 for v in pred.values() for s, e in v)
        sums["file_c"] += len(files & set(g)) / len(g)
        sums["file_p"] += len(files & set(g)) / len(files)
        sums["line_c"] += inter / g_size
        sums["line_p"] += inter / p_size
    return {k: v / len(records) for k, v in sums.items()}


def _ranked_recall(ranking: list[dict], gold: dict, k: int) -> float:
    """Mean file coverage of ranked lists cut at k (every ranked path exists in the demo)."""
    cov = [
        len(set(gold[r["sample_id"]]) & {f["path"] for f in r["ranked_files"][:k]})
        / len(gold[r["sample_id"]])
        for r in ranking
    ]
    return sum(cov) / len(cov)


def _arb_recall(details: Path, k: int) -> float:
    """Mean file recall@k of an ARB details file from its gold ranks alone (spec §4)."""
    rows = [json.loads(x) for x in details.read_text().splitlines() if x.strip()]
    rows = [r for r in rows if r["gold_files"]]
    hits = [
        sum(1 for p in r["gold_files"] if (r["gold_ranks"].get(p) or k + 1) <= k)
        / len(r["gold_files"])
        for r in rows
    ]
    return sum(hits) / len(hits)


@pytest.mark.slow
def test_contextbench_notebook_on_demo(tmp_path: Path) -> None:
    if not (CB / "rows.parquet").is_file():
        pytest.skip("data/demo has no contextbench/ rows yet")
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
    record = json.loads((out / "records" / "07-contextbench.json").read_text())
    assert "skipped" not in record
    rows = pl.read_parquet(CB / "rows.parquet")
    assert record["n_instances"] == rows.height
    assert record["n_spans"] == sum(len(json.loads(g)) for g in rows["gold_context"])
    assert record["languages"] == dict(rows.group_by("language").len().sort("language").iter_rows())
    assert record["quirks"] == {"B3": 1}
    assert record["errors"] == {
        "demo-mini-swe/missing_gold": 1,
        "demo-mini-swe/no_context_extracted": 1,
    }
    gold = _gold()
    precise = [
        json.loads(x) for x in (CB / "predictions" / "demo-precise.jsonl").read_text().splitlines()
    ]
    broad = json.loads((CB / "predictions" / "demo-broad.json").read_text())
    for run, records in (("demo-precise", precise), ("demo-broad", broad)):
        want = _macro(records, gold)
        for level in ("file", "line"):
            got = record["aggregate"][f"{run}/{level}/macro"]
            assert got["coverage"] == pytest.approx(want[f"{level}_c"], abs=1e-12), (run, level)
            assert got["precision"] == pytest.approx(want[f"{level}_p"], abs=1e-12), (run, level)
    # ranked list: file coverage at k from the ranking file alone (every ranked path exists)
    ranking = [
        json.loads(x) for x in (CB / "rankings" / "demo-overlap.jsonl").read_text().splitlines()
    ]
    for k in (1, 3, 5, 10):
        assert record["ranked"][f"demo-overlap@{k}"]["file_coverage"] == pytest.approx(
            _ranked_recall(ranking, gold, k), abs=1e-12
        )
    side = record["side_by_side"]
    assert side["runs"]["ContextBench"] == [
        "demo-broad",
        "demo-mini-swe",
        "demo-overlap",
        "demo-precise",
    ]
    assert "bm25" in side["runs"]["ARB"] and side["k"] == 20
    for run, records in (("demo-precise", precise), ("demo-broad", broad)):
        want = _macro(records, gold)
        for metric, key in (("file_recall", "file_c"), ("file_precision", "file_p")):
            value, low, high, n = side["scores"][f"ContextBench/{run}/{metric}"]
            assert (value, n) == (pytest.approx(want[key], abs=1e-12), len(records))
            assert low <= value <= high
    value, _, _, n = side["scores"]["ARB/bm25/file_recall"]
    assert (value, n) == (
        pytest.approx(_arb_recall(DEMO / "eval" / "demo" / "bm25_details.jsonl", 20)),
        74,
    )
    assert side["rows"] == 74 * len(side["runs"]["ARB"]) + len(precise) * 4  # one row a sample
    overlap = side["scores"]["ContextBench/demo-overlap/file_recall"]
    assert overlap[0] == pytest.approx(_ranked_recall(ranking, gold, 20), abs=1e-12)
    for name in (
        "composition",
        "granularity",
        "recall_precision__line",
        "coverage_by_step",
        "arb_beside_contextbench",
    ):
        assert (out / "figures" / f"07-contextbench__{name}.png").stat().st_size > 1000


def test_contextbench_notebook_skips_without_rows(tmp_path: Path) -> None:
    """ARB runs alone: the ContextBench sections and the side-by-side section say they skip."""
    import papermill

    data = tmp_path / "data"
    (data / "eval" / "demo").mkdir(parents=True)
    shutil.copy(DEMO / "eval" / "demo" / "grep_details.jsonl", data / "eval" / "demo")
    out = tmp_path / "out"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(tmp_path / "executed.ipynb"),
        parameters={"out_dir": str(out), "data_dir": str(data)},
        cwd=str(NOTEBOOK.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    record = json.loads((out / "records" / "07-contextbench.json").read_text())
    assert record["skipped"].startswith("no ContextBench rows at")
    assert record["side_by_side"] == {
        "skipped": "skipped: needs both ARB runs and ContextBench rows"
    }
