"""Spec §6 path classes, checked against test vector TV5."""

from __future__ import annotations

import pytest

from arbwb.pathclass import (
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
