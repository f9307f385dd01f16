"""Path classes of spec §6: generated/lockfile paths, candidate filters, test and noise paths."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

CandidateFilter = Literal["all_files", "code_only", "tests_only"]
CANDIDATE_FILTERS: tuple[CandidateFilter, ...] = ("all_files", "code_only", "tests_only")

_LOCKFILES_WORDS = """package-lock.json pnpm-lock.yaml yarn.lock poetry.lock Pipfile.lock Cargo.lock
Gemfile.lock go.sum"""
_LOCKFILES = frozenset(_LOCKFILES_WORDS.split())
_GENERATED_PARTS_WORDS = "dist/ build/ vendor/ third_party/ node_modules/ target/ .tox/ .venv/"
_GENERATED_PARTS = tuple(_GENERATED_PARTS_WORDS.split())
_GENERATED_ENDINGS_WORDS = ".lock .min.js .map .snap .snapshot .pb.go .generated.go .g.cs"
_GENERATED_ENDINGS = tuple(_GENERATED_ENDINGS_WORDS.split())
_CODE_SUFFIXES_WORDS = """.bash .c .cc .cpp .cs .cxx .fish .go .h .hpp .java .js .jsx .kt .kts .m
.mm .php .proto .py .pyi .rb .rs .scala .sh .swift .ts .tsx .zsh"""
_CODE_SUFFIXES = frozenset(_CODE_SUFFIXES_WORDS.split())
_TEST_PARTS_WORDS = "__tests__ test tests testing testdata testsuite testsuites"
_TEST_PARTS = frozenset(_TEST_PARTS_WORDS.split())
_TEST_ENDINGS_WORDS = """_test.go _test.py _test.rs _test.cc _test.cpp .spec.js .spec.jsx .spec.ts
.spec.tsx .test.js .test.jsx .test.ts .test.tsx"""
_TEST_ENDINGS = tuple(_TEST_ENDINGS_WORDS.split())
_NOISE_PARTS_WORDS = """.github .idea .vscode benchmark benchmarks changelog changelogs doc docs
documentation examples licenses node_modules snapshot snapshots template templates vendor"""
_NOISE_PARTS = frozenset(_NOISE_PARTS_WORDS.split())
_NOISE_NAMES_WORDS = "changelog changelog.md contributing.md license license.md readme readme.md"
_NOISE_NAMES = frozenset(_NOISE_NAMES_WORDS.split())


def is_generated_path(path: str) -> bool:
    """Generated or lockfile path (§6.1); the directory test is a substring test (QUIRK)."""
    norm = path.replace("\\", "/")
    if norm.rsplit("/", 1)[-1] in _LOCKFILES:
        return True
    if any(part in norm for part in _GENERATED_PARTS):
        return True
    return norm.endswith(_GENERATED_ENDINGS)


@lru_cache(maxsize=1 << 17)
def _facts(path: str) -> tuple[bool, bool, bool]:
    """(noise, code, test) of a path, memoised; parts, name and suffix as ``PurePosixPath``
    finds them (a suffix starts at the name's last dot when that is neither first nor last)."""
    parts = [c for c in path.split("/") if c and c != "."]
    name = parts[-1] if parts else ""
    dot = name.rfind(".")
    suffix = name[dot:] if 0 < dot < len(name) - 1 else ""
    lowered = {c.lower() for c in parts}
    lower_name = name.lower()
    noise = (
        not _NOISE_PARTS.isdisjoint(lowered)
        or lower_name in _NOISE_NAMES
        or name[: len(name) - len(suffix)].lower() in _NOISE_NAMES
    )
    code_suffix = bool(path) and suffix.lower() in _CODE_SUFFIXES
    test = code_suffix and (
        not _TEST_PARTS.isdisjoint(lowered)
        or lower_name.startswith("test_")
        or lower_name.endswith(_TEST_ENDINGS)
        or lower_name.endswith(("test.java", "tests.java"))
    )
    return noise, code_suffix and not noise, test


def is_noise_path(path: str) -> bool:
    """Docs, examples, templates, vendored and changelog-like paths (§6.2)."""
    return _facts(path)[0]


def is_code_path(path: str) -> bool:
    """``code_only`` filter (§6.2): a code suffix and not a noise path; tests included."""
    return _facts(path)[1]


def is_test_path(path: str) -> bool:
    """``tests_only`` filter (§6.2): test location or test name, with a code suffix."""
    return _facts(path)[2]


def keep_path(path: str, candidate_filter: CandidateFilter) -> bool:
    """Whether ``path`` survives ``candidate_filter`` (§6.2)."""
    if candidate_filter == "all_files":
        return True
    if candidate_filter == "code_only":
        return is_code_path(path)
    if candidate_filter == "tests_only":
        return is_test_path(path)
    msg = f"candidate filter must be one of {CANDIDATE_FILTERS}, got {candidate_filter!r}"
    raise ValueError(msg)
