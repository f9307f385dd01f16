"""Granularity (spec §11, §13.5): TV12/TV13 vectors, hand cases, the corpus view and the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from arbwb.analysis import granularity as g
from arbwb.analysis import spanyield as sy
from arbwb.cli import main
from arbwb.io.corpus import open_corpus
from arbwb.io.rankings import load_rankings
from arbwb.io.release import Release
from arbwb.io.samples import load_samples
from arbwb.metrics import chunks as cm
from arbwb.metrics.aggregate import percentile
from arbwb.retrievers import details as det
from arbwb.retrievers.common import ChunkRanking

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^A-Za-z0-9_\s]")


# --- TV13: percentiles, merged line counts, distribution, fraction_over_lines -------------


def test_tv13_linear_percentile() -> None:
    assert percentile([1, 2, 3, 4], 0.5) == 2.5
    assert percentile([1, 2, 3, 4], 0.95) == 3.8499999999999996
    assert percentile([10], 0.9) == 10
    assert percentile([], 0.5) is None


def test_tv13_merged_line_counts() -> None:
    assert g.merged_line_count([(1, 5), (4, 10), (20, 21)]) == 12
    assert g.merged_line_count([(1, 5), (6, 8)]) == 8


def test_tv13_distribution_and_fractions() -> None:
    assert g.distribution([120, 800, 1500, 3000, 6000]) == {
        "count": 5,
        "min": 120,
        "median": 1500,
        "p75": 3000,
        "p90": 4800,
        "p95": 5400,
        "max": 6000,
    }
    assert g.fraction_over_lines([120, 800, 1500, 3000, 6000, 500]) == {
        "500": 0.6666666666666666,
        "1000": 0.5,
        "2000": 0.3333333333333333,
        "5000": 0.16666666666666666,
    }
    empty = g.distribution([])
    assert empty["count"] == 0 and empty["median"] is None and empty["max"] is None
    assert g.fraction_over_lines([]) == dict.fromkeys(("500", "1000", "2000", "5000"))


def test_fraction_over_is_strict_and_ratio_at_most_inclusive() -> None:
    assert g.fraction_over_lines([500, 1000, 2000, 5000])["500"] == 0.75  # 500 is not > 500
    assert g.fraction_ratio_at_most([0.1, 0.25, 0.3, 0.05]) == {"0.10": 0.5, "0.25": 0.75}


# --- interval merging hand cases -----------------------------------------------------------


@pytest.mark.parametrize(
    ("intervals", "lines"),
    [
        ([(6, 8), (1, 5)], 8),  # adjacent, unsorted
        ([(1, 5), (3, 9)], 9),  # overlapping
        ([(1, 10), (3, 4)], 10),  # nested
        ([(2, 2), (2, 2)], 1),  # duplicate single line
        ([(1, 3), (5, 6)], 5),  # a gap of one line does not merge
        ([(0, 5), (3, 4)], 2),  # start < 1 is invalid: only (3, 4) counts
        ([(5, 3), (7, 7)], 1),  # end < start is invalid
        ([(-2, -1), (4, 2)], 0),  # nothing valid
    ],
)
def test_merged_line_count_hand_cases(intervals: list[tuple[int, int]], lines: int) -> None:
    assert g.merged_line_count(intervals) == lines


# --- TV12 line overlap through the legacy packing walk -------------------------------------


def _chunks(rows: list[tuple[str, str, int, int, str]]) -> pl.DataFrame:
    """A CHUNKS-like frame from (path, kind, start, end, text)."""
    return pl.DataFrame(
        {
            "chunk_id": [f"k{i + 1}" for i in range(len(rows))],
            "path": [r[0] for r in rows],
            "kind": [r[1] for r in rows],
            "symbol": ["" if r[1] == "file" else "s" for r in rows],
            "start_line": [r[2] for r in rows],
            "end_line": [r[3] for r in rows],
            "text": [r[4] for r in rows],
        }
    )


def _ranking(order: list[int], files: list[str]) -> ChunkRanking:
    return ChunkRanking(
        np.array(order, dtype=np.int64), np.zeros(len(order)), files, [0.0] * len(files)
    )


def _target(spans: list[tuple[str, int, int]], task: str = "code2test") -> det.SampleTarget:
    blocks = [cm.Block(p, s, e) for p, s, e in spans]
    return det.SampleTarget("s1", task, "o/r", "c", [], [], blocks, [], None, None, False)


def test_tv12_line_overlap_of_the_legacy_walk() -> None:
    chunks = _chunks(
        [
            ("a.py", "symbol", 10, 19, "x" * 3000),
            ("a.py", "file", 1, 100, "x" * 4000),
            ("b.py", "symbol", 5, 8, "x" * 1000),
            ("c.py", "file", 1, 50, "x" * 100),
        ]
    )
    pieces = sy.Pieces.of(chunks)
    target = _target([("a.py", 15, 24), ("a.py", 20, 30), ("c.py", 1, 5)])
    blocks, used = sy.legacy_pack(_ranking([0, 1, 2, 3], ["a.py", "b.py", "c.py"]), pieces)
    assert used == 8000  # k3 lands exactly on 8,000; k4 overflows
    row = sy.sample_rows("r", target, _ranking([0, 1, 2, 3], ["a.py", "b.py", "c.py"]), pieces, [])
    assert len(row) == 1
    assert (row[0]["gold_lines"], row[0]["predicted_lines"], row[0]["overlap_lines"]) == (
        21,
        104,
        16,
    )
    assert row[0]["line_recall"] == 0.7619047619047619
    assert row[0]["line_precision"] == 0.15384615384615385
    assert row[0]["line_f1"] == pytest.approx(0.256, abs=1e-15)
    assert len(blocks) == 3


# --- token packing (arbwb-defined line credit, canonical §5.7 rule) ------------------------


def test_token_pack_whole_partial_missing_and_visible_lines() -> None:
    # header "### x.py\n" = # # # x . py = 6 tokens; text "a b\nc d" = 4 tokens, 2 lines
    chunks = _chunks([("x.py", "file", 1, 2, "a b\nc d"), ("y.py", "file", 1, 9, "e")])
    pieces = sy.Pieces.of(chunks)
    assert pieces.headers == [6, 6] and pieces.tokens == [4, 1]
    whole, used = sy.token_pack([None, 0], pieces, 11)  # missing piece is free
    assert (whole, used) == ([cm.Block("x.py", 1, 2)], 11)
    part, used = sy.token_pack([0, 1], pieces, 9)  # m = 3: both lines start inside
    assert (part, used) == ([cm.Block("x.py", 1, 2)], 9)
    part, used = sy.token_pack([0, 1], pieces, 8)  # m = 2: only line 1
    assert (part, used) == ([cm.Block("x.py", 1, 1)], 8)
    none, used = sy.token_pack([0], pieces, 6)  # header only: no content line
    assert (none, used) == ([], 6)
    both, used = sy.token_pack([0, 1], pieces, 100)  # 11 + (6 + 1 + 1)
    assert both == [cm.Block("x.py", 1, 2), cm.Block("y.py", 1, 1)] and used == 19


def test_visible_lines_skip_the_truncation_marker_and_cap_at_end_line() -> None:
    text = "a\nb" + sy.TRUNCATION_MARK
    assert sy.visible_lines(text, 10, 8) == 2
    chunks = _chunks([("z.py", "symbol", 40, 40, "a\nb\nc")])  # more text lines than range
    blocks, _ = sy.token_pack([0], sy.Pieces.of(chunks), 100)
    assert blocks == [cm.Block("z.py", 40, 40)]


# --- gold-file sizes from a corpus, with missing snapshots and paths -----------------------


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def _chunk_row(
    repo: str, commit: str, path: str, kind: str, start: int, end: int
) -> dict[str, Any]:
    return {
        "base_commit": commit,
        "chunk_id": f"{path}:{kind}:{start}",
        "end_line": end,
        "kind": kind,
        "path": path,
        "repo": repo,
        "start_line": start,
        "symbol": "" if kind == "file" else "f",
        "text": "x",
    }


def _corpus(
    root: Path, name: str, snapshots: dict[tuple[str, str], list[dict[str, Any]] | None]
) -> None:
    manifest = []
    for (repo, commit), rows in snapshots.items():
        if rows is None:
            manifest.append(
                {"repo": repo, "base_commit": commit, "status": "missing_commit", "chunk_count": 0}
            )
            continue
        rel = f"{repo.replace('/', '__')}/{commit}.chunks.jsonl"
        _write_jsonl(root / name / rel, rows)
        manifest.append({"repo": repo, "base_commit": commit, "status": "ok", "chunks_path": rel})
    _write_jsonl(root / name / "corpus_manifest.jsonl", manifest)


def _sample(
    sid: str, task: str, repo: str, commit: str, files: list[str], spans: list[tuple[str, int, int]]
) -> dict[str, Any]:
    return {
        "id": sid,
        "task_type": task,
        "repo": repo,
        "base_commit": commit,
        "query": {"text": sid},
        "gold": {"files": files},
        "gold_spans": [{"path": p, "start_line": s, "end_line": e} for p, s, e in spans],
    }


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """Corpus a: o/r@c1 ok, o/r@c2 missing; corpus b: o/r@c2 ok, o/r@c1 ok with other lines."""
    rows = [
        _chunk_row("o/r", "c1", "big.py", "file", 1, 10),
        _chunk_row("o/r", "c1", "big.py", "symbol", 3, 12),  # max end_line over all rows
        _chunk_row("o/r", "c1", "zero.py", "file", 1, 0),  # no positive value
        _chunk_row("o/r", "c1", "small.py", "file", 1, 4),
    ]
    _corpus(tmp_path / "corpus", "a", {("o/r", "c1"): rows, ("o/r", "c2"): None})
    other = [_chunk_row("o/r", "c1", "big.py", "file", 1, 999)]
    c2 = [_chunk_row("o/r", "c2", "late.py", "file", 1, 7)]
    _corpus(tmp_path / "corpus", "b", {("o/r", "c1"): other, ("o/r", "c2"): c2})
    samples = [
        _sample(
            "s1",
            "code2test",
            "o/r",
            "c1",
            ["big.py", "gone.py"],
            [("big.py", 1, 3), ("big.py", 3, 4), ("small.py", 0, 2)],
        ),
        _sample(
            "s2",
            "trace2code",
            "o/r",
            "c1",
            ["zero.py", "small.py"],
            [("small.py", 2, 1), ("other.py", 1, 2)],
        ),
        _sample("s3", "trace2code", "o/r", "c2", ["late.py"], [("late.py", 2, 2)]),
        _sample("s4", "edit2ripple", "o/r", "c9", ["x.rs"], []),
    ]
    _write_jsonl(tmp_path / "samples.jsonl", samples)
    return tmp_path


def test_open_corpora_merge_rule(tiny: Path) -> None:
    view = open_corpus(tiny)
    assert view.snapshot_ids() == ["o/r@c1", "o/r@c2"]
    # c1: the first (corpus a) row wins; c2: a's missing row is replaced by b's ok row
    assert "/a/" in view.chunk_path("o/r@c1").as_posix()
    assert "/b/" in view.chunk_path("o/r@c2").as_posix()
    single = open_corpus(tiny / "corpus" / "a")
    assert single.snapshot_ids() == ["o/r@c1"]


def test_gold_file_sizes_resolve_and_report_missing(tiny: Path) -> None:
    ss = load_samples(tiny / "samples.jsonl")
    sizes = g.gold_file_sizes(ss.samples, ss.labels, open_corpus(tiny))
    got = sizes.select("sample_id", "path", "file_lines", "reason").rows()
    assert got == [
        ("s1", "big.py", 12, None),
        ("s1", "gone.py", None, "missing_path"),
        ("s2", "zero.py", None, "missing_path"),
        ("s2", "small.py", 4, None),
        ("s3", "late.py", 7, None),
        ("s4", "x.rs", None, "missing_manifest"),
    ]
    only_a = g.gold_file_sizes(ss.samples, ss.labels, open_corpus(tiny / "corpus" / "a"))
    assert only_a.filter(pl.col("sample_id") == "s3")["reason"].to_list() == ["missing_manifest"]
    summary = g.file_size_summary(sizes, ss.samples)
    assert list(summary) == ["code2test", "trace2code", "edit2ripple", "overall"]
    assert summary["edit2ripple"]["samples"] == 1  # counted although unresolved
    assert summary["edit2ripple"]["gold_file_occurrences"] == 0
    assert summary["overall"]["samples"] == 4
    assert summary["overall"]["file_lines"] == g.distribution([12, 4, 7])
    assert g.unresolved(sizes).rows() == [
        ("o/r", "c1", "gone.py", "missing_path", 1),
        ("o/r", "c1", "zero.py", "missing_path", 1),
        ("o/r", "c9", "x.rs", "missing_manifest", 1),
    ]


def test_unresolved_counts_unique_files_as_upstream(tiny: Path) -> None:
    """A gold file unresolved in two samples of one snapshot is one upstream entry (upstream
    collects a set of paths per snapshot), with 2 occurrences kept beside it."""
    again = _sample("s5", "trace2code", "o/r", "c1", ["gone.py", "big.py"], [])
    lines = (tiny / "samples.jsonl").read_text(encoding="utf-8") + json.dumps(again) + "\n"
    (tiny / "samples.jsonl").write_text(lines, encoding="utf-8")
    ss = load_samples(tiny / "samples.jsonl")
    corpus = open_corpus(tiny)
    missing = g.unresolved(g.gold_file_sizes(ss.samples, ss.labels, corpus))
    assert missing.select("path", "occurrences").rows() == [
        ("gone.py", 2),
        ("zero.py", 1),
        ("x.rs", 1),
    ]
    release = Release(ss.samples, ss.labels, ss.spans, {}, corpus, [])
    result = g.run(release, g.GranularityOptions(rerank=False, data_dir=str(tiny)))
    assert result.report["unresolved"][0] == {
        "repo": "o/r",
        "base_commit": "c1",
        "path": "gone.py",
        "reason": "missing_path",
    }
    records = result.records()
    assert (records["unresolved"], records["unresolved_occurrences"]) == (3, 4)
    text = g.markdown(result.report)
    assert "Warning: 3 gold files (repo, commit, path) unresolved (missing_manifest: 1, " in text
    assert "missing_path: 2; 4 sample-gold occurrences)." in text


def _literal_unresolved(samples_files: list[Path]) -> tuple[int, int]:
    """Unresolved gold files of positive samples without any corpus snapshot, counted the way
    upstream's report lists them (one entry per repo, commit, path) and per occurrence."""
    entries, occurrences = set(), 0
    for path in samples_files:
        for line in path.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line)
            gold = _literal_gold(sample)
            entries |= {(sample["repo"], sample["base_commit"], p) for p in gold}
            occurrences += len(gold)
    return len(entries), occurrences


@pytest.mark.shared
def test_unresolved_unique_and_occurrences_on_shared_v0_1(shared_dir: Path, tmp_path: Path) -> None:
    """../shared holds no corpus: against an empty manifest every v0_1 gold file is
    unresolved, 47 unique (repo, commit, path) entries over 55 sample-gold occurrences."""
    _write_jsonl(tmp_path / "corpus" / "corpus_manifest.jsonl", [])
    ss = load_samples(shared_dir / "benchmark" / "v0_1")
    release = Release(ss.samples, ss.labels, ss.spans, {}, open_corpus(tmp_path / "corpus"), [])
    result = g.run(release, g.GranularityOptions(rerank=False))
    records = result.records()
    literal = _literal_unresolved([shared_dir / "benchmark" / "v0_1" / "samples.jsonl"])
    assert (records["unresolved"], records["unresolved_occurrences"]) == literal == (47, 55)
    assert set(result.unresolved["reason"]) == {"missing_manifest"}
    assert result.unresolved["occurrences"].sum() == 55


def test_span_density_known_lengths_and_invalid_spans(tiny: Path) -> None:
    ss = load_samples(tiny / "samples.jsonl")
    sizes = g.gold_file_sizes(ss.samples, ss.labels, open_corpus(tiny))
    density = g.span_density(ss.samples, ss.spans, sizes)
    # s1 big.py: (1,3)+(3,4) -> 4 lines of 12; small.py span (0,2) is invalid.
    # s2: (2,1) invalid; other.py has no known length. s3 late.py: 1 of 7.
    assert density.select("sample_id", "path", "evidence_lines", "file_lines").rows() == [
        ("s1", "big.py", 4, 12),
        ("s3", "late.py", 1, 7),
    ]
    summary = g.span_summary(density, ss.samples, ss.spans)
    assert summary["overall"]["samples"] == 3  # edit2ripple is not a core task
    assert summary["overall"]["samples_with_spans"] == 3  # s2 has other.py (valid)
    assert summary["trace2code"]["span_file_occurrences"] == 1
    assert summary["overall"]["fraction_ratio_at_most"] == {"0.10": 0.0, "0.25": 0.5}  # 1/7
    assert summary["overall"]["evidence_ratio"]["max"] == 1 / 3


def test_missing_chunk_file_reads_as_missing_path(tiny: Path) -> None:
    (tiny / "corpus" / "a" / "o__r" / "c1.chunks.jsonl").unlink()
    ss = load_samples(tiny / "samples.jsonl")
    corpus = open_corpus(tiny / "corpus" / "a")
    sizes = g.gold_file_sizes(ss.samples, ss.labels, corpus)
    assert set(sizes.filter(pl.col("snapshot_id") == "o/r@c1")["reason"]) == {"missing_path"}
    assert g.missing_chunk_files(corpus, ["o/r@c1", "o/r@c2"]) == ["o/r@c1"]


# --- the stored file-vs-line diagnostic ----------------------------------------------------


def _details(path: Path, rows: list[dict[str, Any]]) -> Path:
    base = {
        "task_type": "code2test",
        "repo": "o/r",
        "base_commit": "c1",
        "gold_files": ["a.py"],
        "top_files": ["a.py"],
    }
    _write_jsonl(path, [base | r for r in rows])
    return path


def test_file_vs_line_means_capability_and_order(tmp_path: Path) -> None:
    lines = {
        "line_predicted_count": 10,
        "line_recall@8k": 0.5,
        "line_precision@8k": 0.25,
        "line_f1@8k": 1 / 3,
    }
    spanful = _details(
        tmp_path / "spanful_details.jsonl",
        [
            {
                "sample_id": "a",
                "metrics": {"Recall@20": 1.0, "gold_coverage@8k": 1.0},
                "line_metrics": lines,
            },
            {"sample_id": "b", "metrics": {"Recall@20": 0.5}},  # no spans, no gold_coverage -> 0
            {
                "sample_id": "c",
                "metrics": {"Recall@20": 0.0, "gold_coverage@8k": 0.5},
                "line_metrics": lines | {"line_f1@8k": 0.1, "line_predicted_count": 20},
            },
        ],
    )
    repomap = _details(
        tmp_path / "repomap_details.jsonl",
        [
            {
                "sample_id": "a",
                "metrics": {"Recall@20": 1.0, "gold_coverage@8k": 1.0},
                "line_metrics": lines | {"line_predicted_count": 0},
            }
        ],
    )
    plain = _details(
        tmp_path / "plain_details.jsonl", [{"sample_id": "a", "metrics": {"Recall@20": 1.0}}]
    )
    runs = [load_rankings(p) for p in (repomap, plain, spanful)]
    rows = sy.file_vs_line(runs)
    assert [r["method"] for r in rows] == ["spanful", "repomap", "plain"]
    top = rows[0]
    assert top["samples"] == 3
    assert top["file_recall@20"] == (1.0 + 0.5 + 0.0) / 3
    assert top["file_exposure@8k_chars"] == (1.0 + 0.0 + 0.5) / 3
    assert top["mean_predicted_lines"] == 15.0 and top["span_capable"] is True
    assert top["line_f1@8k_chars"] == (1 / 3 + 0.1) / 2
    assert top["line_recall@8k_chars"] == 0.5
    assert set(top) == {
        "method",
        "samples",
        "file_recall@20",
        "file_exposure@8k_chars",
        "mean_predicted_lines",
        "span_capable",
        "line_recall@8k_chars",
        "line_precision@8k_chars",
        "line_f1@8k_chars",
    }
    assert rows[1]["span_capable"] is False and rows[1]["line_f1@8k_chars"] is None
    assert rows[1]["mean_predicted_lines"] == 0.0
    assert rows[2]["mean_predicted_lines"] is None and rows[2]["span_capable"] is False
    intervals = sy.diagnostic_intervals(runs, n_boot=200)
    low, high = intervals["spanful"]["file_recall@20"] or [None, None]
    assert low is not None and high is not None and low <= top["file_recall@20"] <= high
    assert intervals["plain"]["line_f1@8k_chars"] is None


@pytest.mark.shared
def test_file_vs_line_on_shared_compact_runs(shared_dir: Path) -> None:
    details = (
        shared_dir / "eval" / "v1_1_candidate_filter_ablation" / "repomap_code_only_details.jsonl"
    )
    rows = [json.loads(line) for line in details.read_text(encoding="utf-8").splitlines() if line]
    (got,) = sy.file_vs_line([load_rankings(details)])
    assert got["samples"] == 287
    recall = sum(r["metrics"]["Recall@20"] for r in rows) / len(rows)
    exposure = sum(r["metrics"].get("gold_coverage@8k", 0.0) for r in rows) / len(rows)
    assert got["file_recall@20"] == pytest.approx(recall, abs=1e-12)
    assert got["file_exposure@8k_chars"] == pytest.approx(exposure, abs=1e-12)
    assert got["span_capable"] is False  # compact copies carry no line_metrics


# --- CLI on the demo release ---------------------------------------------------------------


def _paths(items: Any) -> list[str]:
    out = [x if isinstance(x, str) else (x or {}).get("path") for x in items or []]
    return list(dict.fromkeys(p for p in out if p))


def _literal_gold(sample: dict[str, Any]) -> list[str]:
    """Spec §2.6 target gold, literally."""
    gold, task = sample["gold"], sample["task_type"]
    if gold.get("no_gold") is True:
        return []
    if _paths(gold.get("files")):
        return _paths(gold.get("files"))
    if task == "code2test":
        return _paths(gold.get("related_tests"))
    if task == "comment2context":
        must = gold.get("must_context_files")
        found = _paths(must if isinstance(must, list) and must else gold.get("context_files"))
        if found:
            return found
    return _paths(gold.get("root_cause_files")) or _paths(gold.get("related_tests"))


def _literal_sizes(samples_file: Path, corpus_dir: Path) -> list[int]:
    """Gold-file line counts of positive samples, spec §11 read literally with json/loops."""
    manifest = [
        json.loads(x) for x in (corpus_dir / "corpus_manifest.jsonl").read_text().splitlines()
    ]
    files = {
        (m["repo"], m["base_commit"]): corpus_dir / m["chunks_path"].split("/", 1)[1]
        for m in manifest
        if m["status"] == "ok"
    }
    out = []
    for line in samples_file.read_text(encoding="utf-8").splitlines():
        sample = json.loads(line)
        gold = _literal_gold(sample)
        if not gold:
            continue
        ends: dict[str, int] = {}
        chunk_file = files[(sample["repo"], sample["base_commit"])]
        for chunk_line in chunk_file.read_text(encoding="utf-8").splitlines():
            chunk = json.loads(chunk_line)
            ends[chunk["path"]] = max(ends.get(chunk["path"], 0), chunk["end_line"])
        out += [ends[p] for p in gold if ends.get(p, 0) > 0]
    return out


@pytest.mark.slow
def test_cli_json_on_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [
        DEMO / "eval" / "demo" / f"{name}_details.jsonl"
        for name in ("lexical", "rrf_lexical_dense_hash")
    ]
    if not all(p.is_file() for p in runs):
        pytest.skip("data/demo has no eval/demo runs")
    out = tmp_path / "g.json"
    code = main(
        [
            "granularity",
            "--samples",
            str(DEMO / "benchmark" / "demo"),
            "--corpus",
            str(DEMO),
            "--runs",
            *map(str, runs),
            "--budgets",
            "250,4000",
            "--n-boot",
            "100",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert list(result) == [
        "file_sizes",
        "span_evidence",
        "method_sensitivity",
        "unresolved",
        "arbwb",
    ]
    assert set(result["file_sizes"]["overall"]) == {
        "samples",
        "gold_file_occurrences",
        "file_lines",
        "fraction_over_lines",
    }
    assert set(result["file_sizes"]["overall"]["file_lines"]) == {
        "count",
        "min",
        "median",
        "p75",
        "p90",
        "p95",
        "max",
    }
    lines = _literal_sizes(DEMO / "benchmark" / "demo" / "samples.jsonl", DEMO / "corpus" / "demo")
    ordered = sorted(lines)
    pos = 0.9 * (len(ordered) - 1)
    p90 = ordered[int(pos)] + (ordered[int(pos) + 1] - ordered[int(pos)]) * (pos - int(pos))
    assert result["file_sizes"]["overall"]["file_lines"]["p90"] == pytest.approx(p90, abs=1e-9)
    assert result["file_sizes"]["overall"]["file_lines"]["max"] == max(lines)
    assert result["file_sizes"]["overall"]["gold_file_occurrences"] == len(lines)
    assert result["unresolved"] == []
    assert result["arbwb"]["unresolved_occurrences"] == 0
    lexical = [json.loads(x) for x in runs[0].read_text(encoding="utf-8").splitlines()]
    spanned = [r["line_metrics"] for r in lexical if "line_metrics" in r]
    by_method = {r["method"]: r for r in result["method_sensitivity"]}
    assert by_method["lexical"]["line_f1@8k_chars"] == pytest.approx(
        sum(m["line_f1@8k"] for m in spanned) / len(spanned), abs=1e-12
    )
    assert by_method["rrf_lexical_dense_hash"]["span_capable"] is False
    reranked = result["arbwb"]["reranked"]
    assert reranked["lexical"]["status"] == "reranked"
    assert reranked["lexical"]["stored_line_mismatch"] == 0
    assert reranked["lexical"]["top_files_mismatch"] == 0
    assert reranked["lexical"]["samples"] == len(spanned)
    assert reranked["rrf_lexical_dense_hash"]["status"].startswith("not an arbwb baseline")
    legacy = [r for r in result["arbwb"]["line_packing"] if r["packing"] == "legacy_chars"]
    assert legacy[0]["line_recall"] == pytest.approx(
        by_method["lexical"]["line_recall@8k_chars"], abs=1e-12
    )
    budgets = {(r["packing"], r["budget"]) for r in result["arbwb"]["line_packing"]}
    assert budgets == {
        ("legacy_chars", 8000),
        ("files", 250),
        ("files", 4000),
        ("chunks", 250),
        ("chunks", 4000),
    }
    code = main(
        [
            "granularity",
            "--samples",
            str(DEMO / "benchmark" / "demo"),
            "--corpus",
            str(DEMO / "corpus" / "demo"),
            "--runs",
            str(runs[0]),
            "--format",
            "markdown",
            "--no-rerank",
            "--n-boot",
            "50",
        ]
    )
    text = capsys.readouterr().out
    assert code == 0
    assert (
        "| Task | Samples | Gold files | Median lines | P90 | P95 | Max | >500 | >1k | >2k | >5k |"
        in text
    )
    header = "| Method | n | File R@20 | File exposure@8k chars | Line recall | Line precision |"
    assert header + " Line F1 |" in text
    assert "arbwb-defined" not in text  # nothing re-ranked


def test_cli_rejects_bad_budgets(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "granularity",
            "--samples",
            str(DEMO / "benchmark" / "demo"),
            "--corpus",
            str(DEMO),
            "--budgets",
            "8k",
        ]
    )
    assert code == 2
    assert "--budgets" in capsys.readouterr().err


def test_run_skips_without_corpus_or_positives(tiny: Path) -> None:
    ss = load_samples(tiny / "samples.jsonl")
    options = g.GranularityOptions(data_dir="D")
    bare = g.run(Release(ss.samples, ss.labels, ss.spans, {}, None, []), options)
    assert bare.records() == {
        "skipped": "no corpus in D: gold-file sizes need corpus/<release>/corpus_manifest.jsonl"
    }
    assert bare.tables() == [] and bare.unresolved.height == 0
    none = ss.samples.with_columns(stratum=pl.lit("no_gold"))
    release = Release(none, ss.labels, ss.spans, {}, open_corpus(tiny), [])
    assert g.run(release, options).skipped == "no positive samples in D: nothing to measure"
