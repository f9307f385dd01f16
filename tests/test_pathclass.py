"""Spec §6 path classes, checked against test vector TV5."""

from __future__ import annotations

import json
import random
from pathlib import Path, PurePosixPath

import pytest

from arbwb.io import pathclass as pc
from arbwb.io.pathclass import (
    is_code_path,
    is_generated_path,
    is_noise_path,
    is_test_path,
    keep_path,
)

BUILDER_CANDIDATES = {
    "src/a.py": False,
    "dist/x.js": True,
    "yarn.lock": True,
    "a/b.min.js": True,
    "rebuild/x.py": True,
    "node_modules2/a.js": False,
    "x.pb.go": True,
    "README.md": False,
    "go.sum": True,
    "vendored/x.go": False,
}


@pytest.mark.parametrize(("path", "generated"), BUILDER_CANDIDATES.items())
def test_generated_paths_tv5(path: str, generated: bool) -> None:
    assert is_generated_path(path) is generated


# TV5 filters: (test, code, noise)
FILTERS = {
    "tests/test_a.py": (True, True, False),
    "src/foo_test.go": (True, True, False),
    "src/a.spec.ts": (True, True, False),
    "pkg/FooTest.java": (True, True, False),
    "test/data.json": (False, False, False),
    "docs/conf.py": (False, False, True),
    "examples/demo.py": (False, False, True),
    "src/app.py": (False, True, False),
    "README.md": (False, False, True),
    "src/testing/util.py": (True, True, False),
    "spec/a_spec.rb": (False, True, False),
    "src/Contest.java": (True, True, False),
    "lib/it/a.py": (False, True, False),
    "src/test_utils.ts": (True, True, False),
    "app/templates/x.py": (False, False, True),
    "CHANGELOG.py": (False, False, True),
}


@pytest.mark.parametrize(("path", "expected"), FILTERS.items())
def test_filters_tv5(path: str, expected: tuple[bool, bool, bool]) -> None:
    assert (is_test_path(path), is_code_path(path), is_noise_path(path)) == expected


def test_keep_path_dispatch_and_bad_filter() -> None:
    assert keep_path("docs/conf.py", "all_files")
    assert not keep_path("docs/conf.py", "code_only")
    assert keep_path("tests/test_a.py", "tests_only")
    with pytest.raises(ValueError, match="candidate filter must be one of"):
        keep_path("a.py", "python_only")  # type: ignore[arg-type]


# --- the memoised string version equals the PurePosixPath one it replaced ----------------------


def _old_suffix(path: str) -> str:
    return PurePosixPath(path).suffix.lower()


def _old_noise(path: str) -> bool:
    pure = PurePosixPath(path)
    if any(part.lower() in pc._NOISE_PARTS for part in pure.parts):
        return True
    return pure.name.lower() in pc._NOISE_NAMES or pure.stem.lower() in pc._NOISE_NAMES


def _old_code(path: str) -> bool:
    return bool(path) and not _old_noise(path) and _old_suffix(path) in pc._CODE_SUFFIXES


def _old_test(path: str) -> bool:
    if not path or _old_suffix(path) not in pc._CODE_SUFFIXES:
        return False
    pure = PurePosixPath(path)
    if any(part.lower() in pc._TEST_PARTS for part in pure.parts):
        return True
    name = pure.name.lower()
    return (
        name.startswith("test_")
        or name.endswith(pc._TEST_ENDINGS)
        or name.endswith(("test.java", "tests.java"))
    )


def _assert_same(paths: list[str]) -> None:
    for path in paths:
        old = (_old_noise(path), _old_code(path), _old_test(path))
        assert (is_noise_path(path), is_code_path(path), is_test_path(path)) == old, path


_PIECES = [
    "",
    ".",
    "..",
    "src",
    "Tests",
    "TESTDATA",
    "__tests__",
    "Docs",
    "examples",
    "node_modules",
    "README",
    "readme.MD",
    "ChangeLog",
    "LICENSE.md",
    "x.py",
    "x.PY",
    "a.",
    ".py",
    ".bashrc",
    "test_a.py",
    "Test_A.Py",
    "foo_test.go",
    "a.spec.TSX",
    "FooTests.java",
    "Contest.java",
    "a.tar.gz",
    "İx.py",
    "aΣ.py",
    "K.kt",
    "\u212a.\u212at",
    "a\\b.js",
    "testing",
    "a b.rs",
]


def test_memoised_path_facts_equal_purepath_version_generated() -> None:
    rng = random.Random(7)
    paths = [
        rng.choice(["", "/", "//", "///", "./"])
        + "/".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 5)))
        + rng.choice(["", "", "/", "/."])
        for _ in range(20000)
    ]
    _assert_same(paths + [p for p in _PIECES] + list(FILTERS))


@pytest.mark.shared
def test_memoised_path_facts_equal_purepath_version_on_arb_paths(shared_dir: Path) -> None:
    paths: set[str] = set()
    for file in sorted(shared_dir.rglob("*details.jsonl")):
        for line in file.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            paths.update(p for p in row.get("top_files") or [] if isinstance(p, str))
            paths.update(str(p) for p in (row.get("gold_ranks") or {}))
    assert len(paths) > 1000
    _assert_same(sorted(paths))
