"""Issue 22: input that contradicts itself is an InputError naming file, line and field.

Each finding is re-created on a copy of demo files and run through the CLI (exit code 2 and
a located message), beside the cases that must keep loading: an MRR past the stored top 20
and every real upstream details file.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb import cli
from arbwb.analysis import scoring
from arbwb.analysis.rank_analysis import per_sample
from arbwb.errors import InputError
from arbwb.io.rankings import load_rankings
from arbwb.io.samples import load_samples
from arbwb.release.validate import check_record
from arbwb.retrievers.fusion import check_weights, rrf

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
DETAILS = DEMO / "eval" / "demo" / "bm25_details.jsonl"
SAMPLES = DEMO / "benchmark" / "demo" / "samples.jsonl"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _full_row() -> dict[str, Any]:
    """A demo details row with a full top-20 list and its first gold file at rank 2."""
    for row in _rows(DETAILS):
        gold, top = set(row["gold_files"]), row["top_files"]
        if len(top) == 20 and top[0] not in gold and top[1] in gold:
            return row
    raise AssertionError("the demo has no such row")


def _without_gold(row: dict[str, Any], mrr: float) -> dict[str, Any]:
    """``row`` with its gold files replaced in top_files (no gold_ranks) and MRR ``mrr``."""
    out = copy.deepcopy(row)
    gold = set(out["gold_files"])
    out["top_files"] = [
        f"other/p{i}.py" if p in gold else p for i, p in enumerate(out["top_files"])
    ]
    for key in ("gold_ranks", "top_file_scores"):
        out.pop(key, None)
    out["metrics"]["MRR"] = mrr
    return out


def _contradicting(case: str) -> dict[str, Any]:
    row = copy.deepcopy(_full_row())
    if case == "empty-list":  # the example: MRR 0.5 and nothing stored
        row = _without_gold(row, 0.5)
        row["top_files"] = []
    elif case == "no-gold-at-2":
        row = _without_gold(row, 0.5)
    elif case == "gold-at-2-but-mrr-1":
        row["metrics"]["MRR"] = 1.0
    elif case == "above-1":
        row["metrics"]["MRR"] = 1.5
    elif case == "negative":
        row["metrics"]["MRR"] = -0.25
    elif case == "gold-ranks-say-unranked":
        row = _without_gold(row, 1 / 25)
        row["gold_ranks"] = dict.fromkeys(row["gold_files"])
    elif case == "gold-ranks-say-deeper":
        row = _without_gold(row, 1 / 25)
        row["gold_ranks"] = dict.fromkeys(row["gold_files"], 30)
    elif case == "not-a-reciprocal-rank":
        row = _without_gold(row, 0.0123)
    elif case == "no-gold-files":
        row = _without_gold(row, 1 / 25)
        row["gold_files"] = []
    return row


MRR_CASES = [
    "empty-list",
    "no-gold-at-2",
    "gold-at-2-but-mrr-1",
    "above-1",
    "negative",
    "gold-ranks-say-unranked",
    "gold-ranks-say-deeper",
    "not-a-reciprocal-rank",
    "no-gold-files",
]


@pytest.mark.parametrize("case", MRR_CASES)
def test_stored_mrr_that_contradicts_its_row_is_refused_by_score_and_depth(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _rows(DETAILS)[0]
    path = _jsonl(tmp_path / "bad_details.jsonl", [first, _contradicting(case)])
    for argv in (["score", str(path), "--metrics", "mrr,recall@20"], ["depth", str(path)]):
        code, out, err = _run(argv, capsys)
        assert (code, out) == (2, ""), argv
        assert f"{path}:2: field 'metrics.MRR': " in err, argv


def test_gold_rank_past_the_list_for_a_listed_file_is_refused(tmp_path: Path) -> None:
    row = _full_row()
    listed = row["top_files"][1]
    row["gold_ranks"] = {**row["gold_ranks"], listed: 40}
    path = _jsonl(tmp_path / "bad_details.jsonl", [row])
    with pytest.raises(InputError, match="top_files has it at rank 2") as info:
        load_rankings(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 1, "gold_ranks")


def test_mrr_past_the_stored_top_20_is_upstreams_full_ranking(tmp_path: Path) -> None:
    row = _without_gold(_full_row(), 1 / 25)
    path = _jsonl(tmp_path / "deep_details.jsonl", [row])
    run = load_rankings(path)
    sample = row["sample_id"]
    score = scoring.score_run(run, metrics=["mrr", "recall@20", "first_gold_rank"]).metrics
    values = dict(score.filter(pl.col("sample_id") == sample).select("metric", "value").rows())
    assert values == {"mrr": pytest.approx(1 / 25), "recall@20": 0.0, "first_gold_rank": 25.0}
    depth = per_sample(run.rankings, run.labels, run.details, stored=run.stored, runs=[run.run])
    got = depth.filter(pl.col("sample_id") == sample).row(0, named=True)
    assert (got["first_gold_rank"], got["mrr"], got["gold_recall@20"]) == (25, 1 / 25, 0.0)


@pytest.mark.shared
def test_every_real_and_demo_details_file_still_loads(shared_dir: Path) -> None:
    files = sorted((shared_dir / "eval").glob("*/*_details.jsonl"))
    files += sorted((DEMO / "eval").glob("*/*_details.jsonl"))
    assert len(files) >= 5 + 11
    for path in files:
        assert load_rankings(path).rankings.height > 0, path


# --- mistyped gold: every reader refuses the sample, none drops it from n ------------------


def _samples_with(tmp_path: Path, change: dict[str, Any]) -> tuple[Path, int]:
    """The demo samples with ``change`` merged into the gold of the first code2test record."""
    rows = _rows(SAMPLES)
    index = next(i for i, r in enumerate(rows) if r["task_type"] == "code2test")
    rows[index]["gold"] = {**rows[index]["gold"], **change}
    return _jsonl(tmp_path / "samples.jsonl", rows), index + 1


def test_mistyped_related_tests_is_one_error_for_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples, line = _samples_with(tmp_path, {"related_tests": "tests/test_money.py"})
    where = f"{samples}:{line}: field 'gold.related_tests': expected a list of paths, got str"
    for argv in (
        ["score", str(DETAILS), "--samples", str(samples)],
        ["depth", str(DETAILS), "--samples", str(samples)],
        ["taxonomy", "--samples", str(samples)],
    ):
        code, out, err = _run(argv, capsys)
        assert (code, out) == (2, ""), argv
        assert where in err, argv
    code, out, _ = _run(["validate", str(samples)], capsys)
    assert code == 1 and where in out


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        ({"related_tests": "t.py"}, "gold.related_tests", "expected a list of paths, got str"),
        ({"root_cause_files": {"a.py": 1}}, "gold.root_cause_files", "got dict"),
        ({"related_tests": ["t.py", 3]}, "gold.related_tests", "element 1: expected a path"),
        ({"supporting_files": [{"file": "a.py"}]}, "gold.supporting_files", "element 0"),
        ({"no_gold": "false"}, "gold.no_gold", "expected true or false, got 'false'"),
        ({"gold_spans": "a.py:1-3"}, "gold.gold_spans", "expected a list, got str"),
        ({"no_gold": True, "reason": "flaky_ci"}, "gold.no_gold", "must not be true"),
    ],
)
def test_loader_and_validate_agree_on_gold(
    tmp_path: Path, change: dict[str, Any], field: str, reason: str
) -> None:
    samples, line = _samples_with(tmp_path, change)
    with pytest.raises(InputError, match=reason) as info:
        load_samples(samples)
    assert (info.value.path, info.value.line, info.value.field) == (str(samples), line, field)
    record = _rows(samples)[line - 1]
    assert field in [f for f, _ in check_record(record)]  # validate flags the same field


def test_abstention_without_no_gold_is_refused(tmp_path: Path) -> None:
    rows = _rows(SAMPLES)
    index = next(i for i, r in enumerate(rows) if r["task_type"] == "abstention")
    rows[index]["gold"].pop("no_gold")
    path = _jsonl(tmp_path / "samples.jsonl", rows)
    with pytest.raises(InputError, match="must be true for abstention") as info:
        load_samples(path)
    assert (info.value.line, info.value.field) == (index + 1, "gold.no_gold")


@pytest.mark.shared
def test_real_samples_still_load(shared_dir: Path) -> None:
    assert load_samples(shared_dir / "benchmark" / "v0_1").samples.height == 35
    abstention = shared_dir / "benchmark" / "v2_abstention_pilot" / "abstention.jsonl"
    assert load_samples(abstention).samples.height == 82
    assert load_samples(SAMPLES).samples.height == len(_rows(SAMPLES))


# --- explicit ranks (TREC, tables) ------------------------------------------------------------


def _tiny_samples(tmp_path: Path) -> Path:
    record = {
        "id": "q1",
        "task_type": "code2test",
        "repo": "o/x",
        "base_commit": "c" * 40,
        "query": {"pr_title": "t"},
        "gold": {"related_tests": ["t.py"]},
    }
    return _jsonl(tmp_path / "samples.jsonl", [record])


@pytest.mark.parametrize(
    ("line", "field", "reason"),
    [
        ("q1 Q0 a.py 0 1.0 t", "rank", "ranks start at 1 and are whole numbers, got 0"),
        ("q1 Q0 a.py -1 1.0 t", "rank", "ranks start at 1 and are whole numbers, got -1"),
        ("q1 Q0 a.py 1.5 1.0 t", "rank", "expected an integer, got '1.5'"),
        ("q1 Q0 a.py 3 nan t", "score", "expected a finite number, got nan"),
        ("q1 Q0 a.py 3 -inf t", "score", "expected a finite number, got -inf"),
    ],
)
def test_trec_ranks_start_at_1_and_scores_are_finite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, field: str, reason: str
) -> None:
    run = tmp_path / "mine.trec"
    run.write_text(f"q1 Q0 t.py 1 2.0 t\nq1 Q0 b.py 2 1.5 t\n{line}\n", encoding="utf-8")
    code, _, err = _run(["score", str(run), "--samples", str(_tiny_samples(tmp_path))], capsys)
    assert code == 2
    assert f"{run}:3: field '{field}': {reason}" in err


def test_table_ranks_follow_the_trec_rule(tmp_path: Path) -> None:
    table = pl.DataFrame({"sample_id": ["q1", "q1"], "path": ["a", "b"], "rank": [1.0, 2.5]})
    table.write_parquet(tmp_path / "run.parquet")
    with pytest.raises(InputError, match=r"ranks start at 1 and are whole numbers, got 2\.5") as e:
        load_rankings(tmp_path / "run.parquet")
    assert (e.value.line, e.value.field) == (2, "rank")
    scored = table.with_columns(rank=pl.Series([1, 2]), score=pl.Series([1.0, math.inf]))
    scored.write_csv(tmp_path / "run.csv")
    with pytest.raises(InputError, match="expected a finite number, got inf") as e:
        load_rankings(tmp_path / "run.csv")
    assert (e.value.line, e.value.field) == (3, "score")  # header, then data lines from 2


def test_repeated_trec_docno_keeps_its_best_rank(tmp_path: Path) -> None:
    run = tmp_path / "mine.trec"
    run.write_text("q1 Q0 a.py 2 1.0 t\nq1 Q0 b.py 1 2.0 t\nq1 Q0 a.py 3 0.5 t\n", encoding="utf-8")
    ranked = load_rankings(run).rankings.select("rank", "path").rows()
    assert ranked == [(1, "b.py"), (2, "a.py")]  # the documented rule: upstream's dedupe


# --- rrf weights ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("weights", "named"),
    [("1,nan", "got nan"), ("1,inf", "got inf"), ("-1,2", "got -1.0"), ("0,0", "positive")],
)
def test_bad_rrf_weights_exit_2_before_anything_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], weights: str, named: str
) -> None:
    out = tmp_path / "rrf_details.jsonl"
    argv = ["rank", "--method", "rrf", "--runs", str(DETAILS), str(DETAILS)]
    argv += [f"--weights={weights}", "--data", str(tmp_path / "nowhere"), "--out", str(out)]
    code, _, err = _run(argv, capsys)
    assert code == 2 and "field '--weights'" in err and named in err
    assert not out.exists()


def test_zero_weight_is_allowed_and_fused_scores_stay_finite() -> None:
    assert check_weights([1, 0], 2) == [1.0, 0.0]
    fused = rrf([["a"], ["b"]], weights=[1.0, 0.0])
    assert fused == [("a", 1 / 61), ("b", 0.0)]
    with pytest.raises(ValueError, match="finite and not negative, got nan"):
        rrf([["a"], ["b"]], weights=[1.0, math.nan])


# --- missing snapshots: the warning and n_missing_snapshot count the same samples -------------


def test_missing_snapshot_warning_and_field_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = {"base_commit": "c" * 40, "query": {"pr_title": "t"}, "task_type": "code2test"}
    samples = _jsonl(
        tmp_path / "samples.jsonl",
        [
            {**base, "id": "a", "repo": "o/x", "gold": {"related_tests": ["t.py"]}},
            {**base, "id": "b", "repo": "o/y", "gold": {"related_tests": ["u.py"]}},
            {
                **base,
                "id": "n",
                "repo": "o/y",  # no gold, in the missing snapshot: outside n
                "task_type": "abstention",
                "query": {"source": "issue", "text": "x"},
                "gold": {"files": [], "no_gold": True, "reason": "user_error"},
            },
        ],
    )
    preds = _jsonl(
        tmp_path / "mine.jsonl",
        [{"sample_id": s, "ranked_files": ["t.py", "u.py"]} for s in ("a", "b", "n")],
    )
    corpus = tmp_path / "corpus"
    chunk = {"repo": "o/x", "base_commit": "c" * 40, "symbol": "", "start_line": 1}
    chunk |= {"chunk_id": "1", "path": "t.py", "kind": "file", "end_line": 1, "text": "a b"}
    (corpus / "o__x").mkdir(parents=True)
    _jsonl(corpus / "o__x" / f"{'c' * 40}.chunks.jsonl", [chunk])
    manifest = {"repo": "o/x", "base_commit": "c" * 40, "status": "ok", "chunks_path": "gone"}
    _jsonl(corpus / "corpus_manifest.jsonl", [manifest])
    argv = ["score", str(preds), "--samples", str(samples), "--metrics", "bcy@8000"]
    with pytest.warns(UserWarning, match=r"^1 samples with gold \(1 \(run, sample\) pairs\)"):
        code, out, _ = _run([*argv, "--corpus", str(corpus)], capsys)
    summary = json.loads(out)["runs"][0]
    assert (code, summary["n"], summary["n_missing_snapshot"]) == (0, 2, 1)


def test_empty_gold_list_is_upstreams_no_gold_skip_and_validate_flags_it(tmp_path: Path) -> None:
    samples, line = _samples_with(tmp_path, {"related_tests": []})
    loaded = load_samples(samples)  # upstream skips it as no_gold (spec §2.6, §4.1)
    sample = loaded.samples.row(line - 1, named=True)["sample_id"]
    gold = loaded.labels.filter((pl.col("sample_id") == sample) & (pl.col("role") == "gold"))
    assert gold.is_empty()
    record = _rows(samples)[line - 1]
    assert ("gold.related_tests", "needs a non-empty list of paths for task 'code2test'") in (
        check_record(record)
    )


def test_stored_mrr_counts_only_for_the_gold_it_was_computed_with(tmp_path: Path) -> None:
    row = _without_gold(_full_row(), 1 / 25)  # stored MRR: first gold at rank 25
    path = _jsonl(tmp_path / "deep_details.jsonl", [row])
    samples = _rows(SAMPLES)
    record = next(r for r in samples if r["id"] == row["sample_id"])
    key = {"code2test": "related_tests", "edit2ripple": "files"}.get(record["task_type"])
    record["gold"] = {**record["gold"], key or "root_cause_files": ["elsewhere/new_gold.py"]}
    if key is None:  # comment2context reads must_context_files first
        record["gold"].pop("must_context_files", None)
    sample_set = load_samples(_jsonl(tmp_path / "samples.jsonl", samples))
    metrics = ["mrr", "first_gold_rank"]
    scored = scoring.score_run(load_rankings(path), sample_set, metrics=metrics).metrics
    got = dict(
        scored.filter(pl.col("sample_id") == row["sample_id"]).select("metric", "value").rows()
    )
    assert got == {"mrr": 0.0, "first_gold_rank": None}  # the new gold file was never ranked
