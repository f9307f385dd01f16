"""The block level with the pinned tree-sitter stack, and checkouts from git and file lists."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import polars as pl
import pytest
from contextbench_fixture import CHECKOUT, DEFS, FILES, check, make_gold, make_step

from arbwb.contextbench.inputs import Gold, Prediction
from arbwb.contextbench.instance import evaluate_instance
from arbwb.contextbench.ranked import score_ranked
from arbwb.contextbench.score import score_run
from arbwb.contextbench.symbols import SymbolFinder
from arbwb.io.checkout import MappingCheckout, count_lines


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
    pred_record = Prediction("I", (), make_step(pred))
    r = evaluate_instance(make_gold(gold), pred_record, CHECKOUT, symbol_finder=_tree_sitter())
    check(r, "symbol", *symbol)


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
    gold = make_gold(["m.rs:4-4", "m.go:5-5", "M.java:3-3"])
    # pred: m.rs:5-9 (39,63) -> impl (its `}` is byte 39), trait T, fn f; m.go:3-4 (11,27) ->
    # type T; M.java:2-2 (10,18) -> class A, constructor A: P = 6, I = {impl, class A} = 2;
    # bytes 25 + 17 + 9 = 51, none shared
    pred = Prediction("I", (), make_step(["m.rs:5-9", "m.go:3-4", "M.java:2-2"]))
    r = evaluate_instance(gold, pred, POLYGLOT, symbol_finder=_tree_sitter())
    check(r, "file", 1, 1, (3, 3, 3))
    check(r, "symbol", 0.4, 1 / 3, (2, 5, 6))
    check(r, "span", 0, 0, (0, 51, 51))
    check(r, "line", 0, 0, (0, 3, 8))
    # by name: `S.m` has no exact match, so its last component `m` matches every definition
    # named m in m.rs: the impl and the fn; the names replace the step's span symbols
    named = Prediction("I", (), make_step(["m.rs:5-9"], symbols={"m.rs": ["S.m"]}))
    r = evaluate_instance(gold, named, POLYGLOT, symbol_finder=_tree_sitter())
    check(r, "symbol", 0.4, 1, (2, 5, 2))


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
    pred = Prediction("I", (), make_step(["/testbed/a.py:5-9"]))
    record = score_run("r", {"I": pred}, {"I": gold}, source=repos_source(tmp_path / "repos"))
    got = record.records[0]["record"]
    check(got, "span", 1, 0.493151, (36, 36, 73))
    check(got, "line", 1, 0.4, (2, 2, 5))
    missing = score_run(
        "r",
        {"I": pred},
        {"I": Gold("I", "I", "x/y", sha, ())},
        source=repos_source(tmp_path / "repos"),
    )
    assert missing.records[0]["record"]["error"] == "checkout_failed"


def test_file_list_checkout_matches_bytes_for_ranked_lists() -> None:
    from arbwb.io.checkout import FileListCheckout

    gold = {"I": make_gold(["a.py:5-6", "pkg/c.py:1-2"])}
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
