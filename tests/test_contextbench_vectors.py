"""The 22 test vectors of contextbench-spec §12 on its hand-made checkout (and F1, METRICS)."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from contextbench_fixture import (
    CHECKOUT,
    FILES,
    PATCH_V15,
    check,
    evaluate,
    finder,
    make_gold,
    make_step,
)

from arbwb.contextbench.aggregate import aggregate, aggregate_editloc, metrics_frame
from arbwb.contextbench.bytemap import byte_map, lines_to_bytes
from arbwb.contextbench.editloc import patch_lines
from arbwb.contextbench.inputs import Step, predictions_from_frames
from arbwb.contextbench.instance import LEVELS, f1
from arbwb.contextbench.intervals import intersect, size
from arbwb.contextbench.process import (
    drop_from_result,
    evidence_drop,
    evidence_drop_v1,
    gold_line_set,
)
from arbwb.contextbench.ranked import ceilings, ranked_context, score_ranked
from arbwb.contextbench.resolution import resolve_path
from arbwb.contextbench.score import Scored, editloc_frame, results_frame, score_run
from arbwb.io import contextbench as cio
from arbwb.io.checkout import MappingCheckout, count_lines
from arbwb.metrics.intervals import merge_intervals


def test_fixture_bytes_match_the_spec() -> None:
    sizes = {p: (len(b), count_lines(b)) for p, b in FILES.items()}
    assert sizes == {
        "a.py": (132, 13),
        "b.py": (162, 20),
        "pkg/c.py": (39, 6),
        "README.md": (23, 5),
        ".hidden.js": (29, 3),
    }


def test_v1_partial_overlap() -> None:
    r = evaluate(make_gold(["a.py:5-6"]), make_step(["a.py:5-9"]))
    check(r, "file", 1, 1, (1, 1, 1))
    check(r, "symbol", 1, 0.666667, (2, 2, 3))
    check(r, "span", 1, 0.493151, (36, 36, 73))
    check(r, "line", 1, 0.4, (2, 2, 5))


def test_v2_nothing_extracted_is_an_error_row() -> None:
    r = evaluate(make_gold(["a.py:5-6"]), Step())
    assert r == {"instance_id": "I", "error": "no_context_extracted"}


def test_v3_files_only() -> None:
    r = evaluate(make_gold(["a.py:5-6"]), make_step([], files=["a.py", "b.py"]))
    check(r, "file", 1, 0.5, (1, 1, 2))
    check(r, "symbol", 0, 1.0, (0, 2, 0))
    check(r, "span", 0, 1.0, (0, 36, 0))
    check(r, "line", 0, 1.0, (0, 2, 0))
    assert r["trajectory"]["auc_coverage"] == {"file": 1.0, "symbol": 0.0, "span": 0.0, "line": 0.0}


def test_v4_spans_without_files() -> None:
    r = evaluate(make_gold(["a.py:5-6"]), make_step(["a.py:5-6"], files=[]))
    check(r, "file", 0, 1.0, (0, 1, 0))
    check(r, "symbol", 1, 1, (2, 2, 2))
    check(r, "span", 1, 1, (36, 36, 36))
    check(r, "line", 1, 1, (2, 2, 2))


def test_v5_empty_gold() -> None:
    r = evaluate(make_gold([]), make_step(["a.py:1-3"]))
    check(r, "file", 1.0, 0, (0, 0, 1))
    check(r, "symbol", 1.0, 1.0, (0, 0, 0))
    check(r, "span", 1.0, 0, (0, 0, 12))
    check(r, "line", 1.0, 0, (0, 0, 3))
    traj = r["trajectory"]
    assert traj["steps"][0]["coverage"]["line"] == 0.0
    assert traj["auc_coverage"] == {"file": 1.0, "symbol": 1.0, "span": 1.0, "line": 0.0}


def test_v6_overlapping_spans() -> None:
    r = evaluate(make_gold(["a.py:4-9", "a.py:5-6"]), make_step(["a.py:1-5", "a.py:3-8"]))
    check(r, "symbol", 1, 1, (3, 3, 3))
    check(r, "span", 0.797619, 0.848101, (67, 84, 79))
    check(r, "line", 0.833333, 0.625, (5, 6, 8))


def test_v7_adjacent_spans_merge() -> None:
    r = evaluate(make_gold(["a.py:1-4"]), make_step(["a.py:1-2", "a.py:3-4"]))
    check(r, "symbol", 1, 1, (1, 1, 1))
    check(r, "span", 1, 1, (23, 23, 23))
    check(r, "line", 1, 1, (4, 4, 4))


def test_v8_whole_files() -> None:
    r = evaluate(
        make_gold(["a.py:5-6", "pkg/c.py:1-2"]),
        make_step(["a.py:1-13", "b.py:1-20", "README.md:1-5"]),
    )
    check(r, "file", 0.5, 0.333333, (1, 2, 3))
    check(r, "symbol", 0.666667, 0.5, (2, 3, 4))
    check(r, "span", 0.654545, 0.113565, (36, 55, 317))
    check(r, "line", 0.5, 0.052632, (2, 4, 38))


def test_v9_past_eof_is_unclipped_at_line_level() -> None:
    r = evaluate(make_gold(["a.py:5-6"]), make_step(["a.py:1-1000"]))
    check(r, "span", 1, 0.272727, (36, 36, 132))
    check(r, "line", 1, 0.002, (2, 2, 1000))
    check(r, "symbol", 1, 0.5, (2, 2, 4))


def test_v10_dotfile_gold_is_unmatchable() -> None:
    r = evaluate(
        make_gold([".hidden.js:1-3", "a.py:5-6"]), make_step([".hidden.js:1-3", "a.py:5-6"])
    )
    check(r, "file", 0.5, 0.5, (1, 2, 2))
    check(r, "symbol", 1, 0.666667, (2, 2, 3))
    check(r, "span", 1, 0.553846, (36, 36, 65))
    check(r, "line", 0.4, 0.4, (2, 5, 5))


def test_v11_prefixes() -> None:
    gold = make_gold(
        [
            "/testbed/a.py:5-6",
            "/workspace/own__repo__0.1/pkg/c.py:1-2",
            "/workspace/Script.java:1-5",
        ]
    )
    r = evaluate(gold, make_step(["/testbed/a.py:5-6", "/home/someone/repo/pkg/c.py:1-2"]))
    check(r, "file", 0.666667, 1, (2, 3, 2))
    check(r, "symbol", 1, 1, (3, 3, 3))
    check(r, "span", 1, 1, (55, 55, 55))
    check(r, "line", 0.444444, 1, (4, 9, 4))


def test_v12_suffix_resolution() -> None:
    r = evaluate(
        make_gold(["a.py:5-6"]),
        make_step(["wrongdir/a.py:5-6"], files=["wrongdir/a.py", "nope.py"]),
    )
    for level in LEVELS:
        assert r["final"][level]["coverage"] == 1 and r["final"][level]["precision"] == 1
    check(r, "file", 1, 1, (1, 1, 1))


def test_v13_trajectory() -> None:
    steps = (
        make_step(["a.py:1-5"], files=["a.py"]),
        make_step(["README.md:1-5"], files=["README.md"]),
        make_step(["a.py:3-8", "b.py:1-2"], files=["a.py", "b.py"]),
    )
    r = evaluate(make_gold(["a.py:5-6", "b.py:1-2"]), make_step(["a.py:5-6", "b.py:1-2"]), steps)
    traj = r["trajectory"]
    cov = {lv: [s["coverage"][lv] for s in traj["steps"]] for lv in LEVELS}
    assert cov["file"] == [0.5, 0.5, 1]
    assert cov["span"] == pytest.approx([0.38, 0.38, 1])
    assert cov["line"] == [0.25, 0.25, 1]
    assert cov["symbol"] == [1, 1, 1]
    auc = traj["auc_coverage"]
    assert auc["file"] == pytest.approx(0.666667, abs=5e-7)
    assert auc["symbol"] == 1
    assert auc["span"] == pytest.approx(0.586667, abs=5e-7)
    assert auc["line"] == pytest.approx(0.5)
    red = traj["redundancy"]
    assert red["file"] == pytest.approx(1 - 3 / 4)
    assert red["symbol"] == pytest.approx(1 - 3 / 5)
    assert red["span"] == pytest.approx(1 - 116 / 147)
    assert red["line"] == pytest.approx(1 - 15 / 18)
    for level in LEVELS:
        assert (r["final"][level]["coverage"], r["final"][level]["precision"]) == (1, 1)
    assert r["num_steps"] == 3


def test_v14_reversed_and_zero_start() -> None:
    r = evaluate(make_gold(["a.py:5-6"]), make_step(["a.py:9-5"]))
    check(r, "symbol", 0.5, 0.5, (1, 2, 2))
    check(r, "span", 0, 0, (0, 36, 17))
    check(r, "line", 0, 1.0, (0, 2, -3))
    r = evaluate(make_gold(["a.py:5-6"]), make_step(["a.py:0-6"]))
    check(r, "span", 1, 0.610169, (36, 36, 59))
    check(r, "line", 0, 1.0, (0, 2, 0))


PATCH_V15B = (
    "--- a/a.py\n+++ b/a.py\n@@ -5,5 +5,4 @@\n     def bar(self):\n-        return 1\n"
    "+        return 10\n \n-    def baz(self):\n-        return 2\n+    pass\n"
)
PATCH_ADD = "--- a/a.py\n+++ b/a.py\n@@ -6,0 +7,1 @@\n+        # note\n"


def test_v15_editloc() -> None:
    gold = make_gold(["a.py:5-6"])
    final = make_step(["a.py:5-6"])
    expected = [
        (PATCH_V15, 1.0, (1, 2, 1)),
        (PATCH_V15B, 1 / 3, (1, 2, 3)),
        (PATCH_ADD, 0.0, (0, 2, 0)),
    ]
    for patch, value, igp in expected:
        edit = evaluate(gold, final, patch=patch)["editloc"]
        assert edit["recall"] == edit["precision"] == pytest.approx(value)
        assert (edit["intersection"], edit["gold_size"], edit["pred_size"]) == igp


def test_v16_symbols_by_span_and_by_name() -> None:
    r = evaluate(make_gold(["a.py:6-6"]), make_step(["a.py:9-9"]))
    check(r, "symbol", 0.5, 0.5, (1, 2, 2))
    check(r, "line", 0, 0, (0, 1, 1))
    r = evaluate(
        make_gold(["a.py:6-6"]), make_step(["a.py:9-9"], symbols={"a.py": ["Foo.bar", "top"]})
    )
    check(r, "symbol", 0.5, 0.5, (1, 2, 2))


def test_v17_gold_patch_fallback() -> None:
    gold_patch = "--- a/a.py\n+++ b/a.py\n@@ -9,1 +9,1 @@\n-        return 2\n+        return 3\n"
    edit = evaluate(make_gold(["a.py:5-6"], patch=gold_patch), make_step(["a.py:5-6"]))["editloc"]
    assert (edit["recall"], edit["precision"]) == (0.0, 0.0)
    assert (edit["intersection"], edit["gold_size"], edit["pred_size"]) == (0, 2, 1)
    assert "editloc" not in evaluate(make_gold(["a.py:5-6"]), make_step(["a.py:5-6"]))


def _scored(records: list[dict[str, Any]]) -> Scored:
    return Scored(
        "r",
        [{"sample_id": f"s{i}", "record": r} for i, r in enumerate(records)],
        0,
        "checkout",
        LEVELS,
    )


def test_v18_aggregation() -> None:
    v1 = evaluate(make_gold(["a.py:5-6"]), make_step(["a.py:5-9"]))
    v8 = evaluate(
        make_gold(["a.py:5-6", "pkg/c.py:1-2"]),
        make_step(["a.py:1-13", "b.py:1-20", "README.md:1-5"]),
    )
    v2 = evaluate(make_gold(["a.py:5-6"]), Step())
    agg = aggregate(results_frame([_scored([v1, v8, v2])]))

    def get(level: str, how: str) -> dict[str, Any]:
        return agg.filter(pl.col("level") == level, pl.col("aggregation") == how).row(0, named=True)

    micro = {
        "file": (0.666667, 0.5),
        "symbol": (0.8, 0.571429),
        "span": (0.791209, 0.184615),
        "line": (0.666667, 0.093023),
    }
    auc = {"file": 0.75, "symbol": 0.833333, "span": 0.827273, "line": 0.75}
    for level, (c, p) in micro.items():
        row = get(level, "micro")
        assert (row["coverage"], row["precision"]) == pytest.approx((c, p), abs=5e-7)
        assert row["auc_coverage"] == pytest.approx(auc[level], abs=5e-7)
        assert row["redundancy"] == 0
        assert (row["n_valid"], row["n_error"]) == (2, 1)
    macro = {
        "file": (0.75, 0.666667, 0.7),
        "symbol": (0.833333, 0.583333, 0.685714),
        "span": (0.827273, 0.303358, 0.427049),
        "line": (0.75, 0.226316, 0.333333),
    }
    for level, expected in macro.items():
        row = get(level, "macro")
        assert (row["coverage"], row["precision"], row["f1_mean"]) == pytest.approx(
            expected, abs=5e-7
        )
    for level, expected in {
        "file": (0.5, 0.444444, 0.466667),
        "line": (0.5, 0.150877, 0.222222),
    }.items():
        row = get(level, "macro_errors_as_zero")
        assert (row["coverage"], row["precision"], row["f1_mean"]) == pytest.approx(
            expected, abs=5e-7
        )
    # EditLoc micro over {V15, V15b}
    e1 = evaluate(make_gold(["a.py:5-6"]), make_step(["a.py:5-6"]), patch=PATCH_V15)
    e2 = evaluate(make_gold(["a.py:5-6"]), make_step(["a.py:5-6"]), patch=PATCH_V15B)
    edit = aggregate_editloc(editloc_frame([_scored([e1, e2])]))
    micro_row = edit.filter(pl.col("aggregation") == "micro").row(0, named=True)
    assert (micro_row["recall"], micro_row["precision"]) == (0.5, 0.5)
    macro_row = edit.filter(pl.col("aggregation") == "macro").row(0, named=True)
    assert macro_row["recall"] == pytest.approx(0.666667, abs=5e-7)


V19 = {
    1: {
        "file": (0, 0),
        "line": (0, 0, (0, 4, 20)),
        "span": (0, 0, (0, 55, 162)),
        "symbol": (0, 1.0, (0, 3, 0)),
    },
    2: {
        "file": (0.5, 0.5),
        "line": (0.5, 0.060606, (2, 4, 33)),
        "span": (0.654545, 0.122449, (36, 55, 294)),
        "symbol": (0.666667, 0.5, (2, 3, 4)),
    },
    3: {
        "file": (1, 0.666667),
        "line": (1, 0.102564, (4, 4, 39)),
        "span": (1, 0.165165, (55, 55, 333)),
        "symbol": (1, 0.5, (3, 3, 6)),
    },
    4: {
        "file": (1, 0.5),
        "line": (1, 0.090909, (4, 4, 44)),
        "span": (1, 0.154494, (55, 55, 356)),
        "symbol": (1, 0.5, (3, 3, 6)),
    },
}


def test_v19_ranked_list_as_whole_files() -> None:
    gold = {"I": make_gold(["a.py:5-6", "pkg/c.py:1-2"])}
    ranking = pl.DataFrame(
        {
            "run": ["r"] * 5,
            "sample_id": ["I"] * 5,
            "rank": [1, 2, 3, 4, 5],
            "path": ["b.py", "missing.py", "a.py", "pkg/c.py", "README.md"],
            "score": [None] * 5,
        },
        schema={
            "run": pl.String,
            "sample_id": pl.String,
            "rank": pl.Int64,
            "path": pl.String,
            "score": pl.Float64,
        },
    )

    def source(repo: str, commit: str) -> MappingCheckout:
        return CHECKOUT

    table = score_ranked(ranking, gold, [1, 2, 3, 4], source=source)
    for k, want in V19.items():
        row = table.filter(pl.col("k") == k).row(0, named=True)
        assert (row["file_coverage"], row["file_precision"]) == pytest.approx(
            want["file"], abs=5e-7
        )
        c, p, igp = want["line"]
        assert (row["line_coverage"], row["line_precision"]) == pytest.approx((c, p), abs=5e-7)
        assert (row["line_intersection"], row["line_gold"], row["line_pred"]) == igp
        assert row["n_dropped"] == 1
        # every level through the generic scorer (span, symbol need bytes and definitions)
        records, context = ranked_context(ranking, gold, k, source=source)
        preds = predictions_from_frames(records, context)["r"]
        record = score_run("r", preds, gold, source=source, symbol_finder=finder).records[0][
            "record"
        ]
        for level in ("line", "span", "symbol"):
            c, p, igp = want[level]
            check(record, level, c, p, igp)
        check(
            record,
            "file",
            *want["file"],
            (
                len(
                    [
                        x
                        for x in ["a.py", "pkg/c.py"]
                        if x in ["b.py", "a.py", "pkg/c.py", "README.md"][:k]
                    ]
                ),
                2,
                k,
            ),
        )
    ceil = ceilings(gold, source).row(0, named=True)
    assert (ceil["max_file_cov"], ceil["max_line_cov"]) == (1.0, 1.0)
    assert ceil["perfect_line_precision"] == pytest.approx(4 / (13 + 6))


def test_v19_without_line_counts_marks_bounds() -> None:
    gold = {"I": make_gold(["a.py:5-6", "pkg/c.py:1-2"])}
    ranking = pl.DataFrame(
        {"run": ["r", "r"], "sample_id": ["I", "I"], "rank": [1, 2], "path": ["a.py", "b.py"]}
    )
    row = score_ranked(ranking, gold, [2]).row(0, named=True)
    assert row["line_counts"] == "absent"
    assert row["line_precision"] is None
    assert row["line_coverage"] == 0.5  # a.py's 2 of 4 gold lines, assumed inside the file


def test_v20_line_to_byte_conversion_and_intervals() -> None:
    a, c = FILES["a.py"], FILES["pkg/c.py"]
    cases = [
        (a, 5, 6, (23, 58)),
        (a, 13, 13, (109, 131)),
        (a, 14, 14, (132, 132)),
        (a, 15, 15, None),
        (a, 1, 1000, (0, 131)),
        (a, 0, 2, (0, 10)),
        (a, 9, 5, (79, 95)),
        (c, 5, 6, (21, 38)),
        (c, 7, 7, None),
        (b"", 1, 5, (0, 0)),
    ]
    for data, start, end, expected in cases:
        assert lines_to_bytes(data, start, end) == expected, (start, end)
    assert byte_map({"missing.py": [(1, 2)]}, CHECKOUT) == {}
    merged = merge_intervals([(10, 20), (21, 30), (5, 8), (32, 40)])
    assert merged == [(5, 8), (10, 30), (32, 40)]
    assert size(merged) == 34
    assert intersect([(0, 10), (20, 30)], [(5, 25)]) == [(5, 10), (20, 25)]


def test_v21_evidence_drop() -> None:
    def block(tag: str, pairs: list[tuple[str, str]]) -> str:
        body = "\n".join(f"File: {p}\nLines: {r}" for p, r in pairs)
        return f"<{tag}>\n{body}\n</{tag}>"

    messages = [
        {"role": "assistant", "content": block("EXPLORE_CONTEXT", [("/testbed/a.py", "1-4")])},
        {
            "role": "assistant",
            "content": block(
                "EXPLORE_CONTEXT", [("/testbed/a.py", "3-6"), ("/testbed/b.py", "1-3")]
            ),
        },
        {
            "role": "assistant",
            "content": block(
                "PATCH_CONTEXT", [("/testbed/a.py", "2-5"), ("/testbed/a.py", "9-10")]
            ),
        },
    ]
    gold = gold_line_set([("a.py", 1, 10)])
    got = evidence_drop(messages, gold)
    assert (got["seen_union"], got["seen_last"], got["final_gold"]) == (6, 4, 6)
    assert (got["kept_union"], got["kept_last"]) == (4, 3)
    assert got["drop_union"] == pytest.approx(1 / 3)
    assert got["drop_last"] == pytest.approx(0.25)
    assert got["drop_v2"] == 0.0
    assert evidence_drop_v1({"messages": messages}, gold) == {"seen": 0.0, "kept": 0.0, "drop": 1.0}
    lower = [
        {
            **m,
            "content": m["content"]
            .replace("EXPLORE_CONTEXT", "explore_context")
            .replace("PATCH_CONTEXT", "patch_context"),
        }
        for m in messages
    ]
    got = evidence_drop(lower, gold)
    assert (got["seen_union"], got["drop_union"], got["drop_last"]) == (0, 1.0, 1.0)
    row = drop_from_result(10, 5, 0.8, 0.5)
    assert (row["seen"], row["kept"]) == pytest.approx((8, 5))
    assert (row["drop"], row["recall_drop"]) == pytest.approx((0.375, 0.3))
    assert drop_from_result(0, 0, 0.0, 0.0)["drop"] == 1.0


def test_v22_paths_and_diffs() -> None:
    norm = {
        "./a.py": "a.py",
        "../a.py": "a.py",
        ".github/workflows/ci.yml": "github/workflows/ci.yml",
        "/testbed/.github/x.yml": ".github/x.yml",
        "/workspace/own__repo__0.1/src/x.py": "src/x.py",
        "/workspace/Root.java": "Root.java",
        "/workspace/": "",
        "/abs/path/x.py": "abs/path/x.py",
        "src\\win\\x.py": "src/win/x.py",
    }
    assert {raw: cio.normalize_gold_path(raw) for raw in norm} == norm
    resolved = {
        "/testbed/a.py": "a.py",
        "/home/u/repo/pkg/c.py": "pkg/c.py",
        "wrongdir/a.py": "a.py",
        "c.py": None,
        "hidden.js": None,
        ".hidden.js": ".hidden.js",
        '"a.py"': "a.py",
        "a.py/": "a.py",
    }
    assert {raw: resolve_path(raw, CHECKOUT) for raw in resolved} == resolved
    diff = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -10,4 +10,3 @@\n a\n-b\n-c\n+bc\n d\n"
        "@@ -20,2 +19,2 @@\n-e\n+e2\n"
    )
    assert patch_lines(diff) == {"x.py": [(11, 12), (20, 20)]}
    assert patch_lines(diff, side="new") == {"x.py": [(11, 11), (19, 19)]}
    deleted_file = (
        "diff --git a/keep.py b/keep.py\n--- a/keep.py\n+++ b/keep.py\n"
        "@@ -1,2 +1,2 @@\n-x\n+x2\n y\n"
        "diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n"
        "@@ -1,3 +0,0 @@\n-a\n-b\n-c\n"
    )
    assert patch_lines(deleted_file) == {"keep.py": [(1, 3)]}
    sql = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n--- old comment\n select 1\n"
    assert patch_lines(sql) == {}
    blank = "--- a/y.py\n+++ b/y.py\n@@ -1,4 +1,4 @@\n a\n\n-b\n+B\n"
    assert patch_lines(blank) == {"y.py": [(2, 2)]}


def test_f1_and_metrics_frame_errors_as_zero() -> None:
    assert f1(0.0, 0.0) == 0.0
    assert f1(1.0, 0.5) == pytest.approx(2 / 3)
    v1 = evaluate(make_gold(["a.py:5-6"]), make_step(["a.py:5-9"]))
    v2 = evaluate(make_gold(["a.py:5-6"]), Step())
    results = results_frame([_scored([v1, v2])])
    metrics = metrics_frame(results)
    zeros = metrics.filter(pl.col("sample_id") == "s1")
    assert zeros.height == 20 and set(zeros["value"]) == {0.0}
    assert (
        metrics.filter(pl.col("sample_id") == "s0", pl.col("metric") == "line.precision")[
            "value"
        ].item()
        == 0.4
    )
    assert metrics_frame(results, errors="drop").filter(pl.col("sample_id") == "s1").height == 0


def test_metrics_frame_keeps_input_order_of_equal_keys() -> None:
    # One instance predicted twice under one sample id (instance_id and original_inst_id):
    # its two rows per metric keep the order they came in, so every run lists them alike.
    v1 = evaluate(make_gold(["a.py:5-6"]), make_step(["a.py:5-9"]))
    results = results_frame([_scored([v1])])
    twice = pl.concat([results, results.with_columns(precision=pl.lit(0.25))])
    for _ in range(20):
        rows = metrics_frame(twice).filter(pl.col("metric") == "line.precision")
        assert rows["value"].to_list() == [0.4, 0.25]
