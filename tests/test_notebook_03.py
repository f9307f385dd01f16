"""Papermill run of notebooks/03-span-granularity.ipynb: recorded numbers recomputed literally."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from arbwb.io.samples import load_samples

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
NOTEBOOK = ROOT / "notebooks" / "03-span-granularity.ipynb"
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^A-Za-z0-9_\s]")
MARK = "\n...[truncated]"


def run_notebook(tmp_path: Path, data_dir: Path, budgets: list[int]) -> dict[str, Any]:
    import papermill

    out = tmp_path / "out"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(tmp_path / "executed.ipynb"),
        parameters={
            "data_dir": str(data_dir),
            "out_dir": str(out),
            "n_boot": 100,
            "budgets": budgets,
        },
        cwd=str(NOTEBOOK.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    record: dict[str, Any] = json.loads((out / "records" / "03-span-granularity.json").read_text())
    return record


def chunk_rows(corpus: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every snapshot's chunk rows, read with json line by line."""
    out = {}
    for line in (corpus / "corpus_manifest.jsonl").read_text(encoding="utf-8").splitlines():
        m = json.loads(line)
        path = corpus / m["repo"].replace("/", "__") / f"{m['base_commit']}.chunks.jsonl"
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
        out[(m["repo"], m["base_commit"])] = rows
    return out


def merge(intervals: list[tuple[int, int]]) -> list[list[int]]:
    merged: list[list[int]] = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return merged


def sample_spans(samples: Path) -> dict[str, list[dict[str, Any]]]:
    """``gold_spans`` per sample id, from the sample records (grep details rows carry none)."""
    records = [json.loads(x) for x in samples.read_text(encoding="utf-8").splitlines() if x]
    return {r["id"]: r.get("gold_spans", []) for r in records}


def literal_file_yield(
    details: Path,
    chunks: dict[tuple[str, str], list[dict[str, Any]]],
    budget: int,
    gold_spans: dict[str, list[dict[str, Any]]],
) -> float:
    """Mean line recall when the stored top-20 whole files are packed into ``budget`` tokens
    (§5.7 rule) and each packed file shows the text lines whose first token was packed."""
    values = []
    for line in details.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        spans = [(s["path"], s["start_line"], s["end_line"]) for s in gold_spans[row["sample_id"]]]
        spans = [(p, s, e) for p, s, e in spans if s >= 1 and e >= s]
        if not spans:
            continue
        files = {
            c["path"]: c for c in chunks[(row["repo"], row["base_commit"])] if c["kind"] == "file"
        }
        used, shown = 0, []
        for path in list(dict.fromkeys(p for p in row["top_files"] if p))[:20]:
            if path not in files:
                continue
            text = files[path]["text"]
            h, c = len(TOKEN.findall(f"### {path}\n")), len(TOKEN.findall(text))
            total = h + c + (1 if text else 0)
            if budget - used <= 0:
                break
            if total <= budget - used:
                used, m = used + total, c
            else:
                m, used = min(c, max(0, budget - used - h)), budget
            lines = text.splitlines()[:-1] if text.endswith(MARK) else text.splitlines()
            k, seen = 0, 0
            for text_line in lines:
                if m >= c or seen < m:
                    k += 1
                    seen += len(TOKEN.findall(text_line))
                else:
                    break
            if k:
                shown.append((path, 1, min(files[path]["end_line"], k)))
            if used >= budget:
                break
        gold = {p: merge([(s, e) for q, s, e in spans if q == p]) for p, _, _ in spans}
        pred = {p: merge([(s, e) for q, s, e in shown if q == p]) for p, _, _ in shown}
        n_gold = sum(e - s + 1 for v in gold.values() for s, e in v)
        overlap = sum(
            max(0, min(ge, pe) - max(gs, ps) + 1)
            for p, v in gold.items()
            for gs, ge in v
            for ps, pe in pred.get(p, [])
        )
        values.append(overlap / n_gold)
    return sum(values) / len(values)


@pytest.mark.slow
def test_granularity_notebook_on_demo(tmp_path: Path) -> None:
    runs = sorted((DEMO / "eval" / "demo").glob("*_details.jsonl"))
    if not runs or not (DEMO / "corpus" / "demo" / "corpus_manifest.jsonl").is_file():
        pytest.skip("data/demo has no eval/demo runs or corpus yet")
    record = run_notebook(tmp_path, DEMO, [250, 1000])
    assert "skipped" not in record
    chunks = chunk_rows(DEMO / "corpus" / "demo")
    # gold-file sizes: max end_line over the path's rows, gold from the samples (spec §2.6)
    ss = load_samples(DEMO / "benchmark" / "demo")
    positives = ss.samples.filter(ss.samples["stratum"] == "positive")
    snapshot = {
        s: (r, c) for s, r, c in positives.select("sample_id", "repo", "base_commit").iter_rows()
    }
    sizes = []
    for sample_id, path, role in ss.labels.iter_rows():
        if role == "gold" and sample_id in snapshot:
            ends = [c["end_line"] for c in chunks[snapshot[sample_id]] if c["path"] == path]
            sizes.append(max(ends))
    ordered = sorted(sizes)
    assert record["gold_file_occurrences"] == len(sizes)
    assert record["samples"] == positives.height
    assert record["unresolved"] == 0
    assert record["unresolved_occurrences"] == 0
    middle = (ordered[(len(ordered) - 1) // 2] + ordered[len(ordered) // 2]) / 2
    assert record["file_lines_median"] == middle
    assert record["file_lines_max"] == ordered[-1]
    # stored file-vs-line diagnostic, literally from the details files
    for details in runs:
        rows = [json.loads(x) for x in details.read_text(encoding="utf-8").splitlines()]
        run = details.name.removesuffix("_details.jsonl")
        recall = sum(r["metrics"]["Recall@20"] for r in rows) / len(rows)
        assert record[f"file_recall@20/{run}"] == pytest.approx(recall, abs=1e-12)
        lines = [r["line_metrics"] for r in rows if "line_metrics" in r]
        # span-capable: stored line metrics that predict some lines (repomap's predict none)
        if lines and sum(m["line_predicted_count"] for m in lines) > 0:
            f1 = sum(m["line_f1@8k"] for m in lines) / len(lines)
            assert record[f"line_f1@8k_chars/{run}"] == pytest.approx(f1, abs=1e-12)
            assert record[f"span_yield/legacy_chars@8000/{run}"] == pytest.approx(
                sum(m["line_recall@8k"] for m in lines) / len(lines), abs=1e-12
            )
        else:
            assert record[f"line_f1@8k_chars/{run}"] is None
            assert run in record["not_span_capable"]
    # grep rows carry no line metrics, repomap's predict no lines, fusion rows have neither
    assert sorted(record["not_span_capable"]) == [
        "grep",
        "grep-expanded",
        "repomap",
        "rrf_lexical_dense_hash",
    ]
    # arbwb re-ranks its own chunk rankers (the filtered run with its filter); RepoMap ranks
    # files and the fusion has no chunk ranking
    assert record["reranked"] == [
        "bm25",
        "bm25-arb",
        "dense_hash",
        "grep",
        "grep-expanded",
        "lexical",
        "lexical_code_only",
    ]
    # span yield of whole files: from the stored top files, packed literally
    spans = sample_spans(DEMO / "benchmark" / "demo" / "samples.jsonl")
    for run in record["reranked"]:
        details = DEMO / "eval" / "demo" / f"{run}_details.jsonl"
        for budget in (250, 1000):
            expected = literal_file_yield(details, chunks, budget, spans)
            assert record[f"span_yield/files@{budget}/{run}"] == pytest.approx(expected, abs=1e-12)
    for name in ("sizes_and_density", "file_vs_line", "span_yield"):
        assert (
            tmp_path / "out" / "figures" / f"03-span-granularity__{name}.png"
        ).stat().st_size > 1000
    assert (tmp_path / "out" / "tables" / "03-span-granularity__gold_file_size.csv").is_file()


@pytest.mark.slow
def test_granularity_notebook_without_corpus_records_skip(tmp_path: Path) -> None:
    if not (DEMO / "eval" / "demo").is_dir():
        pytest.skip("data/demo has no eval/demo runs yet")
    data = tmp_path / "nocorpus"
    shutil.copytree(DEMO / "benchmark", data / "benchmark")
    shutil.copytree(DEMO / "eval" / "demo", data / "eval" / "demo")
    record = run_notebook(tmp_path, data, [1000])
    assert list(record) == ["skipped"]
    assert record["skipped"].startswith(f"no corpus in {data}")
