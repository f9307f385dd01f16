"""Reciprocal-rank fusion (spec §8, TV8) and weighted RRF."""

from __future__ import annotations

import pytest

from arbwb.metrics.rank import fusion_row_metrics as fusion_metrics
from arbwb.retrievers.fusion import fusion_row, rrf


def test_tv8_fused_order_and_scores() -> None:
    fused = rrf([["a", "b", "c", "d"], ["c", "a", "e", "a"]])
    assert [p for p, _ in fused] == ["a", "c", "b", "e", "d"]
    assert dict(fused) == {
        "a": 0.03252247488101534,
        "c": 0.032266458495966696,
        "b": 0.016129032258064516,
        "e": 0.015873015873015872,
        "d": 0.015625,
    }


def test_tv8_ties_by_path() -> None:
    assert [p for p, _ in rrf([["x", "y"], ["y", "x"]])] == ["x", "y"]
    assert [p for p, _ in rrf([["b"], ["a"]])] == ["a", "b"]


def test_tv8_fusion_metrics() -> None:
    m = fusion_metrics(["a", "c", "b", "e", "d"], ["c", "z"])
    assert [m[f"Recall@{k}"] for k in (5, 10, 20)] == [0.5, 0.5, 0.5]
    assert [m[f"Precision@{k}"] for k in (5, 10, 20)] == [0.2, 0.1, 0.05]
    assert m["F0.5@5"] == 0.22727272727272727
    assert m["F0.5@10"] == 0.11904761904761904
    assert m["F0.5@20"] == 0.06097560975609757
    assert [m[f"Any@{k}"] for k in (5, 10, 20)] == [1.0, 1.0, 1.0]
    assert m["MRR"] == 0.5
    assert m["nDCG@20"] == pytest.approx(0.38685280723454163, abs=1e-12)
    assert m["coverage_auc@20"] == pytest.approx(0.475, abs=1e-12)
    assert fusion_metrics(["x", "a", "y", "b"], ["a", "b", "c"])["nDCG@20"] == pytest.approx(
        0.49818925746641285, abs=1e-12
    )


def test_top20_only_empty_strings_ignored_and_weights() -> None:
    long = [f"p{i:02d}" for i in range(30)]
    fused = rrf([long, ["", "p25"]])
    assert "p25" in dict(fused)  # rank 1 in list 2 (empty string ignored): 1/61
    assert dict(fused)["p25"] == 1 / 61
    assert len(fused) == 20
    weighted = rrf([["a"], ["b"]], weights=[1.0, 2.0])
    assert weighted == [("b", 2.0 / 61), ("a", 1.0 / 61)]
    with pytest.raises(ValueError, match="one weight per run"):
        rrf([["a"], ["b"]], weights=[1.0])


def test_fusion_row_fields() -> None:
    base = {
        "sample_id": "s",
        "task_type": "code2test",
        "repo": "o/r",
        "base_commit": "c",
        "candidate_filter": "all_files",
        "gold_files": ["c", "z"],
    }
    row = fusion_row(base, [["a", "b", "c", "d"], ["c", "a", "e", "a"]], labels=["x", "y"])
    assert row["mode"] == "rank_fusion" and row["rrf_k"] == 60
    assert row["fusion_name"] == "rrf_x_y" and row["components"] == ["x", "y"]
    assert row["gold_ranks"] == {"c": 2, "z": None}
    assert row["top_files"] == ["a", "c", "b", "e", "d"]
    assert row["metrics"]["MRR"] == 0.5
