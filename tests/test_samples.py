"""Sample loading and the per-record rules of spec §2 (TV14, TV15) and §9.6 strata."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb.errors import InputError
from arbwb.io.samples import (
    given_files,
    load_samples,
    query_has_leakage,
    query_provenance,
    query_text,
    split_of,
    stratum,
    target_gold_files,
)

# TV14: (task, gold, query) -> (target, given, provenance)
TV14: list[tuple[str, dict[str, Any], dict[str, Any], list[str], list[str], str | None]] = [
    (
        "code2test",
        {"related_tests": ["t/a.py", "t/a.py", "t/b.py"], "root_cause_files": ["src/a.py"]},
        {},
        ["t/a.py", "t/b.py"],
        [],
        "pr_summary",
    ),
    (
        "code2test",
        {"files": [{"path": "x.py"}, "y.py", {"nopath": 1}], "related_tests": ["t/a.py"]},
        {},
        ["x.py", "y.py"],
        [],
        "pr_summary",
    ),
    (
        "comment2context",
        {
            "must_context_files": [{"path": "src/b.py"}],
            "root_cause_files": ["src/c.py"],
            "given_files": ["src/g.py"],
        },
        {},
        ["src/b.py"],
        ["src/g.py"],
        "review_comment",
    ),
    (
        "comment2context",
        {"must_context_files": [], "context_files": ["src/d.py"], "root_cause_files": ["src/c.py"]},
        {},
        ["src/d.py"],
        [],
        "review_comment",
    ),
    (
        "comment2context",
        {"root_cause_files": ["src/c.py"]},
        {"given_file": "src/g.py"},
        ["src/c.py"],
        ["src/g.py"],
        "review_comment",
    ),
    (
        "trace2code",
        {"root_cause_files": [], "related_tests": ["tests/t.py"]},
        {},
        ["tests/t.py"],
        [],
        "failure_trace",
    ),
    (
        "edit2ripple",
        {"files": ["a.rs", "b.rs"], "given_files": ["z.rs"]},
        {},
        ["a.rs", "b.rs"],
        ["z.rs"],
        None,
    ),
    ("abstention", {"files": [], "no_gold": True}, {}, [], [], None),
    ("trace2code", {"no_gold": True, "root_cause_files": ["x.py"]}, {}, [], [], "failure_trace"),
]


@pytest.mark.parametrize(("task", "gold", "query", "target", "given", "provenance"), TV14)
def test_tv14_target_given_provenance(
    task: str,
    gold: dict[str, Any],
    query: dict[str, Any],
    target: list[str],
    given: list[str],
    provenance: str | None,
) -> None:
    record = {"task_type": task, "gold": gold, "query": query, "metadata": {}}
    assert target_gold_files(record) == target
    assert given_files(record) == given
    assert query_provenance(record) == provenance


def test_code2test_does_not_fall_back_to_root_cause() -> None:
    record = {"task_type": "code2test", "gold": {"related_tests": [], "root_cause_files": ["a"]}}
    assert target_gold_files(record) == []


def test_provenance_prefers_record_then_metadata() -> None:
    base = {"task_type": "code2test", "metadata": {"source_signal": "ci"}}
    assert query_provenance(base) == "ci"
    assert query_provenance({**base, "query_provenance": "issue_report"}) == "issue_report"


def test_tv15_query_text_is_byte_exact() -> None:
    query = {
        "pr_title": "Fix “quotes”\tand\nnewline",
        "line": 12,
        "b": [1.5, None, True],
        "a": "x/y\\z",
    }
    expected = (
        '{"a": "x/y\\\\z", "b": [1.5, null, true], "line": 12, '
        '"pr_title": "Fix “quotes”\\tand\\nnewline"}'
    )
    assert query_text(query) == expected
    assert query_text(None) == "{}"


def _trace(text: str, fix: str = "") -> dict[str, Any]:
    gold = {"root_cause_files": ["a.py"], **({"fix_commit": fix} if fix else {})}
    return {"task_type": "trace2code", "query": {"failure_excerpt": text}, "gold": gold}


@pytest.mark.parametrize(
    ("record", "leaks"),
    [
        (_trace("see diff --git a/x b/x"), True),
        (_trace("line1\n--- a/src/x.py\n+++ b/src/x.py"), True),
        (_trace("--- a/src/x.py at start"), False),
        (_trace("fixed in abc1234", fix="abc1234"), True),
        (_trace("fixed in abc1234", fix="abc1234ffff"), False),
    ],
)
def test_tv15_leakage_patch_and_fix_commit(record: dict[str, Any], leaks: bool) -> None:
    assert query_has_leakage(record) is leaks


@pytest.mark.parametrize(
    ("intent", "leaks"),
    [
        ("update src/signal/unix.rs too", True),
        ("touch unix.rs", True),
        ("use crate signal.unix module", True),
        ("unix signals", False),
    ],
)
def test_tv15_edit2ripple_fatal_leaks(intent: str, leaks: bool) -> None:
    record = {
        "task_type": "edit2ripple",
        "query": {"intent": intent, "anchor_file": "src/io/write_buf.rs", "anchor_diff": "@@"},
        "gold": {"files": ["src/signal/unix.rs"], "given_files": ["src/io/write_buf.rs"]},
        "metadata": {},
    }
    assert query_has_leakage(record) is leaks


def test_edit2ripple_metadata_fix_commit_leaks() -> None:
    record = {
        "task_type": "edit2ripple",
        "query": {"intent": "follow up on deadbeef1"},
        "gold": {"files": ["src/a.rs"]},
        "metadata": {"fix_commit": "deadbeef1"},
    }
    assert query_has_leakage(record) is True


def test_strata_and_organic_agreement() -> None:
    def record(reason: str, organic: bool | None = None) -> dict[str, Any]:
        meta = {} if organic is None else {"organic": organic}
        return {"gold": {"files": [], "no_gold": True, "reason": reason}, "metadata": meta}

    assert stratum({"gold": {"related_tests": ["t.py"]}}) == "positive"
    assert stratum(record("user_error", True)) == "natural"
    assert stratum(record("counterfactual_wrong_repo")) == "counterfactual"
    with pytest.raises(InputError) as disagree:
        stratum(record("counterfactual_wrong_repo", True))
    assert disagree.value.field == "metadata.organic"
    with pytest.raises(InputError) as unknown:
        stratum(record("bad_luck"))
    assert unknown.value.field == "gold.reason"


def test_split_is_sha256_parity_and_balanced() -> None:
    ids = [f"sample-{i}" for i in range(400)]
    for sample_id in ids[:20]:
        even = hashlib.sha256(sample_id.encode()).digest()[0] % 2 == 0
        assert split_of(sample_id) == ("dev" if even else "heldout")
    n_dev = sum(split_of(i) == "dev" for i in ids)
    assert 150 < n_dev < 250


def _record(sample_id: str, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": sample_id,
        "task_type": "trace2code",
        "repo": "o/r",
        "base_commit": "c" * 40,
        "query": {"failure_excerpt": "boom"},
        "gold": {"root_cause_files": ["src/a.py", "src/a.py"], "related_tests": ["t/a.py"]},
        "metadata": {},
    }
    record.update(extra)
    return record


def _write(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_load_samples_frames(tmp_path: Path) -> None:
    rec = _record(
        "s1",
        hard_negative_files=["n1.py", {"path": "n2.py"}],
        gold_spans=[
            {"path": "src/a.py", "start_line": "3", "end_line": 5},
            {"path": "src/a.py", "start_line": "x", "end_line": 5},
            {"start_line": 1, "end_line": 2},
        ],
        gold_blocks=[
            {"path": "src/a.py", "start_line": 3, "end_line": 5, "kind": "symbol", "symbol": "f"},
            {"path": "src/a.py", "start_line": 0, "end_line": 5},
            {"path": "src/b.py", "start_line": 2, "end_line": 2},
        ],
    )
    rec["gold"]["hard_negative_files"] = ["n2.py", "n3.py"]
    path = _write(tmp_path / "s.jsonl", [rec])
    loaded = load_samples(path)
    row = loaded.samples.row(0, named=True)
    assert row["snapshot_id"] == "o/r@" + "c" * 40
    assert row["query_text"] == '{"failure_excerpt": "boom"}'
    assert row["stratum"] == "positive"
    assert (row["source"], row["line"]) == (str(path), 1)
    assert row["query_provenance"] == "failure_trace"
    roles = loaded.labels.group_by("role", maintain_order=True).agg("path").rows()
    assert roles == [
        ("gold", ["src/a.py"]),
        ("hard_negative", ["n1.py", "n2.py", "n3.py"]),
        ("root_cause", ["src/a.py"]),
        ("related_test", ["t/a.py"]),
    ]
    assert loaded.spans.select("path", "start_line", "end_line", "kind", "symbol").rows() == [
        ("src/a.py", 3, 5, "span", None),
        ("src/a.py", 3, 5, "symbol", "f"),
        ("src/b.py", 2, 2, "block", None),
    ]


def test_discovery_prefers_samples_jsonl(tmp_path: Path) -> None:
    _write(tmp_path / "rel" / "samples.jsonl", [_record("a"), _record("b")])
    _write(tmp_path / "rel" / "trace2code.jsonl", [_record("a"), _record("b")])
    assert load_samples(tmp_path / "rel").samples["sample_id"].to_list() == ["a", "b"]


def test_discovery_reads_all_jsonl_sorted_by_name(tmp_path: Path) -> None:
    _write(tmp_path / "b_tasks.jsonl", [_record("b")])
    _write(tmp_path / "a_tasks.jsonl", [_record("a")])
    frame = load_samples(tmp_path).samples
    assert frame["sample_id"].to_list() == ["a", "b"]
    assert frame["source"].to_list() == [
        str(tmp_path / "a_tasks.jsonl"),
        str(tmp_path / "b_tasks.jsonl"),
    ]


def test_release_root_with_one_or_many_releases(tmp_path: Path) -> None:
    _write(tmp_path / "repo_manifest.jsonl", [{"repo": "o/r"}])
    _write(tmp_path / "benchmark" / "v1" / "samples.jsonl", [_record("a")])
    assert load_samples(tmp_path).samples["sample_id"].to_list() == ["a"]
    _write(tmp_path / "benchmark" / "v2" / "samples.jsonl", [_record("b")])
    with pytest.raises(InputError, match="holds 2 releases; pass one release folder"):
        load_samples(tmp_path)


def test_duplicate_ids_name_both_places(tmp_path: Path) -> None:
    _write(tmp_path / "a.jsonl", [_record("x")])
    _write(tmp_path / "b.jsonl", [_record("y"), _record("x")])
    with pytest.raises(InputError) as info:
        load_samples(tmp_path)
    err = info.value
    assert (err.path, err.line, err.field) == (str(tmp_path / "b.jsonl"), 2, "id")
    assert f"first at {tmp_path / 'a.jsonl'}:1" in str(err)


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        ({"query": None}, "query", "expected a JSON object"),
        ({"repo": 3}, "repo", "expected a non-empty string"),
        ({"task_type": "code2docs"}, "task_type", "unknown task_type 'code2docs'"),
        ({"metadata": []}, "metadata", "expected a JSON object"),
        (
            {
                "task_type": "abstention",
                "gold": {"files": [], "no_gold": True, "reason": "flaky_ci"},
                "metadata": {"organic": False},
            },
            "metadata.organic",
            "disagrees",
        ),
    ],
)
def test_bad_records_are_located(
    tmp_path: Path, change: dict[str, Any], field: str, reason: str
) -> None:
    path = _write(tmp_path / "s.jsonl", [_record("ok"), {**_record("bad"), **change}])
    with pytest.raises(InputError, match=reason) as info:
        load_samples(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 2, field)


def test_missing_field_and_legacy_task(tmp_path: Path) -> None:
    record = _record("a")
    del record["base_commit"]
    path = _write(tmp_path / "s.jsonl", [record])
    with pytest.raises(InputError, match="required field is missing") as info:
        load_samples(path)
    assert (info.value.line, info.value.field) == (1, "base_commit")
    legacy = _write(tmp_path / "l.jsonl", [_record("b", task_type="testlog2code")])
    assert load_samples(legacy).samples["task"].to_list() == ["testlog2code"]


def test_malformed_and_empty_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_record("a")) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match="malformed JSON") as info:
        load_samples(bad)
    assert (info.value.path, info.value.line) == (str(bad), 2)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="empty file"):
        load_samples(empty)


def test_real_v0_1_and_abstention(shared_dir: Path) -> None:
    v0 = load_samples(shared_dir / "benchmark" / "v0_1")
    assert v0.samples.height == 35
    assert dict(v0.samples.group_by("task").len().rows()) == {
        "code2test": 17,
        "comment2context": 16,
        "trace2code": 2,
    }
    first = json.loads(
        (shared_dir / "benchmark" / "v0_1" / "samples.jsonl").read_text().splitlines()[0]
    )
    assert v0.samples["query_text"][0] == json.dumps(
        first["query"], ensure_ascii=False, sort_keys=True
    )
    gold = v0.labels.filter(pl.col("role") == "gold")
    assert gold.filter(pl.col("sample_id") == first["id"])["path"].to_list() == [
        "tests/builder/help.rs"
    ]
    pilot = load_samples(shared_dir / "benchmark" / "v2_abstention_pilot").samples
    assert dict(pilot.group_by("stratum").len().rows()) == {"natural": 50, "counterfactual": 32}
    assert pilot["no_gold_reason"].value_counts().sort("no_gold_reason").rows() == [
        ("counterfactual_wrong_repo", 32),
        ("external_service", 7),
        ("upstream_dependency", 41),
        ("user_error", 2),
    ]
