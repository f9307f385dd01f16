"""ContextBench adapter: the 22 test vectors of contextbench-spec §12, the 50-row sample (§11),
bad input, agent extractors, aggregation and the block level with the pinned tree-sitter stack.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb.contextbench.aggregate import aggregate, aggregate_editloc, metrics_frame
from arbwb.contextbench.bytemap import byte_map, lines_to_bytes
from arbwb.contextbench.editloc import patch_lines
from arbwb.contextbench.inputs import (
    Gold,
    Prediction,
    Step,
    gold_from_rows,
    predictions_from_frames,
)
from arbwb.contextbench.instance import LEVELS, evaluate_instance, f1
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
from arbwb.contextbench.symbols import Definition, SymbolFinder, table_finder
from arbwb.errors import InputError
from arbwb.io import contextbench as cio
from arbwb.io.checkout import MappingCheckout, count_lines
from arbwb.io.contextbench_agents import load_predictions, load_trajectories
from arbwb.metrics.intervals import merge_intervals

# ../shared beside the checkout; ARBWB_SHARED points elsewhere (e.g. from a git worktree)
SHARED = Path(
    os.environ.get("ARBWB_SHARED") or Path(__file__).resolve().parents[1].parent / "shared"
)
SHARED = SHARED / "contextbench"
SAMPLE = SHARED / "contextbench_verified_test.parquet"

# --------------------------------------------------------------------------- §12 fixture

A_PY = (
    "import os\n\n\nclass Foo:\n    def bar(self):\n        return 1\n\n    def baz(self):\n"
    "        return 2\n\n\ndef top():\n    return Foo().bar()\n"
)
FILES = {
    "a.py": A_PY.encode(),
    "b.py": "".join(f"x{i} = {i}\n" for i in range(1, 21)).encode(),
    "pkg/c.py": b"def c1():\n    pass\n\n\ndef c2():\n    pass",
    "README.md": b"# T\n\nline3\nline4\nline5\n",
    ".hidden.js": b"function h() {\n  return 1;\n}\n",
}
CHECKOUT = MappingCheckout(FILES)
D = Definition
DEFS = {
    "a.py": [
        D("class_definition", 12, 95, "Foo"),
        D("function_definition", 27, 58, "bar"),
        D("function_definition", 64, 95, "baz"),
        D("function_definition", 98, 131, "top"),
    ],
    "pkg/c.py": [D("function_definition", 0, 18, "c1"), D("function_definition", 21, 39, "c2")],
    ".hidden.js": [D("function_declaration", 0, 28, "h")],
}
FINDER = table_finder(DEFS)


def test_fixture_bytes_match_the_spec() -> None:
    sizes = {p: (len(b), count_lines(b)) for p, b in FILES.items()}
    assert sizes == {
        "a.py": (132, 13),
        "b.py": (162, 20),
        "pkg/c.py": (39, 6),
        "README.md": (23, 5),
        ".hidden.js": (29, 3),
    }


def _spans(items: list[str]) -> tuple[tuple[str, int, int], ...]:
    out = []
    for item in items:
        path, _, lines = item.rpartition(":")
        start, _, end = lines.partition("-")
        out.append((path, int(start), int(end)))
    return tuple(out)


def _gold(items: list[str], patch: str | None = None) -> Gold:
    spans = tuple(
        (cio.normalize_gold_path(p), s, e)
        for p, s, e in _spans(items)
        if cio.normalize_gold_path(p)
    )
    return Gold("I", "I", "o/r", "c" * 40, spans, patch)


def _step(
    spans: list[str], files: list[str] | None = None, symbols: dict[str, list[str]] | None = None
) -> Step:
    parsed = _spans(spans)
    names = tuple((p, n) for p, ns in (symbols or {}).items() for n in ns)
    chosen = files if files is not None else list(dict.fromkeys(p for p, _, _ in parsed))
    return Step(tuple(chosen), parsed, names)


def _run(
    gold: Gold, final: Step, steps: tuple[Step, ...] = (), patch: str | None = None
) -> dict[str, Any]:
    pred = Prediction("I", steps, final, patch)
    return evaluate_instance(gold, pred, CHECKOUT, symbol_finder=FINDER)


def _check(
    record: dict[str, Any], level: str, c: float, p: float, igp: tuple[int, int, int]
) -> None:
    got = record["final"][level]
    assert got["coverage"] == pytest.approx(c, abs=5e-7), (level, got)
    assert got["precision"] == pytest.approx(p, abs=5e-7), (level, got)
    assert (got["intersection"], got["gold_size"], got["pred_size"]) == igp, (level, got)


def test_v1_partial_overlap() -> None:
    r = _run(_gold(["a.py:5-6"]), _step(["a.py:5-9"]))
    _check(r, "file", 1, 1, (1, 1, 1))
    _check(r, "symbol", 1, 0.666667, (2, 2, 3))
    _check(r, "span", 1, 0.493151, (36, 36, 73))
    _check(r, "line", 1, 0.4, (2, 2, 5))


def test_v2_nothing_extracted_is_an_error_row() -> None:
    r = _run(_gold(["a.py:5-6"]), Step())
    assert r == {"instance_id": "I", "error": "no_context_extracted"}


def test_v3_files_only() -> None:
    r = _run(_gold(["a.py:5-6"]), _step([], files=["a.py", "b.py"]))
    _check(r, "file", 1, 0.5, (1, 1, 2))
    _check(r, "symbol", 0, 1.0, (0, 2, 0))
    _check(r, "span", 0, 1.0, (0, 36, 0))
    _check(r, "line", 0, 1.0, (0, 2, 0))
    assert r["trajectory"]["auc_coverage"] == {"file": 1.0, "symbol": 0.0, "span": 0.0, "line": 0.0}


def test_v4_spans_without_files() -> None:
    r = _run(_gold(["a.py:5-6"]), _step(["a.py:5-6"], files=[]))
    _check(r, "file", 0, 1.0, (0, 1, 0))
    _check(r, "symbol", 1, 1, (2, 2, 2))
    _check(r, "span", 1, 1, (36, 36, 36))
    _check(r, "line", 1, 1, (2, 2, 2))


def test_v5_empty_gold() -> None:
    r = _run(_gold([]), _step(["a.py:1-3"]))
    _check(r, "file", 1.0, 0, (0, 0, 1))
    _check(r, "symbol", 1.0, 1.0, (0, 0, 0))
    _check(r, "span", 1.0, 0, (0, 0, 12))
    _check(r, "line", 1.0, 0, (0, 0, 3))
    traj = r["trajectory"]
    assert traj["steps"][0]["coverage"]["line"] == 0.0
    assert traj["auc_coverage"] == {"file": 1.0, "symbol": 1.0, "span": 1.0, "line": 0.0}


def test_v6_overlapping_spans() -> None:
    r = _run(_gold(["a.py:4-9", "a.py:5-6"]), _step(["a.py:1-5", "a.py:3-8"]))
    _check(r, "symbol", 1, 1, (3, 3, 3))
    _check(r, "span", 0.797619, 0.848101, (67, 84, 79))
    _check(r, "line", 0.833333, 0.625, (5, 6, 8))


def test_v7_adjacent_spans_merge() -> None:
    r = _run(_gold(["a.py:1-4"]), _step(["a.py:1-2", "a.py:3-4"]))
    _check(r, "symbol", 1, 1, (1, 1, 1))
    _check(r, "span", 1, 1, (23, 23, 23))
    _check(r, "line", 1, 1, (4, 4, 4))


def test_v8_whole_files() -> None:
    r = _run(
        _gold(["a.py:5-6", "pkg/c.py:1-2"]), _step(["a.py:1-13", "b.py:1-20", "README.md:1-5"])
    )
    _check(r, "file", 0.5, 0.333333, (1, 2, 3))
    _check(r, "symbol", 0.666667, 0.5, (2, 3, 4))
    _check(r, "span", 0.654545, 0.113565, (36, 55, 317))
    _check(r, "line", 0.5, 0.052632, (2, 4, 38))


def test_v9_past_eof_is_unclipped_at_line_level() -> None:
    r = _run(_gold(["a.py:5-6"]), _step(["a.py:1-1000"]))
    _check(r, "span", 1, 0.272727, (36, 36, 132))
    _check(r, "line", 1, 0.002, (2, 2, 1000))
    _check(r, "symbol", 1, 0.5, (2, 2, 4))


def test_v10_dotfile_gold_is_unmatchable() -> None:
    r = _run(_gold([".hidden.js:1-3", "a.py:5-6"]), _step([".hidden.js:1-3", "a.py:5-6"]))
    _check(r, "file", 0.5, 0.5, (1, 2, 2))
    _check(r, "symbol", 1, 0.666667, (2, 2, 3))
    _check(r, "span", 1, 0.553846, (36, 36, 65))
    _check(r, "line", 0.4, 0.4, (2, 5, 5))


def test_v11_prefixes() -> None:
    gold = _gold(
        [
            "/testbed/a.py:5-6",
            "/workspace/own__repo__0.1/pkg/c.py:1-2",
            "/workspace/Script.java:1-5",
        ]
    )
    r = _run(gold, _step(["/testbed/a.py:5-6", "/home/someone/repo/pkg/c.py:1-2"]))
    _check(r, "file", 0.666667, 1, (2, 3, 2))
    _check(r, "symbol", 1, 1, (3, 3, 3))
    _check(r, "span", 1, 1, (55, 55, 55))
    _check(r, "line", 0.444444, 1, (4, 9, 4))


def test_v12_suffix_resolution() -> None:
    r = _run(_gold(["a.py:5-6"]), _step(["wrongdir/a.py:5-6"], files=["wrongdir/a.py", "nope.py"]))
    for level in LEVELS:
        assert r["final"][level]["coverage"] == 1 and r["final"][level]["precision"] == 1
    _check(r, "file", 1, 1, (1, 1, 1))


def test_v13_trajectory() -> None:
    steps = (
        _step(["a.py:1-5"], files=["a.py"]),
        _step(["README.md:1-5"], files=["README.md"]),
        _step(["a.py:3-8", "b.py:1-2"], files=["a.py", "b.py"]),
    )
    r = _run(_gold(["a.py:5-6", "b.py:1-2"]), _step(["a.py:5-6", "b.py:1-2"]), steps)
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
    r = _run(_gold(["a.py:5-6"]), _step(["a.py:9-5"]))
    _check(r, "symbol", 0.5, 0.5, (1, 2, 2))
    _check(r, "span", 0, 0, (0, 36, 17))
    _check(r, "line", 0, 1.0, (0, 2, -3))
    r = _run(_gold(["a.py:5-6"]), _step(["a.py:0-6"]))
    _check(r, "span", 1, 0.610169, (36, 36, 59))
    _check(r, "line", 0, 1.0, (0, 2, 0))


PATCH_V15 = (
    "--- a/a.py\n+++ b/a.py\n@@ -5,3 +5,3 @@\n     def bar(self):\n-        return 1\n"
    "+        return 10\n \n"
)
PATCH_V15B = (
    "--- a/a.py\n+++ b/a.py\n@@ -5,5 +5,4 @@\n     def bar(self):\n-        return 1\n"
    "+        return 10\n \n-    def baz(self):\n-        return 2\n+    pass\n"
)
PATCH_ADD = "--- a/a.py\n+++ b/a.py\n@@ -6,0 +7,1 @@\n+        # note\n"


def test_v15_editloc() -> None:
    gold = _gold(["a.py:5-6"])
    final = _step(["a.py:5-6"])
    expected = [
        (PATCH_V15, 1.0, (1, 2, 1)),
        (PATCH_V15B, 1 / 3, (1, 2, 3)),
        (PATCH_ADD, 0.0, (0, 2, 0)),
    ]
    for patch, value, igp in expected:
        edit = _run(gold, final, patch=patch)["editloc"]
        assert edit["recall"] == edit["precision"] == pytest.approx(value)
        assert (edit["intersection"], edit["gold_size"], edit["pred_size"]) == igp


def test_v16_symbols_by_span_and_by_name() -> None:
    r = _run(_gold(["a.py:6-6"]), _step(["a.py:9-9"]))
    _check(r, "symbol", 0.5, 0.5, (1, 2, 2))
    _check(r, "line", 0, 0, (0, 1, 1))
    r = _run(_gold(["a.py:6-6"]), _step(["a.py:9-9"], symbols={"a.py": ["Foo.bar", "top"]}))
    _check(r, "symbol", 0.5, 0.5, (1, 2, 2))


def test_v17_gold_patch_fallback() -> None:
    gold_patch = "--- a/a.py\n+++ b/a.py\n@@ -9,1 +9,1 @@\n-        return 2\n+        return 3\n"
    edit = _run(_gold(["a.py:5-6"], patch=gold_patch), _step(["a.py:5-6"]))["editloc"]
    assert (edit["recall"], edit["precision"]) == (0.0, 0.0)
    assert (edit["intersection"], edit["gold_size"], edit["pred_size"]) == (0, 2, 1)
    assert "editloc" not in _run(_gold(["a.py:5-6"]), _step(["a.py:5-6"]))


def _scored(records: list[dict[str, Any]]) -> Scored:
    return Scored(
        "r",
        [{"sample_id": f"s{i}", "record": r} for i, r in enumerate(records)],
        0,
        "checkout",
        LEVELS,
    )


def test_v18_aggregation() -> None:
    v1 = _run(_gold(["a.py:5-6"]), _step(["a.py:5-9"]))
    v8 = _run(
        _gold(["a.py:5-6", "pkg/c.py:1-2"]), _step(["a.py:1-13", "b.py:1-20", "README.md:1-5"])
    )
    v2 = _run(_gold(["a.py:5-6"]), Step())
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
    e1 = _run(_gold(["a.py:5-6"]), _step(["a.py:5-6"]), patch=PATCH_V15)
    e2 = _run(_gold(["a.py:5-6"]), _step(["a.py:5-6"]), patch=PATCH_V15B)
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
    gold = {"I": _gold(["a.py:5-6", "pkg/c.py:1-2"])}
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
        record = score_run("r", preds, gold, source=source, symbol_finder=FINDER).records[0][
            "record"
        ]
        for level in ("line", "span", "symbol"):
            c, p, igp = want[level]
            _check(record, level, c, p, igp)
        _check(
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
    gold = {"I": _gold(["a.py:5-6", "pkg/c.py:1-2"])}
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


# --------------------------------------------------------------------------- §11 sample


def _sample() -> cio.ContextBenchRows:
    if not SAMPLE.is_file():
        pytest.skip("needs ../shared/contextbench beside the checkout (CI has it)")
    return cio.load_rows(SAMPLE)


@pytest.mark.shared
def test_sample_rows_sources_languages() -> None:
    rows = _sample()
    inst = rows.instances
    assert inst.height == rows.samples.height == 50
    assert rows.samples["sample_id"].n_unique() == 50
    assert set(rows.samples["task"]) == {"contextbench"}
    assert dict(inst.group_by("benchmark").len().iter_rows()) == {
        "Multi": 16,
        "Poly": 12,
        "Pro": 5,
        "Verified": 17,
    }
    assert dict(inst.group_by("language").len().iter_rows()) == {
        "python": 26,
        "javascript": 6,
        "typescript": 6,
        "java": 4,
        "go": 3,
        "rust": 3,
        "c": 2,
    }
    multi = inst.filter(pl.col("benchmark") == "Multi")
    assert dict(multi.group_by("language").len().iter_rows()) == {
        "c": 2,
        "go": 3,
        "java": 4,
        "javascript": 2,
        "rust": 3,
        "typescript": 2,
    }
    assert dict(inst.group_by("category").len().iter_rows()) == {
        "maintenance__bugfix": 49,
        "evolution__feature": 1,
    }
    assert all(r.count("/") == 1 for r in rows.samples["repo"])
    assert sorted(multi["repo_field"]) == sorted(
        [
            "jq",
            "zstd",
            "cli",
            "cli",
            "cli",
            "jackson-databind",
            "jackson-databind",
            "jackson-core",
            "jackson-core",
            "svelte",
            "dayjs",
            "rayon",
            "tracing",
            "clap",
            "core",
            "material-ui",
        ]
    )
    # recovered owner/name agrees with the /workspace/<owner>__<name>__0.1/ gold prefix
    prefixes = (
        rows.gold.filter(pl.col("path_form") == "workspace")
        .join(rows.samples.select("sample_id", "repo"), on="sample_id")
        .select(pl.col("raw_path").str.extract(r"^/workspace/([^/]+)__0\.1/"), "repo")
    )
    assert all(p == r.replace("/", "__") for p, r in prefixes.iter_rows())
    assert rows.excluded.height == 0


@pytest.mark.shared
def test_sample_spans_and_lines() -> None:
    rows = _sample()
    gold = rows.gold
    per_row = rows.instances["n_spans"].to_list()
    assert gold.height == sum(per_row) == 391
    assert (min(per_row), statistics.median(per_row), max(per_row)) == (1, 5, 65)
    assert sum(per_row) / 50 == pytest.approx(7.82)
    by_source = gold.join(rows.instances.select("sample_id", "benchmark"), on="sample_id")
    assert dict(by_source.group_by("benchmark").len().iter_rows()) == {
        "Multi": 74,
        "Poly": 78,
        "Pro": 142,
        "Verified": 97,
    }
    length = gold["end_line"] - gold["start_line"] + 1
    assert (length.min(), length.max(), int((length == 1).sum())) == (1, 597, 4)
    assert int(length.sum()) == 19242
    files = rows.labels.group_by("sample_id").len()["len"]
    assert (files.min(), files.median(), files.max(), files.sum()) == (1, 2, 14, 156)
    # merged gold lines (independent literal merge)
    merged_total, merged_rows, n_intervals = 0, [], 0
    for sid in rows.samples["sample_id"]:
        spans = gold.filter(pl.col("sample_id") == sid)
        total = 0
        for _path, part in spans.group_by("path"):
            ivs = sorted(zip(part["start_line"], part["end_line"], strict=True))
            out: list[list[int]] = []
            for s, e in ivs:
                if out and s <= out[-1][1] + 1:
                    out[-1][1] = max(out[-1][1], e)
                else:
                    out.append([s, e])
            n_intervals += len(out)
            total += sum(e - s + 1 for s, e in out)
        merged_rows.append(total)
        merged_total += total
    assert merged_total == 18575
    assert n_intervals == 267
    assert (min(merged_rows), statistics.median(merged_rows), max(merged_rows)) == (8, 187.5, 2308)
    assert rows.spans.height == 391 and rows.spans["kind"].unique().to_list() == ["gold_context"]


@pytest.mark.shared
def test_sample_path_anomalies() -> None:
    rows = _sample()
    forms = dict(rows.gold.group_by("path_form").len().iter_rows())
    assert forms == {"relative": 316, "workspace": 72, "workspace_root": 2, "dotfile": 1}
    b3 = (
        rows.gold.filter(pl.col("quirk") == "B3")
        .select("raw_path", "start_line", "end_line")
        .rows()
    )
    assert sorted(b3) == [
        ("/workspace/CustomJsonNodeTest.java", 1, 117),
        ("/workspace/run_svelte_test.js", 1, 88),
    ]
    b2 = rows.gold.filter(pl.col("quirk") == "B2").row(0, named=True)
    assert (b2["raw_path"], b2["path"], b2["fixed_path"]) == (
        ".size-limit.js",
        "size-limit.js",
        ".size-limit.js",
    )
    assert rows.gold.filter(pl.col("quirk") == "B3")["fixed_path"].null_count() == 2
    assert rows.gold.filter(pl.col("raw_path").str.contains(r"\\|^/testbed/")).height == 0


@pytest.mark.shared
def test_sample_polars_json_decoding_matches_loader() -> None:
    rows = _sample()
    decoded = cio.decode_gold_json(pl.read_parquet(SAMPLE))
    assert decoded.height == rows.gold.height
    assert decoded["start_line"].to_list() == rows.gold["start_line"].to_list()
    contents = decoded["content"].to_list()
    lengths = (decoded["end_line"] - decoded["start_line"] + 1).to_list()
    counts = [len(c.splitlines()) for c in contents]
    assert sum(c == n for c, n in zip(counts, lengths, strict=True)) == 303
    assert sum(c > n for c, n in zip(counts, lengths, strict=True)) == 13


# --------------------------------------------------------------------------- bad input


def _row(**over: Any) -> dict[str, Any]:
    row = {c: None for c in cio.ROW_COLUMNS}
    row.update(
        instance_id="Multi-SWE-Bench__go__maintenance__bugfix__0000abcd",
        original_inst_id="cli__cli-5973",
        repo="cli",
        language="go",
        base_commit="a" * 40,
        gold_context=json.dumps(
            [
                {
                    "file": "/workspace/cli__cli__0.1/x.go",
                    "start_line": 1,
                    "end_line": 3,
                    "content": "",
                }
            ]
        ),
        problem_statement="p",
        source="Multi",
    )
    row.update(over)
    return row


def _write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "rows.parquet"
    pl.DataFrame(rows, schema=dict.fromkeys(cio.ROW_COLUMNS, pl.String)).write_parquet(path)
    return path


def test_bad_rows_raise_located_errors(tmp_path: Path) -> None:
    cases = [
        ({"gold_context": "not json at all"}, "gold_context", "not a JSON list"),
        ({"repo": "notcli"}, "repo", "unknown repository short name 'notcli'"),
        ({"original_inst_id": "garbage"}, "repo", "cannot recover owner/name"),
        (
            {"gold_context": json.dumps([{"file": "x.go", "start_line": 5, "end_line": 2}])},
            "gold_context",
            "end_line 2 < start_line 5",
        ),
        (
            {"gold_context": json.dumps([{"file": "x.go", "start_line": "one", "end_line": 2}])},
            "gold_context",
            "no integer start_line",
        ),
        ({"base_commit": ""}, "base_commit", "required cell is empty"),
    ]
    for over, field, text in cases:
        path = _write(tmp_path, [_row(), _row(instance_id="second__x", **over)])
        with pytest.raises(InputError) as info:
            cio.load_rows(path)
        assert info.value.field == field and info.value.line == 2 and text in str(info.value), over
        kept = cio.load_rows(path, on_error="exclude")
        assert kept.instances.height == 1
        assert kept.excluded.select("sample_id", "line", "field").row(0) == ("second__x", 2, field)


def test_text_encoded_gold_is_parsed_not_emptied(tmp_path: Path) -> None:
    text = (
        "context1\uff1a\nfile: /workspace/cli__cli__0.1/x.go\nstart_line: 3\nend_line: 9\nbody\n\n"
        "context2\uff1a\nfile: y.go\nstart_line: 1\nend_line: 1\nz"
    )
    rows = cio.load_rows(_write(tmp_path, [_row(gold_context=text)]))
    assert rows.instances["gold_encoding"].to_list() == ["text"]
    assert rows.gold.select("path", "start_line", "end_line").rows() == [
        ("x.go", 3, 9),
        ("y.go", 1, 1),
    ]
    assert rows.samples["repo"].to_list() == ["cli/cli"]


def test_duplicate_ids_and_pro_repo_recovery(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="duplicate instance_id"):
        cio.load_rows(_write(tmp_path, [_row(), _row()]))
    pro = "instance_ansible__ansible-" + "f" * 40 + "-v0f01c69f1e2528b935359cfe578530722bca2c59"
    assert cio.recover_repo("ansible", pro) == "ansible/ansible"
    assert cio.recover_repo("fasterxml/jackson-core", "x") == "fasterxml/jackson-core"


def test_unknown_instances_are_counted_missing_gold(tmp_path: Path) -> None:
    gold = {"I": _gold(["a.py:5-6"])}
    preds = tmp_path / "p.jsonl"
    lines = [
        {
            "instance_id": "I",
            "traj_data": {"pred_files": ["a.py"], "pred_spans": {"a.py": [{"start": 5, "end": 6}]}},
        },
        {"instance_id": "nope", "traj_data": {"pred_files": ["a.py"]}},
    ]
    preds.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    run = load_predictions(preds)
    parsed = predictions_from_frames(run.records, run.context)[run.run]
    scored = score_run(run.run, parsed, gold, source=lambda r, c: CHECKOUT)
    results = results_frame([scored])
    assert results.filter(pl.col("error") == "missing_gold")["instance_id"].to_list() == ["nope"]
    agg = (
        aggregate(results)
        .filter(pl.col("aggregation") == "micro", pl.col("level") == "file")
        .row(0, named=True)
    )
    assert (agg["n_valid"], agg["n_error"], agg["n_missing_gold"]) == (1, 0, 1)


def test_bad_prediction_records(tmp_path: Path) -> None:
    preds = tmp_path / "p.json"
    preds.write_text(
        json.dumps([{"instance_id": "I", "traj_data": {"pred_spans": {"a.py": [{"start": 1}]}}}])
    )
    with pytest.raises(InputError, match="needs 'start' and 'end'") as info:
        load_predictions(preds)
    assert info.value.path is not None and "p.json:1" in info.value.path
    preds.write_text(json.dumps([{"instance_id": "I"}, {"instance_id": "I"}]))
    with pytest.raises(InputError, match="already predicted on line 1"):
        load_predictions(preds)


# --------------------------------------------------------------------------- extractors


def test_mini_swe_agent_extractor(tmp_path: Path) -> None:
    traj = {
        "instance_id": "I",
        "info": {
            "submission": PATCH_V15,
            "config": {"environment": {"image": "mswebench/own_m_repo:pr-1"}},
        },
        "messages": [
            {
                "role": "assistant",
                "content": "<explore_context>\nFile: /testbed/a.py\nLines: 9-5\n</explore_context>",
            },
            {
                "role": "user",
                "content": "<explore_context>\nFile: /home/repo/b.py\nLines: 1-2\n"
                "File: /home/other/b.py\nLines: 3-3\n</explore_context>",
            },
            {
                "role": "assistant",
                "content": "<EXPLORE_CONTEXT>\nFile: README.md\nLines: 1-5\n</EXPLORE_CONTEXT>",
            },
            {
                "role": "assistant",
                "content": "<PATCH_CONTEXT>\nFile: /testbed/b.py\nLines: 1-1\n</PATCH_CONTEXT>",
            },
            {
                "role": "assistant",
                "content": "<PATCH_CONTEXT>\nFile: /testbed/a.py\nLines: 5-6\n</PATCH_CONTEXT>",
            },
        ],
    }
    (tmp_path / "I.traj.json").write_text(json.dumps(traj))
    run = load_trajectories(tmp_path, run="mini")
    assert run.records.row(0, named=True)["n_steps"] == 2
    assert run.records["model_patch"].to_list() == [PATCH_V15]
    spans = (
        run.context.filter(pl.col("kind") == "span")
        .select("step", "path", "start_line", "end_line")
        .rows()
    )
    assert spans == [
        (1, "a.py", 5, 9),
        (2, "b.py", 1, 2),
        (2, "other/b.py", 3, 3),
        (0, "a.py", 5, 6),
    ]


def test_mini_swe_bash_fallback(tmp_path: Path) -> None:
    messages = [
        {"role": "assistant", "content": "```bash\nnl -ba /testbed/a.py | sed -n '3,8p'\n```"},
        {"role": "assistant", "content": "```bash\ncat b.py && grep -n foo pkg/c.py\n```"},
        {"role": "assistant", "content": "```bash\nsed -i 's/x/y/' a.py\n```"},
        {"role": "assistant", "content": "```bash\nhead -n 4 README.md\n```"},
    ]
    (tmp_path / "I.traj.json").write_text(json.dumps({"messages": messages}))
    run = load_trajectories(tmp_path / "I.traj.json", run="mini")
    rows = run.context.select("step", "kind", "path", "start_line").rows()
    assert rows == [
        (1, "file", "a.py", None),
        (1, "span", "a.py", 3),
        (2, "file", "b.py", None),
        (2, "file", "pkg/c.py", None),
    ]
    assert run.records["instance_id"].to_list() == ["I"]


def test_swe_agent_checkpoints(tmp_path: Path) -> None:
    lines = [
        {"action": "str_replace_editor view /testbed/a.py --view_range 1 5", "observation": ""},
        {"action": "str_replace_editor view /testbed/b.py", "observation": ""},
        {
            "action": "str_replace_editor view /testbed/README.md --view_range 1 5",
            "observation": "",
        },
        {
            "type": "patch_context",
            "patch_context": "File: /testbed/a.py\nLines: 5-6\nFile: /testbed/b.py\n",
        },
    ]
    (tmp_path / "I.checkpoints.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    run = load_trajectories(tmp_path, run="swe")
    assert run.records["n_steps"].to_list() == [2]
    final = run.context.filter(pl.col("step") == 0).select("kind", "path", "start_line").rows()
    assert final == [("file", "a.py", None), ("file", "b.py", None), ("span", "a.py", 5)]
    parsed = predictions_from_frames(run.records, run.context)["swe"]
    record = evaluate_instance(_gold(["a.py:5-6"]), parsed["I"], CHECKOUT)
    _check(record, "file", 1, 0.5, (1, 1, 2))
    assert [s["coverage"]["line"] for s in record["trajectory"]["steps"]] == [0.5, 0.5]  # 5 of 5-6


def test_agentless_and_prometheus(tmp_path: Path) -> None:
    agentless = {
        "instance_id": "I",
        "3_final_combined_files": ["a.py", "b.py", "a.py"],
        "4_related_elements": {"a.py": ["function: Foo.bar\nclass: Foo"]},
        "5_sampled_edit_locs_and_patches": [
            {"edit_locs": {"a.py": ["function: bar"]}},
            {"edit_locs": {"a.py": ["line: 6\nlines: 9-8"], "b.py": ["line: 2"]}},
        ],
        "6_final_selected_patch": PATCH_V15,
    }
    (tmp_path / "I_traj.json").write_text(json.dumps(agentless))
    run = load_trajectories(tmp_path / "I_traj.json", run="al")
    final = run.context.filter(pl.col("step") == 0)
    assert final.filter(pl.col("kind") == "span").select(
        "path", "start_line", "end_line"
    ).rows() == [("a.py", 6, 6), ("a.py", 8, 9), ("b.py", 2, 2)]
    assert sorted(final.filter(pl.col("kind") == "symbol")["symbol"]) == ["Foo", "Foo.bar"]
    log = (
        "x\n--- BEGIN CONTEXT ---\nFile: /testbed/a.py\nLine number range: 1 - 4\n"
        "--- END CONTEXT ---\n"
        "--- BEGIN CONTEXT ---\nFile: b.py\nLine number range: 3 - 2\n--- END CONTEXT ---\n"
    )
    (tmp_path / "J.log").write_text(log)
    run = load_trajectories(tmp_path / "J.log", run="prom")
    rows = (
        run.context.filter(pl.col("kind") == "span")
        .select("step", "path", "start_line", "end_line")
        .rows()
    )
    assert rows == [(1, "a.py", 1, 4), (2, "b.py", 2, 3), (0, "a.py", 1, 4), (0, "b.py", 2, 3)]


def test_f1_and_metrics_frame_errors_as_zero() -> None:
    assert f1(0.0, 0.0) == 0.0
    assert f1(1.0, 0.5) == pytest.approx(2 / 3)
    v1 = _run(_gold(["a.py:5-6"]), _step(["a.py:5-9"]))
    v2 = _run(_gold(["a.py:5-6"]), Step())
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


# --------------------------------------------------------------------------- block level


def _tree_sitter() -> SymbolFinder:
    """The pinned stack's finder (``make test`` installs the contextbench extra; no skip)."""
    from arbwb.contextbench.symbols import tree_sitter_finder

    return tree_sitter_finder()


def _defs(finder: SymbolFinder, path: str, data: bytes) -> list[tuple[str, int, int, str | None]]:
    return [(d.node_type, d.start_byte, d.end_byte, d.name) for d in finder(path, data)]


def test_tree_sitter_finds_the_section_12_fixture_definitions() -> None:
    finder = _tree_sitter()
    got = {path: _defs(finder, path, data) for path, data in FILES.items()}
    want = {
        path: [(d.node_type, d.start_byte, d.end_byte, d.name) for d in DEFS.get(path, [])]
        for path in FILES
    }
    assert got == want


@pytest.mark.parametrize(
    ("gold", "pred", "symbol"),
    [
        (["a.py:5-6"], ["a.py:5-9"], (1, 0.666667, (2, 2, 3))),  # V1
        (
            ["a.py:5-6", "pkg/c.py:1-2"],
            ["a.py:1-13", "b.py:1-20", "README.md:1-5"],
            (0.666667, 0.5, (2, 3, 4)),
        ),  # V8
        (["a.py:5-6"], ["a.py:1-1000"], (1, 0.5, (2, 2, 4))),  # V9
        (
            [".hidden.js:1-3", "a.py:5-6"],
            [".hidden.js:1-3", "a.py:5-6"],
            (1, 0.666667, (2, 2, 3)),
        ),  # V10
        (["a.py:5-6"], ["a.py:9-5"], (0.5, 0.5, (1, 2, 2))),  # V14
        (["a.py:6-6"], ["a.py:9-9"], (0.5, 0.5, (1, 2, 2))),  # V16
    ],
)
def test_section_12_symbol_vectors_with_tree_sitter(
    gold: list[str], pred: list[str], symbol: tuple[float, float, tuple[int, int, int]]
) -> None:
    pred_record = Prediction("I", (), _step(pred))
    r = evaluate_instance(_gold(gold), pred_record, CHECKOUT, symbol_finder=_tree_sitter())
    _check(r, "symbol", *symbol)


#: One small file per language of the §4 table; the expected definitions are
#: (node type, start byte, exclusive end byte, name), counted by hand from the bytes.
LANGUAGE_VECTORS = [
    # python: the decorator line (5 bytes) lies outside the def; `async def` parses as
    # function_definition; the nested def counts; a comment mentioning `class X` does not
    (
        "m.py",
        b"@dec\nasync def f():\n    def g(): pass\n# class X\nclass C: pass\n",
        [
            ("function_definition", 5, 37, "f"),
            ("function_definition", 24, 37, "g"),
            ("class_definition", 48, 61, "C"),
        ],
    ),
    ("M.PY", b"def f(): pass\n", [("function_definition", 0, 13, "f")]),  # extension lower-cased
    # javascript: class, method, declaration and the arrow function (unnamed); the function
    # expression `function () {}` is no definition
    (
        "m.js",
        b"class A {\n  m() {}\n}\nfunction f() {}\nconst g = () => 1;\nconst h = function () {};\n",
        [
            ("class_declaration", 0, 20, "A"),
            ("method_definition", 12, 18, "m"),
            ("function_declaration", 21, 36, "f"),
            ("arrow_function", 47, 54, None),
        ],
    ),
    # §4's name rule searches the arrow function itself in pre-order: its parameter names it
    ("n.js", b"const t = x => x;\n", [("arrow_function", 10, 16, "x")]),
    # typescript: interface counts; the arrow function and the enum do not
    (
        "m.ts",
        b"interface I {\n  x: number;\n}\nclass A {\n  m(): void {}\n}\n"
        b"function f(): void {}\nconst g = () => 1;\nenum E { X }\n",
        [
            ("interface_declaration", 0, 28, "I"),
            ("class_declaration", 29, 55, "A"),
            ("method_definition", 41, 53, "m"),
            ("function_declaration", 56, 77, "f"),
        ],
    ),
    (
        "m.tsx",
        b"interface P { a: number }\nfunction C(p: P) { return <div/>; }\n",
        [("interface_declaration", 0, 25, "P"), ("function_declaration", 26, 61, "C")],
    ),
    (
        "m.go",
        b"package p\n\ntype T struct{}\n\nfunc (t T) M() {}\n\nfunc F() {}\n",
        [
            ("type_declaration", 11, 26, "T"),
            ("method_declaration", 28, 45, "M"),
            ("function_declaration", 47, 58, "F"),
        ],
    ),
    # rust: an impl is named after its first identifier in pre-order, here the method `m`;
    # enums do not count
    (
        "m.rs",
        b"struct S;\n\nimpl S {\n    fn m(&self) {}\n}\n\n"
        b"trait T {}\n\nfn f() {}\n\nenum E { A }\n",
        [
            ("struct_item", 0, 9, "S"),
            ("impl_item", 11, 40, "m"),
            ("function_item", 24, 38, "m"),
            ("trait_item", 42, 52, "T"),
            ("function_item", 54, 63, "f"),
        ],
    ),
    (
        "M.java",
        b"class A {\n  A() {}\n  void m() {}\n}\ninterface I {}\n",
        [
            ("class_declaration", 0, 34, "A"),
            ("constructor_declaration", 12, 18, "A"),
            ("method_declaration", 21, 32, "m"),
            ("interface_declaration", 35, 49, "I"),
        ],
    ),
    # c: the parameter's `struct s` reference is a struct_specifier too (Q8)
    (
        "m.c",
        b"struct s { int x; };\nint f(struct s *p) { return 0; }\n",
        [
            ("struct_specifier", 0, 19, "s"),
            ("function_definition", 21, 53, "f"),
            ("struct_specifier", 27, 35, "s"),
        ],
    ),
    ("m.h", b"struct s;\n", [("struct_specifier", 0, 8, "s")]),
    (
        "m.cpp",
        b"class A { };\nstruct B { };\nint f() { return 0; }\n",
        [
            ("class_specifier", 0, 11, "A"),
            ("struct_specifier", 13, 25, "B"),
            ("function_definition", 27, 48, "f"),
        ],
    ),
    (
        "m.cs",
        b"class A {\n  void M() {}\n}\ninterface I {}\n",
        [
            ("class_declaration", 0, 25, "A"),
            ("method_declaration", 12, 23, "M"),
            ("interface_declaration", 26, 40, "I"),
        ],
    ),
    (
        "m.php",
        b"<?php\nfunction f() {}\nclass A {\n  function m() {}\n}\n",
        [
            ("function_definition", 6, 21, "f"),
            ("class_declaration", 22, 51, "A"),
            ("method_declaration", 34, 49, "m"),
        ],
    ),
    (
        "m.rb",
        b"module M\n  class A\n    def m\n    end\n  end\nend\n",
        [("module", 0, 46, "M"), ("class", 11, 42, "A"), ("method", 23, 36, "m")],
    ),
    (
        "m.kt",
        b"class A {\n  fun m() {}\n}\nfun f() {}\n",
        [
            ("class_declaration", 0, 24, "A"),
            ("function_declaration", 12, 22, "m"),
            ("function_declaration", 25, 35, "f"),
        ],
    ),
    (
        "m.scala",
        b"trait T\nclass A {\n  def m = 1\n}\n",
        [
            ("trait_definition", 0, 7, "T"),
            ("class_definition", 8, 31, "A"),
            ("function_definition", 20, 29, "m"),
        ],
    ),
    # swift is mapped but the pinned wheel has no parser (B9): no definitions, no abort
    ("m.swift", b"func f() {}\n", []),
    ("notes.txt", b"def f(): pass\n", []),  # no language for the extension
]


@pytest.mark.parametrize(
    ("path", "data", "want"), LANGUAGE_VECTORS, ids=lambda v: v if isinstance(v, str) else ""
)
def test_tree_sitter_definitions_per_language(
    path: str, data: bytes, want: list[tuple[str, int, int, str | None]]
) -> None:
    assert _defs(_tree_sitter(), path, data) == want


#: Rust, Go and Java files of LANGUAGE_VECTORS as one repository.
POLYGLOT = MappingCheckout(
    {p: d for p, d, _ in LANGUAGE_VECTORS if p in ("m.rs", "m.go", "M.java")}
)


def test_definitions_inside_viewed_spans_across_languages() -> None:
    # gold: the lines of `fn m`, of `func (t T) M`, of `void m()`; byte ranges (inclusive):
    # m.rs:4 (20,38) -> impl (11,40) and fn m (24,38); m.go:5 (28,45) -> method M;
    # M.java:3 (19,32) -> class A (0,34) and m (21,32): G = 5 symbols, 19 + 18 + 14 = 51 bytes
    gold = _gold(["m.rs:4-4", "m.go:5-5", "M.java:3-3"])
    # pred: m.rs:5-9 (39,63) -> impl (its `}` is byte 39), trait T, fn f; m.go:3-4 (11,27) ->
    # type T; M.java:2-2 (10,18) -> class A, constructor A: P = 6, I = {impl, class A} = 2;
    # bytes 25 + 17 + 9 = 51, none shared
    pred = Prediction("I", (), _step(["m.rs:5-9", "m.go:3-4", "M.java:2-2"]))
    r = evaluate_instance(gold, pred, POLYGLOT, symbol_finder=_tree_sitter())
    _check(r, "file", 1, 1, (3, 3, 3))
    _check(r, "symbol", 0.4, 1 / 3, (2, 5, 6))
    _check(r, "span", 0, 0, (0, 51, 51))
    _check(r, "line", 0, 0, (0, 3, 8))
    # by name: `S.m` has no exact match, so its last component `m` matches every definition
    # named m in m.rs: the impl and the fn; the names replace the step's span symbols
    named = Prediction("I", (), _step(["m.rs:5-9"], symbols={"m.rs": ["S.m"]}))
    r = evaluate_instance(gold, named, POLYGLOT, symbol_finder=_tree_sitter())
    _check(r, "symbol", 0.4, 1, (2, 5, 2))


def test_symbol_finder_without_tree_sitter_names_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from arbwb.contextbench.symbols import tree_sitter_finder

    monkeypatch.setitem(sys.modules, "tree_sitter_languages", None)  # import now fails
    with pytest.raises(
        ImportError, match=r"tree-sitter==0\.20\.4.*tree-sitter-languages==1\.10\.2"
    ):
        tree_sitter_finder()


def test_git_checkout_gives_the_same_numbers(tmp_path: Path) -> None:
    import subprocess

    from arbwb.io.checkout import repos_source

    work = tmp_path / "repos" / "o__r"
    for path, data in FILES.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(data)
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "HOME": str(tmp_path),
        "PATH": os.environ["PATH"],
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(work), *args], check=True, env=env)
    sha = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    (work / "a.py").write_text("changed in the work tree, not at the commit\n")
    gold = Gold("I", "I", "O/R", sha, (("a.py", 5, 6),))
    pred = Prediction("I", (), _step(["/testbed/a.py:5-9"]))
    record = score_run("r", {"I": pred}, {"I": gold}, source=repos_source(tmp_path / "repos"))
    got = record.records[0]["record"]
    _check(got, "span", 1, 0.493151, (36, 36, 73))
    _check(got, "line", 1, 0.4, (2, 2, 5))
    missing = score_run(
        "r",
        {"I": pred},
        {"I": Gold("I", "I", "x/y", sha, ())},
        source=repos_source(tmp_path / "repos"),
    )
    assert missing.records[0]["record"]["error"] == "checkout_failed"


def test_file_list_checkout_matches_bytes_for_ranked_lists() -> None:
    from arbwb.io.checkout import FileListCheckout

    gold = {"I": _gold(["a.py:5-6", "pkg/c.py:1-2"])}
    listed = FileListCheckout({p: count_lines(b) for p, b in FILES.items()})
    ranking = pl.DataFrame(
        {
            "run": ["r"] * 4,
            "sample_id": ["I"] * 4,
            "rank": [1, 2, 3, 4],
            "path": ["b.py", "a.py", "pkg/c.py", "README.md"],
        }
    )
    by_list = score_ranked(ranking, gold, [1, 2, 3, 4], source=lambda r, c: listed)
    by_bytes = score_ranked(ranking, gold, [1, 2, 3, 4], source=lambda r, c: CHECKOUT)
    cols = ["file_coverage", "file_precision", "line_coverage", "line_precision"]
    assert by_list.select(cols).rows() == by_bytes.select(cols).rows()
    assert by_list["line_pred"].to_list() == [20, 33, 39, 44]


def test_predictions_keyed_by_original_inst_id(tmp_path: Path) -> None:
    rows = cio.load_rows(_write(tmp_path, [_row()]))
    gold = gold_from_rows(rows)
    assert gold["cli__cli-5973"] is gold["Multi-SWE-Bench__go__maintenance__bugfix__0000abcd"]
    pred = Prediction("cli__cli-5973", (), _step(["/workspace/x.go:1-3"]))
    scored = score_run("r", {"cli__cli-5973": pred}, gold)
    item = scored.records[0]
    assert item["sample_id"] == "Multi-SWE-Bench__go__maintenance__bugfix__0000abcd"
    assert scored.resolution == "lexical"
    _check(item["record"], "line", 1, 1, (3, 3, 3))
