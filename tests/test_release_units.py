"""Comparison units on a release-shaped root: every analysis scores a run over its own samples.

The root (``release_shaped.build``) has subsets A and B, one method under two stems
(``lexical`` in A, ``lexical_all_files`` in B, one of its rows dropped) and a run stored in A
only (``grep-expanded``). Budget curves, the leaderboard and the per-sample metrics behind
slices and taxonomy must agree on each run's universe and on BCY@8000, which a plain-Python
packing over the run's own samples reproduces (spec §5.7 read literally).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from release_shaped import SUBSETS, build, dropped_sample

from arbwb.analysis import budget, leaderboard
from arbwb.analysis.leaderboard import release_metrics
from arbwb.analysis.result import Resampling
from arbwb.io import method_table as mt
from arbwb.io.release import Release, load_release

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^A-Za-z0-9_\s]")
FAST = Resampling(n_boot=20, n_perm=20)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("units") / "root")


@pytest.fixture(scope="module")
def release(root: Path) -> Release:
    return load_release(root)


@pytest.fixture(scope="module")
def curves(release: Release) -> budget.BudgetResult:
    options = budget.BudgetOptions(budgets=[250, 8000], taus=[1], resampling=FAST)
    return budget.run(release, options)


@pytest.fixture(scope="module")
def board(release: Release, root: Path) -> leaderboard.LeaderboardResult:
    options = leaderboard.LeaderboardOptions(
        methods=mt.read_methods(root / "methods.csv"), resampling=FAST
    )
    return leaderboard.run(release, options)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _universe(root: Path, subset: str) -> set[str]:
    """Gold sample ids of a subset (from its bm25 run, which ranks every sample)."""
    rows = _rows(root / "eval" / subset / "bm25_details.jsonl")
    return {r["sample_id"] for r in rows if r["gold_files"]}


def _hand_bcy(root: Path, subset: str, stem: str, budget_tokens: int) -> float:
    """Mean BCY@budget (τ = 1) of a run over its subset's gold samples; absent rows score 0."""
    corpus = root / "corpus" / subset
    chunks = {
        (m["repo"], m["base_commit"]): root / "corpus" / m["chunks_path"]
        for m in _rows(corpus / "corpus_manifest.jsonl")
    }
    values: dict[str, float] = {}
    for row in _rows(root / "eval" / subset / f"{stem}_details.jsonl"):
        gold = set(row["gold_files"])
        if not gold:
            continue
        texts = {
            c["path"]: c["text"]
            for c in _rows(chunks[(row["repo"], row["base_commit"])])
            if c["kind"] == "file"
        }
        used, covered = 0, 0
        for path in list(dict.fromkeys(p for p in row["top_files"] if p))[:20]:
            if path not in texts:
                continue  # a missing file is free
            h, c = len(TOKEN.findall(f"### {path}\n")), len(TOKEN.findall(texts[path]))
            total = h + c + (1 if texts[path] else 0)
            if budget_tokens - used <= 0:
                break
            whole = total <= budget_tokens - used
            m = c if whole else min(c, max(0, budget_tokens - used - h))
            used = used + total if whole else budget_tokens
            covered += path in gold and c > 0 and m >= 1
            if used >= budget_tokens:
                break
        values[row["sample_id"]] = covered / len(gold)
    universe = _universe(root, subset)
    return sum(values.get(sid, 0.0) for sid in universe) / len(universe)


def _stored(root: Path, subset: str) -> dict[str, str]:
    """Run name (as load_release names it: a stem both subsets store gets its folder) -> stem."""
    stems = {
        s: {
            p.name.removesuffix("_details.jsonl")
            for p in (root / "eval" / s).glob("*_details.jsonl")
        }
        for s in SUBSETS
    }
    others = set().union(*(stems[s] for s in SUBSETS if s != subset))
    return {f"{subset}/{stem}" if stem in others else stem: stem for stem in sorted(stems[subset])}


def _overall(curves: budget.BudgetResult, budget_tokens: int) -> dict[str, tuple[int, float]]:
    part = curves.curves.filter(
        pl.col("task") == "overall", pl.col("budget") == budget_tokens, pl.col("tau") == 1
    )
    return {run: (n, bcy) for run, n, bcy in part.select("run", "n", "bcy").iter_rows()}


def test_root_has_the_shapes_the_units_must_handle(release: Release, root: Path) -> None:
    assert set(release.groups) == set(SUBSETS)
    assert "grep-expanded" in release.groups["A"] and "B/grep-expanded" not in release.runs
    table = mt.run_methods(release, mt.read_methods(root / "methods.csv"))
    lexical = table.filter(pl.col("method") == "Lexical")
    assert sorted(lexical["run"]) == ["lexical", "lexical_all_files"]
    assert mt.method_groups(table)["Lexical"] == "A+B"


def test_units_follow_the_missing_rule(release: Release, root: Path) -> None:
    zero, skip = release.units("zero"), release.units("skip")
    for subset in SUBSETS:
        for run in release.groups[subset]:
            assert set(zero.filter(pl.col("run") == run)["sample_id"]) == _universe(root, subset)
    lacking = zero.join(skip, on=["run", "sample_id"], how="anti")
    assert lacking.select("run", "sample_id").rows() == [
        ("lexical_all_files", dropped_sample(root))
    ]


def test_budget_bcy_equals_leaderboard_and_hand_computation(
    curves: budget.BudgetResult, board: leaderboard.LeaderboardResult, root: Path
) -> None:
    overall = _overall(curves, 8000)
    values = board.run_level.board.filter(
        pl.col("scope") == "overall",
        pl.col("aggregation") == "weighted",
        pl.col("metric") == "bcy@8000",
    )
    from_board = dict(values.select("run", "value").iter_rows())
    checked = 0
    for subset in SUBSETS:
        for run, stem in _stored(root, subset).items():
            n, value = overall[run]
            assert n == len(_universe(root, subset)), run
            assert value == pytest.approx(from_board[run], abs=1e-12), run
            assert value == pytest.approx(_hand_bcy(root, subset, stem, 8000), abs=1e-12), run
            checked += 1
    assert checked == len(overall) == len(from_board) == 17


def test_budget_curves_are_not_diluted_by_other_subsets(
    curves: budget.BudgetResult, root: Path
) -> None:
    """The old notebook packed every run against every subset's gold: A's runs scored 0 on
    B's samples. At 250 tokens (runs differ there) each run's mean is over its own samples."""
    all_gold = len(_universe(root, "A") | _universe(root, "B"))
    overall = _overall(curves, 250)
    for subset in SUBSETS:
        own = len(_universe(root, subset))
        assert own < all_gold
        for run, stem in _stored(root, subset).items():
            n, value = overall[run]
            hand = _hand_bcy(root, subset, stem, 250)
            assert (n, value) == (own, pytest.approx(hand, abs=1e-12)), run
            assert hand == 0 or value != pytest.approx(hand * own / all_gold), run


def test_every_analysis_scores_a_run_over_the_same_samples(
    curves: budget.BudgetResult, board: leaderboard.LeaderboardResult, release: Release
) -> None:
    def pairs(frame: pl.DataFrame) -> set[tuple[str, str]]:
        return set(frame.select("run", "sample_id").unique().iter_rows())

    expected = pairs(release.units())
    assert pairs(curves.table) == expected
    assert pairs(board.metrics) == expected
    assert pairs(release_metrics(release, metrics=["recall@5"])) == expected  # slices, taxonomy
    joined = board.method_level.board.filter(
        pl.col("run") == "Lexical", pl.col("scope") == "overall"
    )
    n_lexical = sum(1 for run, _ in expected if run in ("lexical", "lexical_all_files"))
    assert joined["n"].unique().to_list() == [n_lexical]
