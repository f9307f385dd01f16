"""The corpus builder against spec §3 (TV3, TV4, TV20) and hand-checked edge cases."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbwb.cli import main
from arbwb.io.corpus import open_corpus
from arbwb.release.snapshot import (
    SYMBOL_PATTERNS,
    chunks_for_file,
    extract_symbols,
    is_candidate_path,
    list_tree,
    stable_id,
    symbol_name,
    truncate,
)

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True)
    return out.stdout.decode().strip()


def make_repo(root: Path, files: dict[str, bytes], links: dict[str, str]) -> str:
    """A one-commit repository holding ``files`` and symlinks; returns the commit sha."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "config", "core.autocrlf", "false")
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    for name, target in links.items():
        os.symlink(target, root / name)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "snapshot")
    return git(root, "rev-parse", "HEAD")


def read_rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def test_tv20_stable_id() -> None:
    assert stable_id("o/r", "abc", "src/auth.py", "file", "", 1, 9) == "97f7a164c31980df9610b66b"


def test_tv3_truncate() -> None:
    assert truncate("  a\r\nb\rc  ", 8000) == "a\nb\nc"
    long = "x" * 7999 + "  y" + "z" * 10  # TV3 says 8,013 chars; the parts add up to 8,012
    cut = truncate(long, 8000)
    assert cut == "x" * 7999 + "\n...[truncated]"
    assert len(cut) == 8014
    assert truncate("ab   cd", 4) == "ab\n...[truncated]"
    assert truncate(None) == ""
    assert truncate("") == ""


TV4_CONTENT = (
    "import os\n\nclass Auth:\n    def refresh(self):\n        return 1\n\n"
    "const x = 5\nfunc (s *S) Serve(w int) {\n}\n"
)


def test_tv4_chunks_for_file() -> None:
    rows = chunks_for_file("o/r", "abc", "src/auth.py", TV4_CONTENT)
    got = [(r["kind"], r["symbol"], r["start_line"], r["end_line"], r["text"]) for r in rows]
    assert got == [
        ("file", "", 1, 9, TV4_CONTENT[:-1]),
        ("symbol", "Auth", 3, 3, "class Auth:"),
        ("symbol", "refresh", 4, 6, "def refresh(self):\n        return 1"),
        ("symbol", "x", 7, 7, "const x = 5"),
        ("symbol", "Serve", 8, 9, "func (s *S) Serve(w int) {\n}"),
    ]
    assert rows[0]["chunk_id"] == "97f7a164c31980df9610b66b"
    assert rows[1]["chunk_id"] == stable_id("o/r", "abc", "src/auth.py", "symbol", "Auth", 3, 3)
    assert list(json.loads(json.dumps(rows[0], sort_keys=True))) == [
        "base_commit",
        "chunk_id",
        "end_line",
        "kind",
        "path",
        "repo",
        "start_line",
        "symbol",
        "text",
    ]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            [
                "pub(crate) async fn run(x: u8) {}",
                "public static void main(String[] a) {",
                "export const handler = async () => {}",
                "  def   inner(",
            ],
            [("run", 1, 1), ("main", 2, 2), ("handler", 3, 3), ("inner", 4, 4)],
        ),
        (
            [
                "def outer():",
                "    return helper(1)",
                "    if check(x):",
                "        pass",
                "x = call(1)",
                "    print(2)",
                "    await fetch(url)",
                " new Foo(1)",
                "export default function () {}",
            ],
            [
                ("outer", 1, 1),
                ("helper", 2, 2),
                ("check", 3, 5),
                ("print", 6, 6),
                ("fetch", 7, 7),
                ("Foo", 8, 9),
            ],
        ),
        ("class A\r\nx\rdef b():\n".splitlines(), [("A", 1, 2), ("b", 3, 3)]),
        (["    self.x(1)", "    x = foo(1)", "  print(2)"], []),
    ],
)
def test_tv4_extract_symbols(lines: list[str], expected: list[tuple[str, int, int]]) -> None:
    assert extract_symbols(lines) == expected
    assert extract_symbols(lines, {}) == expected  # the memo never changes a result


def test_tv5_builder_candidates() -> None:
    keep = {"src/a.py", "node_modules2/a.js", "README.md", "vendored/x.go"}
    drop = {"dist/x.js", "yarn.lock", "a/b.min.js", "img/logo.PNG", "rebuild/x.py", "x.pb.go"}
    assert all(is_candidate_path(p) for p in keep)
    assert not any(is_candidate_path(p) for p in drop | {"go.sum"})


@pytest.fixture(scope="module")
def tv4_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("tv4") / "work"
    files = {
        "a-b": b"x",
        "rebuild/x.py": b"def r():\n    pass\n",
        "src/a.py": b"def a():\n    return 1\n",
        "src/bin.dat": b"abc\x00def",
        "src/caf\u00e9.py": b"def c():\n    pass\n",
        "src/crlf.txt": b"hello\r\nworld\r\n",
        "src/empty.py": b"",
    }
    commit = make_repo(root, files, {"link.py": "src/a.py"})
    return root, commit


def test_tv4_whole_commit_build(tv4_repo: tuple[Path, str], tmp_path: Path) -> None:
    root, commit = tv4_repo
    out = tmp_path / "corpus" / "t"
    args = ["snapshot", "build", "--git", str(root), "--repo", "o/r", "--commit", commit]
    assert main([*args, "--out", str(out), "--generated-at", "2026-01-01T00:00:00+00:00"]) == 0
    rows = read_rows(out / "o__r" / f"{commit}.chunks.jsonl")
    got = [(r["path"], r["kind"], r["symbol"], r["start_line"], r["end_line"]) for r in rows]
    assert got == [
        ("a-b", "file", "", 1, 1),
        ("link.py", "file", "", 1, 1),
        ("src/a.py", "file", "", 1, 2),
        ("src/a.py", "symbol", "a", 1, 2),
        ("src/crlf.txt", "file", "", 1, 2),
    ]
    assert [r["text"] for r in rows] == [
        "x",
        "src/a.py",
        *["def a():\n    return 1"] * 2,
        "hello\nworld",
    ]
    assert all(r["repo"] == "o/r" and r["base_commit"] == commit for r in rows)
    (manifest,) = read_rows(out / "corpus_manifest.jsonl")
    assert manifest == {
        "base_commit": commit,
        "chunk_count": 5,
        "chunks_path": f"t/o__r/{commit}.chunks.jsonl",
        "file_count": 4,
        "generated_at": "2026-01-01T00:00:00+00:00",
        "repo": "o/r",
        "skipped_large": 0,
        "status": "ok",
        "symbol_count": 1,
    }
    text = (out / "o__r" / f"{commit}.chunks.jsonl").read_bytes()
    assert text.startswith(b'{"base_commit": "') and text.endswith(b"}\n")
    assert any(e.path == '"src/caf\\303\\251.py"' for e in list_tree(root, commit))
    # The built corpus opens and serves the same rows.
    corpus = open_corpus(tmp_path, "t")
    assert corpus.snapshot_ids() == [f"o/r@{commit}"]
    assert corpus.files(f"o/r@{commit}")["path"].to_list() == [
        "a-b",
        "link.py",
        "src/a.py",
        "src/crlf.txt",
    ]


def test_bare_clone_builds_identical_bytes(tv4_repo: tuple[Path, str], tmp_path: Path) -> None:
    root, commit = tv4_repo
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(root), str(bare))
    outs = []
    for name, source in (("work", root), ("bare", bare)):
        out = tmp_path / name
        args = ["snapshot", "build", "--git", str(source), "--repo", "o/r", "--commit", commit]
        assert main([*args, "--out", str(out), "--generated-at", "x"]) == 0
        outs.append((out / "o__r" / f"{commit}.chunks.jsonl").read_bytes())
    assert outs[0] == outs[1]


@pytest.fixture(scope="module")
def edge_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("edge") / "work"
    long_text = "".join(f"value_{i} = {i}\n" for i in range(1000))  # 1000 lines
    files = {
        "big.txt": b"a" * 400_001,
        "edge.txt": b"b" * 400_000,
        "logo.png": b"not really a png",
        "dist/bundle.js": b"function x() {}\n",
        "node_modules/m/index.js": b"var a = 1\n",
        "yarn.lock": b"# lock\n",
        "src/\u65e5\u672c.py": b"def n():\n    pass\n",
        "crlf.py": b"def a():\r\n    return 1\r\n",
        "empty.txt": b"",
        "blank.txt": b"  \n\t\n",
        "long.py": long_text.encode(),
        "bom.py": b"\xef\xbb\xbfdef bom():\n    pass\n",
        "bad.txt": b"ok \xff here\n",
        "lines.txt": "a\u2028b\x1cc\n".encode(),
    }
    commit = make_repo(root, files, {"link": "long.py"})
    return root, commit


def test_edge_cases_follow_spec(edge_repo: tuple[Path, str], tmp_path: Path) -> None:
    root, commit = edge_repo
    out = tmp_path / "c"
    args = ["snapshot", "build", "--git", str(root), "--repo", "o/edge", "--commit", commit]
    assert main([*args, "--out", str(out), "--generated-at", "x"]) == 0
    rows = read_rows(out / "o__edge" / f"{commit}.chunks.jsonl")
    files = {r["path"]: r for r in rows if r["kind"] == "file"}
    # git tree order; big.txt skipped for size, png/dist/node_modules/lock filtered,
    # empty file and the quoted non-ASCII path dropped silently.
    assert list(files) == [
        "bad.txt",
        "blank.txt",
        "bom.py",
        "crlf.py",
        "edge.txt",
        "lines.txt",
        "link",
        "long.py",
    ]
    assert files["bad.txt"]["text"] == "ok \ufffd here"
    assert (files["blank.txt"]["text"], files["blank.txt"]["end_line"]) == ("", 2)
    assert files["bom.py"]["text"] == "\ufeffdef bom():\n    pass"
    assert files["crlf.py"]["text"] == "def a():\n    return 1"
    assert files["edge.txt"]["text"] == "b" * 8000 + "\n...[truncated]"
    assert files["lines.txt"]["end_line"] == 3  # U+2028 and U+001C break lines (spec §0)
    assert files["link"]["text"] == "long.py"
    assert files["long.py"]["end_line"] == 1000
    # 10*12 + 90*14 + 413*16 = 7,988 chars, then "value_513 = " reaches 8,000; rstrip drops " ".
    long_text = str(files["long.py"]["text"])
    assert long_text.endswith("value_512 = 512\nvalue_513 =\n...[truncated]")
    assert len(long_text) == 7999 + 15
    symbols = [
        (r["path"], r["symbol"], r["start_line"], r["end_line"])
        for r in rows
        if r["kind"] == "symbol"
    ]
    # bom.py: U+FEFF is not whitespace, so "\ufeffdef bom():" starts no symbol; "    pass" neither.
    assert symbols == [("crlf.py", "a", 1, 2)]
    (manifest,) = read_rows(out / "corpus_manifest.jsonl")
    assert (manifest["file_count"], manifest["chunk_count"], manifest["skipped_large"]) == (8, 9, 1)


def test_cat_file_matches_git_show(edge_repo: tuple[Path, str], tmp_path: Path) -> None:
    """Literal upstream reading (one ``git show`` per file) gives the same chunk file."""
    root, commit = edge_repo
    out = tmp_path / "c"
    args = ["snapshot", "build", "--git", str(root), "--repo", "o/e", "--commit", commit]
    assert main([*args, "--out", str(out), "--generated-at", "x"]) == 0
    expected = []
    for entry in list_tree(root, commit):
        if not is_candidate_path(entry.path) or entry.size is None or entry.size > 400_000:
            continue
        proc = subprocess.run(
            ["git", "show", f"{commit}:{entry.path}"], cwd=root, capture_output=True, check=False
        )
        if proc.returncode != 0 or b"\x00" in proc.stdout or not proc.stdout:
            continue
        content = proc.stdout.decode("utf-8", errors="replace")
        expected += chunks_for_file("o/e", commit, entry.path, content)
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in expected)
    assert (out / "o__e" / f"{commit}.chunks.jsonl").read_text(encoding="utf-8") == text


def test_manifest_merge_missing_commit_and_epoch(
    tv4_repo: tuple[Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root, commit = tv4_repo
    out = tmp_path / "m"
    base = ["snapshot", "build", "--git", str(root), "--out", str(out)]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    assert main([*base, "--repo", "z/z", "--commit", commit]) == 0
    assert main([*base, "--repo", "a/a", "--commit", commit, "--commit", "f" * 40]) == 1
    assert "missing_commit" in capsys.readouterr().err
    assert main([*base, "--repo", "z/z", "--commit", commit]) == 0  # replaces its row
    rows = read_rows(out / "corpus_manifest.jsonl")
    assert [(r["repo"], r["base_commit"], r["status"]) for r in rows] == [
        ("a/a", commit, "ok"),
        ("a/a", "f" * 40, "missing_commit"),
        ("z/z", commit, "ok"),
    ]
    assert rows[1] == {
        "base_commit": "f" * 40,
        "chunk_count": 0,
        "repo": "a/a",
        "status": "missing_commit",
    }
    assert rows[0]["generated_at"] == "1970-01-02T00:00:00+00:00"
    assert open_corpus(out).snapshot_ids() == [f"a/a@{commit}", f"z/z@{commit}"]


def test_bad_git_dir_is_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["snapshot", "build", "--git", str(tmp_path), "--repo", "o/r", "--commit", "abc"]
    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    assert "--git" in capsys.readouterr().err


FRAGMENTS = [
    "def",
    "class",
    "function",
    "const",
    "let",
    "var",
    "func",
    "fn",
    "pub",
    "pub(crate)",
    "async",
    "export",
    "public",
    "private",
    "protected",
    "static",
    "final",
    "abstract",
    "synchronized",
    "interface",
    "enum",
    "record",
    "return",
    "if",
    "print",
    "self.x",
    "x",
    "=",
    "helper",
    "List<String>",
    "int[]",
    "Map<K,",
    "V>",
    "a,b",
    "?",
    "$id",
    "_n9",
    "é",
    "(",
    ")",
    "()",
    "{",
    "=",
    ":",
    ".",
    "\t",
    " ",
    "  ",
    "   ",
    "\u00a0",
    "\u2003",
    "\x1c",
]


def plain_symbol_name(line: str) -> str | None:
    """Spec §3.5 as written: the first of the nine patterns that matches."""
    for pattern in SYMBOL_PATTERNS:
        match = pattern.match(line)
        if match:
            return match.group("name")
    return None


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=9).map("".join))
def test_prefiltered_symbol_name_equals_plain_loop(line: str) -> None:
    assert symbol_name(line) == plain_symbol_name(line)
    memo: dict[str, str | None] = {}
    assert symbol_name(line, memo) == symbol_name(line, memo) == memo[line]


def test_prefilter_keeps_spec_examples() -> None:
    lines = ["    return helper(1)", " return helper(1)", "  print(2)", "    self.x(1)"]
    lines += ["    x = foo(1)", "\tint f (x)", "  List<String> g(", "pub(crate) fn run(", "let x ="]
    assert [symbol_name(line) for line in lines] == [
        "helper",
        "helper",
        None,
        None,
        None,
        "f",
        "g",
        "run",
        "x",
    ]
