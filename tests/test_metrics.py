"""Rank metrics: spec vectors (TV6, TV8, TV13), name parsing, and the Polars path vs reference."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbwb.errors import InputError
from arbwb.io.rankings import load_rankings
from arbwb.metrics import MetricSpec, coverage, evaluate, parse_metric
from arbwb.metrics.rank import (
    coverage_auc,
    f_beta,
    first_gold_rank,
    hit_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)

TOL = 1e-12
ALL = [
    "recall@1",
    "recall@5",
    "recall@20",
    "precision@5",
    "precision@20",
    "f0.5@5",
    "f2@10",
    "hit@5",
    "ndcg@20",
    "coverage_auc@20",
    "mrr",
    "first_gold_rank",
]


def _rankings(run: str, ranked: dict[str, list[str]]) -> pl.DataFrame:
    rows = [
        {"run": run, "sample_id": s, "rank": i, "path": p, "score": None}
        for s, paths in ranked.items()
        for i, p in enumerate(paths, start=1)
    ]
    schema = {
        "run": pl.String,
        "sample_id": pl.String,
        "rank": pl.Int64,
        "path": pl.String,
        "score": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema)


def _labels(gold: dict[str, list[str]]) -> pl.DataFrame:
    rows = [{"sample_id": s, "path": p, "role": "gold"} for s, paths in gold.items() for p in paths]
    return pl.DataFrame(rows, schema={"sample_id": pl.String, "path": pl.String, "role": pl.String})


def _values(frame: pl.DataFrame, sample: str = "s") -> dict[str, float | None]:
    return dict(frame.filter(pl.col("sample_id") == sample).select("metric", "value").rows())


def test_tv8_fusion_metric_set() -> None:
    ranked, gold = ["a", "c", "b", "e", "d"], {"c", "z"}
    fused = [precision_at_k(ranked, gold, k, fusion=True) for k in (5, 10, 20)]
    assert fused == [0.2, 0.1, 0.05]
    f05 = [f_beta(p, 0.5, 0.5) for p in fused]
    assert f05 == pytest.approx(
        [0.22727272727272727, 0.11904761904761904, 0.06097560975609757], abs=TOL
    )
    assert [recall_at_k(ranked, gold, k) for k in (5, 10, 20)] == [0.5, 0.5, 0.5]
    assert [hit_at_k(ranked, gold, k) for k in (5, 10, 20)] == [1.0, 1.0, 1.0]
    assert reciprocal_rank(ranked, gold) == 0.5
    assert ndcg_at_k(ranked, gold, 20) == pytest.approx(0.38685280723454163, abs=TOL)
    assert coverage_auc(ranked, gold, 20) == pytest.approx(0.475, abs=TOL)
    assert ndcg_at_k(["x", "a", "y", "b"], {"a", "b", "c"}, 20) == pytest.approx(
        0.49818925746641285, abs=TOL
    )
    # the vectorised path with fusion=True gives the same numbers
    names = [
        "precision@5",
        "precision@10",
        "precision@20",
        "f0.5@5",
        "f0.5@10",
        "f0.5@20",
        "ndcg@20",
    ]
    out = _values(
        evaluate(
            _rankings("fus", {"s": ranked}), _labels({"s": ["c", "z"]}), metrics=names, fusion=True
        )
    )
    expected = [
        0.2,
        0.1,
        0.05,
        0.22727272727272727,
        0.11904761904761904,
        0.06097560975609757,
        0.38685280723454163,
    ]
    assert [out[n] for n in names] == pytest.approx(expected, abs=TOL)


def test_tv6_single_run_precision_quirk() -> None:
    ranked, gold = (
        ["src/auth.py", "tests/test_auth.py", "src/session.py"],
        {"src/auth.py", "src/session.py"},
    )
    for k in (5, 10, 20):
        assert precision_at_k(ranked, gold, k) == 0.6666666666666666
        assert f_beta(precision_at_k(ranked, gold, k), 1.0, 0.5) == pytest.approx(
            0.7142857142857142, abs=TOL
        )
    assert coverage_auc(ranked, gold, 20) == 0.95
    names = ["precision@5", "precision@20", "f0.5@10", "coverage_auc@20", "recall@5", "mrr"]
    out = _values(
        evaluate(_rankings("lex", {"s": ranked}), _labels({"s": sorted(gold)}), metrics=names)
    )
    assert [out[n] for n in names] == pytest.approx(
        [0.6666666666666666, 0.6666666666666666, 0.7142857142857142, 0.95, 1.0, 1.0], abs=TOL
    )


def test_precision_of_empty_ranking_and_truncated_prefix() -> None:
    assert precision_at_k([], {"a"}, 5) == 0.0
    assert precision_at_k(["a", "b"], {"a"}, 5, n_ranked=100) == 0.2
    assert f_beta(0.0, 0.0, 0.5) == 0.0


def test_tv13_first_gold_rank() -> None:
    assert first_gold_rank(["x", "y", "c", "d", "e", "f", "b"], {"b", "c", "a"}) == 3
    assert first_gold_rank(["x"], {"a"}) is None
    assert reciprocal_rank(["x"], {"a"}) == 0.0


@pytest.mark.parametrize(
    ("name", "spec", "canonical"),
    [
        ("Recall@20", MetricSpec("recall", k=20), "recall@20"),
        ("MRR", MetricSpec("mrr"), "mrr"),
        ("Any@5", MetricSpec("hit", k=5), "hit@5"),
        ("F0.5@5", MetricSpec("f", k=5, beta=0.5), "f0.5@5"),
        ("f2@10", MetricSpec("f", k=10, beta=2.0), "f2@10"),
        ("nDCG@20", MetricSpec("ndcg", k=20), "ndcg@20"),
        ("coverage_auc@20", MetricSpec("coverage_auc", k=20), "coverage_auc@20"),
        ("first_gold_rank", MetricSpec("first_gold_rank"), "first_gold_rank"),
        ("bcy@8000", MetricSpec("bcy", budget=8000, tau=1), "bcy@8000"),
        ("BCY_tau16@8000", MetricSpec("bcy", budget=8000, tau=16), "bcy_tau16@8000"),
    ],
)
def test_parse_metric(name: str, spec: MetricSpec, canonical: str) -> None:
    assert parse_metric(name) == spec
    assert spec.name == canonical


@pytest.mark.parametrize("name", ["recall", "recall@0", "map@10", "gold_coverage@8k", "f@5"])
def test_parse_metric_rejects_with_valid_forms(name: str) -> None:
    with pytest.raises(ValueError, match="recall@K"):
        parse_metric(name)


def test_edge_cases_in_one_evaluation() -> None:
    ranked = {
        "empty": [],
        "deep": ["x1", "x2"],
        "two": ["x", "g", "h"],
    }
    rankings = _rankings("r", ranked)
    # gold beyond the stored prefix: an extra row at its full-ranking rank (as loaders add)
    deep = pl.DataFrame(
        {"run": ["r"], "sample_id": ["deep"], "rank": [40], "path": ["g"], "score": [None]},
        schema=rankings.schema,
    )
    gold = {"empty": ["g"], "deep": ["g"], "two": ["g", "h"], "missing": ["g"], "nogold": []}
    out = evaluate(
        pl.concat([rankings, deep]),
        _labels(gold),
        metrics=["recall@5", "precision@5", "mrr", "first_gold_rank"],
    )
    assert out.schema == {
        "run": pl.String,
        "sample_id": pl.String,
        "metric": pl.String,
        "value": pl.Float64,
    }
    assert sorted(out["sample_id"].unique()) == [
        "deep",
        "empty",
        "missing",
        "two",
    ]  # no-gold excluded
    assert _values(out, "empty") == {
        "recall@5": 0.0,
        "precision@5": 0.0,
        "mrr": 0.0,
        "first_gold_rank": None,
    }
    assert _values(out, "missing") == _values(out, "empty")  # absent sample: scored, not dropped
    assert _values(out, "deep") == {
        "recall@5": 0.0,
        "precision@5": 0.0,
        "mrr": 1 / 40,
        "first_gold_rank": 40.0,
    }
    assert _values(out, "two") == {
        "recall@5": 1.0,
        "precision@5": 2 / 3,
        "mrr": 0.5,
        "first_gold_rank": 2.0,
    }
    assert out.filter(pl.col("metric") == "first_gold_rank")["value"].null_count() == 2
    assert not out["value"].is_nan().any()


def test_duplicate_paths_collapse_in_loader_and_are_refused_raw(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps({"sample_id": "s", "ranked_files": ["x", "g", "x", "h"]}) + "\n")
    run = load_rankings(path)
    out = _values(
        evaluate(run.rankings, _labels({"s": ["g", "h"]}), metrics=["precision@5", "mrr"])
    )
    # distinct ranking [x, g, h]: 2 gold of min(5, 3) ranked paths
    assert out == {"precision@5": 2 / 3, "mrr": 0.5}
    with pytest.raises(ValueError, match="repeat a path"):
        evaluate(_rankings("r", {"s": ["x", "g", "x"]}), _labels({"s": ["g"]}))


def test_samples_restrict_and_runs_without_rows() -> None:
    labels = _labels({"a": ["g"], "b": ["g"]})
    out = evaluate(
        _rankings("r1", {"a": ["g"]}),
        labels,
        samples=pl.DataFrame({"sample_id": ["a"]}),
        runs=["r2"],
    )
    assert (
        out.select("run", "sample_id", "value").rows()
        == [("r1", "a", 1.0)] * 4 + [("r2", "a", 0.0)] * 4
    )


def test_stored_mrr_fills_rank_beyond_prefix() -> None:
    stored = pl.DataFrame(
        {"run": ["r", "r"], "sample_id": ["a", "b"], "metric": ["mrr", "mrr"], "value": [0.04, 0.5]}
    )
    rankings = _rankings("r", {"a": ["x"] * 1, "b": ["x", "g"]})
    out = evaluate(
        rankings,
        _labels({"a": ["g"], "b": ["g"]}),
        metrics=["mrr", "first_gold_rank"],
        stored=stored,
    )
    assert _values(out, "a") == {"mrr": 0.04, "first_gold_rank": 25.0}
    assert _values(out, "b") == {"mrr": 0.5, "first_gold_rank": 2.0}


def test_bcy_needs_a_corpus() -> None:
    with pytest.raises(InputError, match=r"BCY metrics need a corpus \(--corpus DIR\)"):
        evaluate(_rankings("r", {"a": ["g"]}), _labels({"a": ["g"]}), metrics=["bcy@8000"])


def test_coverage_counts_missing_errors_and_empty_answers() -> None:
    labels = _labels({"a": ["g"], "b": ["g"], "c": ["g"], "d": ["g"], "nogold": []})
    submitted = pl.DataFrame(
        {
            "run": ["r"] * 3,
            "sample_id": ["a", "b", "c"],
            "line": [1, 2, 3],
            "status": ["ok", "ok", "error"],
        }
    )
    out = coverage(_rankings("r", {"a": ["g"]}), labels, submitted=submitted)
    assert out.rows(named=True) == [
        {"run": "r", "n_expected": 4, "n_ranked": 2, "n_missing": 1, "n_error": 1}
    ]


paths = st.sampled_from([f"p{i}" for i in range(30)])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(paths, unique=True, max_size=25), st.sets(paths, min_size=1, max_size=6)
        ),
        min_size=1,
        max_size=6,
    )
)
def test_vectorised_matches_reference(cases: list[tuple[list[str], set[str]]]) -> None:
    ranked = {f"s{i}": r for i, (r, _) in enumerate(cases)}
    gold = {f"s{i}": sorted(g) for i, (_, g) in enumerate(cases)}
    out = evaluate(_rankings("r", ranked), _labels(gold), metrics=ALL, runs=["r"])
    for sample, r in ranked.items():
        g = set(gold[sample])
        p5, p20 = precision_at_k(r, g, 5), precision_at_k(r, g, 20)
        expected = {
            "recall@1": recall_at_k(r, g, 1),
            "recall@5": recall_at_k(r, g, 5),
            "recall@20": recall_at_k(r, g, 20),
            "precision@5": p5,
            "precision@20": p20,
            "f0.5@5": f_beta(p5, recall_at_k(r, g, 5), 0.5),
            "f2@10": f_beta(precision_at_k(r, g, 10), recall_at_k(r, g, 10), 2.0),
            "hit@5": hit_at_k(r, g, 5),
            "ndcg@20": ndcg_at_k(r, g, 20),
            "coverage_auc@20": coverage_auc(r, g, 20),
            "mrr": reciprocal_rank(r, g),
            "first_gold_rank": first_gold_rank(r, g),
        }
        got = _values(out, sample)
        for name, value in expected.items():
            if value is None:
                assert got[name] is None
            else:
                assert math.isclose(got[name] or 0.0, value, abs_tol=TOL), (name, got[name], value)


def test_bcy_is_delegated_with_snapshots_and_filled(monkeypatch: pytest.MonkeyPatch) -> None:
    import arbwb.metrics.evaluation

    seen: dict[str, object] = {}

    def fake(
        rankings: pl.DataFrame,
        labels: pl.DataFrame,
        corpus: object,
        specs: list[MetricSpec],
        *,
        snapshots: pl.DataFrame,
    ) -> pl.DataFrame:
        seen.update(
            specs=[s.name for s in specs],
            snapshots=snapshots.sort("sample_id").rows(),
            corpus=corpus,
        )
        return pl.DataFrame(
            {"run": ["r"], "sample_id": ["a"], "metric": ["bcy@8000"], "value": [0.5]}
        )

    monkeypatch.setattr(arbwb.metrics.evaluation, "bcy_metrics", fake)
    details = pl.DataFrame(
        {"sample_id": ["a", "b"], "repo": ["o/r", "o/r"], "base_commit": ["c1", "c2"]}
    )
    out = evaluate(
        _rankings("r", {"a": ["g"]}),
        _labels({"a": ["g"], "b": ["g"]}),
        metrics=["mrr", "bcy@8000"],
        samples=details,
        corpus="CORPUS",
    )
    assert seen == {
        "specs": ["bcy@8000"],
        "snapshots": [("a", "o/r@c1"), ("b", "o/r@c2")],
        "corpus": "CORPUS",
    }
    assert out.select("sample_id", "metric", "value").rows() == [
        ("a", "mrr", 1.0),
        ("a", "bcy@8000", 0.5),
        ("b", "mrr", 0.0),
        ("b", "bcy@8000", 0.0),
    ]


def test_empty_rankings_need_run_names() -> None:
    with pytest.raises(ValueError, match=r"name the runs with runs=\[...\]"):
        evaluate(_rankings("r", {}), _labels({"a": ["g"]}))
