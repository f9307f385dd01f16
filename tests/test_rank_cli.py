"""``arbwb rank`` end to end on a release built here from a git repository (spec §4.1, §4.8)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb.cli import main
from arbwb.io.corpus import open_corpus
from arbwb.io.rankings import load_rankings
from arbwb.io.samples import load_samples
from arbwb.metrics import evaluate
from arbwb.release.snapshot import build_snapshots
from arbwb.retrievers import lexical
from arbwb.retrievers.registry import get_method, rank
from arbwb.retrievers.runner import checkpoint_path, run_method

FILES = {
    "src/auth/tokens.py": "def refresh_token(value):\n    return value\n\n\nclass TokenStore:\n"
    "    def get(self, key):\n        return key\n",
    "src/http/client.py": "def parse_url(url):\n    return url.split('/')\n",
    "tests/test_tokens.py": "from src.auth.tokens import refresh_token\n\n\ndef test_refresh():\n"
    "    assert refresh_token(1) == 1\n",
    "tests/test_client.py": "def test_parse():\n    assert parse_url('a/b')\n",
    "README.md": "# Demo\nrefresh token docs\n",
}
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z",
    "PATH": "/usr/bin:/bin",
}
MISSING = "f" * 40


def sample(
    sid: str, task: str, commit: str, query: dict[str, Any], gold: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "id": sid,
        "task_type": task,
        "repo": "o/demo",
        "base_commit": commit,
        "query": query,
        "gold": gold,
        "metadata": {},
        **extra,
    }


def make_release(root: Path, *, abstention: bool = False) -> tuple[Path, str]:
    repo = root / "repo"
    for path, text in FILES.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
    env = GIT_ENV | {"HOME": str(root)}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()
    data = root / "data"
    build_snapshots(
        repo, "o/demo", [commit], data / "corpus" / "R", stamp="2020-01-01T00:00:00+00:00"
    )
    records = [
        sample(
            "s1",
            "trace2code",
            commit,
            {"failure_excerpt": "refresh token failed", "command": "pytest tests"},
            {"root_cause_files": ["src/auth/tokens.py"], "related_tests": ["tests/test_tokens.py"]},
            gold_spans=[{"path": "src/auth/tokens.py", "start_line": 1, "end_line": 2}],
            gold_blocks=[
                {
                    "path": "src/auth/tokens.py",
                    "start_line": 1,
                    "end_line": 2,
                    "kind": "symbol",
                    "symbol": "refresh_token",
                }
            ],
        ),
        sample(
            "s2",
            "code2test",
            MISSING,
            {"pr_title": "parse url"},
            {"related_tests": ["tests/test_client.py"]},
        ),
        sample(
            "s3",
            "code2test",
            commit,
            {"pr_title": "Fix parse_url", "pr_body": "split"},
            {"related_tests": ["tests/test_client.py"]},
            hard_negative_files=["README.md"],
        ),
        sample("s4", "code2test", commit, {"pr_title": "nothing"}, {"related_tests": []}),
        sample(
            "s5",
            "trace2code",
            commit,
            {"failure_excerpt": "see diff --git a/x b/x"},
            {"root_cause_files": ["src/http/client.py"]},
        ),
        sample(
            "s6",
            "comment2context",
            commit,
            {"review_comment": "TokenStore get", "given_file": "src/auth/tokens.py"},
            {
                "must_context_files": [{"path": "tests/test_tokens.py", "evidence": []}],
                "given_files": ["src/auth/tokens.py"],
            },
        ),
    ]
    if abstention:
        records.append(
            sample(
                "n1",
                "abstention",
                commit,
                {"source": "ci_log", "text": "flaky network"},
                {"files": [], "no_gold": True, "reason": "external_service"},
                metadata={"organic": True},
            )
        )
    bench = data / "benchmark" / "R"
    bench.mkdir(parents=True)
    (bench / "samples.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8"
    )
    return data, commit


@pytest.fixture()
def release(tmp_path: Path) -> tuple[Path, str]:
    return make_release(tmp_path)


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_lexical_run_rows_skips_failures_and_summary(
    release: tuple[Path, str], tmp_path: Path
) -> None:
    data, commit = release
    out = tmp_path / "out" / "lexical_details.jsonl"
    assert main(["rank", "--method", "lexical", "--data", str(data), "--out", str(out)]) == 0
    rows = read_rows(out)
    assert [r["sample_id"] for r in rows] == ["s1", "s2", "s3", "s6"]
    by_id = {r["sample_id"]: r for r in rows}
    failed = by_id["s2"]
    assert failed["status"] == "error" and failed["error"] == "missing_corpus"
    assert failed["top_files"] == [] and failed["metrics"]["MRR"] == 0.0
    assert "status" not in by_id["s1"]
    # the rows equal a direct ranking of the snapshot
    chunks = open_corpus(data).chunks(f"o/demo@{commit}")
    text = json.dumps(
        {"command": "pytest tests", "failure_excerpt": "refresh token failed"}, sort_keys=True
    )
    direct = lexical.rank_sample(lexical.build_index(chunks), text)
    assert by_id["s1"]["top_files"] == direct.files[:20]
    assert by_id["s1"]["gold_ranks"] == {
        "src/auth/tokens.py": direct.files.index("src/auth/tokens.py") + 1
    }
    assert "line_metrics" in by_id["s1"] and "block_metrics" in by_id["s1"]
    assert by_id["s1"]["line_metrics"]["line_gold_count"] == 2
    assert by_id["s3"]["hard_negative_ranks"] == {
        "README.md": by_id["s3"]["top_files"].index("README.md") + 1
    }
    summary = json.loads((tmp_path / "out" / "lexical_summary.json").read_text())
    assert summary["evaluated"] == 4
    assert summary["skipped"] == {"no_gold": 1, "query_leakage": 1}
    assert summary["errors"] == {"missing_corpus": 1}
    assert summary["mode"] == "corpus" and summary["ranker"] == "lexical"
    overall = summary["metrics"]["overall"]
    assert overall["samples"] == 4
    assert overall["MRR"] == sum(r["metrics"]["MRR"] for r in rows) / 4
    assert summary["metrics"]["code2test"]["samples"] == 2
    assert set(summary["runtime"]) >= {"p50_s", "p95_s", "max_s", "total_s"}
    assert not checkpoint_path(out).exists()
    # the arbwb loader reads the file back with full-depth gold ranks
    run = load_rankings(out)
    assert run.run == "lexical"
    assert (
        run.rankings.filter(run.rankings["sample_id"] == "s1")["path"].to_list()[:3]
        == direct.files[:3]
    )


def test_candidate_filter_and_bm25_methods(release: tuple[Path, str], tmp_path: Path) -> None:
    data, _ = release
    for method in ("bm25-arb", "bm25", "grep"):
        out = tmp_path / f"{method}_code_only_details.jsonl"
        code = main(
            [
                "rank",
                "--method",
                method,
                "--data",
                str(data),
                "--candidate-filter",
                "code_only",
                "--out",
                str(out),
            ]
        )
        assert code == 0
        rows = read_rows(out)
        assert all("README.md" not in r["top_files"] for r in rows)
        assert {r["candidate_filter"] for r in rows} == {"code_only"}
    grep_rows = read_rows(tmp_path / "grep_code_only_details.jsonl")
    assert all("patterns" in r and "pattern_mode" in r for r in grep_rows if "status" not in r)
    grep_summary = json.loads((tmp_path / "grep_code_only_summary.json").read_text())
    assert grep_summary["mode"] == "grep" and grep_summary["model"] == "grep-strict"
    assert grep_summary["pattern_mode"] == "strict"
    okapi_summary = json.loads((tmp_path / "bm25_code_only_summary.json").read_text())
    assert okapi_summary["ranker"] == "bm25-okapi" and okapi_summary["method"] == "bm25"


class Crash(RuntimeError):
    pass


def test_resume_after_crash_is_byte_identical(release: tuple[Path, str], tmp_path: Path) -> None:
    data, _ = release
    method = get_method("lexical")
    fresh = tmp_path / "fresh" / "lexical_details.jsonl"
    run_method(method, load_samples(data), open_corpus(data), fresh)

    out = tmp_path / "resumed" / "lexical_details.jsonl"

    first: list[int] = []

    def crash(i: int) -> None:
        first.append(i)
        if len(first) == 3:
            raise Crash

    with pytest.raises(Crash):
        run_method(method, load_samples(data), open_corpus(data), out, on_sample=crash)
    assert not out.exists()
    lines = checkpoint_path(out).read_text().splitlines()
    assert len(lines) == 1 + 3  # fingerprint + three samples
    seen: list[int] = []
    run_method(
        method, load_samples(data), open_corpus(data), out, resume=True, on_sample=seen.append
    )
    assert sorted(first + seen) == list(range(6))  # each sample ranked exactly once
    assert out.read_bytes() == fresh.read_bytes()
    assert not checkpoint_path(out).exists()


def test_resume_ignores_torn_last_line_and_refuses_other_inputs(
    release: tuple[Path, str], tmp_path: Path
) -> None:
    data, _ = release
    out = tmp_path / "lexical_details.jsonl"

    def crash(i: int) -> None:
        if i == 2:
            raise Crash

    with pytest.raises(Crash):
        run_method(
            get_method("lexical"), load_samples(data), open_corpus(data), out, on_sample=crash
        )
    with checkpoint_path(out).open("a") as handle:
        handle.write('{"i": 2, "row": {"sample_')
    code = main(
        ["rank", "--method", "bm25-arb", "--data", str(data), "--out", str(out), "--resume"]
    )
    assert code == 2
    code = main(["rank", "--method", "lexical", "--data", str(data), "--out", str(out), "--resume"])
    assert code == 0
    fresh = tmp_path / "fresh" / "lexical_details.jsonl"
    assert main(["rank", "--method", "lexical", "--data", str(data), "--out", str(fresh)]) == 0
    assert out.read_bytes() == fresh.read_bytes()


def test_unknown_method_and_bad_model_fail_before_work(
    release: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = release
    out = tmp_path / "x_details.jsonl"
    assert main(["rank", "--method", "bm99", "--data", str(data), "--out", str(out)]) == 2
    assert "unknown method 'bm99'; choose one of lexical, bm25-arb," in capsys.readouterr().err
    code = main(
        [
            "rank",
            "--method",
            "dense",
            "--model",
            str(tmp_path / "no-model"),
            "--data",
            str(data),
            "--out",
            str(out),
        ]
    )
    assert code == 2
    assert "model path does not exist" in capsys.readouterr().err
    assert not out.exists() and not checkpoint_path(out).exists()
    assert (
        main(
            ["rank", "--method", "lexical", "--model", "m", "--data", str(data), "--out", str(out)]
        )
        == 2
    )
    assert (
        main(
            [
                "rank",
                "--method",
                "lexical",
                "--task",
                "nope",
                "--data",
                str(data),
                "--out",
                str(out),
            ]
        )
        == 2
    )


def test_task_filter(release: tuple[Path, str], tmp_path: Path) -> None:
    data, _ = release
    out = tmp_path / "t_details.jsonl"
    assert (
        main(
            [
                "rank",
                "--method",
                "lexical",
                "--task",
                "code2test",
                "--data",
                str(data),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert [r["sample_id"] for r in read_rows(out)] == ["s2", "s3"]


def test_selective_fields_with_no_gold_samples(tmp_path: Path) -> None:
    data, _ = make_release(tmp_path, abstention=True)
    out = tmp_path / "sel_details.jsonl"
    assert main(["rank", "--method", "bm25-arb", "--data", str(data), "--out", str(out)]) == 0
    rows = {r["sample_id"]: r for r in read_rows(out)}
    assert rows["n1"]["label"] == "no_gold" and rows["n1"]["no_gold_reason"] == "external_service"
    assert rows["n1"]["gold_files"] == [] and "metrics" not in rows["n1"]
    assert rows["s1"]["label"] == "positive"
    for r in rows.values():
        assert r["confidence"] == r["top_score"]
        assert r["score_margin"] == r["top_score"] - r["second_score"]
    assert rows["s2"]["top_score"] == 0.0  # missing corpus: no chunk scores
    summary = json.loads((tmp_path / "sel_summary.json").read_text())
    assert summary["mode"] == "selective_bm25"
    assert summary["no_gold_evaluated"] == 1 and summary["positive_evaluated"] == 4
    assert summary["skipped"] == {"no_gold_unlabeled": 1, "query_leakage": 1}


def test_rrf_of_two_stored_runs(release: tuple[Path, str], tmp_path: Path) -> None:
    data, _ = release
    a, b = tmp_path / "lexical_details.jsonl", tmp_path / "bm25-arb_details.jsonl"
    assert main(["rank", "--method", "lexical", "--data", str(data), "--out", str(a)]) == 0
    assert main(["rank", "--method", "bm25-arb", "--data", str(data), "--out", str(b)]) == 0
    out = tmp_path / "rrf_details.jsonl"
    assert (
        main(
            [
                "rank",
                "--method",
                "rrf",
                "--runs",
                str(a),
                str(b),
                "--data",
                str(data),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    rows = read_rows(out)
    assert [r["sample_id"] for r in rows] == sorted(r["sample_id"] for r in rows)
    la = {r["sample_id"]: r["top_files"] for r in read_rows(a)}
    lb = {r["sample_id"]: r["top_files"] for r in read_rows(b)}
    row = next(r for r in rows if r["sample_id"] == "s1")
    scores: dict[str, float] = {}
    for lst in (la["s1"], lb["s1"]):
        for position, path in enumerate(lst, start=1):
            scores[path] = scores.get(path, 0.0) + 1 / (60 + position)
    assert row["top_files"] == sorted(scores, key=lambda p: (-scores[p], p))[:20]
    assert row["mode"] == "rank_fusion" and "nDCG@20" in row["metrics"]
    summary = json.loads((tmp_path / "rrf_summary.json").read_text())
    assert summary["mode"] == "rank_fusion" and "Any@5" in summary["metrics"]["overall"]
    weighted = tmp_path / "wrrf_details.jsonl"
    assert (
        main(
            [
                "rank",
                "--method",
                "rrf",
                "--runs",
                str(a),
                str(b),
                "--weights",
                "1,3",
                "--data",
                str(data),
                "--out",
                str(weighted),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "rank",
                "--method",
                "rrf",
                "--runs",
                str(a),
                "--data",
                str(data),
                "--out",
                str(weighted),
            ]
        )
        == 2
    )


def test_rank_function_keeps_full_depth_and_scorer_agrees(
    release: tuple[Path, str], tmp_path: Path
) -> None:
    """``rank(samples, corpus)`` gives full file rankings; arbwb.metrics agrees with the summary."""
    data, commit = release
    sample_set = load_samples(data)
    frame = rank("bm25-arb", sample_set.samples, open_corpus(data))
    assert frame.columns == ["run", "sample_id", "rank", "path", "score"]
    n_files = open_corpus(data).chunks(f"o/demo@{commit}")["path"].n_unique()
    counts = dict(frame.group_by("sample_id").len().iter_rows())
    assert "s2" not in counts  # missing snapshot: no rows (scorers count it as a failure)
    assert set(counts.values()) == {n_files}
    out = tmp_path / "bm25-arb_details.jsonl"
    assert main(["rank", "--method", "bm25-arb", "--data", str(data), "--out", str(out)]) == 0
    run = load_rankings(out)
    assert run.labels is not None
    per_sample = evaluate(run.rankings, run.labels, metrics=["mrr", "recall@20"])
    means = dict(per_sample.group_by("metric").agg(pl.col("value").mean()).iter_rows())
    overall = json.loads((tmp_path / "bm25-arb_summary.json").read_text())["metrics"]["overall"]
    assert means["mrr"] == pytest.approx(overall["MRR"], abs=1e-12)
    assert means["recall@20"] == pytest.approx(overall["Recall@20"], abs=1e-12)


def test_each_snapshot_indexed_once(release: tuple[Path, str], tmp_path: Path) -> None:
    data, commit = release
    base = get_method("lexical")
    built: list[int] = []

    def counting(chunks: pl.DataFrame) -> Any:
        built.append(chunks.height)
        return base.build_index(chunks)

    method = dataclasses.replace(base, build_index=counting)
    run_method(method, load_samples(data), open_corpus(data), tmp_path / "x_details.jsonl")
    n_chunks = open_corpus(data).chunks(f"o/demo@{commit}").height
    assert built == [n_chunks]  # five samples share one snapshot; the missing one builds nothing


def test_checkpoint_flushed_every_sample_and_fsynced_at_most_every_sync_seconds(
    release: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each sample's line is readable as soon as it is done (a killed run loses nothing);
    fsyncs come from the cadence, not one per sample."""
    from arbwb.retrievers import runner

    data, _ = release
    synced: list[int] = []
    real_fsync = runner.os.fsync
    monkeypatch.setattr(runner.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    counts = {}
    for every in (0.0, 1e9):
        monkeypatch.setattr(runner, "SYNC_SECONDS", every)
        out = tmp_path / str(every) / "lexical_details.jsonl"
        lines_seen: list[int] = []

        def done(i: int, out: Path = out, seen: list[int] = lines_seen) -> None:
            seen.append(len(checkpoint_path(out).read_text().splitlines()))

        synced.clear()
        run_method(
            get_method("lexical"), load_samples(data), open_corpus(data), out, on_sample=done
        )
        assert lines_seen == list(range(2, 2 + len(lines_seen)))  # fingerprint + samples so far
        counts[every] = len(synced)
    assert counts[0.0] - counts[1e9] == len(lines_seen) == 6
