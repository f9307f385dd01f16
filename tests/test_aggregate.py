"""Aggregation levels (spec §12): TV18 by hand, TV19 on the shared v1_1 runs."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from arbwb.io.rankings import load_rankings
from arbwb.metrics import evaluate
from arbwb.metrics.aggregate import aggregate, repo_macro, task_macro

TOL = 1e-12


@pytest.fixture
def tv18() -> tuple[pl.DataFrame, pl.DataFrame]:
    rows = [
        ("s1", "A", "code2test", 1.0),
        ("s2", "A", "code2test", 0.0),
        ("s3", "B", "trace2code", 0.5),
        ("s4", "C", "comment2context", 0.25),
        ("s5", "C", "edit2ripple", 0.0),
    ]
    metrics = pl.DataFrame(
        {
            "run": ["r"] * 5,
            "sample_id": [r[0] for r in rows],
            "metric": ["mrr"] * 5,
            "value": [r[3] for r in rows],
        }
    )
    samples = pl.DataFrame(
        {
            "sample_id": [r[0] for r in rows],
            "repo": [r[1] for r in rows],
            "task": [r[2] for r in rows],
            "split": ["dev", "dev", "heldout", "dev", "heldout"],
        }
    )
    return metrics, samples


def test_tv18_levels(tv18: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    metrics, samples = tv18
    assert aggregate(metrics).rows() == [("r", "mrr", 5, pytest.approx(0.35, abs=TOL))]
    macro = task_macro(metrics, samples, require_all=True).row(0, named=True)
    assert macro["value"] == pytest.approx(0.3125, abs=TOL)
    assert (macro["n_tasks"], macro["tasks"]) == (
        4,
        "code2test,comment2context,edit2ripple,trace2code",
    )
    repo = repo_macro(metrics, samples).row(0, named=True)
    assert (repo["value"], repo["n_repos"]) == (pytest.approx(0.375, abs=TOL), 3)
    by_split = aggregate(metrics, samples, by="split").select("split", "n", "value").rows()
    assert by_split == [("dev", 3, pytest.approx(1.25 / 3, abs=TOL)), ("heldout", 2, 0.25)]


def test_partial_task_macro_is_labelled_or_refused(tv18: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    metrics, samples = tv18
    three = metrics.filter(pl.col("sample_id") != "s5")
    macro = task_macro(three, samples).row(0, named=True)
    assert (macro["value"], macro["n_tasks"]) == (pytest.approx(1.25 / 3, abs=TOL), 3)
    with pytest.raises(ValueError, match="has only 'code2test,comment2context,trace2code'"):
        task_macro(three, samples, require_all=True)


def test_unknown_samples_and_groupings_are_refused(tv18: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    metrics, samples = tv18
    with pytest.raises(ValueError, match="1 sample ids have no 'task'"):
        aggregate(metrics, samples.filter(pl.col("sample_id") != "s1"), by="task")
    with pytest.raises(ValueError, match="no column 'stratum'"):
        aggregate(metrics, samples, by="stratum")
    with pytest.raises(ValueError, match="cannot group by 'language'"):
        aggregate(metrics, samples, by="language")


def test_null_values_are_left_out_but_counted() -> None:
    metrics = pl.DataFrame(
        {
            "run": ["r", "r"],
            "sample_id": ["a", "b"],
            "metric": ["first_gold_rank"] * 2,
            "value": [4.0, None],
        }
    )
    assert aggregate(metrics).rows() == [("r", "first_gold_rank", 2, 4.0)]


def _scored(shared_dir: Path, stem: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    run = load_rankings(
        shared_dir / "eval" / "v1_1_candidate_filter_ablation" / f"{stem}_details.jsonl"
    )
    assert run.labels is not None and run.details is not None
    metrics = evaluate(run.rankings, run.labels, samples=run.details, stored=run.stored)
    return metrics, run.details


def test_tv19_macros(shared_dir: Path) -> None:
    metrics, details = _scored(shared_dir, "lexical_code_only")
    repo = dict(repo_macro(metrics, details).select("metric", "value").rows())
    assert repo["mrr"] == pytest.approx(0.12771932775983938, abs=TOL)
    assert repo["recall@20"] == pytest.approx(0.44906239574197315, abs=TOL)
    macro = task_macro(metrics, details).filter(pl.col("metric") == "mrr").row(0, named=True)
    assert macro["value"] == pytest.approx(0.16332628781848293, abs=TOL)
    assert macro["tasks"] == "code2test,comment2context,trace2code"
    overall = dict(aggregate(metrics).select("metric", "value").rows())
    assert overall["mrr"] == pytest.approx(0.16200440756071394, abs=TOL)
    metrics, details = _scored(shared_dir, "repomap_tests_only")
    repo = dict(repo_macro(metrics, details).select("metric", "value").rows())
    assert repo["mrr"] == pytest.approx(0.18808569269993045, abs=TOL)
    assert repo_macro(metrics, details)["n_repos"].to_list() == [25] * 4
