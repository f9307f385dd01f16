"""Details rows and summaries (spec §4.2, §4.7, §4.8, §5.2-5.8): TV6 metrics, TV12, failures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from test_retrievers_core import TV6, TV6_QUERY

from arbwb.metrics import chunks as cm
from arbwb.metrics.intervals import merge_intervals
from arbwb.retrievers import details as det
from arbwb.retrievers import lexical
from arbwb.retrievers.common import ChunkPaths, ranking_from_order


def target(gold: list[str], **kw: object) -> det.SampleTarget:
    fields: dict[str, object] = {
        "sample_id": "s1",
        "task": "trace2code",
        "repo": "o/r",
        "base_commit": "abc",
        "gold": gold,
        "hard_negatives": [],
        "spans": [],
        "blocks": [],
        "provenance": "failure_trace",
        "no_gold_reason": None,
        "no_gold": False,
    }
    return det.SampleTarget(**(fields | kw))  # type: ignore[arg-type]


def test_tv6_per_sample_metrics() -> None:
    ranking = lexical.rank_sample(lexical.build_index(TV6), TV6_QUERY)
    row = det.details_row(
        target(["src/auth.py", "src/session.py"]),
        ranking,
        cm.chunk_table(TV6),
        candidate_filter="all_files",
        ranker="lexical",
        selective=False,
    )
    m = row["metrics"]
    for k in (5, 10, 20):
        assert m[f"Recall@{k}"] == 1.0
        assert m[f"Precision@{k}"] == 0.6666666666666666
        assert m[f"F0.5@{k}"] == 0.7142857142857142
        assert m[f"irrelevant_files@{k}"] == 1.0
    assert m["MRR"] == 1.0
    assert m["coverage_auc@20"] == 0.95
    assert m["gold_coverage@8k"] == 1.0
    assert m["redundancy@8k"] == 0.25
    assert m["gold_token_ratio@8k"] == m["context_efficiency@8k"] == 0.5693069306930693
    assert m["context_pollution_tokens@8k"] == 87.0
    assert row["gold_ranks"] == {"src/auth.py": 1, "src/session.py": 3}
    assert row["top_files"] == ["src/auth.py", "tests/test_auth.py", "src/session.py"]
    assert row["top_file_scores"][0] == {"path": "src/auth.py", "score": 3.669384931184183}
    assert "line_metrics" not in row and "label" not in row


def tv12_table() -> cm.ChunkTable:
    return cm.ChunkTable(
        paths=["a.py", "a.py", "b.py", "c.py"],
        kinds=["symbol", "file", "symbol", "file"],
        symbols=["f", "", "g", ""],
        starts=[10, 1, 5, 1],
        ends=[19, 100, 8, 50],
        chunk_ids=["k1", "k2", "k3", "k4"],
        n_chars=[3000, 4000, 1000, 100],
    )


def test_tv12_line_block_and_char_packing() -> None:
    table = tv12_table()
    taken = cm.taken_chunks([0, 1, 2, 3], table.n_chars)
    assert taken == [0, 1, 2]
    predicted = cm.taken_blocks(taken, table)
    spans = [cm.Block("a.py", 15, 24), cm.Block("a.py", 20, 30), cm.Block("c.py", 1, 5)]
    lines = cm.line_metrics(predicted, spans)
    assert lines["line_gold_count"] == 21
    assert lines["line_predicted_count"] == 104
    assert lines["line_overlap_count"] == 16
    assert lines["line_recall@8k"] == 0.7619047619047619
    assert lines["line_precision@8k"] == 0.15384615384615385
    assert lines["line_f1@8k"] == pytest.approx(0.256, abs=1e-12)
    assert lines["line_f0.5@8k"] == pytest.approx(0.1830663615560641, abs=1e-12)
    blocks = [
        cm.Block("a.py", 18, 25, "symbol", "f"),
        cm.Block("c.py", 1, 5, "symbol", "h"),
    ]
    b = cm.block_metrics(predicted, blocks)
    assert (b["predicted_blocks"], b["matched_blocks"], b["gold_blocks"]) == (2, 1, 2)
    assert b["block_recall@8k"] == b["block_precision@8k"] == b["block_f1@8k"] == 0.5
    assert cm.packing_metrics(taken, table, ["c.py"])["gold_coverage@8k"] == 0.0
    span = cm.span_metrics(lines)
    assert span["overlap_lines"] == 16 and span["line_overlap_f0.5"] == lines["line_f0.5@8k"]


def test_tv12_first_chunk_always_taken() -> None:
    big = cm.ChunkTable(
        ["a.py", "b.py"], ["file"] * 2, ["", ""], [1, 1], [1, 1], ["x", "y"], [9000, 1]
    )
    assert (
        cm.packing_metrics(cm.taken_chunks([0], big.n_chars), big, ["a.py"])["gold_coverage@8k"]
        == 1.0
    )
    taken = cm.taken_chunks([0, 1], big.n_chars)
    assert taken == [0]
    assert cm.packing_metrics(taken, big, ["b.py"])["gold_coverage@8k"] == 0.0


def test_zero_length_chunks_keep_used_at_zero() -> None:
    """Taken while used = 0: empty chunks first do not stop a large next chunk."""
    assert cm.taken_chunks([0, 1, 2], [0, 9000, 5]) == [0, 1]


def test_merge_intervals_adjacent() -> None:
    assert merge_intervals([(1, 5), (4, 10), (20, 21)]) == [(1, 10), (20, 21)]
    assert merge_intervals([(1, 5), (6, 8)]) == [(1, 8)]


def test_full_depth_gold_rank_and_hard_negatives() -> None:
    files = [f"f{i}.py" for i in range(30)]
    order = np.arange(30, dtype=np.int64)
    paths = ChunkPaths(np.arange(30, dtype=np.int64), files)
    ranking = ranking_from_order(order, np.linspace(1, 0, 30), paths)
    table = cm.ChunkTable(files, ["file"] * 30, [""] * 30, [1] * 30, [1] * 30, files, [10] * 30)
    row = det.details_row(
        target(["f24.py"], hard_negatives=["f0.py", "f7.py"]),
        ranking,
        table,
        candidate_filter="code_only",
        ranker="bm25",
        selective=False,
    )
    assert row["gold_ranks"] == {"f24.py": 25}
    assert row["metrics"]["MRR"] == 1 / 25
    assert row["metrics"]["Recall@20"] == 0.0
    assert row["hard_negative_ranks"] == {"f0.py": 1, "f7.py": 8}
    assert row["metrics"]["hard_negative_hits@5"] == 1.0
    assert row["metrics"]["hard_negative_hits@10"] == 2.0
    assert len(row["top_files"]) == 20


def test_missing_corpus_failure_row_counts_in_summary() -> None:
    ranking = lexical.rank_sample(lexical.build_index(TV6), TV6_QUERY)
    ok = det.details_row(
        target(["src/auth.py"]),
        ranking,
        cm.chunk_table(TV6),
        candidate_filter="all_files",
        ranker="lexical",
        selective=False,
    )
    failed = det.details_row(
        target(["x.py"], sample_id="s2", task="code2test"),
        None,
        None,
        candidate_filter="all_files",
        ranker="lexical",
        selective=False,
        error="missing_corpus",
    )
    assert failed["status"] == "error" and failed["error"] == "missing_corpus"
    assert failed["top_files"] == [] and failed["gold_ranks"] == {"x.py": None}
    assert set(failed["metrics"].values()) == {0.0}
    summary = det.summarize(
        [ok, failed],
        mode="corpus",
        ranker="lexical",
        model=None,
        candidate_filter="all_files",
        skipped={"no_gold": 1},
        runtime={},
    )
    assert summary["evaluated"] == 2
    assert summary["errors"] == {"missing_corpus": 1}
    assert summary["metrics"]["overall"]["samples"] == 2
    assert summary["metrics"]["overall"]["MRR"] == 0.5
    assert summary["metrics"]["code2test"]["MRR"] == 0.0
    assert summary["metrics"]["trace2code"]["Recall@5"] == 1.0
    assert summary["skipped"] == {"no_gold": 1}


def test_selective_fields_and_no_gold_row() -> None:
    ranking = lexical.rank_sample(lexical.build_index(TV6), TV6_QUERY)
    row = det.details_row(
        target([], no_gold=True, no_gold_reason="user_error"),
        ranking,
        cm.chunk_table(TV6),
        candidate_filter="all_files",
        ranker="lexical",
        selective=True,
    )
    assert row["label"] == "no_gold" and row["no_gold_reason"] == "user_error"
    assert row["top_score"] == row["confidence"] == 3.669384931184183
    assert row["second_score"] == 3.669384931184183
    assert row["score_margin"] == 0.0
    assert "metrics" not in row
    empty = det.selective_fields(None)
    assert empty == {"confidence": 0.0, "top_score": 0.0, "second_score": 0.0, "score_margin": 0.0}


def test_summary_line_means_only_over_rows_with_spans() -> None:
    rows = [
        {
            "task_type": "a",
            "metrics": {"MRR": 1.0},
            "line_metrics": {"line_recall@8k": 0.5, "line_samples": 1},
        },
        {"task_type": "a", "metrics": {"MRR": 0.0}},
    ]
    group = det.group_means(rows)
    assert group["samples"] == 2 and group["MRR"] == 0.5
    assert group["line_recall@8k"] == 0.5 and group["line_samples"] == 1.0
    assert group["Recall@5"] == 0.0
    assert "Precision@5" not in group


def test_summary_path_and_sample_targets(tmp_path: Path) -> None:
    assert det.summary_path(tmp_path / "bm25_details.jsonl").name == "bm25_summary.json"
    assert det.summary_path(tmp_path / "run.jsonl").name == "run_summary.json"
    samples = pl.DataFrame(
        {
            "sample_id": ["s"],
            "task": ["code2test"],
            "repo": ["o/r"],
            "base_commit": ["c"],
            "query_provenance": ["pr_summary"],
            "no_gold_reason": [None],
            "stratum": ["positive"],
        }
    )
    labels = pl.DataFrame(
        {
            "sample_id": ["s", "s", "s"],
            "path": ["b.py", "a.py", "n.py"],
            "role": ["gold", "gold", "hard_negative"],
        }
    )
    spans = pl.DataFrame(
        {
            "sample_id": ["s", "s"],
            "path": ["b.py", "a.py"],
            "start_line": [1, 2],
            "end_line": [3, 4],
            "kind": ["span", "symbol"],
            "symbol": [None, "f"],
        }
    )
    (t,) = det.sample_targets(samples, labels, spans)
    assert t.gold == ["b.py", "a.py"] and t.hard_negatives == ["n.py"]
    assert t.spans == [cm.Block("b.py", 1, 3, "span", "")]
    assert t.blocks == [cm.Block("a.py", 2, 4, "symbol", "f")]
