"""ARB beside ContextBench: the per-sample file-level frame and the leaderboard's statistics."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from arbwb.analysis import board as boards
from arbwb.contextbench import compare as cc
from arbwb.metrics import stats


def _metrics(values: dict[tuple[str, str], dict[str, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"run": run, "sample_id": sid, "metric": metric, "value": value}
            for (run, sid), row in values.items()
            for metric, value in row.items()
        ]
    )


ARB_METRICS = _metrics(
    {
        ("bm25", "a1"): {"recall@20": 1.0, "precision@20": 0.10, "mrr": 1.0},
        ("bm25", "a2"): {"recall@20": 0.5, "precision@20": 0.05, "mrr": 0.5},
        ("bm25", "a3"): {"recall@20": 0.0, "precision@20": 0.00, "mrr": 0.0},
        ("grep", "a1"): {"recall@20": 1.0, "precision@20": 0.20, "mrr": 1.0},
        ("grep", "a2"): {"recall@20": 1.0, "precision@20": 0.10, "mrr": 1.0},
        ("grep", "a3"): {"recall@20": 0.5, "precision@20": 0.05, "mrr": 0.2},
        ("bm25", "a4"): {"recall@5": 1.0},  # other metrics and cut-offs are not read
    }
)
ARB_SAMPLES = pl.DataFrame(
    {"sample_id": ["a1", "a2", "a3", "a4"], "repo": ["o/x", "o/x", "o/y", "o/y"], "task": ["t"] * 4}
)
CB_METRICS = _metrics(
    {
        ("agent", "c1"): {"file.coverage": 1.0, "file.precision": 0.5, "line.coverage": 0.2},
        ("agent", "c2"): {"file.coverage": 0.5, "file.precision": 1.0, "line.coverage": 0.1},
        ("bm25", "c1"): {"file.coverage": 0.0, "file.precision": 0.0},
        ("bm25", "c2"): {"file.coverage": 1.0, "file.precision": 0.25},
    }
)
CB_SAMPLES = pl.DataFrame({"sample_id": ["c1", "c2"], "repo": ["p/q", "p/r"]})
RUNS = pl.DataFrame({"run": ["bm25", "grep"], "group": ["v2", "v2"], "method": ["BM25", "Grep"]})


def _frame() -> pl.DataFrame:
    return cc.file_level_frame(ARB_METRICS, ARB_SAMPLES, CB_METRICS, CB_SAMPLES, arb_runs=RUNS)


def test_frame_holds_both_benchmarks_per_sample() -> None:
    frame = _frame()
    assert frame.schema == pl.Schema(cc.FILE_LEVEL)
    assert frame.select("benchmark", "group", "run", "method", "sample_id", "repo").rows() == [
        ("ARB", "v2", "bm25", "BM25", "a1", "o/x"),
        ("ARB", "v2", "bm25", "BM25", "a2", "o/x"),
        ("ARB", "v2", "bm25", "BM25", "a3", "o/y"),
        ("ARB", "v2", "grep", "Grep", "a1", "o/x"),
        ("ARB", "v2", "grep", "Grep", "a2", "o/x"),
        ("ARB", "v2", "grep", "Grep", "a3", "o/y"),
        ("ContextBench", "contextbench", "agent", "agent", "c1", "p/q"),
        ("ContextBench", "contextbench", "agent", "agent", "c2", "p/r"),
        ("ContextBench", "contextbench", "bm25", "bm25", "c1", "p/q"),
        ("ContextBench", "contextbench", "bm25", "bm25", "c2", "p/r"),
    ]
    assert frame["file_recall"].to_list() == [1.0, 0.5, 0.0, 1.0, 1.0, 0.5, 1.0, 0.5, 0.0, 1.0]
    assert frame["file_precision"].to_list() == [
        0.1,
        0.05,
        0.0,
        0.2,
        0.1,
        0.05,
        0.5,
        1.0,
        0.0,
        0.25,
    ]


def test_frame_without_a_method_table_and_at_another_cutoff() -> None:
    frame = cc.file_level_frame(ARB_METRICS, ARB_SAMPLES, CB_METRICS, CB_SAMPLES, k=5)
    arb = frame.filter(pl.col("benchmark") == "ARB")
    assert arb.select("group", "run", "method", "sample_id", "file_recall").rows() == [
        ("ARB", "bm25", "bm25", "a4", 1.0)
    ]
    assert arb["file_precision"].is_null().all()  # no precision@5 rows: null, never zero


def test_scores_means_and_n_per_benchmark_and_run() -> None:
    scores = cc.file_level_scores(_frame(), n_boot=200)
    assert scores.schema == pl.Schema(cc.SCORES)
    got = {
        (b, r, m): (n, v)
        for b, r, m, n, v in scores.select("benchmark", "run", "metric", "n", "value").iter_rows()
    }
    assert got == {
        ("ARB", "bm25", "file_recall"): (3, pytest.approx(0.5)),
        ("ARB", "bm25", "file_precision"): (3, pytest.approx(0.05)),
        ("ARB", "grep", "file_recall"): (3, pytest.approx(2.5 / 3)),
        ("ARB", "grep", "file_precision"): (3, pytest.approx(0.35 / 3)),
        ("ContextBench", "agent", "file_recall"): (2, pytest.approx(0.75)),
        ("ContextBench", "agent", "file_precision"): (2, pytest.approx(0.75)),
        ("ContextBench", "bm25", "file_recall"): (2, pytest.approx(0.5)),
        ("ContextBench", "bm25", "file_precision"): (2, pytest.approx(0.125)),
    }
    assert scores.filter(pl.col("run") == "grep")["method"].unique().to_list() == ["Grep"]


def test_intervals_are_the_leaderboards() -> None:
    scores = cc.file_level_scores(_frame(), n_boot=300, seed=7)
    board = boards.scores(
        ARB_METRICS.filter(pl.col("metric") == "recall@20"),
        ARB_SAMPLES.with_columns(split=pl.lit(None, dtype=pl.String)),
        n_boot=300,
        seed=7,
    ).filter(pl.col("scope") == "overall", pl.col("aggregation") == "weighted")
    mine = scores.filter(pl.col("benchmark") == "ARB", pl.col("metric") == "file_recall")
    assert (
        mine.sort("run").select("value", "ci_low", "ci_high").rows()
        == board.sort("run").select("value", "ci_low", "ci_high").rows()
    )
    agent = scores.filter(pl.col("run") == "agent", pl.col("metric") == "file_recall").row(
        0, named=True
    )
    low, high = stats.bootstrap_ci([1.0, 0.5], n_boot=300, seed=7)
    assert (agent["ci_low"], agent["ci_high"]) == pytest.approx((low, high), abs=1e-12)


def test_paired_tests_within_a_benchmark_only() -> None:
    tests = cc.file_level_tests(_frame(), n_perm=500, seed=3)
    assert tests.columns == list(cc.TESTS)
    assert sorted(tests.select("benchmark", "metric", "run_a", "run_b").rows()) == [
        ("ARB", "file_precision", "bm25", "grep"),
        ("ARB", "file_recall", "bm25", "grep"),
        ("ContextBench", "file_precision", "agent", "bm25"),
        ("ContextBench", "file_recall", "agent", "bm25"),
    ]
    row = tests.filter(pl.col("benchmark") == "ARB", pl.col("metric") == "file_recall").row(
        0, named=True
    )
    p = stats.paired_randomization_test(
        np.array([1.0, 0.5, 0.0]), np.array([1.0, 1.0, 0.5]), n_perm=500, seed=3
    )
    assert (row["n"], row["diff"], row["p_value"]) == (3, pytest.approx(-1 / 3), p)


def test_compare_bundles_frame_scores_and_tests() -> None:
    got = cc.compare(
        ARB_METRICS, ARB_SAMPLES, CB_METRICS, CB_SAMPLES, arb_runs=RUNS, n_boot=100, n_perm=100
    )
    assert got.frame.equals(_frame())
    assert got.scores.equals(cc.file_level_scores(_frame(), n_boot=100))
    assert got.tests.equals(cc.file_level_tests(_frame(), n_perm=100))


def test_ranked_lists_join_as_contextbench_runs_at_k() -> None:
    ranked = pl.DataFrame(
        {
            "run": ["lists"] * 4,
            "sample_id": ["c1", "c2", "c1", "c2"],
            "k": [20, 20, 5, 5],
            "file_coverage": [1.0, None, 0.5, None],  # c2: no ranked path (error row)
            "file_precision": [0.25, None, 0.2, None],
            "error": [None, "no_context_extracted", None, "no_context_extracted"],
        }
    )
    assert sorted(cc.ranked_metrics(ranked, 5).rows()) == [
        ("lists", "c1", "file.coverage", 0.5),
        ("lists", "c1", "file.precision", 0.2),
        ("lists", "c2", "file.coverage", 0.0),
        ("lists", "c2", "file.precision", 0.0),
    ]
    frame = cc.file_level_frame(
        ARB_METRICS, ARB_SAMPLES, CB_METRICS, CB_SAMPLES, arb_runs=RUNS, cb_ranked=ranked
    )
    lists = frame.filter(pl.col("run") == "lists")
    assert lists.select("benchmark", "method", "sample_id", "repo", "file_recall").rows() == [
        ("ContextBench", "lists", "c1", "p/q", 1.0),
        ("ContextBench", "lists", "c2", "p/r", 0.0),
    ]
    assert frame.height == _frame().height + 2
