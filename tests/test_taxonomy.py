"""Agentic-relevance taxonomy (spec §10): TV11, every rule branch by hand, and the real samples
against a literal re-implementation of spec 10 written here from the spec text."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path, PurePosixPath
from typing import Any

import polars as pl
import pytest

from arbwb.analysis import relevance as rl
from arbwb.analysis import taxonomy as tx
from arbwb.errors import InputError
from arbwb.io.samples import load_samples

# --- a literal implementation of spec 10.1-10.6, written from the text only ---------------

STOP_TEXT = (
    "about after also before being build change changed class code could error file files "
    "from func function gold have here impl into make method module only path should source "
    "test tests that this using when with"
)
SPEC_STOP = set(STOP_TEXT.split())
SPEC_NON_PATH = ["pr_title", "pr_body", "review_comment", "diff_hunk_context"]
SPEC_NON_PATH += ["failure_excerpt", "command", "changed_file_summary"]
SPEC_PATH = ["changed_file", "given_file", "path", "implementation_files"]


def spec_t(text: str) -> set[str]:
    """10.1."""
    if text == "":
        return set()
    text = re.sub("([a-z0-9])([A-Z])", "\\1 \\2", text)
    for ch in "_-/.":
        text = text.replace(ch, " ")
    words = [w.lower() for w in re.findall("[A-Za-z][A-Za-z0-9]{2,}", text)]
    return {w for w in words if w not in SPEC_STOP}


def spec_flat(v: Any) -> list[str]:
    if v is None:
        return []
    if type(v) is str:
        return [v]
    if type(v) is list:
        out: list[str] = []
        for x in v:
            out = out + spec_flat(x)
        return out
    if type(v) is dict:
        out = []
        for x in v.values():
            out = out + spec_flat(x)
        return out
    return [str(v)]


def spec_text(query: dict[str, Any], keys: list[str]) -> str:
    pieces: list[str] = []
    for k in query:
        if k in keys:
            pieces += spec_flat(query[k])
    return "\n".join(pieces)


def spec_dedupe(xs: list[str]) -> list[str]:
    out: list[str] = []
    for x in xs:
        if x and x not in out:
            out.append(x)
    return out


def spec_gold_files(s: dict[str, Any]) -> list[str]:
    task = s.get("task_type") or ""
    g = s.get("gold") or {}
    f = [str(r["path"]) for r in (s.get("gold_spans") or []) if r.get("path")]
    if g.get("no_gold") is True:
        return []
    f += [str(x) for x in (g.get("files") or []) if x]
    if task == "code2test":
        lists = ["related_tests"]
    elif task == "trace2code":
        lists = ["root_cause_files"]
    elif task == "comment2context":
        lists = ["root_cause_files", "supporting_files"]
    else:
        lists = ["related_tests", "root_cause_files", "supporting_files"]
    for name in lists:
        f += [str(x) for x in (g.get(name) or [])]
    if task in ("comment2context", ""):
        f += [str(m["path"]) for m in (g.get("must_context_files") or []) if m.get("path")]
    return spec_dedupe(f)


def spec_test_path(p: str) -> bool:
    parts = PurePosixPath(p).parts
    stem = PurePosixPath(p).stem.lower()
    return "test" in parts or "tests" in parts or stem.endswith("_test") or stem.startswith("test_")


def spec_family(anchor: str, gold: str) -> bool:
    a = [x for x in PurePosixPath(anchor).parts if x not in ("src", "test", "tests")]
    g = [x for x in PurePosixPath(gold).parts if x not in ("src", "test", "tests")]
    if len(a) == 0 or len(g) == 0:
        return False
    if a[0] == g[0]:
        return True
    return len(spec_t(PurePosixPath(anchor).stem) & spec_t(PurePosixPath(gold).stem)) > 0


def spec_annotate(s: dict[str, Any]) -> dict[str, Any]:
    """Spec 10.2-10.6 for one record (task 'unknown' when absent, as upstream's record)."""
    task = s.get("task_type") or "unknown"
    q = s.get("query") or {}
    g = s.get("gold") or {}
    f = spec_gold_files(s)
    symbols = [str(b["symbol"]) for b in (s.get("gold_blocks") or []) if b.get("symbol")]
    symbols += [str(x) for x in (g.get("root_cause_symbols") or [])]
    qt, pt = spec_t(spec_text(q, SPEC_NON_PATH)), spec_t(spec_text(q, SPEC_PATH))
    h = spec_t(" ".join(f + symbols))
    e: set[str] = set()
    for m in g.get("must_context_files") or []:
        e |= {str(x) for x in (m.get("evidence") or [])}
    me = (s.get("metadata") or {}).get("evidence")
    if isinstance(me, dict):
        e |= {str(x) for x in (me.get("signals") or [])}
        if me.get("source"):
            e.add(str(me["source"]))
    o, p = sorted(qt & h), sorted(pt & h)
    d = 0.0 if not qt or not h else len(qt & h) / max(1, min(len(qt), len(h)))
    anchors = [q[k] for k in ("changed_file", "given_file", "path") if isinstance(q.get(k), str)]
    anchors += [str(x) for x in (q.get("implementation_files") or [])]
    struct = ["same_module_context", "symbol_or_path_overlap", "source_test_path_overlap"]
    sc = len([k for k in struct if k in e])
    sc += len([1 for a in anchors for gf in f if spec_family(a, gf)])
    work = ["same_pr_changed_tests", "pr_level_changed_implementation_and_existing_tests"]
    work += ["behavior_test_for_reviewed_change", "review_requests_tests"]
    work += ["implementation_context_for_reviewed_change"]
    wc = (2 if task == "code2test" else 0) + len([k for k in work if k in e])
    wc += 1 if any(spec_test_path(x) for x in f) else 0
    fired: list[str] = []
    conf = "medium"
    if task == "trace2code":
        fired.append("causal_indirect")
        if sc > 0:
            fired.append("structural_indirect")
        if o:
            fired.append("semantic_direct")
    elif task == "code2test":
        if d >= 0.10 or len(o) >= 2:
            fired.append("semantic_direct")
        fired.append("workflow_conventional")
        if sc > 0 or p:
            fired.append("structural_indirect")
    elif task == "comment2context":
        if d >= 0.12 or len(o) >= 2 or "symbol_or_path_overlap" in e:
            fired.append("semantic_direct")
        if wc > 0 or any(spec_test_path(x) for x in f):
            fired.append("workflow_conventional")
        if sc > 0 or not fired:
            fired.append("structural_indirect")
    else:
        fired.append("semantic_direct" if o else "structural_indirect")
        conf = "low"
    labels = spec_dedupe(fired)
    if task == "trace2code":
        primary = "causal_indirect"
    elif task == "code2test":
        primary = (
            "semantic_direct"
            if "semantic_direct" in labels and d >= 0.30
            else "workflow_conventional"
        )
    elif task == "comment2context":
        if "semantic_direct" in labels and d >= 0.16:
            primary = "semantic_direct"
        elif "workflow_conventional" in labels and wc > sc:
            primary = "workflow_conventional"
        elif "structural_indirect" in labels:
            primary = "structural_indirect"
        else:
            primary = labels[0]
    else:
        primary = labels[0]
    if primary == "semantic_direct" and len(o) < 2 and d < 0.10:
        conf = "low"
    elif task == "trace2code" and primary == "causal_indirect":
        conf = "high"
    elif task in ("code2test", "comment2context") and len(labels) > 1:
        conf = "medium"
    return {
        "sample_id": str(s.get("id") or s.get("sample_id") or ""),
        "task_type": task,
        "repo": str(s.get("repo") or ""),
        "primary_relevance_type": primary,
        "secondary_relevance_types": [x for x in labels if x != primary],
        "confidence": conf,
        "gold_files": f,
        "query_token_overlap": o[:12],
        "path_token_overlap": p[:12],
        "semantic_overlap_score": d,
        "structural_signal_count": sc,
        "workflow_signal_count": wc,
        "fired": fired,
        "labels": labels,
    }


def assert_matches_spec(row: dict[str, Any], record: dict[str, Any]) -> None:
    """Every 10.6 field equals the literal implementation; evidence has one entry per rule."""
    want = spec_annotate(record)
    for field in rl.RECORD_FIELDS:
        if field == "evidence":
            continue
        assert row[field] == want[field], (want["sample_id"], field, row[field], want[field])
    assert type(row["semantic_overlap_score"]) is float
    assert [e.split(":", 1)[0] for e in row["evidence"]] == want["fired"]
    assert row["relevance_types"] == want["labels"]


# --- spec 14 TV11 --------------------------------------------------------------------------

TV11 = [
    (
        {
            "task_type": "trace2code",
            "query": {
                "failure_excerpt": "TypeError in cache_store lookup",
                "command": "pytest tests/test_cache.py",
            },
            "gold": {
                "root_cause_files": ["src/cache/store.py"],
                "related_tests": ["tests/test_cache.py"],
            },
        },
        ("causal_indirect", ["semantic_direct"], "high", 0.6666666666666666, 0, 0),
        (["cache", "store"], []),
    ),
    (
        {
            "task_type": "code2test",
            "query": {
                "pr_title": "Improve watch progress notification",
                "pr_body": "progress notify for watchers",
                "implementation_files": ["server/watch/progress.go"],
            },
            "gold": {"related_tests": ["tests/integration/watch_progress_test.go"]},
            "metadata": {
                "evidence": {
                    "source": "pr_level_changed_implementation_and_existing_tests",
                    "signals": ["same_pr_changed_tests"],
                }
            },
        },
        (
            "semantic_direct",
            ["workflow_conventional", "structural_indirect"],
            "medium",
            0.6666666666666666,
            1,
            5,
        ),
        (["progress", "watch"], ["progress", "watch"]),
    ),
    (
        {
            "task_type": "code2test",
            "query": {"pr_title": "Fix parser", "changed_file": "lib/parser.py"},
            "gold": {"related_tests": ["tests/unit/test_tokenizer.py"]},
        },
        ("workflow_conventional", [], "medium", 0.0, 0, 3),
        ([], []),
    ),
    (
        {
            "task_type": "comment2context",
            "query": {
                "review_comment": "Please add tests for this retry policy",
                "given_file": "src/net/retry.py",
                "path": "src/net/retry.py",
            },
            "gold": {
                "given_files": ["src/net/retry.py"],
                "must_context_files": [
                    {
                        "path": "tests/net/test_retry.py",
                        "evidence": [
                            "modified_after_review_comment",
                            "review_requests_tests",
                            "symbol_or_path_overlap",
                        ],
                    }
                ],
            },
        },
        ("semantic_direct", ["workflow_conventional", "structural_indirect"], "medium", 0.5, 3, 2),
        (["retry"], ["net", "retry"]),
    ),
    (
        {
            "task_type": "comment2context",
            "query": {
                "review_comment": "why do we need this here",
                "given_file": "pkg/a/handler.go",
            },
            "gold": {
                "must_context_files": [
                    {
                        "path": "internal/b/router.go",
                        "evidence": [
                            "modified_after_review_comment",
                            "explicit_behavior_or_api_dependency",
                        ],
                    }
                ]
            },
        },
        ("structural_indirect", [], "medium", 0.0, 0, 0),
        ([], []),
    ),
    (
        {
            "task_type": "edit2ripple",
            "query": {
                "intent": "rename signal handler",
                "anchor_file": "src/io/write_buf.rs",
                "anchor_diff": "@@ -1 +1 @@",
            },
            "gold": {"files": ["src/signal/unix.rs"]},
        },
        ("structural_indirect", [], "low", 0.0, 0, 0),
        ([], []),
    ),
]


def test_tv11_tokenizer() -> None:
    got = rl.tokenize("parseHTTPRequest foo_bar-baz/qux.py ab abc Abc2Def the_test")
    assert got == {"abc", "abc2", "bar", "baz", "def", "foo", "httprequest", "parse", "qux", "the"}
    assert rl.tokenize("") == set()


@pytest.mark.parametrize(("record", "expected", "overlaps"), TV11)
def test_tv11_samples(
    record: dict[str, Any], expected: tuple[Any, ...], overlaps: tuple[list[str], list[str]]
) -> None:
    row = rl.annotate_record({"id": "x", "repo": "o/r", **record})
    got = (
        row["primary_relevance_type"],
        row["secondary_relevance_types"],
        row["confidence"],
        row["semantic_overlap_score"],
        row["structural_signal_count"],
        row["workflow_signal_count"],
    )
    assert got == expected
    assert (row["query_token_overlap"], row["path_token_overlap"]) == overlaps
    assert_matches_spec(row, {"id": "x", "repo": "o/r", **record})


# --- hand cases for every rule branch --------------------------------------------------------


def words(prefix: str, n: int) -> list[str]:
    """n distinct tokens the tokenizer keeps (letters only, >= 3 chars, no stop words)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [f"{prefix}{letters[i // 26]}{letters[i % 26]}" for i in range(n)]


def overlap_record(
    task: str, n_query: int, n_gold: int, shared: int, **gold: Any
) -> dict[str, Any]:
    """Query of n_query tokens, gold symbols of n_gold tokens, ``shared`` tokens in both."""
    common = words("zz", shared)
    query = " ".join(common + words("qq", n_query - shared))
    symbols = common + words("hh", n_gold - shared)
    key = {"code2test": "pr_title", "comment2context": "review_comment"}.get(
        task, "failure_excerpt"
    )
    return {
        "id": f"{task}-{n_query}-{n_gold}-{shared}",
        "task_type": task,
        "repo": "o/r",
        "query": {key: query},
        "gold": {"root_cause_symbols": symbols, **gold},
    }


def annotate(record: dict[str, Any]) -> dict[str, Any]:
    row = rl.annotate_record(record)
    assert_matches_spec(row, record)
    return row


def test_code2test_semantic_label_at_exactly_010() -> None:
    at = annotate(overlap_record("code2test", 10, 12, 1))  # d = 1/10 == 0.10
    assert at["semantic_overlap_score"] == 0.1
    assert "semantic_direct" in at["secondary_relevance_types"]
    below = annotate(overlap_record("code2test", 11, 12, 1))  # d = 1/11, |O| = 1
    assert below["semantic_overlap_score"] < 0.1
    assert below["secondary_relevance_types"] == []
    assert below["primary_relevance_type"] == "workflow_conventional"


def test_code2test_two_overlapping_tokens_are_enough() -> None:
    row = annotate(overlap_record("code2test", 40, 40, 2))  # d = 0.05 but |O| = 2
    assert row["semantic_overlap_score"] == 0.05
    assert row["secondary_relevance_types"] == ["semantic_direct"]


def test_code2test_primary_at_exactly_030() -> None:
    at = annotate(overlap_record("code2test", 10, 10, 3))  # 3/10 == 0.30
    assert at["semantic_overlap_score"] == 0.3
    assert at["primary_relevance_type"] == "semantic_direct"
    assert at["secondary_relevance_types"] == ["workflow_conventional"]
    below = annotate(overlap_record("code2test", 7, 7, 2))  # 2/7 < 0.30
    assert below["primary_relevance_type"] == "workflow_conventional"
    assert below["secondary_relevance_types"] == ["semantic_direct"]
    assert below["confidence"] == "medium"


def test_comment2context_semantic_label_threshold_012() -> None:
    # with |O| = 1 the 0.12 threshold alone decides: 1/8 >= 0.12 > 1/9
    above = annotate(overlap_record("comment2context", 8, 8, 1))
    assert above["relevance_types"] == ["semantic_direct"]
    below = annotate(overlap_record("comment2context", 9, 9, 1))
    assert below["relevance_types"] == ["structural_indirect"]  # nothing else: default
    # exactly 0.12 against one ulp below, on the rule itself (|O| = 1, no other witness)
    exact = rl.Quantities(
        task="comment2context",
        query_tokens={"one"},
        path_tokens=set(),
        gold_files=[],
        gold_symbols=[],
        gold_tokens={"one"},
        signals=set(),
        overlap=["one"],
        path_overlap=[],
        directness=0.12,
        structural_evidence=0,
        family_pairs=0,
        workflow=0,
        anchors=[],
    )
    assert rl.relevance_labels(exact)[0] == ["semantic_direct"]
    lower = dataclasses.replace(exact, directness=math.nextafter(0.12, 0.0))
    assert rl.relevance_labels(lower)[0] == ["structural_indirect"]
    assert rl.primary_label(dataclasses.replace(exact, directness=0.16), ["semantic_direct"]) == (
        "semantic_direct"
    )


def test_comment2context_primary_at_exactly_016() -> None:
    at = annotate(overlap_record("comment2context", 25, 25, 4))  # 4/25 == 0.16
    assert at["semantic_overlap_score"] == 0.16
    assert at["primary_relevance_type"] == "semantic_direct"
    exact = annotate(overlap_record("comment2context", 25, 25, 3))  # 3/25 == 0.12: label only
    assert exact["semantic_overlap_score"] == 0.12
    # labels = [semantic_direct]; no workflow/structural: the "first label" fallthrough
    assert exact["primary_relevance_type"] == "semantic_direct"
    assert exact["relevance_types"] == ["semantic_direct"]


def test_comment2context_workflow_beats_structural_only_when_w_greater() -> None:
    def with_evidence(evidence: list[str]) -> dict[str, Any]:
        record = overlap_record("comment2context", 25, 25, 3)  # semantic label, d < 0.16
        record["gold"]["must_context_files"] = [{"path": "lib/zz/impl.go", "evidence": evidence}]
        return record

    equal = annotate(with_evidence(["same_module_context", "review_requests_tests"]))  # w=s=1
    assert (equal["workflow_signal_count"], equal["structural_signal_count"]) == (1, 1)
    assert equal["primary_relevance_type"] == "structural_indirect"
    assert equal["secondary_relevance_types"] == ["semantic_direct", "workflow_conventional"]
    greater = annotate(
        with_evidence(
            ["same_module_context", "review_requests_tests", "behavior_test_for_reviewed_change"]
        )
    )  # w=2 > s=1
    assert greater["primary_relevance_type"] == "workflow_conventional"
    assert greater["secondary_relevance_types"] == ["semantic_direct", "structural_indirect"]


def test_comment2context_test_gold_gives_workflow_and_default_structural() -> None:
    record = {
        "id": "c",
        "task_type": "comment2context",
        "query": {"review_comment": "nothing shared", "given_file": "app/main.go"},
        "gold": {"must_context_files": [{"path": "spec/tests/flow.rb", "evidence": []}]},
    }
    row = annotate(record)
    assert row["workflow_signal_count"] == 1  # only the test-path witness
    assert row["relevance_types"] == ["workflow_conventional"]  # structural not added: not empty
    assert row["primary_relevance_type"] == "workflow_conventional"
    empty = annotate({**record, "gold": {"must_context_files": [{"path": "x/y.go"}]}})
    assert empty["relevance_types"] == ["structural_indirect"]
    assert "no other label" in empty["evidence"][0]


def test_trace2code_branches() -> None:
    record = overlap_record("trace2code", 5, 5, 0)
    record["query"]["command"] = "go test ./src/cache/..."
    record["query"]["path"] = "src/cache/lru_test.go"
    record["gold"]["root_cause_files"] = ["cache/lru.go"]
    row = annotate(record)
    assert row["structural_signal_count"] == 1  # cache == cache after dropping src
    assert row["relevance_types"] == ["causal_indirect", "structural_indirect", "semantic_direct"]
    assert row["confidence"] == "high"


def test_fallback_tasks_and_low_confidence() -> None:
    legacy = overlap_record("testlog2code", 20, 20, 1)  # failure_excerpt is a non-path key
    row = annotate(legacy)
    assert row["primary_relevance_type"] == "semantic_direct"
    assert row["confidence"] == "low"
    assert "fallback_task" in row["flags"]
    two = annotate(overlap_record("testlog2code", 4, 4, 2))
    assert two["confidence"] == "low"  # fallback starts low; no override raises it


def test_edit2ripple_quirk_is_reproduced_and_flagged() -> None:
    record = {
        "id": "e",
        "task_type": "edit2ripple",
        "query": {"intent": "rename cache store", "anchor_file": "cache/store.py"},
        "gold": {"files": ["cache/store_client.py"], "given_files": ["cache/store.py"]},
    }
    row = annotate(record)
    assert row["primary_relevance_type"] == "structural_indirect"
    assert row["structural_signal_count"] == 0  # anchor_file is not an anchor key
    assert "quirk_edit2ripple_always_structural" in row["flags"]


def test_annotation_gold_rule_differs_from_target_and_is_flagged() -> None:
    record = {
        "id": "t",
        "task_type": "trace2code",
        "query": {"failure_excerpt": "boom"},
        "gold": {"related_tests": ["tests/test_boom.py"]},
        "gold_spans": [{"path": "lib/boom.py", "start_line": 1, "end_line": 2}, "junk"],
    }
    row = rl.annotate_record(record)
    assert row["gold_files"] == ["lib/boom.py"]  # spans first; related_tests unused for trace
    assert row["target_gold_files"] == ["tests/test_boom.py"]  # spec 2.6 step 5 fallback
    assert "quirk_annotation_gold_differs" in row["flags"]
    assert "malformed_skipped" in row["flags"]
    no_gold = rl.annotate_record(
        {**record, "task_type": "abstention", "gold": {"files": [], "no_gold": True}}
    )
    assert no_gold["gold_files"] == []  # no_gold empties the spans too
    assert {"no_gold", "empty_annotation_gold", "fallback_task"} <= set(no_gold["flags"])


@pytest.mark.parametrize(
    ("anchor", "gold", "same"),
    [
        ("src/foo/a.py", "tests/foo/test_a.py", True),  # src/tests dropped, first parts equal
        ("src/retry_policy.py", "tests/unit/test_retry.py", True),  # stems share "retry"
        ("src", "src", False),  # empty remainder on both sides
        ("tests", "lib/tests.py", False),  # empty anchor remainder
        ("test/x.py", "lib/y.py", False),  # stems "x", "y" have no tokens
        ("Src/a.py", "a/b.py", False),  # "Src" is not dropped (case-sensitive); stems a, b
        ("src/io/write_buf.rs", "src/signal/unix.rs", False),
        ("pkg/handler.go", "internal/handler_test.go", True),  # "handler" shared
    ],
)
def test_same_module_family(anchor: str, gold: str, same: bool) -> None:
    assert rl.same_module_family(anchor, gold) is same
    assert spec_family(anchor, gold) is same


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("pkg/test/x.py", True),
        ("a/tests/b.go", True),
        ("pkg/Test/x.py", False),  # parts are case-sensitive
        ("a/b/foo_test.go", True),
        ("a/Test_foo.py", True),  # the stem is lower-cased
        ("testing/x.py", False),
        ("a/foo.test.js", False),  # stem "foo.test"
    ],
)
def test_taxonomy_test_path(path: str, is_test: bool) -> None:
    assert rl.is_test_path(path) is is_test


def test_anchor_pairs_count_each_anchor_key_and_implementation_file() -> None:
    record = {
        "id": "a",
        "task_type": "code2test",
        "query": {
            "pr_title": "x",
            "changed_file": "src/cache/a.py",
            "path": "src/cache/a.py",
            "implementation_files": ["cache/b.py", "other/c.py"],
        },
        "gold": {"related_tests": ["tests/cache/test_a.py", "tests/cache/test_b.py"]},
    }
    row = annotate(record)
    assert row["structural_signal_count"] == 6  # 3 cache anchors x 2 cache gold files
    assert row["anchors"] == ["src/cache/a.py", "src/cache/a.py", "cache/b.py", "other/c.py"]


def test_unknown_and_ignored_query_keys_change_nothing() -> None:
    base = overlap_record("code2test", 10, 10, 3)
    extra = {**base, "query": {**base["query"], "raw_signal": "zzaa zzab", "weird": ["zzac"]}}
    a, b = rl.annotate_record(base), rl.annotate_record(extra)
    assert {k: a[k] for k in rl.RECORD_FIELDS} == {k: b[k] for k in rl.RECORD_FIELDS}


def test_flattening_and_key_order() -> None:
    query = {"pr_body": {"x": ["alphaone", None, 3.5, True]}, "pr_title": "betatwo"}
    assert rl.field_text(query, rl.NON_PATH_KEYS) == "alphaone\n3.5\nTrue\nbetatwo"


@pytest.mark.parametrize(
    ("record", "flag"),
    [
        (
            {"id": "q", "task_type": "code2test", "gold": {"related_tests": ["t/a.py"]}},
            "missing_query",
        ),
        ({"id": "q", "task_type": "code2test", "query": "text", "gold": {}}, "missing_query"),
        ({"id": "g", "task_type": "trace2code", "query": {"command": "make"}}, "missing_gold"),
        ({"id": "g", "task_type": "trace2code", "query": {}, "gold": ["x"]}, "missing_gold"),
        (
            {"id": "n", "task_type": "comment2context", "query": {"line": 3}, "gold": {}},
            "no_query_fields",
        ),
        ({}, "missing_task_type"),
        (
            {
                "id": "m",
                "task_type": "comment2context",
                "query": {},
                "gold": {"must_context_files": ["a"]},
            },
            "malformed_skipped",
        ),
        (
            {
                "id": "i",
                "task_type": "code2test",
                "query": {"implementation_files": "ab/c"},
                "gold": {},
            },
            "implementation_files_not_list",
        ),
        (
            {
                "id": "s",
                "task_type": "code2test",
                "query": {},
                "gold": {"related_tests": [{"path": "x"}]},
            },
            "non_string_gold_path",
        ),
    ],
)
def test_bad_input_gets_a_row_with_a_reason(record: dict[str, Any], flag: str) -> None:
    row = rl.annotate_record(record)
    assert flag in row["flags"]
    assert row["primary_relevance_type"] in rl.LABELS
    if flag in rl.INPUT_FLAGS:
        assert row["reason"] and rl.FLAG_TEXT[flag] in row["reason"]
    frame = rl.annotate_records([record, record])
    assert frame.height == 2


def test_annotate_path_reads_through_the_sample_loader(tmp_path: Path) -> None:
    base = {"repo": "o/r", "base_commit": "c" * 40}
    lines = [
        {**base, "id": "a", "task_type": "code2test", "query": {"pr_title": "x"}},
        {**base, "id": "n", "task_type": "abstention", "query": {"text": "t"}},
    ]
    lines[0]["gold"] = {"related_tests": ["tests/test_x.py"]}
    lines[1]["gold"] = {"files": [], "no_gold": True, "reason": "flaky_ci"}
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", encoding="utf-8")
    frame = rl.annotate_path(path)
    assert frame["sample_id"].to_list() == ["a", "n"]
    assert frame["line"].to_list() == [1, 2]
    lines[0]["gold"]["related_tests"] = "tests/test_x.py"  # score would refuse it: so do we
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected a list of paths, got str") as info:
        rl.annotate_path(path)
    assert (info.value.path, info.value.line, info.value.field) == (
        str(path),
        1,
        "gold.related_tests",
    )


def test_annotate_samples_falls_back_to_the_frame(tmp_path: Path) -> None:
    record = TV11[3][0] | {"id": "d" * 24, "repo": "o/r", "base_commit": "c" * 40}
    record["gold_spans"] = [{"path": "tests/net/test_more.py", "start_line": 1, "end_line": 1}]
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    samples = load_samples(path).samples
    raw = rl.annotate_samples(samples).row(0, named=True)
    assert raw["gold_files"][0] == "tests/net/test_more.py"  # spans come from the raw line
    moved = rl.annotate_samples(
        samples.with_columns(pl.lit(str(tmp_path / "gone")).alias("source"))
    )
    row = moved.row(0, named=True)
    assert "raw_record_unavailable" in row["flags"] and row["reason"]
    assert row["gold_files"] == ["tests/net/test_retry.py"]  # from the gold JSON, no spans


def test_tables_and_example_order() -> None:
    frame = rl.annotate_records(
        [{"id": f"s{i}", "repo": "o/r", **r} for i, (r, _, _) in enumerate(TV11)]
    )
    assert dict(tx.distribution(frame).iter_rows()) == {
        "causal_indirect": 1,
        "semantic_direct": 2,
        "structural_indirect": 2,
        "workflow_conventional": 1,
    }
    table = tx.by_task(frame)
    assert table.columns == ["Task", *rl.LABELS]
    assert table.filter(pl.col("Task") == "comment2context").row(0) == (
        "comment2context",
        1,
        1,
        0,
        0,
    )
    ex = tx.examples(frame, per_label=None)
    struct = ex.filter(pl.col("primary_relevance_type") == "structural_indirect")
    assert struct["sample_id"].to_list() == ["s4", "s5"]  # both d = 0, not high: by id
    records = rl.records(frame)
    assert list(records[0]) == list(rl.RECORD_FIELDS)


# --- the real samples: every field equals the literal implementation --------------------


@pytest.mark.shared
@pytest.mark.parametrize(
    ("relative", "count"),
    [("benchmark/v0_1/samples.jsonl", 35), ("benchmark/v2_abstention_pilot/abstention.jsonl", 82)],
)
def test_real_samples_match_literal_spec(shared_dir: Path, relative: str, count: int) -> None:
    path = shared_dir / relative
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    frame = rl.annotate_path(path)
    assert frame.height == len(records) == count
    for row, record in zip(frame.iter_rows(named=True), records, strict=True):
        assert_matches_spec(row, record)
    from_loader = rl.annotate_samples(load_samples(path).samples)
    assert from_loader.drop("source").equals(frame.drop("source"))


def test_gold_files_members_follow_the_literal_rule() -> None:
    record = {
        "id": "f",
        "task_type": "code2test",
        "query": {},
        "gold": {"files": [None, "", "a/x.py"], "related_tests": ["t/y.py", None]},
    }
    row = annotate(record)
    assert row["gold_files"] == ["a/x.py", "t/y.py", "None"]  # files skip falsy; lists str() all
    assert "non_string_gold_path" in row["flags"]
