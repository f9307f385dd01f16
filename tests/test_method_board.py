"""Method leaderboards: the missing rule against upstream summaries, spec §13.1 table order."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from arbwb.analysis import leaderboard as lb
from arbwb.analysis import method_leaderboard as mb
from arbwb.errors import InputError
from arbwb.io.release import apply_missing, load_release
from arbwb.metrics import DEFAULT_METRICS

UPSTREAM = {
    "Recall@5": "recall@5",
    "Recall@10": "recall@10",
    "Recall@20": "recall@20",
    "MRR": "mrr",
}


def _v0_1_root(root: Path, shared: Path, *, drop: int = 0) -> Path:
    """benchmark/v0_1 (35 samples) and eval/v0_1's lexical run, its first ``drop`` rows left out.

    With rows left out, the summary beside the details is rewritten the way upstream writes
    it (spec §4.8, read literally): ``evaluated`` = details rows, each group's metric = the
    mean of the rows' stored per-sample values, summed left to right.
    """
    (root / "benchmark").mkdir(parents=True)
    (root / "benchmark" / "v0_1").symlink_to(shared / "benchmark" / "v0_1")
    run = root / "eval" / "v0_1"
    run.mkdir(parents=True)
    source = shared / "eval" / "v0_1"
    if not drop:
        for name in ("lexical_details.jsonl", "lexical_summary.json"):
            (run / name).symlink_to(source / name)
        return root
    lines = (source / "lexical_details.jsonl").read_text(encoding="utf-8").splitlines()[drop:]
    (run / "lexical_details.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [json.loads(line) for line in lines]
    metrics: dict[str, dict[str, float]] = {}
    for group in ["overall", *sorted({r["task_type"] for r in rows})]:
        members = [r for r in rows if group in ("overall", r["task_type"])]
        means: dict[str, float] = {"samples": len(members)}
        for key in UPSTREAM:
            total = 0.0
            for r in members:
                total += r["metrics"][key]
            means[key] = total / len(members)
        metrics[group] = means
    summary = {"evaluated": len(rows), "metrics": metrics, "mode": "corpus", "skipped": {}}
    (run / "lexical_summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return root


def _board(root: Path, missing: str) -> pl.DataFrame:
    release = load_release(root)
    metrics = lb.release_metrics(release, metrics=DEFAULT_METRICS)
    done = release.answered()
    return mb.scores(
        metrics, release.samples, done, groups=release.run_group, missing=missing, n_boot=50
    )


def _check_against_summary(board: pl.DataFrame, summary: dict[str, object]) -> None:
    groups = summary["metrics"]
    assert isinstance(groups, dict)
    for group, values in groups.items():
        scope = ("overall", "all") if group == "overall" else ("task", group)
        part = board.filter(
            pl.col("scope") == scope[0],
            pl.col("subset") == scope[1],
            pl.col("aggregation") == "weighted",
        )
        assert part["n_evaluated"].unique().to_list() == [values["samples"]]
        for key, metric in UPSTREAM.items():
            got = part.filter(pl.col("metric") == metric)["value"].item()
            assert got == pytest.approx(values[key], abs=1e-12), (group, key)


@pytest.mark.shared
@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_v0_1_both_rules_equal_upstream_summary(
    tmp_path: Path, shared_dir: Path, missing: str
) -> None:
    """Upstream's v0_1 lexical run evaluated all 35 samples, so both rules give its summary."""
    root = _v0_1_root(tmp_path / "root", shared_dir)
    summary = json.loads((root / "eval/v0_1/lexical_summary.json").read_text())
    assert summary["evaluated"] == 35 and summary["skipped"] == {}
    board = _board(root, missing)
    _check_against_summary(board, summary)
    overall = board.filter(pl.col("scope") == "overall").row(0, named=True)
    assert (overall["n"], overall["n_evaluated"], overall["n_missing"]) == (35, 35, 0)


@pytest.mark.shared
def test_skip_reproduces_upstream_when_predictions_are_missing(
    tmp_path: Path, shared_dir: Path
) -> None:
    root = _v0_1_root(tmp_path / "root", shared_dir, drop=3)
    summary = json.loads((root / "eval/v0_1/lexical_summary.json").read_text())
    skip = _board(root, "skip")
    _check_against_summary(skip, summary)
    zero = _board(root, "zero")
    for board in (skip, zero):  # the counts are the same under both rules
        row = board.filter(pl.col("scope") == "overall", pl.col("metric") == "mrr")
        assert row.select("n", "n_evaluated", "n_missing").rows() == [(35, 32, 3)] * 3
    for metric in UPSTREAM.values():  # arbwb's rule: the 3 missing samples score 0 of 35
        pick = (pl.col("scope") == "overall") & (pl.col("aggregation") == "weighted")
        pick &= pl.col("metric") == metric
        got = zero.filter(pick)["value"].item()
        assert got == pytest.approx(skip.filter(pick)["value"].item() * 32 / 35, abs=1e-12)


def _board_rows(values: dict[str, dict[str, float]]) -> pl.DataFrame:
    rows = [
        {"group": "g", "run": run, "scope": "overall", "subset": "all", "aggregation": agg,
         "metric": metric, "n": 10, "n_evaluated": 9, "n_missing": 1, "n_groups": None,
         "value": v, "ci_low": v, "ci_high": v}
        for run, metrics in values.items()
        for key, v in metrics.items()
        for agg, metric in [key.split(":")]
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=mb.BOARD)


def test_table_orders_follow_spec_13_1() -> None:
    board = _board_rows(
        {
            "b": {"weighted:mrr": 0.5, "weighted:recall@20": 0.7, "weighted:bcy@8000": 0.2,
                  "weighted:bcy@4000": 0.1},
            "a": {"weighted:mrr": 0.5, "weighted:recall@20": 0.7, "weighted:bcy@8000": 0.3,
                  "weighted:bcy@4000": 0.1},
            "c": {"weighted:mrr": 0.5, "weighted:recall@20": 0.9, "weighted:bcy@8000": 0.2,
                  "weighted:bcy@4000": 0.1},
            "d": {"weighted:mrr": 0.6, "weighted:recall@20": 0.1, "weighted:bcy@8000": 0.1,
                  "weighted:bcy@4000": 0.1},
        }
    )  # fmt: skip
    family = {"a": "lexical", "b": "embedding", "c": "grep", "d": "structure"}
    v2 = mb.v2_table(board, family, group="g")
    assert v2["Model"].to_list() == ["d", "c", "a", "b"]  # MRR desc, R@20 desc, model asc
    assert v2["Family"].to_list() == ["structure", "grep", "lexical", "embedding"]
    assert v2.columns[:5] == ["Model", "Family", "n", "n_evaluated", "n_missing"]
    layered = mb.layered_table(board, family, group="g")
    assert layered["Method"].to_list() == ["d", "c", "b", "a"]  # (MRR, R@20, method) desc
    assert layered["Rank"].to_list() == [1, 2, 3, 4]
    assert layered.columns == ["Rank", "Method", "Type", "n", "n_evaluated", "n_missing",
                               "R@20", "MRR", "BCY@8k"]  # fmt: skip
    bcy = mb.bcy_table(board, family, group="g")
    assert bcy["Method"].to_list() == ["a", "c", "b", "d"]  # (BCY@8k, method) desc
    assert bcy.columns[-2:] == ["BCY@4k", "BCY@8k"]


def test_method_metrics_refuses_two_runs_of_one_method_on_a_sample() -> None:
    metrics = pl.DataFrame(
        {
            "run": ["x", "y"],
            "sample_id": ["s1", "s1"],
            "metric": ["mrr", "mrr"],
            "value": [1.0, 0.5],
        }
    )
    methods = pl.DataFrame({"run": ["x", "y"], "method": ["M", "M"]})
    with pytest.raises(InputError, match="both score sample 's1'"):
        mb.method_metrics(metrics, methods)


def test_unknown_missing_rule_is_an_input_error() -> None:
    empty = pl.DataFrame(schema={"run": pl.String, "sample_id": pl.String})
    with pytest.raises(InputError, match="missing must be one of"):
        apply_missing(empty, empty, "drop")


def test_release_shaped_root_joins_lexical_across_subsets(tmp_path: Path) -> None:
    """Library view of the joined method, both rules, against plain-Python sums."""
    from release_shaped import build, dropped_sample, lexical_reference

    from arbwb.io import method_table as mt

    root = build(tmp_path / "root")
    release = load_release(root)
    table = mt.run_methods(release, mt.read_methods(root / "methods.csv"))
    metrics = lb.release_metrics(release, metrics=DEFAULT_METRICS)
    joined = mb.method_metrics(metrics, table)
    done = mb.method_answered(release.answered(), table)
    groups = mt.method_groups(table)
    assert groups["Lexical"] == "A+B"
    reference = lexical_reference(root)
    dropped = dropped_sample(root)
    gold = list(reference)
    mrr = {sid: values["mrr"] for sid, values in reference.items()}
    for missing, ids in (("zero", gold), ("skip", [s for s in gold if s != dropped])):
        board = mb.scores(joined, release.samples, done, groups=groups, missing=missing, n_boot=50)
        row = board.filter(
            pl.col("run") == "Lexical",
            pl.col("scope") == "overall",
            pl.col("aggregation") == "weighted",
            pl.col("metric") == "mrr",
        ).row(0, named=True)
        assert (row["n"], row["n_evaluated"], row["n_missing"]) == (len(gold), len(gold) - 1, 1)
        assert row["value"] == pytest.approx(sum(mrr[s] for s in ids) / len(ids), abs=1e-12)
    shutil.rmtree(root)
