"""Grep baseline, strict and expanded: every vector of arb-grep.md §10 (GV1-GV16).

``tests/data/arb_grep_vectors.json`` holds GV1-GV13 and GV15 transcribed from the contract
(query text T, rows, pattern lists, match lists, ranked files, gold ranks and metrics, all
computed by upstream code); GV14 and GV16 are built here.
"""

from __future__ import annotations

import json
import math
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb.cli import main
from arbwb.io.samples import load_samples, query_has_leakage, query_text
from arbwb.metrics import chunks as cm
from arbwb.retrievers import details as det
from arbwb.retrievers import grep
from arbwb.retrievers.grep import STOP_TERMS, extract_patterns
from arbwb.retrievers.registry import get_method
from arbwb.retrievers.runner import gold_only

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "arb_grep_vectors.json").read_text(encoding="utf-8")
)
RANKED = [(n, m) for n, v in VECTORS.items() if "rows" in v for m in v["modes"]]


def frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """CHUNKS-like frame of vector rows (line numbers default to 1; grep ignores them)."""
    return pl.DataFrame(
        {
            "chunk_id": [r["chunk_id"] for r in rows],
            "path": [r["path"] for r in rows],
            "kind": [r["kind"] for r in rows],
            "symbol": [r["symbol"] for r in rows],
            "start_line": [r.get("start_line", 1) for r in rows],
            "end_line": [r.get("end_line", 1) for r in rows],
            "text": [r["text"] for r in rows],
        }
    )


def file_table(result: grep.GrepResult) -> list[list[Any]]:
    return [
        [i, r["path"], r["score"], r["matched_patterns"], r["best_chunk_score"], r["hit_chunks"]]
        for i, r in enumerate(result.file_rows, start=1)
    ]


def target(sample_id: str, gold: list[str], hard_negatives: list[str]) -> det.SampleTarget:
    return det.SampleTarget(
        sample_id, "trace2code", "o/r", "c1", gold, hard_negatives, [], [], None, None, False
    )


@pytest.mark.parametrize(("name", "mode"), RANKED)
def test_vector_patterns_matches_and_ranking(name: str, mode: str) -> None:
    vector, expected = VECTORS[name], VECTORS[name]["modes"][mode]
    patterns = extract_patterns(vector["T"], mode)  # type: ignore[arg-type]
    assert [[p.term, p.kind, p.weight] for p in patterns] == expected["patterns"]
    index = grep.build_index(frame(vector["rows"]), mode)  # type: ignore[arg-type]
    per_pattern = [grep.pattern_scores(index, p) for p in patterns]
    for row, chunk in enumerate(vector["rows"]):
        got = [
            [f"{p.kind}:{p.term.lower()}", float(s[row])]
            for p, s in zip(patterns, per_pattern, strict=True)
            if s[row] > 0
        ]
        assert got == expected.get("match_lists", {}).get(chunk["chunk_id"], []), chunk
    result = grep.search(index, vector["T"])
    assert file_table(result) == expected["files"]
    assert result.ranking.files == [f[1] for f in expected["files"]]
    assert result.ranking.details["patterns"] == [
        {"kind": k, "term": t, "weight": w} for t, k, w in expected["patterns"]
    ]


@pytest.mark.parametrize(("name", "mode"), [(n, m) for n, m in RANKED if "gold" in VECTORS[n]])
def test_vector_gold_ranks_and_metrics(name: str, mode: str) -> None:
    """GV1, GV5, GV9a, GV9b; hard negatives are not scored (``gold_only``), so hits are 0.0."""
    vector, expected = VECTORS[name], VECTORS[name]["modes"][mode]
    chunks = frame(vector["rows"])
    ranking = grep.rank_sample(grep.build_index(chunks, mode), vector["T"])  # type: ignore[arg-type]
    full = target("s", vector["gold"], [vector["rows"][0]["path"]])
    row = det.details_row(
        gold_only(full),
        ranking,
        cm.chunk_table(chunks),
        candidate_filter="all_files",
        ranker="grep",
        selective=False,
    )
    assert row["gold_ranks"] == expected["gold_ranks"]
    assert row["metrics"] == expected["metrics"]
    assert row["pattern_mode"] == mode


def test_gv14_bonus_cap() -> None:
    rows = [("mid.txt", f"m{i}") for i in range(2979)] + [("big.txt", f"b{i}") for i in range(2980)]
    rows.append(("one.txt", "o"))
    chunks = frame(
        [
            {"chunk_id": c, "path": p, "kind": "file", "symbol": "", "text": "FooBar"}
            for p, c in rows
        ]
    )
    result = grep.search(grep.build_index(chunks), '{"pr_title": "FooBar"}')
    assert file_table(result) == [
        [1, "big.txt", 9.0, 1, 7.0, 2980],
        [2, "mid.txt", 8.999919644874863, 1, 7.0, 2979],
        [3, "one.txt", 7.173286795139986, 1, 7.0, 1],
    ]


SELECTED_BONUS = {
    1: 0.17328679513998632,
    2: 0.2746530721670274,
    3: 0.34657359027997264,
    8: 0.5493061443340549,
    9: 0.5756462732485115,
    20: 0.7611306094308558,
    41: 0.9344174045708421,
    108: 1.1728369705572859,
    2979: 1.9999196448748626,
    2980: 2.0,
    10**6: 2.0,
}
GLIBC_SAMPLES = {2: 1.0986122886681096, 13: 2.639057329615259, 1580: 7.3658128372094716}


def test_bonus_values_and_glibc_log1p_table() -> None:
    """§6.2 selected values and §6.3 rows, independent of the platform's libm."""
    assert {n: grep.bonus(n) for n in SELECTED_BONUS} == SELECTED_BONUS
    assert {n: grep.glibc_log1p(n) for n in GLIBC_SAMPLES} == GLIBC_SAMPLES
    assert len(grep.GLIBC_LOG1P_ULP) == 59
    # the corrections are real: a correctly rounded ln 3 is one ulp above glibc's log1p(2)
    assert math.nextafter(grep.glibc_log1p(2), math.inf) == 1.0986122886681098


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="compares with glibc's own log1p")
def test_glibc_log1p_equals_the_platform_for_every_n_below_the_cap() -> None:
    assert all(grep.glibc_log1p(n) == math.log1p(n) for n in range(1, 2980))


def test_stop_terms_and_pattern_mode_check() -> None:
    assert len(STOP_TERMS) == 73
    assert {"changed_file", "failure_excerpt", "pr_body", "with"} <= STOP_TERMS
    with pytest.raises(ValueError, match="'strict' or 'expanded'"):
        extract_patterns("{}", "loose")  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["strict", "expanded"])
def test_no_usable_pattern_gives_an_empty_ranking_not_a_crash(mode: str) -> None:
    chunks = frame([{"chunk_id": "a", "path": "x.py", "kind": "file", "symbol": "", "text": "x"}])
    index = grep.build_index(chunks, mode)  # type: ignore[arg-type]
    for text in ("{}", '{"pr_title": "fix the issue"}', '{"a": "` `  -- \\n"}'):
        result = grep.search(index, text)
        assert result.patterns == [] and result.file_rows == []
        assert result.ranking.files == [] and result.ranking.order.tolist() == []
        row = det.details_row(
            target("s", ["x.py"], []),
            result.ranking,
            cm.chunk_table(chunks),
            candidate_filter="all_files",
            ranker="grep",
            selective=False,
        )
        assert row["patterns"] == [] and row["top_files"] == [] and row["top_file_scores"] == []
        assert row["gold_ranks"] == {"x.py": None}
        assert set(row["metrics"].values()) == {0.0} and len(row["metrics"]) == 22


def test_empty_representative_text_packs_as_its_path() -> None:
    """§6.5: the representative chunk's empty text falls back to the path (8k packing)."""
    rows = [
        {
            "chunk_id": "a",
            "path": "pkg/foo_bar/__init__.py",
            "kind": "file",
            "symbol": "",
            "text": "",
        },
        {"chunk_id": "b", "path": "src/b.py", "kind": "file", "symbol": "", "text": "foo_bar()"},
    ]
    chunks = frame(rows)
    ranking = grep.rank_sample(grep.build_index(chunks), '{"pr_title": "foo_bar"}')
    assert ranking.files == ["pkg/foo_bar/__init__.py", "src/b.py"]  # 9.45 > 7.0
    row = det.details_row(
        target("s", ["src/b.py"], []),
        ranking,
        cm.chunk_table(chunks),
        candidate_filter="all_files",
        ranker="grep",
        selective=False,
    )
    used = len("pkg/foo_bar/__init__.py") + len("foo_bar()")
    assert row["metrics"]["context_pollution_tokens@8k"] == float(len("pkg/foo_bar/__init__.py"))
    assert row["metrics"]["gold_token_ratio@8k"] == len("foo_bar()") / used


def write_gv15_release(root: Path, sample_ids: set[str]) -> Path:
    """GV15's samples and corpus as an arbwb release root (benchmark/R, corpus/R)."""
    gv15 = VECTORS["GV15"]
    bench, corpus = root / "benchmark" / "R", root / "corpus" / "R"
    (corpus / "o__r").mkdir(parents=True)
    bench.mkdir(parents=True)
    rows = [s for s in gv15["samples"] if s["id"] in sample_ids]
    (bench / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in rows))
    manifest = dict(gv15["manifest"], chunks_path="o__r/c1.chunks.jsonl")
    (corpus / "corpus_manifest.jsonl").write_text(json.dumps(manifest) + "\n")
    chunk_lines = "".join(json.dumps(c) + "\n" for c in gv15["chunks"])
    (corpus / "o__r" / "c1.chunks.jsonl").write_text(chunk_lines)
    return root


GREP_KEYS = ("gold_files", "gold_ranks", "metrics", "pattern_mode", "patterns")
GREP_KEYS += ("top_file_scores", "top_files", "sample_id", "task_type", "repo", "base_commit")


@pytest.mark.parametrize("mode", ["strict", "expanded"])
def test_gv15_rank_cli_details_and_summary(tmp_path: Path, mode: str) -> None:
    """``arbwb rank --method grep[-expanded]`` end to end on GV15.

    s5 (snapshot absent) is left out: upstream skips it as ``missing_corpus`` while arbwb
    records an error row (arbwb-defined), which would change the means.
    """
    gv15 = VECTORS["GV15"]
    data = write_gv15_release(tmp_path / "data", {"s1", "s2", "s3", "s4"})
    out = tmp_path / f"grep_{mode}_details.jsonl"
    name = "grep" if mode == "strict" else "grep-expanded"
    assert main(["rank", "--method", name, "--data", str(data), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    expected = [dict(r, pattern_mode=mode) for r in gv15["details_strict"]]
    if mode == "expanded":
        expected[0] = gv15["details_expanded_first"]
    assert [{k: r[k] for k in GREP_KEYS} for r in rows] == [
        {k: r[k] for k in GREP_KEYS} for r in expected
    ]
    summary = json.loads((tmp_path / f"grep_{mode}_summary.json").read_text())
    spec = gv15["summary_strict"]
    assert summary["metrics"] == spec["metrics"]
    assert summary["skipped"] == {"no_gold": 1, "query_leakage": 1}
    assert (summary["evaluated"], summary["mode"], summary["candidate_filter"]) == (
        2,
        "grep",
        "all_files",
    )
    assert (summary["model"], summary["pattern_mode"]) == (f"grep-{mode}", mode)
    assert (summary["no_pattern_samples"], summary["no_hit_samples"]) == (1, 0)


def test_rank_leaves_check_marks_in_the_cache_unless_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Strict grep marks each chunk file whose rows passed the general check (``checked/``);
    a second run ranks the same; ``--no-cache`` writes nothing."""
    data = write_gv15_release(tmp_path / "data", {"s1", "s2", "s3", "s4"})
    for chunk_file in data.rglob("*.chunks.jsonl"):  # a blank line: left to the general check
        chunk_file.write_text(chunk_file.read_text() + "\n")
    cache = tmp_path / "cache"
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(cache))
    outs = [tmp_path / f"grep{i}_details.jsonl" for i in range(3)]
    for out, extra in zip(outs, ([], [], ["--no-cache"]), strict=True):
        if extra:
            shutil.rmtree(cache)
        args = ["rank", "--method", "grep", "--data", str(data), "--out", str(out), *extra]
        assert main(args) == 0
        if not extra:  # one chunk file, one mark
            assert len(list((cache / "checked").glob("*.ok"))) == 1
    assert not cache.exists()
    rows = [[json.loads(x)["top_files"] for x in o.read_text().splitlines()] for o in outs]
    assert rows[0] == rows[1] == rows[2]


def test_gv15_missing_snapshot_is_an_error_row(tmp_path: Path) -> None:
    data = write_gv15_release(tmp_path / "data", {"s1", "s5"})
    out = tmp_path / "grep_details.jsonl"
    assert main(["rank", "--method", "grep", "--data", str(data), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["sample_id"], r.get("error")) for r in rows] == [
        ("s1", None),
        ("s5", "missing_corpus"),
    ]


def test_hard_negatives_are_not_scored_by_the_grep_runner(tmp_path: Path) -> None:
    """Upstream passes no hard negatives to grep (§7): ``hard_negative_hits@k`` stays 0.0."""
    data = write_gv15_release(tmp_path / "data", {"s1"})
    samples = data / "benchmark" / "R" / "samples.jsonl"
    record = json.loads(samples.read_text())
    record["hard_negative_files"] = ["src/api.py"]
    samples.write_text(json.dumps(record) + "\n")
    out = tmp_path / "grep_details.jsonl"
    assert main(["rank", "--method", "grep", "--data", str(data), "--out", str(out)]) == 0
    row = json.loads(out.read_text())
    assert row["metrics"]["hard_negative_hits@5"] == 0.0
    assert row["metrics"] == VECTORS["GV15"]["details_strict"][0]["metrics"]


DETERMINISM = """
import json, sys
sys.path.insert(0, {tests!r})
from test_retrievers_grep import VECTORS, frame
from arbwb.retrievers import grep
out = []
for name in ("GV6", "GV8", "GV12"):
    v = VECTORS[name]
    for mode in ("strict", "expanded"):
        r = grep.search(grep.build_index(frame(v["rows"]), mode), v["T"])
        out.append([r.ranking.details["patterns"], r.file_rows, r.ranking.order.tolist()])
print(json.dumps(out))
"""


def test_same_result_under_any_hash_seed() -> None:
    """Two processes with different PYTHONHASHSEED give byte-identical results."""
    code = DETERMINISM.format(tests=str(Path(__file__).parent))
    outputs = []
    for seed in ("0", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    gv12 = json.loads(outputs[0])[5]  # GV12 expanded: the summation-order vector
    assert [r["score"] for r in gv12[1]] == [33.94657359027997, 1.2746530721670273]


GV16_ID = "3cfa329da72d3c0763b18e77"
GV16_TOKEN_LINE = (  # the contract lists them on one line, in this order
    "4976 behavior builder clap containing derive empty existing fixes help instead keep output"
    " quote regression render summary they token util values whitespace"
)
GV16_TOKENS = GV16_TOKEN_LINE.split(" ")
GV16_STRICT = [
    ["clap_builder/src/util/mod.rs", "file_path", 18.0],
    ["mod.rs", "file_path", 18.0],
    ["default_value_t", "code", 12.0],
    ["String", "code", 12.0],
]
GV16_TOP20 = [
    "clap_builder/src/util/mod.rs",
    "clap_builder/src/error/mod.rs",
    "clap_complete/src/env/mod.rs",
    "clap_builder/src/output/textwrap/mod.rs",
    "clap_complete/src/aot/generator/mod.rs",
    "clap_builder/src/builder/mod.rs",
    "clap_complete/src/aot/mod.rs",
    "src/_derive/mod.rs",
    "clap_builder/src/output/mod.rs",
    "clap_builder/src/parser/features/mod.rs",
    "clap_builder/src/parser/matches/mod.rs",
    "clap_builder/src/parser/mod.rs",
    "clap_complete/src/aot/shells/mod.rs",
    "clap_complete/src/engine/mod.rs",
    "clap_derive/src/derives/mod.rs",
    "clap_derive/src/utils/mod.rs",
    "src/_cookbook/mod.rs",
    "tests/derive/custom_string_parsers.rs",
    "tests/derive_ui/default_value_t_invalid.rs",
    "tests/derive_ui/default_value_t_invalid.stderr",
]
GV16_STRICT_METRICS = dict.fromkeys(
    [
        f"{m}@{k}"
        for m in ("F0.5", "Precision", "Recall", "hard_negative_hits")
        for k in (5, 10, 20)
    ],
    0.0,
) | {
    "MRR": 0.011627906976744186,
    "context_efficiency@8k": 0.0,
    "context_pollution_tokens@8k": 1086.0,
    "coverage_auc@20": 0.0,
    "gold_coverage@8k": 0.0,
    "gold_token_ratio@8k": 0.0,
    "irrelevant_files@5": 5.0,
    "irrelevant_files@10": 10.0,
    "irrelevant_files@20": 20.0,
    "redundancy@8k": 0.0,
}
GV16_ROWS = {
    "strict": [
        [1, "clap_builder/src/util/mod.rs", 92.07465307216702, 2, 91.8, 2],
        [2, "clap_builder/src/error/mod.rs", 68.97283697055728, 2, 67.8, 108],
        [3, "clap_complete/src/env/mod.rs", 68.73441740457083, 2, 67.8, 41],
        [4, "clap_builder/src/output/textwrap/mod.rs", 68.56113060943085, 2, 67.8, 20],
        [5, "clap_complete/src/aot/generator/mod.rs", 68.3756462732485, 2, 67.8, 9],
        [6, "clap_builder/src/builder/mod.rs", 67.97328679513998, 2, 67.8, 1],
        [7, "clap_complete/src/aot/mod.rs", 67.97328679513998, 2, 67.8, 1],
        [8, "src/_derive/mod.rs", 67.97328679513998, 2, 67.8, 1],
        [86, "tests/builder/help.rs", 12.549306144334055, 1, 12.0, 8],
    ],
    "expanded": [
        [1, "clap_builder/src/util/mod.rs", 97.124653072167, 6, 96.84999999999998, 2],
        [2, "clap_builder/src/error/mod.rs", 84.47283697055728, 13, 76.49999999999999, 108],
        [3, "clap_builder/src/output/textwrap/mod.rs", 80.01113060943084, 9, 77.24999999999999, 20],
        [4, "src/_derive/mod.rs", 78.32328679513998, 11, 78.14999999999999, 1],
        [5, "clap_complete/src/env/mod.rs", 74.08441740457083, 6, 73.14999999999999, 41],
        [45, "tests/builder/help.rs", 30.56249381056487, 11, 20.8, 517],
    ],
}


@pytest.mark.shared
def test_gv16_real_sample_patterns(shared_dir: Path) -> None:
    """The real v0_1 sample: T, target gold, no leakage, and both pattern lists (§10 GV16)."""
    samples = shared_dir / "benchmark" / "v0_1" / "samples.jsonl"
    records = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    record = next(r for r in records if r["id"] == GV16_ID)
    text = query_text(record["query"])
    assert text.startswith('{"changed_file": "clap_builder/src/util/mod.rs", "pr_body": "## Summ')
    assert not query_has_leakage(record)
    strict = [[p.term, p.kind, p.weight] for p in extract_patterns(text, "strict")]
    assert strict == GV16_STRICT
    expanded = [[p.term, p.kind, p.weight] for p in extract_patterns(text, "expanded")]
    assert expanded == GV16_STRICT + [[t, "token", 1.0] for t in GV16_TOKENS]


@pytest.mark.shared
@pytest.mark.parametrize("mode", ["strict", "expanded"])
def test_gv16_real_sample_ranking(shared_dir: Path, mode: str) -> None:
    """Full GV16 ranking; needs the v0_1 clap corpus under ../shared (skipped when absent)."""
    from arbwb.io.corpus import open_corpus, snapshot_id

    corpus_dir = shared_dir / "corpus" / "v0_1"
    if not (corpus_dir / "corpus_manifest.jsonl").is_file():
        pytest.skip("the v0_1 corpus snapshots are not in ../shared")
    corpus = open_corpus(corpus_dir)
    snapshot = snapshot_id("clap-rs/clap", "68b5ff900bae8ee1a0e328c1a2301a7985e4f1c6")
    if not corpus.has(snapshot):
        pytest.skip("the clap snapshot of GV16 is not in ../shared")
    sample_set = load_samples(shared_dir / "benchmark" / "v0_1" / "samples.jsonl")
    text = sample_set.samples.filter(pl.col("sample_id") == GV16_ID)["query_text"].item()
    index = grep.build_index(corpus.chunks(snapshot), mode)  # type: ignore[arg-type]
    result = grep.search(index, text)
    table = {row[0]: row for row in file_table(result)}
    assert [table[row[0]] for row in GV16_ROWS[mode]] == GV16_ROWS[mode]
    assert len(result.file_rows) == {"strict": 269, "expanded": 592}[mode]
    if mode == "strict":
        assert result.ranking.files[:20] == GV16_TOP20
        chunks = corpus.chunks(snapshot)
        row = det.details_row(
            target(GV16_ID, ["tests/builder/help.rs"], []),
            result.ranking,
            cm.chunk_table(chunks),
            candidate_filter="all_files",
            ranker="grep",
            selective=False,
        )
        assert row["gold_ranks"] == {"tests/builder/help.rs": 86}
        assert row["metrics"] == GV16_STRICT_METRICS


def test_registered_methods() -> None:
    for name, mode in (("grep", "strict"), ("grep-expanded", "expanded")):
        method = get_method(name)
        assert (method.name, method.ranker, method.model) == (name, "grep", f"grep-{mode}")
        assert method.stats() == {"pattern_mode": mode} and method.gold_only


def test_lower_casing_is_python_str_lower() -> None:
    """§1: ``lower`` is Python's (special casings, final sigma), not Polars' Unicode tables."""
    values = ["ABC", "ÀÉ x", "İstanbul", "ΣΑΣ word", "", "K\u212a", "ǅ"]
    assert grep.python_lower(pl.Series(values)).to_list() == [v.lower() for v in values]


def test_basename_is_pure_posix_path_name() -> None:
    """The fast basename equals ``PurePosixPath(p).name`` on odd paths too (arb-grep §5)."""
    from pathlib import PurePosixPath

    from arbwb.retrievers.grep import basename

    odd = ["a/b.py", "a/b/", "a/.", ".", "", "/", "a//b", "./x", "a/..", "..", "x", "a/b/./", "//"]
    for path in [*odd, "src/ü.py", " a / b "]:
        assert basename(path) == PurePosixPath(path).name, path
