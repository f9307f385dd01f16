"""RepoMap's path and text rules (arb-repomap.md §0, §3.2-3.4, §4.2-4.3, §4.5), upstream quirks
included, and :class:`TextMemo`, which keeps their results across a run's snapshots."""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import polars as pl

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


#: Python's ``str.strip()`` whitespace (Rust's differs on U+001C-U+001F), for Polars.
PY_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
CONTENT_PREFIX = 20000
#: Texts :func:`import_specs_frame` leaves to Python: a ``str.splitlines`` line boundary other
#: than ``\n``, or U+001F (whitespace to Python's ``\s`` and ``str.strip``, not to Rust's ``\s``).
_PYTHON_ONLY = "[\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029]"


def content_tokens_of(texts: list[str]) -> pl.Series:
    """Content tokens of each text (§3.4): distinct tokens of its first 20,000 characters."""
    from arbwb.retrievers.terms import distinct_text_tokens  # (pyarrow: only when tokenising)

    prefixes = [t[:CONTENT_PREFIX] for t in texts]  # code points, as the spec counts
    return distinct_text_tokens(prefixes)


def import_specs_frame(texts: pl.DataFrame) -> pl.DataFrame:
    """(i, specs) of (i, text) rows with only ``\\n`` breaks and no U+001F: the steps of
    :func:`import_specs` in Polars (rows without specs absent)."""
    line = pl.col("line")
    groups = pl.col("m").str.extract_groups(IMPORT_RE.pattern)
    return (
        texts.select("i", pl.col("text").str.split("\n").list.head(MAX_SCAN_LINES).alias("line"))
        .explode("line")
        .filter(line.str.contains(IMPORT_WORDS))
        .with_columns(line.str.strip_chars(PY_WHITESPACE))
        .filter(
            ~(line.str.starts_with("//") | line.str.starts_with("# ") | line.str.starts_with("*"))
        )
        .select("i", line.str.extract_all(IMPORT_RE.pattern).alias("m"))
        .explode("m")
        .drop_nulls("m")
        .select("i", pl.coalesce(groups.struct[k] for k in range(7)).alias("spec"))
        .group_by("i", maintain_order=True)
        .agg(pl.col("spec").head(MAX_SPECS))
    )


#: Texts not memoised yet and their distinct content tokens (:meth:`TextMemo.tokenise`).
Tokenised = tuple[list[str], pl.Series]
#: What :meth:`TextMemo.path_facts` knows of a path: kind, path-index keys, source-test keys.
PathFacts = tuple[int, tuple[str, ...], tuple[str, ...]]


@dataclass
class TextMemo:
    """Text-level results reused by a run's next snapshots: content-token ids (into ``words``)
    and import specs per text, restarted past ``limit`` texts; tuples stay out of the GC's view."""

    words: list[str] = field(default_factory=list)
    content: dict[str, npt.NDArray[np.int64]] = field(default_factory=dict)
    specs: dict[str, list[str]] = field(default_factory=dict)
    facts: dict[str, PathFacts] = field(default_factory=dict)
    spec_keys: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    table: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema={"tok": pl.String, "id": pl.Int64})
    )
    limit: int = 20000

    def path_facts(self, path: str) -> PathFacts:
        """Kind, path-index keys and source-test keys of a node path (§3.1, §4.2, §4.5)."""
        found = self.facts.get(path)
        if found is None:
            if len(self.facts) > 4 * self.limit:
                self.facts.clear()
            found = self.facts[path] = (
                node_kind(path),
                tuple(path_index_keys(path)),
                tuple(source_test_keys(path)),
            )
        return found

    def series_ids(self, tokens: pl.Series) -> npt.NDArray[np.int64]:
        """Run-wide ids of a token column (one join), numbering new ones by first appearance."""
        frame = tokens.alias("tok").to_frame()
        found = frame.join(self.table, on="tok", how="left", maintain_order="left")["id"]
        ids = found.fill_null(-1).to_numpy().astype(np.int64)
        new_rows = found.is_null()
        if new_rows.any():
            new = frame.filter(new_rows)
            start = len(self.words)
            added = new.unique(maintain_order=True).with_row_index("id", offset=start)
            added = added.select("tok", pl.col("id").cast(pl.Int64))
            self.words.extend(added["tok"].to_list())
            self.table = pl.concat([self.table, added], rechunk=False)
            numbered = new.join(added, on="tok", how="left", maintain_order="left")["id"]
            ids[new_rows.to_numpy()] = numbered.to_numpy()
        return ids

    def trim(self) -> None:
        """Restart the text tables once they hold more than ``limit`` texts."""
        if len(self.content) > self.limit:
            self.content.clear()
            self.specs.clear()
            self.spec_keys.clear()

    def tokenise(self, texts: list[str], known: Container[str] = ()) -> Tokenised:
        """The texts neither memoised nor ``known`` and their distinct content tokens (reads
        the memo only, so it may run on another thread)."""
        content = self.content
        fresh = [t for t in dict.fromkeys(texts) if t not in content and t not in known]
        return fresh, content_tokens_of(fresh)

    def content_tokens(
        self, texts: list[str], tokenised: Tokenised | None = None, then: pl.Series | None = None
    ) -> tuple[list[npt.NDArray[np.int64]], npt.NDArray[np.int64]]:
        """Distinct content-token ids of each text (§3.4), and the ids of the tokens ``then``
        (numbered after them, one join); ``tokenised``: :meth:`tokenise` of ``texts`` if done."""
        if tokenised is None:
            self.trim()
            tokenised = self.tokenise(texts)
        fresh, column = tokenised
        then = pl.Series("tok", [], dtype=pl.String) if then is None else then
        flat = column.explode().drop_nulls() if fresh else pl.Series("tok", [], dtype=pl.String)
        ids = self.series_ids(pl.concat([flat.alias("tok"), then.alias("tok")]))
        if fresh:
            ends = np.cumsum(column.list.len().to_numpy().astype(np.int64))
            for text, found in zip(fresh, np.split(ids[: len(flat)], ends[:-1]), strict=True):
                self.content[text] = found
        content = self.content
        missing = [t for t in texts if t not in content]  # left out as known, trimmed since
        if missing:
            self.content_tokens(missing, self.tokenise(missing))
        return [content[t] for t in texts], ids[len(flat) :]

    def import_specs(self, texts: list[str]) -> list[list[str]]:
        """The import specs of each text (§4.3.1), memoised; fresh texts scanned in one batch,
        in Polars when a text's only break is ``\\n`` and it has no U+001F (Rust's ``\\s`` =
        Python's there), else by :func:`import_specs`."""
        fresh = [t for t in dict.fromkeys(texts) if t and t not in self.specs]
        if fresh:
            frame = pl.DataFrame({"text": fresh}, schema={"text": pl.String})
            other = frame["text"].str.contains(_PYTHON_ONLY).to_list()
            rows = frame.with_row_index("i").filter(~pl.Series(other))
            found = dict(import_specs_frame(rows).iter_rows())
            for i, (text, python) in enumerate(zip(fresh, other, strict=True)):
                self.specs[text] = import_specs(text) if python else found.get(i, [])
        return [self.specs[t] if t else [] for t in texts]
