"""Leaderboard tables: spec TV18/TV19, upstream summary parity on ../shared, known-answer tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from arbwb.analysis import board as boards
from arbwb.analysis import leaderboard as lb
from arbwb.errors import InputError
from arbwb.io.release import load_release
from arbwb.io.samples import target_gold_files

V1_1 = "v1_1_candidate_filter_ablation"
UPSTREAM_KEYS = {"Recall@5": "recall@5", "Recall@10": "recall@10", "Recall@20": "recall@20"}


def shared_layout(root: Path, shared: Path) -> Path:
    """A release root like a downloaded one: benchmark/v0_1 samples, eval/<R> runs (symlinks)."""
    (root / "benchmark").mkdir(parents=True)
    (root / "eval").mkdir()
    (root / "benchmark" / "v0_1").symlink_to(shared / "benchmark" / "v0_1")
    (root / "eval" / V1_1).symlink_to(shared / "eval" / V1_1)
    return root


def _metrics(rows: dict[str, list[float]]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"run": run, "sample_id": f"s{i}", "metric": "mrr", "value": v}
            for run, values in rows.items()
            for i, v in enumerate(values)
        ],
        schema={"run": pl.String, "sample_id": pl.String, "metric": pl.String, "value": pl.Float64},
    )


def _samples(tasks: list[str], repos: list[str]) -> pl.DataFrame:
    n = len(tasks)
    return pl.DataFrame(
        {
            "sample_id": [f"s{i}" for i in range(n)],
            "task": tasks,
            "repo": repos,
            "split": ["dev" if i % 2 == 0 else "heldout" for i in range(n)],
        }
    )


def _value(board: pl.DataFrame, **where: str) -> float:
    row = board.filter(*[pl.col(k) == v for k, v in where.items()])
    assert row.height == 1, where
    return float(row["value"][0])


def test_tv18_aggregation_levels() -> None:
    metrics = _metrics({"run": [1.0, 0.0, 0.5, 0.25, 0.0]})
    samples = _samples(
        ["code2test", "code2test", "trace2code", "comment2context", "edit2ripple"],
        ["A", "A", "B", "C", "C"],
    )
    board = boards.scores(metrics, samples, n_boot=200)
    overall = {"scope": "overall", "metric": "mrr"}
    assert _value(board, aggregation="weighted", **overall) == pytest.approx(0.35, abs=1e-12)
    assert _value(board, aggregation="task_macro", **overall) == pytest.approx(0.3125, abs=1e-12)
    assert _value(board, aggregation="repo_macro", **overall) == pytest.approx(0.375, abs=1e-12)
    code2test = board.filter(pl.col("subset") == "code2test", pl.col("aggregation") == "weighted")
    assert code2test["value"].to_list() == [0.5]
    assert code2test["n"].to_list() == [2]
    # the split scope is arbwb-defined: dev = s0, s2, s4
    assert _value(board, subset="dev", aggregation="weighted") == pytest.approx(0.5, abs=1e-12)
    row = board.filter(pl.col("scope") == "overall", pl.col("aggregation") == "weighted")
    assert row["ci_low"][0] <= 0.35 <= row["ci_high"][0]


@pytest.fixture
def shared_release(tmp_path: Path, shared_dir: Path) -> Path:
    return shared_layout(tmp_path / "release", shared_dir)


def test_shared_v1_1_runs_match_upstream_summaries(shared_release: Path, shared_dir: Path) -> None:
    release = load_release(shared_release)
    assert sorted(release.runs) == [
        "lexical_code_only",
        "lexical_tests_only",
        "repomap_code_only",
        "repomap_tests_only",
    ]
    assert any("no corpus" in note for note in release.notes)
    board = boards.scores(lb.release_metrics(release), release.samples, run_group=release.run_group)
    weighted = board.filter(pl.col("aggregation") == "weighted")
    for run in release.runs:
        summary = json.loads((shared_dir / "eval" / V1_1 / f"{run}_summary.json").read_text())
        for task, expected in summary["metrics"].items():
            subset = "all" if task == "overall" else task
            part = weighted.filter(pl.col("run") == run, pl.col("subset") == subset)
            assert part["n"].unique().to_list() == [expected["samples"]]
            for key in ("Recall@5", "Recall@10", "Recall@20", "MRR"):
                got = _value(part, metric=UPSTREAM_KEYS.get(key, "mrr"))
                assert got == pytest.approx(expected[key], abs=1e-9), (run, task, key)


def test_shared_tv19_macros(shared_release: Path) -> None:
    release = load_release(shared_release)
    board = boards.scores(lb.release_metrics(release), release.samples, run_group=release.run_group)
    overall = board.filter(pl.col("scope") == "overall")
    lex = overall.filter(pl.col("run") == "lexical_code_only")
    assert _value(lex, aggregation="repo_macro", metric="mrr") == pytest.approx(
        0.12771932775983938, abs=1e-12
    )
    assert _value(lex, aggregation="repo_macro", metric="recall@20") == pytest.approx(
        0.44906239574197315, abs=1e-12
    )
    assert _value(lex, aggregation="task_macro", metric="mrr") == pytest.approx(
        0.16332628781848293, abs=1e-12
    )
    repomap = overall.filter(pl.col("run") == "repomap_tests_only")
    assert _value(repomap, aggregation="repo_macro", metric="mrr") == pytest.approx(
        0.18808569269993045, abs=1e-12
    )


def test_run_under_matching_benchmark_uses_its_samples(tmp_path: Path, shared_dir: Path) -> None:
    root = shared_layout(tmp_path / "release", shared_dir)
    (root / "eval" / "v0_1").symlink_to(shared_dir / "eval" / "v0_1")
    release = load_release(root, "eval/v0_1/*_details.jsonl")
    assert release.run_group == {"lexical": "v0_1"}
    summary = json.loads((shared_dir / "eval" / "v0_1" / "lexical_summary.json").read_text())
    board = boards.scores(lb.release_metrics(release), release.samples, run_group=release.run_group)
    overall = board.filter(pl.col("scope") == "overall", pl.col("aggregation") == "weighted")
    assert overall["n"].unique().to_list() == [35]
    expected = summary["metrics"]["overall"]
    assert _value(overall, metric="mrr") == pytest.approx(expected["MRR"], abs=1e-9)
    assert _value(overall, metric="recall@20") == pytest.approx(expected["Recall@20"], abs=1e-9)


def test_missing_prediction_counts_as_zero(tmp_path: Path, shared_dir: Path) -> None:
    root = tmp_path / "release"
    (root / "benchmark").mkdir(parents=True)
    (root / "benchmark" / "v0_1").symlink_to(shared_dir / "benchmark" / "v0_1")
    (root / "eval" / "v0_1").mkdir(parents=True)
    first = json.loads((shared_dir / "benchmark/v0_1/samples.jsonl").open().readline())
    gold = target_gold_files(first)
    pred = {"sample_id": first["id"], "status": "ok", "ranked_files": gold[:1]}
    (root / "eval" / "v0_1" / "mine.jsonl").write_text(json.dumps(pred) + "\n")
    release = load_release(root, "eval/v0_1/mine.jsonl")
    metrics = lb.release_metrics(release)
    board = boards.scores(metrics, release.samples, run_group=release.run_group, n_boot=100)
    overall = board.filter(pl.col("scope") == "overall", pl.col("aggregation") == "weighted")
    assert overall["n"].unique().to_list() == [35]  # 34 absent predictions score 0, not dropped
    assert _value(overall, metric="mrr") == pytest.approx(1 / 35, abs=1e-12)


def test_unpaired_run_without_gold_is_refused(tmp_path: Path, shared_dir: Path) -> None:
    root = tmp_path / "release"
    (root / "benchmark").mkdir(parents=True)
    (root / "benchmark" / "v0_1").symlink_to(shared_dir / "benchmark" / "v0_1")
    (root / "benchmark" / "v2_abstention_pilot").symlink_to(
        shared_dir / "benchmark" / "v2_abstention_pilot"
    )
    (root / "eval" / "elsewhere").mkdir(parents=True)
    run = root / "eval" / "elsewhere" / "mine.jsonl"
    run.write_text(json.dumps({"sample_id": "x", "status": "ok", "ranked_files": []}) + "\n")
    with pytest.raises(InputError, match="cannot tell which samples") as info:
        load_release(root, "eval/elsewhere/*.jsonl")
    assert str(run) in str(info.value)


def test_significance_known_answers() -> None:
    base = list(np.random.default_rng(0).random(40) * 0.5)
    metrics = _metrics({"A": base, "B": list(base), "C": [v + 0.2 for v in base]})
    samples = _samples(["code2test"] * 40, [f"r{i % 5}" for i in range(40)])
    tests = boards.pairwise_tests(metrics, samples, n_perm=2000)
    ab = tests.filter(pl.col("run_a") == "A", pl.col("run_b") == "B")
    assert ab["p_value"].to_list() == [1.0]
    assert ab["p_holm"].to_list() == [1.0]
    assert ab["significant"].to_list() == [False]
    dominated = tests.filter(pl.col("run_b") == "C")
    assert dominated["significant"].to_list() == [True, True]
    assert dominated["p_holm"].max() < 0.01  # type: ignore[operator]
    clustered = boards.pairwise_tests(metrics, samples, n_perm=2000, cluster="repo")
    # 5 repositories all favouring C: the smallest attainable two-sided p is 2/32
    assert clustered.filter(pl.col("run_b") == "C")["p_value"].to_list() == pytest.approx(
        [2 / 32, 2 / 32], abs=0.02
    )
    ranks = boards.rank_table(metrics, samples, tests, n_boot=300)
    by_run = {r["run"]: r for r in ranks.iter_rows(named=True)}
    assert by_run["C"]["rank"] == 1
    assert (by_run["C"]["rank_best"], by_run["C"]["rank_worst"]) == (1, 1)
    assert by_run["A"]["rank"] == by_run["B"]["rank"] == 2
    assert {r: by_run[r]["tie_group"] for r in "ABC"} == {"A": 2, "B": 2, "C": 1}


def test_summary_table_columns_and_order() -> None:
    metrics = pl.concat(
        [
            _metrics({"A": [1.0, 0.0, 0.5, 0.5], "B": [0.0, 0.0, 0.5, 0.5]}),
            _metrics({"A": [1.0, 1.0, 0.0, 0.0], "B": [1.0, 1.0, 1.0, 0.0]}).with_columns(
                metric=pl.lit("recall@20")
            ),
        ]
    )
    samples = _samples(["code2test", "trace2code", "code2test", "trace2code"], ["a", "a", "b", "b"])
    table = boards.summary_table(boards.scores(metrics, samples, n_boot=50), group="all")
    assert table.columns == [
        "Run", "n", "MRR", "R@20", "Macro MRR", "Macro R@20", "Repo MRR", "Repo R@20",
    ]  # fmt: skip
    assert table["Run"].to_list() == ["A", "B"]  # MRR 0.5 > 0.25
    assert table["MRR"][0].startswith("0.5000 [")
    assert boards.metric_label("bcy@8000") == "BCY@8k"


def test_default_run_set_leaves_out_selective_runs() -> None:
    demo = Path(__file__).resolve().parents[1] / "data" / "demo"
    default = load_release(demo)
    assert sorted(default.runs) == [
        "bm25",
        "bm25-arb",
        "dense_hash",
        "grep",
        "grep-expanded",
        "lexical",
        "lexical_code_only",
        "repomap",
        "rrf_lexical_dense_hash",
    ]
    assert any("selective (abstention) runs left out" in n for n in default.notes)
    explicit = load_release(demo, "eval/demo_selective/*_details.jsonl")
    assert sorted(explicit.runs) == [
        "demo_all_files_selective_bm25-arb",
        "demo_all_files_selective_lexical",
    ]
