"""Ranking loaders: every format normalises to distinct 1-based ranks; bad input is located."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb.errors import InputError
from arbwb.io.details_reader import canonical_metric_name
from arbwb.io.rankings import default_run_name, load_rankings


def _details(sample_id: str, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "sample_id": sample_id,
        "task_type": "code2test",
        "repo": "o/r",
        "base_commit": "c" * 40,
        "gold_files": ["g.py"],
        "top_files": ["a.py", "g.py"],
    }
    row.update(extra)
    return row


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _ranked(frame: pl.DataFrame, sample: str) -> list[tuple[int, str]]:
    return frame.filter(pl.col("sample_id") == sample).select("rank", "path").rows()


def test_details_dedupe_deep_gold_scores_and_stored(tmp_path: Path) -> None:
    rows = [
        _details(
            "s1",
            top_files=["a.py", "b.py", "a.py", "", "c.py"],
            gold_files=["g.py", "b.py"],
            gold_ranks={"g.py": 57, "b.py": 2},
            metrics={
                "Recall@5": 0.5,
                "MRR": 0.5,
                "Any@5": 1,
                "F0.5@10": 0.3,
                "gold_coverage@8k": 0.0,
            },
            candidate_filter="code_only",
        ),
        _details(
            "s2",
            top_files=["x.py"],
            top_file_scores=[{"path": "x.py", "score": 0.7, "pagerank": 1.0}],
        ),
    ]
    run = load_rankings(_jsonl(tmp_path / "lexical_code_only_details.jsonl", rows))
    assert run.run == "lexical_code_only"
    assert _ranked(run.rankings, "s1") == [(1, "a.py"), (2, "b.py"), (3, "c.py"), (57, "g.py")]
    assert run.rankings.filter(pl.col("sample_id") == "s2")["score"].to_list() == [0.7]
    assert run.labels is not None and run.labels.rows() == [
        ("s1", "g.py", "gold"),
        ("s1", "b.py", "gold"),
        ("s2", "g.py", "gold"),
    ]
    assert run.details is not None
    assert run.details.select("task", "candidate_filter", "line").rows() == [
        ("code2test", "code_only", 1),
        ("code2test", None, 2),
    ]
    assert run.stored is not None
    assert run.stored.select("metric", "value").rows() == [
        ("recall@5", 0.5),
        ("mrr", 0.5),
        ("hit@5", 1.0),
        ("f0.5@10", 0.3),
        ("gold_coverage@8k", 0.0),
    ]


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        ({"top_files": "a.py"}, "top_files", "expected a list"),
        ({"top_files": ["a.py", 3]}, "top_files", "element 3"),
        ({"gold_ranks": {"g.py": 0}}, "gold_ranks", "positive integer"),
        ({"gold_ranks": {"g.py": 1}}, "gold_ranks", "top_files has 'a.py' there"),
        ({"metrics": {"MRR": "high"}}, "metrics.MRR", "expected a number"),
        ({"top_file_scores": [{"score": 1}]}, "top_file_scores", "objects"),
    ],
)
def test_details_bad_fields(tmp_path: Path, row: dict[str, Any], field: str, reason: str) -> None:
    path = _jsonl(tmp_path / "d.jsonl", [_details("ok"), _details("bad", **row)])
    with pytest.raises(InputError, match=reason) as info:
        load_rankings(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 2, field)


def test_details_missing_field_and_duplicates(tmp_path: Path) -> None:
    row = _details("a")
    del row["gold_files"]
    path = _jsonl(tmp_path / "d.jsonl", [_details("b"), row])
    with pytest.raises(InputError, match="required field is missing") as info:
        load_rankings(path, fmt="details")
    assert (info.value.line, info.value.field) == (2, "gold_files")
    dup = _jsonl(tmp_path / "dup.jsonl", [_details("a"), _details("b"), _details("a")])
    with pytest.raises(
        InputError, match=r"duplicate sample id 'a' in one run \(first at line 1\)"
    ) as info:
        load_rankings(dup)
    assert (info.value.line, info.value.field) == (3, "sample_id")


def test_predictions_jsonl_empty_error_and_objects(tmp_path: Path) -> None:
    rows = [
        {"sample_id": "a", "status": "ok", "ranked_files": ["x", {"path": "y", "score": 2.5}, "x"]},
        {"sample_id": "b", "status": "ok", "ranked_files": []},
        {"sample_id": "c", "status": "error", "error": "timeout"},
    ]
    run = load_rankings(_jsonl(tmp_path / "mine.jsonl", rows), run="mine")
    assert run.run == "mine" and run.details is None and run.labels is None
    assert run.rankings.select("sample_id", "rank", "path", "score").rows() == [
        ("a", 1, "x", None),
        ("a", 2, "y", 2.5),
    ]
    assert run.submitted.select("sample_id", "line", "status").rows() == [
        ("a", 1, "ok"),
        ("b", 2, "ok"),
        ("c", 3, "error"),
    ]
    assert run.errors.rows() == [("mine", "c", "timeout")]


def test_predictions_json_array(tmp_path: Path) -> None:
    path = tmp_path / "preds.json"
    path.write_text(json.dumps([{"sample_id": "a", "ranked_files": ["p", "q"]}]), encoding="utf-8")
    run = load_rankings(path)
    assert (run.run, _ranked(run.rankings, "a")) == ("preds", [(1, "p"), (2, "q")])
    path.write_text(json.dumps([{"sample_id": "a", "status": "maybe"}]), encoding="utf-8")
    with pytest.raises(InputError, match="expected status 'ok' or 'error'") as info:
        load_rankings(path)
    assert info.value.field == "[0].status"


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"sample_id": "a", "status": "error"}, "error"),
        ({"sample_id": "a", "status": "ok"}, "ranked_files"),
        ({"sample_id": "a", "ranked_files": [1]}, "ranked_files[0]"),
        ({"ranked_files": []}, "sample_id"),
    ],
)
def test_predictions_bad_records(tmp_path: Path, row: dict[str, Any], field: str) -> None:
    path = _jsonl(tmp_path / "p.jsonl", [{"sample_id": "z", "ranked_files": []}, row])
    with pytest.raises(InputError) as info:
        load_rankings(path, fmt="predictions")
    assert (info.value.line, info.value.field) == (2, field)


def test_trec_respects_rank_column_and_ties(tmp_path: Path) -> None:
    path = tmp_path / "bm25.trec"
    path.write_text(
        "q1 Q0 c.py 3 0.5 t\nq1 Q0 a.py 1 0.9 t\nq2 Q0 z.py 1 1.0 t\n"
        "q1 Q0 b.py 2 0.9 t\nq1 Q0 a.py 4 0.1 t\nq1 Q0 d.py 3 0.5 t\n",
        encoding="utf-8",
    )
    run = load_rankings(path)
    assert run.run == "t"  # a TREC run is named after its tag (column 6)
    # equal given ranks keep file order; the repeated a.py collapses at its first rank
    assert _ranked(run.rankings, "q1") == [(1, "a.py"), (2, "b.py"), (3, "c.py"), (4, "d.py")]
    assert run.submitted.select("sample_id", "line").rows() == [("q1", 1), ("q2", 3)]
    path.write_text("q1 Q0 a.py one 0.9 t\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected an integer") as info:
        load_rankings(path)
    assert (info.value.line, info.value.field) == (1, "rank")
    path.write_text("q1 Q0 a.py 1 0.9\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected 6 columns"):
        load_rankings(path)


def test_csv_and_parquet_tables(tmp_path: Path) -> None:
    table = pl.DataFrame(
        {
            "sample_id": ["s", "s", "s", "t"],
            "path": ["b", "a", "b", "q"],
            "rank": [2, 1, 3, 1],
            "score": [0.5, 0.9, 0.1, None],
        }
    )
    table.write_csv(tmp_path / "run.csv")
    table.write_parquet(tmp_path / "run.parquet")
    for name in ("run.csv", "run.parquet"):
        run = load_rankings(tmp_path / name)
        assert run.rankings.select("sample_id", "rank", "path", "score").rows() == [
            ("s", 1, "a", 0.9),
            ("s", 2, "b", 0.5),
            ("t", 1, "q", None),
        ]
    table.drop("rank").write_csv(tmp_path / "norank.csv")
    with pytest.raises(InputError, match="required column is missing") as info:
        load_rankings(tmp_path / "norank.csv")
    assert info.value.field == "rank"
    (tmp_path / "bad.csv").write_text("sample_id,path,rank\ns,a,1\ns,b,two\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected a number, got 'two'") as info:
        load_rankings(tmp_path / "bad.csv")
    assert (info.value.line, info.value.field) == (3, "rank")


def test_empty_and_malformed_files(tmp_path: Path) -> None:
    empty = tmp_path / "e.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="empty file"):
        load_rankings(empty)
    bad = tmp_path / "m_details.jsonl"
    bad.write_text(json.dumps(_details("a")) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(InputError, match="malformed JSON") as info:
        load_rankings(bad)
    assert (info.value.path, info.value.line) == (str(bad), 2)
    unknown = _jsonl(tmp_path / "u.jsonl", [{"sample_id": "a", "files": []}])
    with pytest.raises(InputError, match="cannot tell the format"):
        load_rankings(unknown)


def test_names() -> None:
    assert default_run_name("x/lexical_code_only_details.jsonl") == "lexical_code_only"
    assert default_run_name("run.trec") == "run"
    assert canonical_metric_name("nDCG@20") == "ndcg@20"
    assert canonical_metric_name("irrelevant_files@5") == "irrelevant_files@5"


def test_real_lexical_code_only_keeps_deep_gold(shared_dir: Path) -> None:
    path = (
        shared_dir / "eval" / "v1_1_candidate_filter_ablation" / "lexical_code_only_details.jsonl"
    )
    run = load_rankings(path)
    labels = run.labels
    assert labels is not None
    first_gold = (
        run.rankings.join(labels, on=["sample_id", "path"])
        .group_by("sample_id")
        .agg(pl.col("rank").min())
    )
    assert first_gold.height == 287
    assert first_gold.filter(pl.col("rank") > 20).height == 102  # TV19
    assert run.rankings.filter(pl.col("rank") <= 20).group_by("sample_id").len()["len"].max() == 20
    assert run.details is not None and run.details.height == 287


def test_a_details_file_is_parsed_once_while_it_is_unchanged(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "lex_details.jsonl", [_details("s1")])
    first = load_rankings(path)
    assert load_rankings(path) is first  # kept: a report's notebooks in one kernel share it
    assert load_rankings(path, run="other").run == "other"  # another name is another read
    _jsonl(path, [_details("s1"), _details("s2")])  # same second: the digest tells them apart
    assert load_rankings(path).details["sample_id"].to_list() == ["s1", "s2"]


def test_details_memo_keeps_the_given_path_and_rereads_a_changed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _jsonl(tmp_path / "d.jsonl", [_details("a")])
    first = load_rankings("d.jsonl")
    assert first.path == "d.jsonl"  # as given, not resolved
    assert load_rankings("d.jsonl") is first  # unchanged file: the kept parse
    _jsonl(tmp_path / "d.jsonl", [_details("a"), _details("b", top_files=[1])])
    with pytest.raises(InputError, match="expected") as info:
        load_rankings("d.jsonl")  # changed file: read again, its error located as given
    assert (info.value.path, info.value.line) == ("d.jsonl", 2)
