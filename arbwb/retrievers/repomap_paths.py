"""RepoMap's path and text rules (arb-repomap.md §0, §3.2-3.3, §4.2-4.3, §4.5), upstream quirks
included; pure string functions shared by the index builder and its tests."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from arbwb.io.pathclass import is_code_path, is_test_path
from arbwb.tokenize import split_identifiers

#: Words never used as symbol keys or parts (§1; membership on lower-case strings).
_GENERIC_WORDS = """add app args build call case check class close config context data default
delete error event file find get handle helper init item list load main make mock model name node
option options parse path read render request response result run save server set state string
test tests type update value write"""
GENERIC = frozenset(_GENERIC_WORDS.split())
#: Directory names skipped when a source-test key takes its module (§4.5).
TEST_MARKERS = frozenset({"test", "tests", "testing", "__tests__", "testsuite", "testsuites"})
#: The import-spec pattern, verbatim (§4.3.1): leftmost-first alternatives, one group each.
IMPORT_RE = re.compile(
    r"(?:^|\s)(?:from\s+([A-Za-z0-9_\.]+)\s+import|import\s+([A-Za-z0-9_\./:-]+)"
    r"|require\(\s*['\"]([^'\"]+)['\"]\s*\)|from\s+['\"]([^'\"]+)['\"]"
    r"|import\s+['\"]([^'\"]+)['\"]|#include\s+[<\"]([^>\"]+)[>\"]"
    r"|use\s+(?:crate::|super::)?([A-Za-z0-9_:]+))"
)
#: Every IMPORT_RE match contains one of these words, so other lines are skipped unscanned.
IMPORT_WORDS = r"from|import|require|#include|use"
_IMPORT_WORDS = re.compile(IMPORT_WORDS)
_TEST_SUFFIXES = ("_test", "test", "tests", ".test", ".spec", "_spec")
_TEST_PREFIXES = ("test_", "tests_")
_NON_KEY = re.compile(r"[^a-z0-9]")
MAX_SCAN_LINES = 2000
MAX_SPECS = 200
MAX_TARGETS = 8

KIND_OTHER, KIND_SOURCE, KIND_TEST = 0, 1, 2
KIND_NAMES = ("other", "source", "test")


def name(path: str) -> str:
    """Last ``/`` component."""
    return path.rsplit("/", 1)[-1]


def suffix(filename: str) -> str:
    """POSIX suffix: from the last dot when it is neither first nor last (``.bashrc``: none)."""
    i = filename.rfind(".")
    return filename[i:] if 0 < i < len(filename) - 1 else ""


def stem(filename: str) -> str:
    """``filename`` without its suffix."""
    return filename[: len(filename) - len(suffix(filename))]


def no_ext(path: str) -> str:
    """``path`` with its last component replaced by that component's stem."""
    head, _, last = path.rpartition("/")
    return f"{head}/{stem(last)}" if "/" in path else stem(last)


def parent(path: str) -> str:
    """``path`` without its last component (``""`` for one component)."""
    return path.rpartition("/")[0]


def node_kind(path: str) -> int:
    """``test`` if tests_only keeps the path, else ``source`` if code_only does, else other."""
    if is_test_path(path):
        return KIND_TEST
    return KIND_SOURCE if is_code_path(path) else KIND_OTHER


def compact(symbol: str) -> str:
    """The identifier-splitter tokens of ``symbol`` concatenated (§3.2)."""
    return "".join(split_identifiers(symbol))


def symbol_key(symbol: str) -> str:
    """``compact(symbol)`` if it has ≥ 4 characters, is not generic and not all digits, else ""."""
    key = compact(symbol)
    return key if len(key) >= 4 and key not in GENERIC and not key.isdigit() else ""


def symbol_parts(symbol: str) -> frozenset[str]:
    """Tokens of ``symbol`` with ≥ 3 characters that are not generic (§3.2)."""
    return frozenset(t for t in split_identifiers(symbol) if len(t) >= 3 and t not in GENERIC)


def path_index_keys(path: str) -> list[str]:
    """Lower-cased import-resolution keys of a node path (§4.2), without duplicates."""
    base = no_ext(path)
    variants = [base, base.replace("/", "."), name(path), stem(name(path))]
    comps = base.split("/")
    for width in range(2, min(5, len(comps)) + 1):
        variants += ["/".join(comps[-width:]), ".".join(comps[-width:])]
    return list(dict.fromkeys(v.lower() for v in variants if v))


def build_path_index(paths: Iterable[str]) -> dict[str, list[str]]:
    """Key -> node paths producing it (§4.2), in first-seen order."""
    index: dict[str, list[str]] = {}
    for path in paths:
        for key in path_index_keys(path):
            index.setdefault(key, []).append(path)
    return index


def import_specs(text: str) -> list[str]:
    """Import specs of a file text (§4.3.1): first 2,000 lines, first 200 specs."""
    specs: list[str] = []
    for line in text.splitlines()[:MAX_SCAN_LINES]:
        stripped = line.strip()
        if not _IMPORT_WORDS.search(line) or stripped.startswith(("//", "# ", "*")):
            continue  # a line without an import word cannot match
        for match in IMPORT_RE.finditer(stripped):
            specs.append(next(g for g in match.groups() if g))
            if len(specs) == MAX_SPECS:
                return specs
    return specs


def _normalise(components: Iterable[str]) -> str:
    kept: list[str] = []
    for comp in components:
        if comp in ("", "."):
            continue
        if comp == "..":
            if kept:
                kept.pop()
            continue
        kept.append(comp)
    return "/".join(kept)


def _relative_keys(spec: str, importer: str) -> list[str]:
    """Keys of a spec starting with ``.`` (§4.3.2 step 2)."""
    base = [c for c in parent(importer).split("/") if c]
    if "/" in spec:
        comps = [c for c in [*base, *spec.split("/")] if c not in ("", ".")]
        if comps and comps[-1] != "..":
            comps[-1] = stem(comps[-1])
    else:
        dots = len(spec) - len(spec.lstrip("."))
        for _ in range(dots - 1):
            if base:
                base.pop()
        comps = base + [piece for piece in spec[dots:].split(".") if piece]
    joined = _normalise(comps)
    if not joined:
        return []
    return [k.lower() for k in (joined, f"{joined}/index", f"{joined}/mod", f"{joined}/__init__")]


def spec_keys(spec: str, importer: str) -> list[str]:
    """Path-index keys a spec may resolve through (§4.3.2 steps 1-3)."""
    clean = spec.strip().strip(";,")
    if clean.startswith("."):
        return _relative_keys(clean, importer)
    slashed = clean.replace("::", "/").replace(".", "/").strip("/")
    return [slashed.lower(), slashed.replace("/", ".").lower()]


def resolve_import(spec: str, importer: str, index: Mapping[str, list[str]]) -> list[str]:
    """Node paths a spec resolves to: the union over its keys, ascending, first 8 (§4.3.2)."""
    found: set[str] = set()
    for key in spec_keys(spec, importer):
        found.update(index.get(key, ()))
    return sorted(found)[:MAX_TARGETS]


def source_test_keys(path: str) -> list[str]:
    """Canonical source-test keys of a path (§4.5): the cleaned stem, and ``module:stem``."""
    key = stem(name(path)).lower()
    for ending in _TEST_SUFFIXES:
        if key.endswith(ending):
            key = key[: -len(ending)]
    for start in _TEST_PREFIXES:
        if key.startswith(start):
            key = key[len(start) :]
    key = _NON_KEY.sub("", key)
    if len(key) < 3:
        return []
    modules = [c.lower() for c in parent(path).split("/") if c]
    modules = [c for c in modules if c not in TEST_MARKERS]
    return [key, f"{modules[-1]}:{key}"] if modules else [key]
