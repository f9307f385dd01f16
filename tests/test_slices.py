"""Slice leaderboard (spec §10.7): upstream point table on data/demo, intervals, best-vs-runner-up
tests with Holm, the multi-label view, and RRF of stored runs (spec §8)."""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from arbwb.analysis import relevance as rl
from arbwb.analysis import slices as sl
from arbwb.analysis import taxonomy as tx
from arbwb.analysis.leaderboard import release_metrics
from arbwb.analysis.result import Resampling
from arbwb.io.release import Release, load_release
from arbwb.metrics.stats import holm, paired_randomization_test

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"


@pytest.fixture(scope="module")
def demo() -> Release:
    if not (DEMO / "eval" / "demo").is_dir():
        pytest.skip("data/demo has no runs")
    return load_release(DEMO)


def test_slice_table_is_upstreams_10_7_on_demo(demo: Release) -> None:
    """Means of the details rows' stored Recall@20 and MRR per primary label (and task)."""
    labels = {
        r["sample_id"]: (r["primary_relevance_type"], r["task_type"])
        for r in rl.annotate_path(DEMO / "benchmark" / "demo").iter_rows(named=True)
        if r["task_type"] in rl.CORE_TASKS
    }
    expected: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for details in sorted((DEMO / "eval" / "demo").glob("*_details.jsonl")):
        run = details.name.removesuffix("_details.jsonl")
        for line in details.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["sample_id"] not in labels or not row["gold_files"]:
                continue
            label, task = labels[row["sample_id"]]
            for scope in ("all", task):
                expected[(run, label, scope, "recall@20")].append(row["metrics"]["Recall@20"])
                expected[(run, label, scope, "mrr")].append(row["metrics"]["MRR"])
    metrics = release_metrics(demo, metrics=sl.slice_metric_names(demo))
    annotations = rl.annotate_samples(demo.samples)
    table = sl.slice_table(metrics, annotations, run_group=demo.run_group)
    assert "bcy@8000" in table.columns  # data/demo ships a corpus
    got = {
        (r["run"], r["relevance_type"], r["task"], m): (r[m], r["samples"])
        for r in table.iter_rows(named=True)
        for m in ("recall@20", "mrr")
    }
    assert set(got) == set(expected)
    for key, values in expected.items():
        value, n = got[key]
        assert n == len(values)
        assert value == pytest.approx(sum(values) / len(values), abs=1e-12), key
    board = sl.label_leaderboard(table, label="causal_indirect")
    assert board.columns == ["Rank", "Method", "Family", "n", "R@20", "MRR", "BCY@8k"]
    mrr = board["MRR"].to_list()
    assert mrr == sorted(mrr, reverse=True) and board["Rank"].to_list()[0] == 1


def test_no_corpus_means_no_bcy_column(demo: Release) -> None:
    bare = dataclasses.replace(demo, corpus=None)
    assert sl.slice_metric_names(bare) == ("recall@20", "mrr")
    metrics = release_metrics(bare, metrics=sl.slice_metric_names(bare))
    table = sl.slice_table(metrics, rl.annotate_samples(bare.samples), run_group=bare.run_group)
    assert "bcy@8000" not in table.columns
    assert "BCY@8k" not in sl.label_leaderboard(table, label="semantic_direct").columns


def test_exclusions_count_every_left_out_sample(demo: Release) -> None:
    annotations = rl.annotate_samples(demo.samples)
    left = sl.exclusions(annotations)
    outside = annotations.filter(~pl.col("task_type").is_in(list(rl.CORE_TASKS)))
    assert left["samples"].sum() == outside.height
    member = sl.membership(annotations)
    primary = member.filter(pl.col("view") == "primary")
    assert primary.height + outside.height == annotations.height
    multi = member.filter(pl.col("view") == "multi")
    assert (
        multi.height
        == annotations.filter(pl.col("task_type").is_in(list(rl.CORE_TASKS)))["relevance_types"]
        .list.len()
        .sum()
    )


def _toy() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Annotations for 6 samples (two labels each for some) and metrics of runs a, b, c."""
    records = [
        {"id": f"t{i}", "task_type": "trace2code", "query": {"failure_excerpt": q}, "gold": g}
        for i, (q, g) in enumerate(
            [
                ("lookup store", {"root_cause_files": ["cache/store.py"]}),  # causal + semantic
                ("boom", {"root_cause_files": ["x/y.py"]}),
                ("crash", {"root_cause_files": ["z/w.py"]}),
            ]
        )
    ]
    records += [
        {"id": f"c{i}", "task_type": "code2test", "query": {"pr_title": "x"}, "gold": g}
        for i, g in enumerate([{"related_tests": ["t/a.py"]}] * 3)
    ]
    annotations = rl.annotate_records(records)
    values = {
        "a": {"mrr": [1.0, 0.5, 0.5, 0.2, 0.2, 0.2], "recall@20": [1.0] * 6},
        "b": {"mrr": [0.5, 0.5, 0.5, 0.2, 0.2, 0.2], "recall@20": [1.0] * 6},
        "c": {"mrr": [0.0, 0.0, 0.0, 0.2, 0.2, 0.2], "recall@20": [0.0] * 3 + [1.0] * 3},
    }
    ids = ["t0", "t1", "t2", "c0", "c1", "c2"]
    rows = [
        {"run": run, "sample_id": sid, "metric": metric, "value": v}
        for run, by_metric in values.items()
        for metric, vs in by_metric.items()
        for sid, v in zip(ids, vs, strict=True)
    ]
    return annotations, pl.DataFrame(rows)


def test_slice_scores_views_and_intervals() -> None:
    annotations, metrics = _toy()
    scores = sl.slice_scores(metrics, annotations, n_boot=300, seed=1)
    get = {
        (r["view"], r["slice"], r["task"], r["run"], r["metric"]): r
        for r in scores.iter_rows(named=True)
    }
    causal = get[("primary", "causal_indirect", "all", "a", "mrr")]
    assert (causal["n"], causal["value"]) == (3, pytest.approx(2.0 / 3.0))
    assert causal["ci_low"] <= causal["value"] <= causal["ci_high"]
    # t0 also has semantic_direct: in the multi view only
    semantic = get[("multi", "semantic_direct", "all", "a", "mrr")]
    assert (semantic["n"], semantic["value"]) == (1, 1.0)
    assert ("primary", "semantic_direct", "all", "a", "mrr") not in get
    assert get[("primary", "workflow_conventional", "code2test", "c", "recall@20")]["value"] == 1.0


def test_best_per_slice_runner_up_test_and_holm() -> None:
    annotations, metrics = _toy()
    best = sl.best_per_slice(metrics, annotations, n_perm=999, seed=3)
    primary = {
        r["slice"]: r for r in best.filter(pl.col("view") == "primary").iter_rows(named=True)
    }
    causal = primary["causal_indirect"]
    assert (causal["best"], causal["runner_up"]) == ("a", "b")
    a = np.array([1.0, 0.5, 0.5])
    b = np.array([0.5, 0.5, 0.5])
    assert causal["p_value"] == paired_randomization_test(a, b, n_perm=999, seed=3)
    assert causal["diff"] == pytest.approx(a.mean() - b.mean())
    # all three runs tie on MRR and R@20 for code2test: names decide, a then b
    workflow = primary["workflow_conventional"]
    assert (workflow["best"], workflow["runner_up"], workflow["diff"]) == ("a", "b", 0.0)
    p = [causal["p_value"], workflow["p_value"]]
    assert [causal["p_holm"], workflow["p_holm"]] == pytest.approx(list(holm(p)))
    single = sl.best_per_slice(metrics.filter(pl.col("run") == "c"), annotations, n_perm=99)
    assert single["runner_up"].is_null().all() and single["p_holm"].is_null().all()


def test_rrf_of_stored_runs_matches_the_stored_fusion(demo: Release) -> None:
    fused = sl.rrf_metrics(demo, [("dense_hash", "lexical")], metrics=("recall@20", "mrr"))
    name = sl.fused_name(("dense_hash", "lexical"))
    assert fused.run_group == {name: "demo"} and fused.not_in_every_run == {name: 0}
    stored = {}
    for line in (DEMO / "eval" / "demo" / "rrf_lexical_dense_hash_details.jsonl").open():
        row = json.loads(line)
        stored[(row["sample_id"], "mrr")] = row["metrics"]["MRR"]
        stored[(row["sample_id"], "recall@20")] = row["metrics"]["Recall@20"]
    got = {(s, m): v for _, s, m, v in fused.metrics.iter_rows()}
    assert got == stored
    with pytest.raises(ValueError, match="not in the release"):
        sl.rrf_metrics(demo, [("lexical", "nope")])
    assert sl.rrf_combinations(["a", "b", "c"]) == [
        ("a", "b"),
        ("a", "c"),
        ("b", "c"),
        ("a", "b", "c"),
    ]
    assert sl.rrf_combinations(["a", "b", "c"], limit=2) == [("a", "b"), ("a", "c")]


def test_best_by_mode_and_empty_inputs() -> None:
    annotations, metrics = _toy()
    table = sl.slice_table(metrics, annotations)
    modes = sl.best_by_mode(table)
    assert modes.columns == ["group", "Mode", "n", "Best MRR", "Best R@20"]
    assert modes.row(0) == ("all", "workflow_conventional", 3, pytest.approx(0.2), 1.0)
    assert modes.row(1) == ("all", "causal_indirect", 3, pytest.approx(2.0 / 3.0), 1.0)
    none = sl.slice_table(metrics.with_columns(sample_id=pl.lit("zz")), annotations)
    assert none.is_empty() and {"mrr", "recall@20"} <= set(none.columns)
    assert sl.label_leaderboard(none, label="causal_indirect").is_empty()
    assert sl.best_per_slice(metrics.head(0), annotations).is_empty()
    assert sl.slice_scores(metrics.head(0), annotations).is_empty()


def test_taxonomy_run_writes_the_notebook_tables_and_records(demo: Release) -> None:
    """``corpus="none"`` drops BCY everywhere; the slice board is scored per group and its
    tables and records sit between the label tables and the example browser."""
    options = tx.TaxonomyOptions(
        corpus="none", rrf_max=2, resampling=Resampling(n_boot=50, n_perm=50)
    )
    result = tx.run(demo, options)
    assert demo.corpus is not None and result.metric_names == sl.SLICE_METRICS
    board = result.slices
    assert board is not None
    names = [t.name for t in result.tables()]
    assert names[:5] == ["distribution", "by_task", "flags", "confidence", "left_out"]
    assert names[5:7] == ["slice_table", "best_by_mode"] and names[-1] == "examples"
    assert [f"leaderboard__{label}" for label in board.boards] == names[7 : 7 + len(board.boards)]
    records = result.records()
    assert records["bcy"] is False and "skipped" not in records
    assert not any("bcy" in key for key in records["slice_table"])
    assert len(records["rrf_runs"]) == len(board.combos) == 2
    assert records["n_annotated"] == demo.samples.height
    bare = dataclasses.replace(demo, runs={}, run_group={})
    empty = tx.run(bare, tx.TaxonomyOptions(data_dir="here")).records()
    assert empty["skipped_slices"] == "no runs under here: the label distribution is all there is"
    assert "slice_table" not in empty and empty["distribution"] == records["distribution"]
