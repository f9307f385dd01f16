"""``arbwb contextbench score`` end to end on the demo rows and predictions."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb import cli

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo" / "contextbench"


def _norm(raw: str) -> str:
    """Gold path normalisation of contextbench-spec §2.1, written out again for the test."""
    if raw.startswith("/workspace/"):
        rest = raw[len("/workspace/") :]
        return rest.split("/", 1)[1] if "/" in rest else rest
    return raw.lstrip("./")


def _gold_files() -> dict[str, set[str]]:
    rows = pl.read_parquet(DEMO / "rows.parquet")
    return {
        r["instance_id"]: {_norm(s["file"]) for s in json.loads(r["gold_context"])}
        for r in rows.iter_rows(named=True)
    }


def test_score_json_and_per_instance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    per = tmp_path / "per.jsonl"
    code = cli.main(
        [
            "contextbench",
            "score",
            str(DEMO / "predictions" / "demo-broad.json"),
            str(DEMO / "predictions" / "demo-mini-swe"),
            "--rows",
            str(DEMO / "rows.parquet"),
            "--corpus",
            str(DEMO.parent / "corpus" / "demo"),
            "--per-instance",
            str(per),
        ]
    )
    assert code == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    runs = {r["run"]: r for r in doc["runs"]}
    assert runs["demo-mini-swe"]["errors"] == {"missing_gold": 1, "no_context_extracted": 1}
    assert (
        runs["demo-broad"]["n_valid"] == 6 and runs["demo-broad"]["path_resolution"] == "checkout"
    )
    assert "no_context_extracted" in out.err
    # micro file level of demo-broad, recomputed from the files alone
    gold = _gold_files()
    preds = json.loads((DEMO / "predictions" / "demo-broad.json").read_text())
    inter = sum(len(gold[p["instance_id"]] & set(p["traj_data"]["pred_files"])) for p in preds)
    n_gold = sum(len(gold[p["instance_id"]]) for p in preds)
    n_pred = sum(len(set(p["traj_data"]["pred_files"])) for p in preds)
    micro = runs["demo-broad"]["levels"]["file"]["micro"]
    assert micro["coverage"] == pytest.approx(inter / n_gold, abs=1e-12)
    assert micro["precision"] == pytest.approx(inter / n_pred, abs=1e-12)
    records = [json.loads(line) for line in per.read_text().splitlines()]
    assert len(records) == 6 + 7
    assert {r["run"] for r in records} == {"demo-broad", "demo-mini-swe"}
    assert all(
        set(r) >= {"instance_id", "final", "trajectory", "num_steps"}
        for r in records
        if "error" not in r
    )


def test_score_markdown_without_a_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        [
            "contextbench",
            "score",
            str(DEMO / "predictions" / "demo-precise.jsonl"),
            "--rows",
            str(DEMO / "rows.parquet"),
            "--format",
            "markdown",
        ]
    )
    assert code == 0
    out = capsys.readouterr()
    assert "| demo-precise | 6 | 0 |" in out.out
    assert "paths resolved lexically" in out.err


def test_bad_rows_exit_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = pl.read_parquet(DEMO / "rows.parquet").with_columns(
        gold_context=pl.when(pl.int_range(pl.len()) == 3)
        .then(pl.lit("{broken"))
        .otherwise(pl.col("gold_context"))
    )
    bad = tmp_path / "bad.parquet"
    rows.write_parquet(bad)
    code = cli.main(
        ["contextbench", "score", str(DEMO / "predictions" / "demo-broad.json"), "--rows", str(bad)]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "bad.parquet:4: field 'gold_context'" in err


# --------------------------------------------------------------------------- --repos, every level


@pytest.fixture(scope="module")
def demo_checkouts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo repositories as git repositories and, beside them, plain checkouts made at
    each row's commit with ``git archive <commit> | tar -x`` (as docs/contextbench-real-rows.md
    does for real rows); returns the two ``--repos`` folders.
    """
    root = tmp_path_factory.mktemp("demo-repos")
    from arbwb.demo import DEMO_REPOS
    from arbwb.demo.build import create_git_repo

    commits = json.loads((DEMO / "commits.json").read_text())
    git_root, plain_root = root / "git", root / "plain"
    for repo in DEMO_REPOS:
        name = repo.repo.replace("/", "__")
        assert create_git_repo(repo, git_root / name) == commits[repo.repo]
        archive = subprocess.run(
            ["git", "-C", str(git_root / name), "archive", commits[repo.repo][1]],
            check=True,
            capture_output=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(plain_root / name, filter="data")
    return git_root, plain_root


def _gold_as_prediction(path: Path, keep: dict[str, int] | None = None) -> Path:
    """Unified records predicting each row's own gold spans (the first ``keep[id]`` only)."""
    from arbwb.io.contextbench import normalize_gold_path

    records = []
    for row in pl.read_parquet(DEMO / "rows.parquet").iter_rows(named=True):
        spans = [
            (normalize_gold_path(s["file"]), s["start_line"], s["end_line"])
            for s in json.loads(row["gold_context"])
        ]
        if keep is not None:
            if row["instance_id"] not in keep:
                continue
            spans = spans[: keep[row["instance_id"]]]
        by_file: dict[str, list[dict[str, int]]] = {}
        for file, start, end in spans:
            by_file.setdefault(file, []).append({"start": start, "end": end})
        records.append(
            {
                "instance_id": row["instance_id"],
                "traj_data": {"pred_steps": [], "pred_files": list(by_file), "pred_spans": by_file},
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _score_levels(pred: Path, repos: Path, per: Path) -> dict[str, dict[str, tuple[Any, ...]]]:
    """Per instance and level: (coverage, precision, intersection, gold_size, pred_size)."""
    code = cli.main(
        [
            "contextbench",
            "score",
            str(pred),
            "--rows",
            str(DEMO / "rows.parquet"),
            "--repos",
            str(repos),
            "--symbols",
            "--per-instance",
            str(per),
            "--out",
            str(per.with_suffix(".summary.json")),
        ]
    )
    assert code == 0
    out = {}
    for line in per.read_text().splitlines():
        record = json.loads(line)
        out[record["instance_id"]] = {
            level: tuple(
                got[k] for k in ("coverage", "precision", "intersection", "gold_size", "pred_size")
            )
            for level, got in record["final"].items()
        }
    return out


TALLYHO_BUG = "ARBWB-Demo__python__maintenance__bugfix__f3da5efb"
KVCACHE_B3 = "ARBWB-Demo__go__maintenance__bugfix__2c6fc03e"


def test_gold_as_prediction_scores_one_at_span_and_block_level(
    tmp_path: Path, demo_checkouts: tuple[Path, Path]
) -> None:
    git_root, plain_root = demo_checkouts
    pred = _gold_as_prediction(tmp_path / "gold.jsonl")
    plain = _score_levels(pred, plain_root, tmp_path / "plain.jsonl")
    assert _score_levels(pred, git_root, tmp_path / "git.jsonl") == plain
    assert len(plain) == 6
    for instance, levels in plain.items():
        assert set(levels) == {"file", "symbol", "span", "line"}
        for level in ("span", "symbol"):
            c, p, i, g, n = levels[level]
            assert (c, p) == (1.0, 1.0) and i == g == n > 0, (instance, level)
        if instance != KVCACHE_B3:
            assert levels["file"][:2] == levels["line"][:2] == (1.0, 1.0), instance
    # the annotator script /workspace/run_kvcache_test.sh:1-12 is no repository file (B3):
    # file and line gold keep it, the prediction naming it is dropped
    assert plain[KVCACHE_B3]["file"] == (pytest.approx(2 / 3), 1.0, 2, 3, 2)
    assert plain[KVCACHE_B3]["line"] == (0.625, 1.0, 20, 32, 20)  # 16 + 4 of 16 + 4 + 12
    # tallyho/money.py: lines 35-40 are bytes 983-1339 (357), lines 9-11 bytes 134-187 (54);
    # their definitions: split_evenly and the class Money (its decorator line 8 is outside)
    assert plain[TALLYHO_BUG]["line"] == (1.0, 1.0, 9, 9, 9)
    assert plain[TALLYHO_BUG]["span"] == (1.0, 1.0, 411, 411, 411)
    assert plain[TALLYHO_BUG]["symbol"] == (1.0, 1.0, 2, 2, 2)


def test_half_the_gold_spans_at_span_and_block_level(
    tmp_path: Path, demo_checkouts: tuple[Path, Path]
) -> None:
    _, plain_root = demo_checkouts
    pred = _gold_as_prediction(tmp_path / "half.jsonl", keep={TALLYHO_BUG: 1})
    got = _score_levels(pred, plain_root, tmp_path / "half-per.jsonl")[TALLYHO_BUG]
    # only money.py:35-40 (split_evenly): 6 of 9 lines, 357 of 411 bytes, 1 of 2 definitions
    assert got["file"] == (1.0, 1.0, 1, 1, 1)
    assert got["line"] == (pytest.approx(6 / 9), 1.0, 6, 9, 6)
    assert got["span"] == (pytest.approx(357 / 411), 1.0, 357, 411, 357)
    assert got["symbol"] == (0.5, 1.0, 1, 2, 1)


def test_symbols_without_tree_sitter_exit_2_naming_the_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "tree_sitter_languages", None)  # import now fails
    code = cli.main(
        [
            "contextbench",
            "score",
            str(DEMO / "predictions" / "demo-precise.jsonl"),
            "--rows",
            str(DEMO / "rows.parquet"),
            "--symbols",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "--symbols" in err and "pip install 'arbwb[contextbench]'" in err
