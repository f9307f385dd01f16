"""Grep baseline (``grep`` = strict, ``grep-expanded``), exactly as upstream's ``eval-grep``.

The contract is ``arb-grep.md`` (it supersedes arb-spec §7.6): patterns from the query
(:mod:`arbwb.retrievers.grep_patterns`), per-row matching (§5), per-file aggregation, the glibc
``log1p`` hit bonus and the four-key sort (§6). Speed without changing a bit: the snapshot's
lower-cased fields are built once per index, each distinct pattern is matched once per snapshot
with a Polars literal/regex ``contains`` over all rows (cached for the snapshot's later
samples), and the aggregation is vectorised with numpy segment reductions; every sum the
contract fixes is an explicit left-to-right loop (adding 0.0 for a non-hit is exact).
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.retrievers.common import ChunkPaths, ChunkRanking, Method, check_chunks, chunk_paths
from arbwb.retrievers.grep_patterns import Pattern, PatternMode, extract_patterns

PATH_MULT_FILE, PATH_MULT, BASENAME_MULT, SYMBOL_MULT = 2.0, 1.35, 1.1, 1.2
BONUS_CAP = 2.0
#: Smallest hit count whose bonus is the cap: log1p(2980)/4 > 2 > log1p(2979)/4 (§6.2).
BONUS_CAP_FROM = 2980
#: glibc ``log1p(n)`` is one ulp off the correctly rounded ln(1+n) for these n (§6.3 table).
GLIBC_LOG1P_ULP: Mapping[int, int] = {
    **dict.fromkeys([13, 184, 195, 307, 342, 656, 660, 819, 858, 893, 935, 1101, 1189], 1),
    **dict.fromkeys([1376, 1458, 1511, 1811, 2268, 2501, 2614, 2661, 2739, 2765, 2864], 1),
    **dict.fromkeys([2, 47, 73, 219, 298, 333, 345, 361, 758, 849, 1079, 1260, 1410], -1),
    **dict.fromkeys([1523, 1580, 1595, 1707, 1735, 1798, 2008, 2221, 2303, 2444, 2518], -1),
    **dict.fromkeys([2527, 2640, 2657, 2727, 2777, 2792, 2798, 2826, 2842, 2870, 2954], -1),
}
TOP_K = 20
_WORD = "A-Za-z0-9_"


@functools.lru_cache(maxsize=4096)
def glibc_log1p(n: int) -> float:
    """glibc's ``log1p(n)`` for an integer 0 ≤ n < 2980, independent of the platform libm.

    The correctly rounded ln(1+n) (40-digit decimal, then one correct rounding to binary64)
    with the §6.3 one-ulp corrections applied.
    """
    exact = float(decimal.Context(prec=40).ln(decimal.Decimal(n + 1)))
    step = GLIBC_LOG1P_ULP.get(n, 0)
    return exact if step == 0 else math.nextafter(exact, math.inf * step)


def bonus(n: int) -> float:
    """Hit bonus ``min(2.0, log1p(n) x 0.25)`` with glibc's ``log1p`` (§6.2-6.3)."""
    return BONUS_CAP if n >= BONUS_CAP_FROM else min(BONUS_CAP, glibc_log1p(n) * 0.25)


@dataclass(frozen=True)
class GrepIndex:
    """One snapshot's candidate rows, lower-cased once (Python ``str.lower``, §5).

    ``memo`` caches each (field, term) hit vector for the snapshot's later samples.
    """

    mode: PatternMode
    paths: ChunkPaths
    path_lower: pl.Series  # per distinct path (``paths.names`` order)
    base_lower: pl.Series  # per distinct path: ``PurePosixPath(path).name`` lower-cased
    path_rank: npt.NDArray[np.int64]  # per distinct path: position in code-point order
    symbol_lower: pl.Series  # per row
    text_lower: pl.Series  # per row
    has_path: npt.NDArray[np.bool_]  # per row: rows with an empty path are never hits (§6.1)
    n_chars: list[int]  # per row: representative text length; empty text counts its path (§6.5)
    memo: dict[tuple[str, str], npt.NDArray[np.bool_]] = field(default_factory=dict)


def python_lower(values: pl.Series) -> pl.Series:
    """Python ``str.lower`` of every value: Polars lower-cases ASCII values (identical there),
    Python the others (Unicode versions and special casings may differ between the two)."""
    lowered = values.str.to_lowercase()
    rows = np.flatnonzero((values.str.len_bytes() != values.str.len_chars()).to_numpy())
    if rows.size:
        lowered = lowered.scatter(rows, [v.lower() for v in values.gather(rows).to_list()])
    return lowered


def basename(path: str) -> str:
    """``PurePosixPath(path).name``, without building a path object when the last component is
    a plain name (only an empty or ``.`` last component is changed by the normalisation)."""
    last = path.rpartition("/")[2]
    return last if last not in ("", ".") else PurePosixPath(path).name


def build_index(chunks: pl.DataFrame, mode: PatternMode = "strict") -> GrepIndex:
    """Lower-case path, basename, symbol and text of a snapshot's (filtered) rows, in order."""
    chunks = check_chunks(chunks)
    paths = chunk_paths(chunks)
    names = paths.names
    ranks = np.empty(len(names), dtype=np.int64)
    ranks[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    n_chars = chunks.select(
        pl.when(pl.col("text") == "")
        .then(pl.col("path").str.len_chars())
        .otherwise(pl.col("text").str.len_chars())
    ).to_series()
    return GrepIndex(
        mode=mode,
        paths=paths,
        path_lower=pl.Series([p.lower() for p in names], dtype=pl.String),
        base_lower=pl.Series([basename(p).lower() for p in names], dtype=pl.String),
        path_rank=ranks,
        symbol_lower=python_lower(chunks["symbol"]),
        text_lower=python_lower(chunks["text"]),
        has_path=(chunks["path"] != "").to_numpy(),
        n_chars=n_chars.to_list(),
    )


def _contains(needle: str, *, token: bool) -> pl.Expr:
    """Substring test of column ``v``; ``token``: an occurrence with no ASCII word character beside.

    TOKEN_TEXT_RE's lookarounds are emulated by consuming the neighbour or a text end, which
    decides existence identically; tokens are ``[a-z0-9]+`` so need no escaping.
    """
    if token:
        return pl.col("v").str.contains(f"(?:^|[^{_WORD}]){needle}(?:[^{_WORD}]|$)")
    return pl.col("v").str.contains(needle, literal=True)


def _places(pattern: Pattern) -> tuple[str, ...]:
    """Where a pattern is looked for; token text hits need the word boundary (§5)."""
    return ("path", "base", "symbol", "token_text" if pattern.kind == "token" else "text")


def _fill(index: GrepIndex, patterns: Sequence[Pattern]) -> None:
    """Compute the hit vectors of the patterns' terms not yet in the snapshot's memo.

    One Polars ``select`` per place evaluates all new terms together (in parallel).
    """
    places = {
        "path": index.path_lower,
        "base": index.base_lower,
        "symbol": index.symbol_lower,
        "text": index.text_lower,
        "token_text": index.text_lower,
    }
    for place, values in places.items():
        wanted = {p.term.lower() for p in patterns if place in _places(p)}
        missing = sorted(q for q in wanted if (place, q) not in index.memo)
        if not missing:
            continue
        token = place == "token_text"
        exprs = [_contains(q, token=token).alias(str(i)) for i, q in enumerate(missing)]
        found = values.to_frame("v").select(exprs)
        for i, q in enumerate(missing):
            hits = found[str(i)].to_numpy()
            index.memo[(place, q)] = hits[index.paths.codes] if place in ("path", "base") else hits


def pattern_scores(index: GrepIndex, pattern: Pattern) -> npt.NDArray[np.float64]:
    """Per-row score of one pattern: path, basename, symbol, text products added in order (§5)."""
    _fill(index, [pattern])
    q, w = pattern.term.lower(), pattern.weight
    path_mult = PATH_MULT_FILE if pattern.kind == "file_path" else PATH_MULT
    text_place = _places(pattern)[3]
    score = np.where(index.memo[("path", q)], w * path_mult, 0.0)
    score = score + np.where(index.memo[("base", q)], w * BASENAME_MULT, 0.0)
    score = score + np.where(index.memo[("symbol", q)], w * SYMBOL_MULT, 0.0)
    return score + np.where(index.memo[(text_place, q)], w, 0.0)


@dataclass(frozen=True)
class GrepResult:
    """The ranking (representative chunk per file) plus the pattern list and file records."""

    ranking: ChunkRanking
    patterns: list[Pattern]
    file_rows: list[dict[str, Any]]


def _result(
    index: GrepIndex,
    patterns: list[Pattern],
    order: npt.NDArray[np.int64],
    file_rows: list[dict[str, Any]],
) -> GrepResult:
    """Wrap the ranked files as a ChunkRanking whose details carry the §8.1 grep fields."""
    scores = [r["score"] for r in file_rows]
    details = {
        "pattern_mode": index.mode,
        "patterns": [{"kind": p.kind, "term": p.term, "weight": p.weight} for p in patterns],
        "top_file_scores": file_rows[:TOP_K],
    }
    ranking = ChunkRanking(
        order=order,
        scores=np.asarray(scores, dtype=np.float64),
        files=[r["path"] for r in file_rows],
        file_scores=scores,
        details=details,
        n_chars=index.n_chars,
    )
    return GrepResult(ranking, patterns, file_rows)


def left_to_right(columns: Sequence[npt.NDArray[np.float64]], size: int) -> npt.NDArray[np.float64]:
    """Elementwise ``((0.0 + c0) + c1) + ...``: the plain left-to-right sum the contract fixes."""
    total = np.zeros(size, dtype=np.float64)
    for column in columns:
        total = total + column
    return total


def search(index: GrepIndex, query_text: str) -> GrepResult:
    """Rank the files of ``index`` for evaluation text T (§4-§6); empty when nothing matches."""
    patterns = extract_patterns(query_text, index.mode)
    empty = np.zeros(0, dtype=np.int64)
    if not patterns:  # §6.6: no row is examined
        return _result(index, patterns, empty, [])
    _fill(index, patterns)
    per_pattern = [pattern_scores(index, p) for p in patterns]
    chunk = left_to_right(per_pattern, len(index.has_path))  # §5: match list in pattern order
    rows = np.flatnonzero((chunk > 0) & index.has_path)
    if rows.size == 0:
        return _result(index, patterns, empty, [])
    codes = index.paths.codes[rows]
    by_file = np.argsort(codes, kind="stable")  # rows of a file stay in corpus order
    rows, codes = rows[by_file], codes[by_file]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    hits = np.diff(np.r_[starts, rows.size])
    segment = np.repeat(np.arange(starts.size), hits)
    chunk_rows = chunk[rows]
    best = np.maximum.reduceat(chunk_rows, starts)
    at_best = np.where(chunk_rows == best[segment], np.arange(rows.size), rows.size)
    best_rows = rows[np.minimum.reduceat(at_best, starts)]  # first row reaching the maximum
    n_patterns = len(patterns)
    maxima = np.empty((starts.size, n_patterns), dtype=np.float64)
    first_seen = np.empty((starts.size, n_patterns), dtype=np.int64)
    sentinel = len(index.has_path)
    for j, scores in enumerate(per_pattern):
        values = scores[rows]
        maxima[:, j] = np.maximum.reduceat(values, starts)
        first_seen[:, j] = np.minimum.reduceat(np.where(values > 0, rows, sentinel), starts)
    matched = (maxima > 0).sum(axis=1)
    # §6.2: per-pattern maxima summed in first-appearance order (first hit row, then pattern
    # order); unmatched patterns sort last and add 0.0
    appearance = np.argsort(first_seen * n_patterns + np.arange(n_patterns), axis=1)
    ordered = np.take_along_axis(maxima, appearance, axis=1)
    sums = left_to_right([ordered[:, j] for j in range(n_patterns)], starts.size)
    score = sums + np.array([bonus(n) for n in hits.tolist()], dtype=np.float64)
    file_codes = codes[starts]
    ranked = np.lexsort((index.path_rank[file_codes], -best, -matched, -score))
    names = index.paths.names
    file_rows = [
        {
            "best_chunk_score": float(best[f]),
            "hit_chunks": int(hits[f]),
            "matched_patterns": int(matched[f]),
            "path": names[file_codes[f]],
            "score": float(score[f]),
        }
        for f in ranked.tolist()
    ]
    return _result(index, patterns, best_rows[ranked].astype(np.int64), file_rows)


def rank_sample(index: GrepIndex, query_text: str) -> ChunkRanking:
    """Matched files by grep score; ``order`` holds each file's representative (best) row."""
    return search(index, query_text).ranking


def row_stats(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """arbwb-defined summary counts: evaluated rows with no pattern, and with patterns but no hit.

    Both are evaluated with an empty ranking and all-zero metrics (§6.6), never skipped.
    """
    ranked = [r for r in rows if "patterns" in r]
    return {
        "no_pattern_samples": sum(1 for r in ranked if not r["patterns"]),
        "no_hit_samples": sum(1 for r in ranked if r["patterns"] and not r["top_files"]),
    }


def method(mode: PatternMode = "strict") -> Method:
    """The grep retriever of one pattern mode (details/summary as arb-grep §8)."""
    return Method(
        name="grep" if mode == "strict" else "grep-expanded",
        ranker="grep",
        build_index=functools.partial(build_index, mode=mode),
        rank_sample=rank_sample,
        model=f"grep-{mode}",
        stats=lambda: {"pattern_mode": mode},
        gold_only=True,
        row_stats=row_stats,
        index_ahead=True,
    )


METHOD = method("strict")
METHOD_EXPANDED = method("expanded")
