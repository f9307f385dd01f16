"""Grep baseline (spec §7.6): weighted literal patterns from the query, matched files only.

The spec gives the weights and the scoring shape; the precise extraction rules below go beyond
its text and are **arbwb-defined** (tested in tests/test_retrievers_grep.py):

- the query text (§2.9) has its ``\\n`` escapes turned into newlines (like §2.10) first;
- patterns, in this order: backtick spans (weight 12; kind ``file_path`` when the span is a
  path with a known extension, ``flag`` when it starts with ``-``, ``error`` when it ends in an
  error word, else ``code``), paths with a known extension (18, ``file_path``), ``--flags``
  (10, ``flag``), high-signal identifiers (7, ``identifier``; ``error`` for error words);
  ``expanded`` adds identifier-splitter tokens of length ≥ 4 (1, ``token``);
- a term is stripped of surrounding quotes/punctuation, needs ≥ 2 characters and an
  alphanumeric, must not be a stop term (JSON keys of ARB queries, literals, URL schemes),
  and is kept once per lower-cased form at its first (highest-priority) pattern;
- a chunk's score for a pattern is ``weight x Σ multipliers of the places hit``: path 2.0
  (``file_path``) or 1.35, basename 1.1, symbol 1.2, text 1.0 — case-insensitive substring
  tests, except that ``token`` patterns need a whole-word (``\\b``) text match;
- a file's score is ``Σ_{patterns hit in the file} max chunk score + min(2, 0.25·ln(1 + hit
  chunks))``; files sort by (score desc, matched patterns desc, best chunk score desc, path);
  the file's representative chunk (for §5.8) is its best chunk (total over patterns; ties by
  chunk order). Files with no hit are not ranked.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.retrievers.common import ChunkRanking, Method, check_chunks
from arbwb.tokenize import split_identifiers

PatternMode = Literal["strict", "expanded"]
WEIGHTS = {"backtick": 12.0, "file_path": 18.0, "flag": 10.0, "identifier": 7.0, "token": 1.0}
PATH_MULT_FILE = 2.0
PATH_MULT = 1.35
BASENAME_MULT = 1.1
SYMBOL_MULT = 1.2
TEXT_MULT = 1.0
KNOWN_EXTENSIONS = [
    "bash",
    "c",
    "cc",
    "cfg",
    "cpp",
    "cs",
    "css",
    "cxx",
    "fish",
    "go",
    "gradle",
    "h",
    "hpp",
    "html",
    "ini",
    "java",
    "js",
    "json",
    "jsx",
    "kt",
    "kts",
    "lock",
    "m",
    "md",
    "mm",
    "php",
    "proto",
    "py",
    "pyi",
    "rb",
    "rs",
    "rst",
    "scala",
    "sh",
    "sql",
    "swift",
    "toml",
    "ts",
    "tsx",
    "txt",
    "xml",
    "yaml",
    "yml",
    "zsh",
]
ERROR_WORDS = ("Error", "Exception", "Failure", "Warning", "Panic", "Timeout", "Traceback")
STOP_TERMS = frozenset(
    [
        "pr_title",
        "pr_body",
        "implementation_files",
        "implementation_file_count",
        "changed_file_summary",
        "changed_file",
        "review_comment",
        "given_file",
        "diff_hunk_context",
        "failure_excerpt",
        "command",
        "run_strategy",
        "source_type",
        "raw_signal",
        "check_name",
        "check_url",
        "test_names",
        "trace_paths",
        "anchor_file",
        "anchor_diff",
        "intent",
        "text",
        "source",
        "path",
        "line",
        "true",
        "false",
        "null",
        "none",
        "http",
        "https",
        "www",
        "github.com",
        "e.g",
        "i.e",
    ]
)
_STRIP = "\"'`.,;:()[]{}<>!?*"
_EXT = "|".join(sorted(KNOWN_EXTENSIONS, key=len, reverse=True))
_PATH_RE = re.compile(rf"(?<![\w./-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:{_EXT}))(?![\w-])")
_FULL_PATH_RE = re.compile(rf"(?:[\w.-]+/)*[\w-][\w.-]*\.(?:{_EXT})")
_BACKTICK_RE = re.compile(r"`([^`\n]+)`")
_FLAG_RE = re.compile(r"(?<![\w-])--[A-Za-z0-9][A-Za-z0-9-]*")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:::|[./])[A-Za-z0-9_]+)*")
_ALLCAPS_RE = re.compile(r"[A-Z]{3,}")
_CAMEL_RE = re.compile(r"[a-z][A-Z]")


@dataclass(frozen=True)
class Pattern:
    """One grep term with its kind and weight (details ``patterns`` rows)."""

    term: str
    kind: str
    weight: float


def _clean(term: str) -> str:
    return term.strip().strip(_STRIP)


def _is_high_signal(term: str) -> bool:
    """Has ``/ . :: _`` or a digit, ends in an error word, is ≥3-letter all caps or camelCase."""
    return (
        any(mark in term for mark in ("/", ".", "::", "_"))
        or any(ch.isdigit() for ch in term)
        or term.endswith(ERROR_WORDS)
        or bool(_ALLCAPS_RE.fullmatch(term))
        or bool(_CAMEL_RE.search(term))
    )


def _backtick_kind(term: str) -> str:
    if _FULL_PATH_RE.fullmatch(term):
        return "file_path"
    if term.startswith("-"):
        return "flag"
    if term.endswith(ERROR_WORDS):
        return "error"
    return "code"


def extract_patterns(query_text: str, mode: PatternMode = "strict") -> list[Pattern]:
    """Grep patterns of a query (arbwb-defined rules in the module docstring)."""
    if mode not in ("strict", "expanded"):
        msg = f"grep pattern mode must be 'strict' or 'expanded', got {mode!r}"
        raise ValueError(msg)
    text = query_text.replace("\\n", "\n")
    found: list[tuple[str, str, float]] = []
    found += [
        (m, _backtick_kind(_clean(m)), WEIGHTS["backtick"]) for m in _BACKTICK_RE.findall(text)
    ]
    found += [(m, "file_path", WEIGHTS["file_path"]) for m in _PATH_RE.findall(text)]
    found += [(m, "flag", WEIGHTS["flag"]) for m in _FLAG_RE.findall(text)]
    found += [
        (m, "error" if m.endswith(ERROR_WORDS) else "identifier", WEIGHTS["identifier"])
        for m in _IDENT_RE.findall(text)
        if _is_high_signal(m)
    ]
    if mode == "expanded":
        found += [(t, "token", WEIGHTS["token"]) for t in split_identifiers(text) if len(t) >= 4]
    patterns: dict[str, Pattern] = {}
    for raw, kind, weight in found:
        term = raw.strip() if kind == "flag" else _clean(raw)
        key = term.lower()
        if len(term) < 2 or not any(ch.isalnum() for ch in term) or key in STOP_TERMS:
            continue
        patterns.setdefault(key, Pattern(term, kind, weight))
    return list(patterns.values())


@dataclass(frozen=True)
class GrepIndex:
    """Lower-cased chunk fields of one snapshot (substring tests are case-insensitive)."""

    chunks: pl.DataFrame
    paths: list[str]
    mode: PatternMode


def build_index(chunks: pl.DataFrame, mode: PatternMode = "strict") -> GrepIndex:
    """Lower-case path, basename, symbol and text once per snapshot."""
    chunks = check_chunks(chunks)
    lowered = chunks.select(
        pl.col("path").str.to_lowercase().alias("path"),
        pl.col("path").str.split("/").list.last().str.to_lowercase().alias("base"),
        pl.col("symbol").str.to_lowercase().alias("symbol"),
        pl.col("text").str.to_lowercase().alias("text"),
    )
    return GrepIndex(lowered, chunks["path"].to_list(), mode)


def _pattern_scores(index: GrepIndex, pattern: Pattern) -> npt.NDArray[np.float64]:
    """``weight x Σ multipliers of the hit places`` for every chunk."""
    needle = pattern.term.lower()
    if pattern.kind == "token":
        text_hit = pl.col("text").str.contains(rf"\b{re.escape(needle)}\b")
    else:
        text_hit = pl.col("text").str.contains(needle, literal=True)
    path_mult = PATH_MULT_FILE if pattern.kind == "file_path" else PATH_MULT
    mult = index.chunks.select(
        pl.col("path").str.contains(needle, literal=True).cast(pl.Float64) * path_mult
        + pl.col("base").str.contains(needle, literal=True).cast(pl.Float64) * BASENAME_MULT
        + (pl.col("symbol") != "")
        .and_(pl.col("symbol").str.contains(needle, literal=True))
        .cast(pl.Float64)
        * SYMBOL_MULT
        + text_hit.cast(pl.Float64) * TEXT_MULT
    ).to_series()
    return mult.to_numpy().astype(np.float64) * pattern.weight


@dataclass(frozen=True)
class GrepResult:
    """The chunk ranking plus upstream's ``top_file_scores`` rows and the patterns used."""

    ranking: ChunkRanking
    patterns: list[Pattern]
    file_rows: list[dict[str, Any]]


def search(index: GrepIndex, query_text: str) -> GrepResult:
    """Score every file that matches at least one pattern (spec §7.6 and the rules above)."""
    patterns = extract_patterns(query_text, index.mode)
    n = len(index.paths)
    per_pattern = [_pattern_scores(index, p) for p in patterns]
    totals = np.sum(per_pattern, axis=0) if per_pattern else np.zeros(n)
    files: dict[str, dict[str, Any]] = {}
    for row in np.flatnonzero(totals > 0).tolist():
        path = index.paths[row]
        entry = files.setdefault(path, {"rows": [], "best": row})
        entry["rows"].append(row)
        if totals[row] > totals[entry["best"]]:
            entry["best"] = row
    scored: list[dict[str, Any]] = []
    for path, entry in files.items():
        rows = np.asarray(entry["rows"], dtype=np.int64)
        best = [float(s[rows].max()) for s in per_pattern]
        matched = [p.term for p, b in zip(patterns, best, strict=True) if b > 0]
        score = sum(b for b in best if b > 0) + min(2.0, 0.25 * math.log(1 + len(rows)))
        scored.append(
            {
                "path": path,
                "score": score,
                "matched_patterns": matched,
                "best_chunk_score": float(totals[entry["best"]]),
                "hit_chunks": len(rows),
                "_best": entry["best"],
            }
        )
    scored.sort(
        key=lambda f: (-f["score"], -len(f["matched_patterns"]), -f["best_chunk_score"], f["path"])
    )
    order = np.array([f.pop("_best") for f in scored], dtype=np.int64)
    ranking = ChunkRanking(
        order=order,
        scores=np.array([f["score"] for f in scored], dtype=np.float64),
        files=[f["path"] for f in scored],
        file_scores=[f["score"] for f in scored],
        details={
            "pattern_mode": index.mode,
            "patterns": [{"term": p.term, "kind": p.kind, "weight": p.weight} for p in patterns],
            "top_file_scores": scored[:20],
        },
    )
    return GrepResult(ranking, patterns, scored)


def rank_sample(index: GrepIndex, query_text: str) -> ChunkRanking:
    """Matched files by grep score; ``order`` holds each file's representative (best) chunk."""
    return search(index, query_text).ranking


METHOD = Method(
    name="grep",
    ranker="grep",
    build_index=build_index,
    rank_sample=rank_sample,
    model="grep-strict",
    stats=lambda: {"pattern_mode": "strict"},
)
METHOD_EXPANDED = Method(
    name="grep-expanded",
    ranker="grep",
    build_index=lambda chunks: build_index(chunks, "expanded"),
    rank_sample=rank_sample,
    model="grep-expanded",
    stats=lambda: {"pattern_mode": "expanded"},
)
