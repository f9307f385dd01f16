"""RepoMap baseline: every vector of arb-repomap.md §13 (TV-1 to TV-11), unit vectors of §3-§4,
hash-seed determinism, literal cross-checks of the vectorised parts, the CLI and the index cache.

All expected numbers are copied from the spec (computed there by upstream code); the literal
re-implementations below are written from the spec text, one loop per rule.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from arbwb.cli import main
from arbwb.retrievers import repomap as rm
from arbwb.retrievers import repomap_paths as rp
from arbwb.retrievers.registry import get_method
from arbwb.retrievers.repomap_graph import weight_matrix
from arbwb.retrievers.repomap_index import build_index, load_index, save_index
from arbwb.retrievers.repomap_paths import PY_WHITESPACE

File = tuple[str, str, list[str]]

CORPUS_A: list[File] = [
    (
        "pkg/store.py",
        "class StoreBackend:\n    def fetch_record(self, key):\n        return None",
        ["StoreBackend", "fetch_record"],
    ),
    (
        "pkg/cache.py",
        "from pkg.store import StoreBackend\nfrom . import util\n\ndef lookup_entry(key):\n"
        "    return StoreBackend().fetch_record(key)",
        ["lookup_entry"],
    ),
    ("pkg/__init__.py", "from .cache import lookup_entry", []),
    (
        "tests/test_cache.py",
        "import helpers\nfrom pkg.cache import lookup_entry\n\ndef test_lookup_entry():\n"
        "    assert lookup_entry(1) is None",
        ["test_lookup_entry"],
    ),
    (
        "web/helpers.js",
        "const store = require('../pkg/store.py')\n"
        "export function serializeValue(value) { return value }",
        ["store", "serializeValue"],
    ),
    ("docs/guide.md", "# Guide\nWe use caching here.\nimport pkg.store for details", []),
]
CORPUS_B: list[File] = [
    ("src/parser/lexer.py", "def tokenize_input(raw):\n    return raw.split()", ["tokenize_input"]),
    ("src/render.py", "def render_lexer_output(tokens):\n    pass", ["render_lexer_output"]),
    ("src/util.py", "# the lexer helpers live elsewhere\nVALUE = 1", ["VALUE"]),
    ("README.md", "Lexer docs. See src/parser/lexer.py", []),
]
CORPUS_C: list[File] = [
    ("lib/alpha.py", "import lib.core\nX = 1", []),
    ("lib/beta.py", "import lib.core\nX = 1", []),
    ("lib/core.py", "Y = 2", []),
    ("notes.txt", "nothing here", []),
]
CORPUS_D: list[File] = [
    (
        "src/palette.py",
        "def red_green_blue_gray(): pass\ndef red_green_cyan_gray(): pass\n"
        "def red_blue_cyan_gray(): pass\ndef green_blue_cyan_gray(): pass",
        [
            "red_green_blue_gray",
            "red_green_cyan_gray",
            "red_blue_cyan_gray",
            "green_blue_cyan_gray",
        ],
    ),
    ("src/mixer.py", "def cyan_pink(): pass", ["cyan_pink"]),
    ("src/report.py", "red green blue cyan pink", []),
]
A_PATHS = [f[0] for f in CORPUS_A]
TV3_QUERY = {"changed_file": "pkg/cache.py", "pr_title": "Speed up lookup entry cache"}
TV5_QUERY = {"given_file": "pkg/cache.py", "review_comment": "keep in sync with web/helpers.js"}
TV6_QUERY = {
    "failure_excerpt": (
        'AttributeError: StoreBackend has no fetch_record\n  File "pkg/store.py", line 2'
    ),
    "command": "pytest tests/test_cache.py",
}


def chunk_rows(files: list[File], repo: str = "o/r", commit: str = "c1") -> list[dict[str, Any]]:
    """Chunk rows as §13 writes a corpus: a file row, then one symbol row per symbol."""
    rows = []
    for path, text, symbols in files:
        n_lines = len(text.splitlines())
        rows.append(("file", "", 1, n_lines, text, path))
        rows += [("symbol", s, 1, 1, s, path) for s in symbols]
    return [
        {
            "base_commit": commit,
            "chunk_id": f"{commit}-{i}",
            "end_line": end,
            "kind": kind,
            "path": path,
            "repo": repo,
            "start_line": start,
            "symbol": symbol,
            "text": text,
        }
        for i, (kind, symbol, start, end, text, path) in enumerate(rows)
    ]


def frame(files: list[File]) -> pl.DataFrame:
    return pl.DataFrame(chunk_rows(files)).drop("base_commit", "repo")


def q(query: dict[str, Any]) -> str:
    return json.dumps(query, ensure_ascii=False, sort_keys=True)


def prepared(files: list[File], candidate_filter: Any = "all_files", cap: int = 80) -> rm.Prepared:
    return rm.prepare(build_index(frame(files), cap), candidate_filter)


def edge_arrays(edges: list[tuple[int, int, float]]) -> Any:
    """``add(u, v, w)`` calls as the (u, v, w) arrays :func:`weight_matrix` takes."""
    u, v, w = (list(x) for x in zip(*edges, strict=True)) if edges else ([], [], [])
    return np.array(u, dtype=np.int64), np.array(v, dtype=np.int64), np.array(w, dtype=float)


def edges_of(prep_or_index: Any) -> dict[tuple[str, str], float]:
    index = getattr(prep_or_index, "index", prep_or_index)
    coo = index.graph.tocoo()
    return {
        (index.paths[u], index.paths[v]): float(w)
        for u, v, w in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist(), strict=True)
        if u < v
    }


def ranked_rows(ranking: Any) -> list[tuple[str, float, float, float, float]]:
    return [
        (r["path"], r["score"], r["query"], r["pagerank"], r["affinity"])
        for r in ranking.details["top_file_scores"]
    ]


# --- unit vectors of §3.3, §4.2, §4.3.1, §4.3.2, §4.5 -----------------------------------------


def test_informative_symbols_and_keys() -> None:
    not_informative = ["run", "Run_", "VALUE", "abc", "1234", "v2", "test_", "__init__"]
    assert [rp.symbol_key(s) for s in not_informative] == [""] * len(not_informative)
    informative = {
        "fetch_record": "fetchrecord",
        "get_data": "getdata",
        "a_b_c_d": "abcd",
        "TestCase": "testcase",
        "x86_64": "x8664",
        "été_foo": "tfoo",
    }
    assert {s: rp.symbol_key(s) for s in informative} == informative
    assert rp.symbol_parts("subcommand_required") == {"subcommand", "required"}
    assert rp.symbol_parts("test_lookup_entry") == {"lookup", "entry"}
    assert rp.compact("parseURL") == "parseurl"


def test_python_whitespace_set_for_symbol_strip() -> None:
    assert {c for c in map(chr, range(0x110000)) if c.isspace()} == set(PY_WHITESPACE)


def test_path_index_keys() -> None:
    assert sorted(rp.path_index_keys("src/main/java/com/foo/Bar.java")) == [
        "bar",
        "bar.java",
        "com.foo.bar",
        "com/foo/bar",
        "foo.bar",
        "foo/bar",
        "java.com.foo.bar",
        "java/com/foo/bar",
        "main.java.com.foo.bar",
        "main/java/com/foo/bar",
        "src.main.java.com.foo.bar",
        "src/main/java/com/foo/bar",
    ]
    keys = "a.b.c.d.e.f a/b/c/d/e/f b.c.d.e.f b/c/d/e/f c.d.e.f c/d/e/f d.e.f d/e/f e.f e/f f f.py"
    assert sorted(rp.path_index_keys("a/b/c/d/e/f.py")) == sorted(keys.split(" "))
    assert (rp.suffix(".bashrc"), rp.suffix("foo."), rp.suffix("a.tar.gz")) == ("", "", ".gz")


@pytest.mark.parametrize(
    ("line", "specs"),
    [
        ("from pkg.store import StoreBackend, other", ["pkg.store"]),
        ("from . import util", ["."]),
        ("from ..fixtures import F", ["..fixtures"]),
        ("import os, sys", ["os"]),
        ("import helpers from '../utils/helpers.js'", ["helpers", "../utils/helpers.js"]),
        ("import type { A } from './a'", ["type", "./a"]),
        ("const x = require('./x')", ["./x"]),
        ("x=require('y')", []),
        ("import './styles.css'", ["./styles.css"]),
        ("#include <stdio.h>", ["stdio.h"]),
        ('#include "foo/bar.h"', ["foo/bar.h"]),
        ("use std::io::{self, Read};", ["std::io::"]),
        ("use crate::config::Settings;", ["config::Settings"]),
        ("pub use super::parser;", ["parser"]),
        ("import com.foo.Bar;", ["com.foo.Bar"]),
        ('import "fmt"', ["fmt"]),
        ("# import a", []),
        ("// import a", []),
        (" * import a", []),
        ("We use caching here.", ["caching"]),
        ("from the import of data", ["the"]),
    ],
)
def test_import_specs(line: str, specs: list[str]) -> None:
    assert rp.import_specs(line) == specs


def test_import_spec_limits() -> None:
    assert len(rp.import_specs("import a\n" * 300)) == 200
    assert rp.import_specs("x\n" * 2000 + "import late") == []


RESOLVE_PATHS = [
    "pkg/store.py",
    "pkg/cache.py",
    "pkg/__init__.py",
    "tests/test_cache.py",
    "web/helpers.js",
    "docs/guide.md",
    "src/utils/helpers.js",
    "src/views/app.js",
    "src/views/x.ts",
    "src/views/a/index.ts",
    "src/main/java/com/foo/Bar.java",
    "config/mod.rs",
    "src/config.rs",
    "include/stdio.h",
    "Makefile",
    "a/b/c/d/e/f.py",
]


@pytest.mark.parametrize(
    ("spec", "importer", "targets"),
    [
        ("pkg.store", "tests/test_cache.py", ["pkg/store.py"]),
        (".", "pkg/cache.py", ["pkg/__init__.py"]),
        ("..fixtures", "pkg/sub/x.py", []),
        (".cache", "pkg/__init__.py", ["pkg/cache.py"]),
        ("...", "pkg/cache.py", []),
        ("../utils/helpers.js", "src/views/app.js", ["src/utils/helpers.js"]),
        ("./x", "src/views/app.js", ["src/views/x.ts"]),
        ("./a", "src/views/app.js", ["src/views/a/index.ts"]),
        ("helpers", "any.py", ["src/utils/helpers.js", "web/helpers.js"]),
        ("com.foo.Bar;", "any.py", ["src/main/java/com/foo/Bar.java"]),
        ("config", "src/lib.rs", ["src/config.rs"]),
        ("stdio.h", "any.py", ["include/stdio.h"]),
        ("foo/bar.h", "any.py", []),
        ("std::io::", "any.py", []),
        ("Makefile", "any.py", ["Makefile"]),
        ("c.d.e.f", "any.py", ["a/b/c/d/e/f.py"]),
        ("b/c/d/e/f", "any.py", ["a/b/c/d/e/f.py"]),
        ("../../../../x", "a/b.py", ["src/views/x.ts"]),
    ],
)
def test_resolve_import(spec: str, importer: str, targets: list[str]) -> None:
    index = rp.build_path_index(RESOLVE_PATHS)
    assert rp.resolve_import(spec, importer, index) == targets


def test_resolution_keeps_first_eight_ascending() -> None:
    paths = [f"d{i}/util.py" for i in range(10, 0, -1)]
    got = rp.resolve_import("util", "x.py", rp.build_path_index(paths))
    assert got == sorted(paths)[:8]


@pytest.mark.parametrize(
    ("path", "keys"),
    [
        ("tests/test_cache.py", ["cache"]),
        ("pkg/cache.py", ["cache", "pkg:cache"]),
        ("src/foo/bar_test.go", ["bar", "foo:bar"]),
        ("src/__tests__/Button.test.tsx", ["button", "src:button"]),
        ("src/Button.tsx", ["button", "src:button"]),
        ("lib/footests.py", ["foo", "lib:foo"]),
        ("lib/test_tests_x.py", []),
        ("tests/unit/conftest.py", ["conf", "unit:conf"]),
        ("src/latest.py", []),
        ("pkg/__init__.py", ["init", "pkg:init"]),
        ("web/foo_spec.rb", ["foo", "web:foo"]),
        ("Contest.java", ["con"]),
        ("test/tests/x_test.py", []),
        ("a.py", []),
    ],
)
def test_source_test_keys(path: str, keys: list[str]) -> None:
    assert rp.source_test_keys(path) == keys


def test_node_kinds() -> None:
    kinds = [rp.KIND_NAMES[rp.node_kind(p)] for p in ("docs/tests/test_x.py", "web/foo_spec.rb")]
    assert kinds == ["test", "source"]
    assert rp.KIND_NAMES[rp.node_kind("Contest.java")] == "test"


# --- TV-1: graph construction ---------------------------------------------------------------


def test_tv1_graph_stats_and_idf() -> None:
    index = build_index(frame(CORPUS_A))
    assert index.paths == A_PATHS
    assert index.stats == {
        "edge_count": 14,
        "file_count": 6,
        "source_count": 4,
        "symbol_count": 6,
        "symbol_reference_scan_skipped": False,
        "test_count": 1,
    }
    assert edges_of(index) == {
        ("pkg/store.py", "pkg/cache.py"): 2.5,
        ("pkg/store.py", "web/helpers.js"): 1.5,
        ("pkg/store.py", "docs/guide.md"): 1.5,
        ("pkg/cache.py", "pkg/__init__.py"): 4.0,
        ("pkg/cache.py", "tests/test_cache.py"): 5.5,
        ("pkg/__init__.py", "tests/test_cache.py"): 1.0,
        ("tests/test_cache.py", "web/helpers.js"): 1.5,
    }
    assert index.n_terms.tolist() == [12, 15, 8, 15, 13, 12]
    idf = dict(zip(index.vocab, index.idf.tolist(), strict=True))
    expected = {
        "backend": 1.8472978603872037,
        "cache": 1.5596157879354227,
        "entry": 1.5596157879354227,
        "fetch": 1.8472978603872037,
        "helpers": 1.8472978603872037,
        "import": 1.336472236621213,
        "lookup": 1.5596157879354227,
        "pkg": 1.0,
        "py": 1.1541506798272583,
        "store": 1.336472236621213,
        "test": 2.252762968495368,
        "web": 2.252762968495368,
        "serialize": 2.252762968495368,
    }
    assert {t: idf[t] for t in expected} == expected
    # PT/ST/CT factors: 'store' is a path token of store, a symbol token of helpers
    store = index.vocab.index("store")
    col = index.terms[:, store].toarray().ravel().tolist()
    assert col == [3.0, 1.0, 0.0, 0.0, 2.0, 1.0]


# --- TV-2: PageRank primitive ---------------------------------------------------------------


def _tv2_flow() -> rm.Flow:
    # add(a,b,1.5), add(b,c,2.0), add(a,b,1.0), add(c,c,9.0) (self: ignored); add(a,zz,9.0) is
    # ignored upstream because zz is not a node, so it is never an edge here.
    edges = [(0, 1, 1.5), (1, 2, 2.0), (0, 1, 1.0), (2, 2, 9.0)]
    return rm.flow(weight_matrix(4, [edge_arrays(edges)]))


@pytest.mark.parametrize(
    ("seeds", "iterations", "expected", "total"),
    [
        ([1.0, 0.0, 0.0, 1.0], 1, [0.2875, 0.42499999999999993, 0.0, 0.2875], 0.9999999999999999),
        (
            [1.0, 0.0, 0.0, 1.0],
            2,
            [0.39788194444444447, 0.24437499999999998, 0.16055555555555553, 0.19718750000000002],
            1.0,
        ),
        (
            [1.0, 0.0, 0.0, 1.0],
            24,
            [0.32082321300931405, 0.3964312599723591, 0.15231074396394884, 0.130434783054378],
            1.0,
        ),
        (
            [0.0, 0.0, 0.0, 0.0],
            1,
            [0.20868055555555556, 0.515625, 0.18506944444444445, 0.09062500000000001],
            1.0,
        ),
        (
            [0.0, 0.0, 0.0, 0.0],
            2,
            [0.3002473958333334, 0.3914453125, 0.2515494791666667, 0.056757812500000004],
            1.0,
        ),
        (
            [0.0, 0.0, 0.0, 0.0],
            24,
            [0.26744216790189157, 0.46146124063373817, 0.22347754384532276, 0.047619047619047644],
            1.0000000000000002,
        ),
        ([3.0, -2.0, 0.5, 0.0], 1, [0.1285714285714286, 0.85, 0.021428571428571432, 0.0], 1.0),
        ([3.0, -2.0, 0.5, 0.0], 2, [0.5299603174603175, 0.1275, 0.3425396825396825, 0.0], 1.0),
        (
            [3.0, -2.0, 0.5, 0.0],
            24,
            [0.35070290300152107, 0.45016334602583363, 0.19913375097264543, 0.0],
            1.0000000000000002,
        ),
    ],
)
def test_tv2_pagerank_primitive(
    seeds: list[float], iterations: int, expected: list[float], total: float
) -> None:
    pr = rm.personalized_pagerank(_tv2_flow(), np.array(seeds), iterations).tolist()
    assert pr == expected
    running = 0.0
    for value in pr:  # sequential a -> d
        running += value
    assert running == total


# --- TV-3 to TV-6: per-node components and rankings -----------------------------------------


def check_components(
    prep: rm.Prepared, query: dict[str, Any], task: str, given: list[str], table: list[Any]
) -> None:
    parts = rm.components(prep, q(query), query, task, given)
    seeds = rm.seed_scores(parts.raw_q, parts.aff)
    got = list(
        zip(
            parts.raw_q.tolist(), parts.aff.tolist(), seeds.tolist(), parts.pr.tolist(), strict=True
        )
    )
    assert got == [tuple(row) for row in table]


def test_tv3_code2test() -> None:
    prep = prepared(CORPUS_A)
    assert rm.mentioned(prep, TV3_QUERY, q(TV3_QUERY)) == [1]
    check_components(
        prep,
        TV3_QUERY,
        "code2test",
        [],
        [
            (1.8655492123099244, 1.0, 2.8655492123099244, 0.13905932062169465),
            (12.29617794771998, 0.4, 12.696177947719981, 0.3636339117419418),
            (4.3212506988487585, 1.0, 5.3212506988487585, 0.15590825874875325),
            (4.808410145052308, 2.0, 6.808410145052308, 0.23484035727559213),
            (0.5974539023994454, 0.0, 0.5974539023994454, 0.07280411694609162),
            (0.2886751345948129, 0.0, 0.2886751345948129, 0.0337540346659266),
        ],
    )
    ranking = rm.rank_query(prep, q(TV3_QUERY), task="code2test")
    assert ranked_rows(ranking) == [
        ("pkg/cache.py", 0.92, 1.0, 1.0, 0.2),
        ("tests/test_cache.py", 0.5156357928826862, 0.39104916710675186, 0.64581533705319, 1.0),
        ("pkg/__init__.py", 0.3856174087330641, 0.35143039708936763, 0.42875060249990066, 0.5),
        ("pkg/store.py", 0.2442205052575181, 0.15171781184704178, 0.38241571022776377, 0.5),
        ("web/helpers.js", 0.08163574893795536, 0.04858858622082875, 0.20021267157766667, 0.0),
        ("docs/guide.md", 0.03846598715361905, 0.023476818229386517, 0.09282422121807124, 0.0),
    ]
    assert ranking.files == [r[0] for r in ranked_rows(ranking)]
    # worked rawQ of pkg/cache.py, literally as §13.3 spells it
    idf_cache, idf_py = 1.5596157879354227, 1.1541506798272583
    score = 0.0
    score += 1.0 * (1.0 * 3.0)
    score += (1.0 + math.log(2)) * (idf_cache * 3.0)
    score += 1.0 * (idf_py * 3.0)
    score += 1.0 * (idf_cache * 2.0)
    score += 1.0 * (idf_cache * 2.0)
    score = (score + 20.0) + 7.0
    assert score / math.sqrt(15) == 12.29617794771998


def test_tv4_query_term_matching_without_edges() -> None:
    prep = prepared(CORPUS_B)
    assert prep.index.stats == {
        "edge_count": 0,
        "file_count": 4,
        "source_count": 3,
        "symbol_count": 2,
        "symbol_reference_scan_skipped": False,
        "test_count": 0,
    }
    assert prep.index.n_terms.tolist() == [10, 8, 10, 8]
    idf = dict(zip(prep.index.vocab, prep.index.idf.tolist(), strict=True))
    assert (idf["lexer"], idf["src"], idf["py"], idf["parser"], idf["def"], idf["value"]) == (
        1.0,
        1.0,
        1.0,
        1.5108256237659907,
        1.5108256237659907,
        1.916290731874155,
    )
    query = {"log": "lexer lexer failure in src/parser/lexer.py"}
    check_components(
        prep,
        query,
        "testlog2code",
        [],
        [
            (13.859729741432195, 0.4, 14.259729741432196, 0.6363327345013959),
            (3.605263323958283, 0.0, 3.605263323958283, 0.16088292773643764),
            (2.561006071882028, 0.0, 2.561006071882028, 0.11428351212438148),
            (1.9832357932635316, 0.0, 1.9832357932635316, 0.08850082563778504),
        ],
    )
    assert ranked_rows(rm.rank_query(prep, q(query), task="testlog2code")) == [
        ("src/parser/lexer.py", 1.0, 1.0, 1.0, 1.0),
        ("src/render.py", 0.23228837942432734, 0.26012508116812194, 0.2528283066601923, 0.0),
        ("src/util.py", 0.16500651871392186, 0.1847803759279787, 0.17959709744294283, 0.0),
        ("README.md", 0.1277805771833926, 0.1430933957777588, 0.13907947971139759, 0.0),
    ]


def test_tv5_comment2context_affinity() -> None:
    prep = prepared(CORPUS_A)
    given = ["pkg/cache.py"]
    assert rm.mentioned(prep, TV5_QUERY, q(TV5_QUERY)) == [1, 4]
    check_components(
        prep,
        TV5_QUERY,
        "comment2context",
        given,
        [
            (1.8655492123099244, 2.8, 4.665549212309925, 0.16074275875389776),
            (9.848041159443031, -0.6, 9.848041159443031, 0.3203059148545867),
            (2.8362292799525672, 1.8, 4.636229279952567, 0.1321778540124788),
            (2.8372436133596417, 2.8, 5.637243613359642, 0.22234824587769314),
            (13.371775461924813, 0.4, 13.771775461924813, 0.12598425143369413),
            (0.2886751345948129, 0.0, 0.2886751345948129, 0.03844097506764945),
        ],
    )
    ranking = rm.rank_query(prep, q(TV5_QUERY), task="comment2context", given=given)
    assert ranked_rows(ranking) == [
        ("web/helpers.js", 0.7626169076785125, 1.0, 0.39332477357119294, 0.14285714285714288),
        ("pkg/cache.py", 0.7072832325397954, 0.7364796984128722, 1.0, -0.2142857142857143),
        ("tests/test_cache.py", 0.41146164871957025, 0.21218151781253677, 0.6941746485656856, 1.0),
        ("pkg/store.py", 0.3161444096630941, 0.1395139499329722, 0.5018413688266486, 1.0),
        (
            "pkg/__init__.py",
            0.30531971832534216,
            0.21210566151282828,
            0.4126612962251579,
            0.6428571428571429,
        ),
        ("docs/guide.md", 0.04403578407496453, 0.021588392313107187, 0.12001331628577944, 0.0),
    ]


TV6_TABLE = [
    (15.51188926848341, 0.9, 16.41188926848341, 0.18480280247266367),
    (7.3189124555699205, 2.5, 9.81891245556992, 0.3195561428127942),
    (3.6847534819703904, 1.5, 5.18475348197039, 0.12970075724981278),
    (13.441283225301824, 0.2, 13.641283225301823, 0.22555267661895137),
    (2.0745330732238743, 2.5, 4.574533073223874, 0.09197059965452539),
    (0.9419019884040266, 1.0, 1.9419019884040267, 0.048417021191252546),
]


def test_tv6_trace2code_with_other_weights() -> None:
    prep = prepared(CORPUS_A)
    assert rm.mentioned(prep, TV6_QUERY, q(TV6_QUERY)) == [0, 3]
    check_components(prep, TV6_QUERY, "trace2code", [], TV6_TABLE)
    weights = rm.Weights(0.5, 0.3, 0.2)
    ranking = rm.rank_query(prep, q(TV6_QUERY), task="trace2code", weights=weights)
    assert ranked_rows(ranking) == [
        ("pkg/store.py", 0.7454932718044417, 1.0, 0.5783109060148057, 0.36),
        ("pkg/cache.py", 0.7359129932174111, 0.47182598643482243, 1.0, 1.0),
        ("tests/test_cache.py", 0.6610067935560551, 0.8665149030306334, 0.7058311401357947, 0.08),
        ("pkg/__init__.py", 0.3605352638337278, 0.2375438232051438, 0.4058778407705198, 0.6),
        ("web/helpers.js", 0.3532113282218144, 0.13373825955803129, 0.2878073281426625, 1.0),
        ("docs/guide.md", 0.15581465150069268, 0.06072129397659863, 0.15151334837464453, 0.4),
    ]


# --- TV-7: no matching term, exact ties -----------------------------------------------------

TV7_RANKING = [
    ("lib/core.py", 0.25, 0.0, 1.0, 0.0),
    ("lib/alpha.py", 0.13297967102096697, 0.0, 0.5319186840838679, 0.0),
    ("lib/beta.py", 0.13297967102096697, 0.0, 0.5319186840838679, 0.0),
    ("notes.txt", 0.02579796710209671, 0.0, 0.10319186840838684, 0.0),
]


@pytest.mark.parametrize("query", [{"zz": "qqqq"}, {}])
def test_tv7_no_matching_term_gives_tie_ordered_ranking(query: dict[str, Any]) -> None:
    prep = prepared(CORPUS_C)
    assert prep.index.stats == {
        "edge_count": 4,
        "file_count": 4,
        "source_count": 3,
        "symbol_count": 0,
        "symbol_reference_scan_skipped": False,
        "test_count": 0,
    }
    assert edges_of(prep) == {
        ("lib/alpha.py", "lib/core.py"): 1.5,
        ("lib/beta.py", "lib/core.py"): 1.5,
    }
    check_components(
        prep,
        query,
        "testlog2code",
        [],
        [
            (0.0, 0.0, 1.0, 0.2454598558736071),
            (0.0, 0.0, 1.0, 0.2454598558736071),
            (0.0, 0.0, 1.0, 0.46146124063373817),
            (0.0, 0.0, 1.0, 0.047619047619047644),
        ],
    )
    ranking = rm.rank_query(prep, q(query), task="testlog2code")
    assert ranked_rows(ranking) == TV7_RANKING
    assert ranking.details["query_terms_matched"] == 0


def test_no_matching_term_is_counted_by_the_method() -> None:
    method = rm.method()
    prep = method.build_index(frame(CORPUS_C))
    assert method.rank_sample(prep, q({"zz": "qqqq"})).files == [r[0] for r in TV7_RANKING]
    method.rank_sample(prep, q({"x": "lib core"}))
    assert method.stats()["no_matching_term_samples"] == 1


# --- TV-8: candidate filters ----------------------------------------------------------------


def test_tv8_filters_change_only_the_ranked_set() -> None:
    index = build_index(frame(CORPUS_A))
    full = [
        ("pkg/store.py", 0.8305777265037015, 1.0, 0.5783109060148057, 0.36),
        ("tests/test_cache.py", 0.7476924720038605, 0.8665149030306334, 0.7058311401357947, 0.08),
        ("pkg/cache.py", 0.6566868911826346, 0.47182598643482243, 1.0, 1.0),
        ("pkg/__init__.py", 0.3158729452759734, 0.2375438232051438, 0.4058778407705198, 0.6),
        ("web/helpers.js", 0.258881700748386, 0.13373825955803129, 0.2878073281426625, 1.0),
        ("docs/guide.md", 0.11734717817845025, 0.06072129397659863, 0.15151334837464453, 0.4),
    ]
    expected = {"all_files": full, "code_only": full[:5], "tests_only": [full[1]]}
    for name, rows in expected.items():
        prep = rm.prepare(index, name)  # type: ignore[arg-type]
        ranking = rm.rank_query(prep, q(TV6_QUERY), task="trace2code")
        assert ranked_rows(ranking) == rows, name


# --- TV-9: the 4·cap window and the cap -----------------------------------------------------


@pytest.mark.parametrize(
    ("cap", "edges"),
    [
        (1, {}),
        (2, {("src/mixer.py", "src/report.py"): 1.0}),
        (80, {("src/mixer.py", "src/report.py"): 1.0}),
    ],
)
def test_tv9_window_and_cap(cap: int, edges: dict[tuple[str, str], float]) -> None:
    index = build_index(frame(CORPUS_D), cap)
    assert edges_of(index) == edges
    assert index.stats["edge_count"] == 2 * len(edges)


# --- TV-10: evaluator run through `arbwb rank` ----------------------------------------------


def write_release(root: Path, files: list[File], samples: list[dict[str, Any]]) -> Path:
    """A release root: benchmark/R/samples.jsonl and corpus/R with one snapshot (o/r@c1)."""
    data = root / "data"
    bench = data / "benchmark" / "R"
    bench.mkdir(parents=True)
    (bench / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    corpus = data / "corpus" / "R"
    (corpus / "o__r").mkdir(parents=True)
    chunk_file = corpus / "o__r" / "c1.chunks.jsonl"
    chunk_file.write_text(
        "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in chunk_rows(files))
    )
    row = {"repo": "o/r", "base_commit": "c1", "status": "ok", "chunks_path": str(chunk_file)}
    (corpus / "corpus_manifest.jsonl").write_text(json.dumps(row) + "\n")
    return data


TV10_SAMPLES: list[dict[str, Any]] = [
    {
        "id": "s1",
        "task_type": "code2test",
        "repo": "o/r",
        "base_commit": "c1",
        "query": TV3_QUERY,
        "gold": {
            "related_tests": ["tests/test_cache.py"],
            "fix_commit": "abc123",
            "hard_negative_files": ["web/helpers.js"],
        },
        "gold_spans": [
            {"path": "tests/test_cache.py", "start_line": 4, "end_line": 5, "reason": "test"}
        ],
        "gold_blocks": [
            {
                "path": "tests/test_cache.py",
                "start_line": 4,
                "end_line": 5,
                "kind": "symbol",
                "symbol": "test_lookup_entry",
            }
        ],
    },
    {
        "id": "s2",
        "task_type": "code2test",
        "repo": "o/r",
        "base_commit": "c1",
        "query": {"pr_title": "x"},
        "gold": {"related_tests": []},
    },
    {
        "id": "s3",
        "task_type": "trace2code",
        "repo": "o/r",
        "base_commit": "c1",
        "query": {"text": "reverted abc123"},
        "gold": {"root_cause_files": ["pkg/store.py"], "fix_commit": "abc123"},
    },
    {
        "id": "s4",
        "task_type": "trace2code",
        "repo": "o/r",
        "base_commit": "zzz",
        "query": {"text": "boom"},
        "gold": {"root_cause_files": ["pkg/store.py"]},
    },
]
TV10_METRICS = {
    "F0.5@10": 0.19999999999999996,
    "F0.5@20": 0.19999999999999996,
    "F0.5@5": 0.23809523809523808,
    "MRR": 0.5,
    "Precision@10": 0.16666666666666666,
    "Precision@20": 0.16666666666666666,
    "Precision@5": 0.2,
    "Recall@10": 1.0,
    "Recall@20": 1.0,
    "Recall@5": 1.0,
    "context_efficiency@8k": 0.22633744855967078,
    "context_pollution_tokens@8k": 376.0,
    "coverage_auc@20": 0.95,
    "gold_coverage@8k": 1.0,
    "gold_token_ratio@8k": 0.22633744855967078,
    "hard_negative_hits@10": 1.0,
    "hard_negative_hits@20": 1.0,
    "hard_negative_hits@5": 1.0,
    "irrelevant_files@10": 5.0,
    "irrelevant_files@20": 5.0,
    "irrelevant_files@5": 4.0,
    "redundancy@8k": 0.0,
}


def rank_cli(data: Path, out: Path, *extra: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    assert (
        main(["rank", "--method", "repomap", "--data", str(data), "--out", str(out), *extra]) == 0
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    summary = json.loads(
        out.with_name(out.name.replace("_details.jsonl", "_summary.json")).read_text()
    )
    return rows, summary


def test_tv10_evaluator_run_via_rank_cli(tmp_path: Path) -> None:
    data = write_release(tmp_path, CORPUS_A, TV10_SAMPLES)
    rows, summary = rank_cli(
        data, tmp_path / "out" / "repomap_details.jsonl", "--cache-dir", str(tmp_path / "c")
    )
    by_id = {r["sample_id"]: r for r in rows}
    s1 = by_id["s1"]
    assert s1["gold_ranks"] == {"tests/test_cache.py": 2}
    assert s1["hard_negative_ranks"] == {"web/helpers.js": 5}
    assert s1["top_files"] == [
        "pkg/cache.py",
        "tests/test_cache.py",
        "pkg/__init__.py",
        "pkg/store.py",
        "web/helpers.js",
        "docs/guide.md",
    ]
    assert s1["top_file_scores"][1] == {
        "affinity": 1.0,
        "pagerank": 0.64581533705319,
        "path": "tests/test_cache.py",
        "query": 0.39104916710675186,
        "score": 0.5156357928826862,
    }
    assert s1["repo_map_stats"] == {
        "edge_count": 14,
        "file_count": 6,
        "source_count": 4,
        "symbol_count": 6,
        "symbol_reference_scan_skipped": False,
        "test_count": 1,
    }
    assert {k: s1["metrics"][k] for k in TV10_METRICS} == TV10_METRICS
    assert s1["line_metrics"] == {
        "line_f0.5@8k": 0.0,
        "line_f1@8k": 0.0,
        "line_gold_count": 2.0,
        "line_overlap_count": 0.0,
        "line_precision@8k": 0.0,
        "line_predicted_count": 0.0,
        "line_recall@8k": 0.0,
        "line_samples": 1,
    }
    assert s1["block_metrics"] == {
        "block_f0.5@8k": 0.0,
        "block_f1@8k": 0.0,
        "block_precision@8k": 0.0,
        "block_recall@8k": 0.0,
        "block_samples": 1,
        "gold_blocks": 1.0,
        "matched_blocks": 0.0,
        "predicted_blocks": 0.0,
    }
    assert (s1["ranker"], s1["candidate_filter"], s1["query_provenance"]) == (
        "repomap",
        "all_files",
        "pr_summary",
    )
    # upstream skips s4 (missing_corpus); arbwb records it as a counted failure row instead
    assert by_id["s4"]["status"] == "error" and by_id["s4"]["error"] == "missing_corpus"
    assert summary["skipped"] == {"no_gold": 1, "query_leakage": 1}
    assert (summary["mode"], summary["model"]) == ("repomap", "aider-style-repomap")
    assert summary["weights"] == {"affinity": 0.1, "pagerank": 0.25, "query": 0.65}
    assert summary["metrics"]["code2test"]["MRR"] == 0.5


# --- TV-11: real sample (clap), only with ../shared and a locally built clap snapshot ----------


@pytest.mark.shared
def test_tv11_real_clap_sample(shared_dir: Path) -> None:
    """Canonical-order vector of §13.11; needs ``ARBWB_CLAP_CHUNKS`` = the snapshot's chunk file
    (clap-rs/clap @ 68b5ff9, 10,142 rows, e.g. from ``arbwb snapshot build``)."""
    chunk_file = Path(os.environ.get("ARBWB_CLAP_CHUNKS", "/nonexistent"))
    if not chunk_file.is_file():
        pytest.skip("set ARBWB_CLAP_CHUNKS to the clap 68b5ff9 chunk file (not shipped in shared)")
    sample = next(
        json.loads(line)
        for line in (shared_dir / "benchmark" / "v0_1" / "samples.jsonl").read_text().splitlines()
        if json.loads(line)["id"] == "3cfa329da72d3c0763b18e77"
    )
    chunks = pl.read_ndjson(chunk_file)
    assert chunks.height == 10142
    prep = rm.prepare(build_index(chunks))
    assert prep.index.stats == {
        "edge_count": 11516,
        "file_count": 607,
        "source_count": 123,
        "symbol_count": 3913,
        "symbol_reference_scan_skipped": False,
        "test_count": 185,
    }
    ranking = rm.rank_query(prep, q(sample["query"]), query=sample["query"], task="code2test")
    top = ranked_rows(ranking)[:10]
    assert top[0] == (
        "clap_builder/src/parser/features/mod.rs",
        0.6687086307529105,
        1.0,
        0.07483452301164202,
        0.0,
    )
    assert top[5] == (
        "tests/builder/help.rs",
        0.5483715008819368,
        0.5377880458337625,
        0.5952370843599644,
        0.5,
    )
    assert [r[1] for r in top] == [
        0.6687086307529105,
        0.610669782075637,
        0.5928638697793192,
        0.5629219372195516,
        0.5494962066058383,
        0.5483715008819368,
        0.5471626282089964,
        0.5460120723386304,
        0.5310686931148569,
        0.522908051833322,
    ]
    assert ranking.files.index("tests/builder/help.rs") + 1 == 6


# --- determinism, literal cross-checks ------------------------------------------------------

# A file that fully matches six keys, each defined by its own file, with cap 2: upstream's set
# order picks which two definers get linked; the canonical order takes keys m desc, key asc.
SEED_CASE = [
    *[
        (f"src/def_{name}.py", f"def {name}_widget(): pass", [f"{name}_widget"])
        for name in ("zeta", "alpha", "mango", "delta", "kiwi", "omega")
    ],
    ("src/user.py", "zeta alpha mango delta kiwi omega widget", []),
]
SEED_SCRIPT = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {tests!r})
    from test_retrievers_repomap import SEED_CASE, edges_of, frame, q
    from arbwb.retrievers import repomap as rm
    from arbwb.retrievers.repomap_index import build_index
    prep = rm.prepare(build_index(frame(SEED_CASE), 2))
    ranking = rm.rank_query(prep, q({{"text": "widget in src/user.py"}}), task="trace2code")
    print(json.dumps([sorted(edges_of(prep).items()), ranking.details["top_file_scores"]]))
    """
)


def test_identical_under_any_hash_seed() -> None:
    script = SEED_SCRIPT.format(tests=str(Path(__file__).parent))
    outputs = []
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, check=True, capture_output=True, text=True
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    edges = dict((tuple(k), v) for k, v in json.loads(outputs[0])[0])
    # canonical: all six keys match 2 parts; keys ascending -> alphawidget, deltawidget first
    assert edges == {
        ("src/def_alpha.py", "src/user.py"): 1.0,
        ("src/def_delta.py", "src/user.py"): 1.0,
    }


def literal_pagerank(
    n: int, weights: dict[tuple[int, int], float], seeds: list[float], iterations: int
) -> list[float]:
    """§7 read literally, one Python float operation at a time."""
    nbrs: dict[int, dict[int, float]] = {u: {} for u in range(n)}
    for (u, v), w in weights.items():
        nbrs[u][v] = w
    out = {}
    for u in range(n):
        total = 0.0
        for w in nbrs[u].values():
            total = total + w
        out[u] = total
    z = 0.0
    for s in seeds:
        z = z + max(0.0, s)
    base = [max(0.0, s) / z for s in seeds] if z > 0 else [1.0 / n] * n
    r = list(base)
    for _ in range(iterations):
        dangling = 0.0
        for u in range(n):
            if out[u] == 0:
                dangling = dangling + r[u]
        nxt = [(1.0 - 0.85) * base[v] for v in range(n)]
        if dangling != 0:
            nxt = [nxt[v] + (0.85 * dangling) * base[v] for v in range(n)]
        for u in range(n):
            if out[u] == 0:
                continue
            share = (0.85 * r[u]) / out[u]
            for v, w in nbrs[u].items():
                nxt[v] = nxt[v] + share * w
        r = nxt
    return r


def test_pagerank_matches_literal_loop_on_random_graphs() -> None:
    rng = random.Random(7)
    for _ in range(40):
        n = rng.randint(1, 30)
        edges = [
            (rng.randrange(n), rng.randrange(n), rng.choice([1.0, 1.5, 2.0]))
            for _ in range(rng.randint(0, 4 * n))
        ]
        matrix = weight_matrix(n, [edge_arrays(edges)])
        coo = matrix.tocoo()
        weights = {
            (u, v): w
            for u, v, w in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist(), strict=True)
        }
        seeds = [rng.choice([0.0, rng.random() * 10, -1.0]) for _ in range(n)]
        got = rm.personalized_pagerank(rm.flow(matrix), np.array(seeds), 24).tolist()
        assert got == literal_pagerank(n, weights, seeds, 24)


def literal_reference_edges(files: list[File], cap: int) -> dict[tuple[str, str], float]:
    """§4.4 symbol-reference edges literally (canonical order), as unordered pairs."""
    index = build_index(frame(files), cap)  # for TS only
    ts = {
        p: {index.vocab[t] for t in index.terms.tocsr()[i].indices.tolist()}
        for i, p in enumerate(index.paths)
    }
    kinds = {p: rp.node_kind(p) for p in index.paths}
    searchable = [p for p in index.paths if kinds[p] != rp.KIND_OTHER]
    symbols: dict[str, set[str]] = {p: set() for p in index.paths}
    for path, _, syms in files:
        symbols[path].update(s.strip() for s in syms if rp.symbol_key(s.strip()))
    definers: dict[str, set[str]] = {}
    for p in searchable:
        for s in symbols[p]:
            definers.setdefault(rp.symbol_key(s), set()).add(p)
    union: dict[str, set[str]] = {}
    last: dict[str, frozenset[str]] = {}
    for p in searchable:
        for s in sorted(symbols[p]):
            parts = rp.symbol_parts(s)
            key = rp.symbol_key(s)
            if (
                len(definers[key]) > 8
                or not parts
                or (len(parts) == 1 and len(next(iter(parts))) < 8)
            ):
                continue
            union.setdefault(key, set()).update(parts)
            last[key] = parts
    pairs: Counter[tuple[str, str]] = Counter()
    for f in searchable:
        if not ts[f]:
            continue
        matched = {k: len(ts[f] & u) for k, u in union.items() if ts[f] & u}
        window = sorted(matched, key=lambda k: (-matched[k], k))[: 4 * cap] if cap > 0 else []
        refs, linked = 0, set()
        for k in window:
            if matched[k] < len(last[k]):
                continue
            for t in sorted(definers[k]):
                if t == f or t in linked:
                    continue
                pairs[tuple(sorted((f, t)))] += 1  # type: ignore[index]
                linked.add(t)
                refs += 1
                if refs >= cap:
                    break
            if refs >= cap:
                break
    return {k: float(v) for k, v in pairs.items()}


def random_corpus(rng: random.Random) -> list[File]:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golfer", "hotel", "indigo"]
    dirs = ["src", "lib", "tests", "docs"]
    files: list[File] = []
    for i in range(rng.randint(2, 9)):
        folder = rng.choice(dirs)
        ext = rng.choice([".py", ".rs", ".md"])
        path = f"{folder}/{'test_' if folder == 'tests' else ''}m{i}{ext}"
        symbols = ["_".join(rng.sample(words, rng.randint(1, 3))) for _ in range(rng.randint(0, 4))]
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 12)))
        files.append((path, text, symbols))
    return files


def test_reference_edges_match_literal_scan_on_random_corpora() -> None:
    rng = random.Random(3)
    for _ in range(60):
        files = random_corpus(rng)
        cap = rng.choice([1, 2, 3, 80])
        index = build_index(frame(files), cap)
        # the graph also has import/source-test edges: compare with those of a cap-0 build
        others = edges_of(build_index(frame(files), 0))
        refs = literal_reference_edges(files, cap)
        expected = dict(others)
        for pair, w in refs.items():
            expected[pair] = expected.get(pair, 0.0) + w
        got = {tuple(sorted(k)): v for k, v in edges_of(index).items()}
        assert got == {tuple(sorted(k)): v for k, v in expected.items()}


# --- CLI options and the index cache --------------------------------------------------------


def test_rank_cli_filters_weights_and_option_checks(tmp_path: Path) -> None:
    sample = dict(TV10_SAMPLES[0]) | {"query": TV6_QUERY, "task_type": "trace2code"}
    sample["gold"] = {"root_cause_files": ["pkg/store.py"]}
    data = write_release(tmp_path, CORPUS_A, [sample])
    cache = str(tmp_path / "cache")
    rows, _ = rank_cli(
        data, tmp_path / "t_details.jsonl", "--candidate-filter", "tests_only", "--cache-dir", cache
    )
    assert rows[0]["top_files"] == ["tests/test_cache.py"]
    assert rows[0]["gold_ranks"] == {"pkg/store.py": None}
    assert rows[0]["metrics"]["context_pollution_tokens@8k"] == 110.0
    rows, summary = rank_cli(
        data,
        tmp_path / "w_details.jsonl",
        "--query-weight",
        "0.5",
        "--pagerank-weight",
        "0.3",
        "--affinity-weight",
        "0.2",
        "--cache-dir",
        cache,
    )
    assert rows[0]["top_file_scores"][0]["score"] == 0.7454932718044417  # TV-6
    assert summary["weights"] == {"affinity": 0.2, "pagerank": 0.3, "query": 0.5}
    assert (summary["index_cache_hits"], summary["index_builds"]) == (1, 0)
    bad = ["rank", "--method", "lexical", "--data", str(data), "--out", str(tmp_path / "x.jsonl")]
    assert main([*bad, "--query-weight", "0.3"]) != 0


def test_index_cache_reused_and_never_stale(tmp_path: Path) -> None:
    sample = dict(TV10_SAMPLES[0])
    data = write_release(tmp_path, CORPUS_A, [sample])
    cache = tmp_path / "cache"
    first, s1 = rank_cli(data, tmp_path / "a_details.jsonl", "--cache-dir", str(cache))
    assert (s1["index_cache_hits"], s1["index_builds"]) == (0, 1)
    assert len(list(cache.glob("*.npz"))) == 1
    second, s2 = rank_cli(data, tmp_path / "b_details.jsonl", "--cache-dir", str(cache))
    assert (s2["index_cache_hits"], s2["index_builds"]) == (1, 0)
    assert second == first
    # rewrite the chunk file: drop docs/guide.md; the cached index must not be served
    chunk_file = data / "corpus" / "R" / "o__r" / "c1.chunks.jsonl"
    chunk_file.write_text(
        "".join(json.dumps(r, sort_keys=True) + "\n" for r in chunk_rows(CORPUS_A[:5]))
    )
    third, s3 = rank_cli(data, tmp_path / "c_details.jsonl", "--cache-dir", str(cache))
    assert (s3["index_cache_hits"], s3["index_builds"]) == (0, 1)
    assert "docs/guide.md" not in third[0]["top_files"]
    assert third[0]["repo_map_stats"]["file_count"] == 5


def test_saved_index_round_trips_exactly(tmp_path: Path) -> None:
    index = build_index(frame(CORPUS_A))
    target = tmp_path / "i.npz"
    save_index(index, target)
    loaded = load_index(target)
    assert loaded is not None
    assert (loaded.paths, loaded.vocab, loaded.stats) == (index.paths, index.vocab, index.stats)
    assert loaded.chunk_chars.tolist() == index.chunk_chars.tolist()
    assert loaded.idf.tobytes() == index.idf.tobytes()
    assert (loaded.graph != index.graph).nnz == 0 and (loaded.terms != index.terms).nnz == 0
    target.write_bytes(b"not an npz")
    assert load_index(target) is None
    assert load_index(tmp_path / "missing.npz") is None


def test_registered_like_the_other_methods() -> None:
    method = get_method("repomap")
    assert (method.name, method.ranker, method.model) == (
        "repomap",
        "repomap",
        "aider-style-repomap",
    )
