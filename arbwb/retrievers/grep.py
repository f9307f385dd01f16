"""Grep baseline (``grep`` = strict, ``grep-expanded``), exactly as upstream's ``eval-grep``
(``arb-grep.md``): query patterns by the contract's ``re`` expressions verbatim (§3-§4), then
strict over all files parses only the lines a regex prefilter keeps."""

from __future__ import annotations

import dataclasses
import decimal
import functools
import math
import mmap
import operator
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.io.chunkscan import CHUNK_FIELDS, check_chunk_file, parse_block, row_count
from arbwb.io.corpus import Corpus
from arbwb.io.pathclass import CandidateFilter
from arbwb.metrics.chunks import chunk_table
from arbwb.retrievers import common
from arbwb.retrievers.interface import bind
from arbwb.tokenize import split_identifiers

PatternMode = Literal["strict", "expanded"]
PATTERN_MODES: tuple[PatternMode, ...] = ("strict", "expanded")

_BARE_EXT = (
    "bash|c|cc|cpp|cs|cxx|fish|go|h|hpp|java|js|jsx|kt|kts|m|mm|php|proto|py|pyi|rb|rs|scala|sh"
    "|swift|ts|tsx|zsh"
)
CODE_SPAN_RE = re.compile(r"`([^`\n]{2,200})`")
FILE_PATH_RE = re.compile(
    rf"(?:[A-Za-z0-9_.@+-]+/)+[A-Za-z0-9_.@+-]+\.(?:{_BARE_EXT}|json|ya?ml|toml|md|rst|txt)\b"
)
BARE_FILE_RE = re.compile(rf"\b[A-Za-z0-9_.@+-]+\.(?:{_BARE_EXT})\b")
FLAG_RE = re.compile(r"(?<!\w)--[A-Za-z0-9][A-Za-z0-9_-]{1,80}\b")
IDENTIFIER_RE = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.|/)[A-Za-z_][A-Za-z0-9_]*)*\b")
ERROR_SUFFIX_RE = re.compile(r"(?:Error|Exception|Failure|Warning|Panic|Timeout|Traceback)$")

#: The 73 stop terms (compared lower-cased, as whole terms).
_STOP_WORDS = """a an and are arg args base body bug call case change changed changed_file class
code comment config context could data default does error expected fail failed failure
failure_excerpt file files fix from function given_file gold has have issue kind line log message
method must name not path pr pr_body pr_title query raw_signal review review_comment run should
signal source stack test tests text that the this title trace type update value when with"""
STOP_TERMS = frozenset(_STOP_WORDS.split())
#: Characters removed from both ends of a term after whitespace (§4.2).
TRIM = "'\"\u201c\u201d\u2018\u2019.,;:()[]{}"
WEIGHT_SPAN, WEIGHT_FILE, WEIGHT_FLAG, WEIGHT_IDENTIFIER, WEIGHT_TOKEN = 12.0, 18.0, 10.0, 7.0, 1.0


@dataclass(frozen=True)
class Pattern:
    """One grep pattern: term (original casing), kind and weight (a details ``patterns`` row)."""

    term: str
    kind: str
    weight: float


def clean(s: str) -> str:
    """Strip whitespace, then the trim set; uncovered whitespace stays (§4.2)."""
    return s.strip().strip(TRIM)


def usable(t: str) -> bool:
    """At least 2 characters, not a stop term, and some alphanumeric character (§4.2)."""
    return len(t) >= 2 and t.lower() not in STOP_TERMS and any(c.isalnum() for c in t)


def span_kind(s: str) -> str:
    """Kind of a code span, decided on the uncleaned span (§4.5)."""
    if FILE_PATH_RE.fullmatch(s) or BARE_FILE_RE.fullmatch(s):
        return "file_path"
    if s.startswith("--"):
        return "flag"
    return "error" if ERROR_SUFFIX_RE.search(s) else "code"


def high_signal(m: str) -> bool:
    """Whether an identifier match becomes a weight-7 pattern (§4.5, first rule decides)."""
    if not usable(m):
        return False
    if any(mark in m for mark in ("/", ".", "::", "_")) or any(c.isdigit() for c in m):
        return True
    if ERROR_SUFFIX_RE.search(m) or (len(m) >= 3 and m.isupper()):
        return True
    return any(c.isupper() for c in m[1:]) and any(c.islower() for c in m)


def _offer(table: dict[str, Pattern], s: str, kind: str, weight: float) -> None:
    """Record a candidate: new lower-cased term, or strictly higher weight replaces (§4.3)."""
    term = clean(s)
    if not usable(term):
        return
    key = term.lower()
    current = table.get(key)
    if current is None or current.weight < weight:
        table[key] = Pattern(term, kind, weight)


def extract_patterns(query_text: str, mode: PatternMode = "strict") -> list[Pattern]:
    """The pattern list of evaluation text T (§4.4 offers, §4.6 order)."""
    if mode not in PATTERN_MODES:
        msg = f"grep pattern mode must be 'strict' or 'expanded', got {mode!r}"
        raise ValueError(msg)
    n = query_text.replace("\\n", "\n")  # N: each two-character \n of T a newline, only (§3)
    table: dict[str, Pattern] = {}
    for match in CODE_SPAN_RE.finditer(n):
        span = match.group(1).strip()
        _offer(table, span, span_kind(span), WEIGHT_SPAN)
    for regex in (FILE_PATH_RE, BARE_FILE_RE):
        for match in regex.finditer(n):
            _offer(table, match.group(0), "file_path", WEIGHT_FILE)
    for match in FLAG_RE.finditer(n):
        _offer(table, match.group(0), "flag", WEIGHT_FLAG)
    for match in IDENTIFIER_RE.finditer(n):
        m = match.group(0)
        if high_signal(m):
            kind = "error" if ERROR_SUFFIX_RE.search(m) else "identifier"
            _offer(table, m, kind, WEIGHT_IDENTIFIER)
    if mode == "expanded":
        for token in split_identifiers(n):
            if len(token) >= 4 and token not in STOP_TERMS:
                _offer(table, token, "token", WEIGHT_TOKEN)
    return sorted(table.values(), key=lambda p: (-p.weight, p.kind, p.term.lower()))


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
    """glibc's ``log1p(n)`` for 0 ≤ n < 2980: correctly rounded ln(1+n) plus the §6.3 ulp fixes."""
    exact = float(decimal.Context(prec=40).ln(decimal.Decimal(n + 1)))
    step = GLIBC_LOG1P_ULP.get(n, 0)
    return exact if step == 0 else math.nextafter(exact, math.inf * step)


def bonus(n: int) -> float:
    """Hit bonus ``min(2.0, log1p(n) x 0.25)`` with glibc's ``log1p`` (§6.2-6.3)."""
    return BONUS_CAP if n >= BONUS_CAP_FROM else min(BONUS_CAP, glibc_log1p(n) * 0.25)


@dataclass(frozen=True)
class GrepIndex:
    """One snapshot's candidate rows lower-cased once (§5): ``distinct`` per path (codes are
    code-point ranks), ``rows`` per row; ``memo`` caches each (field, term) hit vector."""

    mode: PatternMode
    paths: common.ChunkPaths
    distinct: pl.DataFrame
    rows: pl.DataFrame
    has_path: npt.NDArray[np.bool_]  # per row: rows with an empty path are never hits (§6.1)
    n_chars: list[int]  # per row: representative text length; empty text counts its path (§6.5)
    memo: dict[tuple[str, str], npt.NDArray[np.bool_]] = field(default_factory=dict)


def python_lower(values: pl.Series) -> pl.Series:
    """Python ``str.lower`` of every value (Polars for ASCII values, Python for the others)."""
    lowered = values.str.to_lowercase()
    rows = np.flatnonzero((values.str.len_bytes() != values.str.len_chars()).to_numpy())
    if rows.size:
        lowered = lowered.scatter(rows, [v.lower() for v in values.gather(rows).to_list()])
    return lowered


def basename(path: str) -> str:
    """``PurePosixPath(path).name``, built only when the last component is empty or ``.``."""
    last = path.rpartition("/")[2]
    return last if last not in ("", ".") else PurePosixPath(path).name


def build_index(chunks: pl.DataFrame, mode: PatternMode = "strict") -> GrepIndex:
    """Lower-case path, basename, symbol and text of a snapshot's (filtered) rows, in order."""
    path, text = pl.col("path"), pl.col("text")
    columns = common.check_chunks(chunks).select(
        (path.rank("dense").cast(pl.Int64) - 1).alias("code"),
        (path != "").alias("has_path"),
        pl.when(text == "").then(path.str.len_chars()).otherwise(text.str.len_chars()).alias("n"),
    )
    names = chunks["path"].unique().sort().to_list()
    lowered = {"path": [p.lower() for p in names], "base": [basename(p).lower() for p in names]}
    distinct = pl.DataFrame(lowered, schema={"path": pl.String, "base": pl.String})
    paths = common.ChunkPaths(columns["code"].to_numpy(), names)
    rows = pl.DataFrame([python_lower(chunks[place]) for place in ("symbol", "text")])
    has_path, n_chars = columns["has_path"].to_numpy(), columns["n"].to_list()
    return GrepIndex(mode, paths, distinct, rows, has_path, n_chars)


def _contains(column: str, needle: str, *, token: bool) -> pl.Expr:
    """Substring test of ``column``; ``token``: no ASCII word character beside (TOKEN_TEXT_RE's
    lookarounds, emulated by consuming the neighbour; tokens need no escaping)."""
    if token:
        return pl.col(column).str.contains(f"(?:^|[^{_WORD}]){needle}(?:[^{_WORD}]|$)")
    return pl.col(column).str.contains(needle, literal=True)


def _places(pattern: Pattern) -> tuple[str, ...]:
    """Where a pattern is looked for; token text hits need the word boundary (§5)."""
    return ("path", "base", "symbol", "token_text" if pattern.kind == "token" else "text")


def _fill(index: GrepIndex, patterns: Sequence[Pattern]) -> None:
    """Compute the hit vectors of the patterns' terms not yet in the memo (one select per frame)."""
    wanted = {(place, p.term.lower()) for p in patterns for place in _places(p)}
    for frame in (index.distinct, index.rows):
        jobs = sorted(
            (place, q)
            for place, q in wanted - index.memo.keys()
            if place.removeprefix("token_") in frame.columns
        )
        if not jobs:
            continue
        found = frame.select(
            _contains(place.removeprefix("token_"), q, token=place == "token_text").alias(str(i))
            for i, (place, q) in enumerate(jobs)
        )
        for i, (place, q) in enumerate(jobs):
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

    ranking: common.ChunkRanking
    patterns: list[Pattern]
    file_rows: list[dict[str, Any]]


def _ranked(
    mode: PatternMode,
    n_chars: Sequence[int],
    patterns: list[Pattern],
    order: npt.NDArray[np.int64],
    file_rows: list[dict[str, Any]],
) -> GrepResult:
    """The ranked files as a GrepResult whose details carry the §8.1 grep fields."""
    scores = [r["score"] for r in file_rows]
    details = {
        "pattern_mode": mode,
        "patterns": [{"kind": p.kind, "term": p.term, "weight": p.weight} for p in patterns],
        "top_file_scores": file_rows[:TOP_K],
    }
    files = [r["path"] for r in file_rows]
    ranking = common.ChunkRanking(
        order, np.asarray(scores, dtype=np.float64), files, scores, details, n_chars
    )
    return GrepResult(ranking, patterns, file_rows)


def left_to_right(columns: Sequence[npt.NDArray[np.float64]], size: int) -> npt.NDArray[np.float64]:
    """Elementwise ``((0.0 + c0) + c1) + ...``: the plain left-to-right sum the contract fixes."""
    return functools.reduce(operator.add, columns, np.zeros(size, dtype=np.float64))


def search(index: GrepIndex, query_text: str, patterns: list[Pattern] | None = None) -> GrepResult:
    """Rank the files of ``index`` for evaluation text T (§4-§6); empty when nothing matches."""
    patterns = extract_patterns(query_text, index.mode) if patterns is None else patterns
    empty = np.zeros(0, dtype=np.int64)
    if not patterns:  # §6.6: no row is examined
        return _ranked(index.mode, index.n_chars, patterns, empty, [])
    _fill(index, patterns)
    per_pattern = [pattern_scores(index, p) for p in patterns]
    chunk = left_to_right(per_pattern, len(index.has_path))  # §5: match list in pattern order
    rows = np.flatnonzero((chunk > 0) & index.has_path)
    if rows.size == 0:
        return _ranked(index.mode, index.n_chars, patterns, empty, [])
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
    ranked = np.lexsort((file_codes, -best, -matched, -score))  # codes are path ranks
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
    order = best_rows[ranked].astype(np.int64)
    return _ranked(index.mode, index.n_chars, patterns, order, file_rows)


@dataclass(frozen=True)
class LineIndex:
    """A snapshot's chunk file as raw JSON lines (strict, all files); ``special`` lines pass every
    prefilter, ``memo`` holds each prefilter's line mask, ``prepared`` each query's lines."""

    mode: PatternMode
    path: Path
    lines: pl.Series
    special: pl.Series
    rows: int  # chunk rows: the non-blank lines
    memo: dict[str, pl.Series] = field(default_factory=dict)
    prepared: dict[str, tuple[list[Pattern], pl.Series]] = field(default_factory=dict)


#: Line contents after which a lower-cased term may hide from :func:`prefilter_regex`: a
#: ``\u`` or ``\/`` escape (a character written otherwise than upstream's JSON writes it) and
#: U+0130, the one character whose Python lower-case is two characters.
SPECIAL_MARKS = ("\\u", "\\/", "\u0130")
_NO_CHUNKS = pl.DataFrame(schema={c: CHUNK_FIELDS[c] for c in common.CHUNK_COLUMNS})


def prefilter_regex(term: str) -> str | None:
    """A regex every line with ``term`` in a lower-cased field matches: its JSON escape up to
    case (:data:`SPECIAL_MARKS` lines cover the rest); None for a control character."""
    if any(c < " " for c in term):
        return None
    return "(?i)" + _regex_literal(term.replace("\\", "\\\\").replace('"', '\\"'))


def _regex_literal(text: str) -> str:
    """``text`` as a Rust-regex literal: ASCII letters and digits as is, the rest ``\\x{..}``."""
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}" for c in text)


@dataclass(frozen=True)
class _CArray:
    """An Arrow array seen only through the PyCapsule interface (Polars then skips importing
    ``pyarrow.compute``, over 0.1 s)."""

    array: Any

    def __arrow_c_array__(self, requested_schema: object | None = None) -> Any:
        return self.array.__arrow_c_array__(requested_schema)


#: Larger chunk files take the full parse (Polars string views address at most 4 GiB).
MAX_MAPPED = 2**32


def map_file(path: Path) -> mmap.mmap | None:
    """A chunk file mapped read-only, or None when empty or unreadable (the full parse decides)."""
    try:
        with path.open("rb") as handle:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


def read_lines(path: Path, data: mmap.mmap | None = None) -> pl.Series | None:
    """The lines of a chunk file with their breaks, as Arrow views into the mapped file; None
    unless all are JSON objects (or blank) on valid UTF-8 (the full parse then reports errors)."""
    import pyarrow as pa

    data = map_file(path) if data is None else data
    if data is None or len(data) >= MAX_MAPPED:
        return None
    raw = np.frombuffer(data, dtype=np.uint8)
    block = 1 << 22  # newline search in blocks: no file-sized temporary
    breaks = [np.flatnonzero(raw[s : s + block] == 10) + (s + 1) for s in range(0, raw.size, block)]
    bounds = np.concatenate([np.zeros(1, dtype=np.int64), *breaks]).astype(np.int64)
    if bounds[-1] != raw.size:  # a last line without a line break
        bounds = np.append(bounds, np.int64(raw.size))
    starts, ends = bounds[:-1], bounds[1:]
    body = ends - (raw[ends - 1] == 10)  # without the line break (LF or CRLF)
    body -= (body > starts) & (raw[np.maximum(body - 1, 0)] == 13)
    blank = body == starts
    shaped = (raw[starts] == ord("{")) & (raw[np.maximum(body - 1, 0)] == ord("}"))
    if blank.all() or not (blank | shaped).all():
        return None
    array = _line_array(bounds, data)
    try:
        array.validate(full=True)  # UTF-8
    except pa.ArrowInvalid:
        return None
    return pl.Series(_CArray(array))


def _line_array(bounds: npt.NDArray[np.int64], data: mmap.mmap) -> Any:
    """The lines between consecutive ``bounds`` as Arrow views into ``data`` (not validated)."""
    import pyarrow as pa

    size = bounds.size - 1
    return pa.LargeStringArray.from_buffers(size, pa.py_buffer(bounds), pa.py_buffer(data))


def line_index(path: Path, marks: Path | None = None) -> LineIndex | None:
    """The strict-mode :class:`LineIndex` of a chunk file (one :mod:`arbwb.native._jsonlines`
    pass, else :func:`read_lines` and the located check); None when empty or not JSON lines."""
    from arbwb.native.select import jsonlines

    data = map_file(path)
    if data is None or len(data) >= MAX_MAPPED:
        return None
    strings = tuple(c.encode() for c in common.CHUNK_COLUMNS if CHUNK_FIELDS[c] == pl.String)
    ints = tuple(c.encode() for c in common.CHUNK_COLUMNS if CHUNK_FIELDS[c] != pl.String)
    scanned = jsonlines.scan(data, strings, ints)
    if scanned is not None:
        bounds = np.frombuffer(scanned[0], dtype=np.int64)
        special = pl.Series(np.frombuffer(scanned[1], dtype=np.uint8).astype(bool))
        viewed = pl.Series(_CArray(_line_array(bounds, data)))
        return LineIndex("strict", path, viewed, special, bounds.size - 1)  # no blank lines
    lines = read_lines(path, data)
    if lines is None:
        return None
    check_chunk_file(path, list(common.CHUNK_COLUMNS), marks)  # a bad row raises, located
    special_regex = "|".join(_regex_literal(m) for m in SPECIAL_MARKS)  # one pass for all three
    special = lines.str.contains(special_regex)
    return LineIndex("strict", path, lines, special, row_count(data))


#: Terms matched by one case-insensitive alternation (one pass over the lines).
GROUP_SIZE = 4


def term_groups(terms: Sequence[str]) -> list[list[str]]:
    """``terms`` (sorted) in groups of at most :data:`GROUP_SIZE` with distinct first characters
    (measured: a shared first letter can make the Rust regex scan ten times slower)."""
    groups: list[list[str]] = []
    for term in sorted(terms):
        home = next(
            (g for g in groups if len(g) < GROUP_SIZE and all(t[0] != term[0] for t in g)), None
        )
        if home is None:
            groups.append([term])
        else:
            home.append(term)
    return groups


def candidates(index: LineIndex, patterns: Sequence[Pattern]) -> pl.Series:
    """Lines that may hold some pattern in a field (special lines always); a term holding
    another query term adds no line, so only the shortest are matched (memoised per group)."""
    terms = {p.term.lower() for p in patterns}
    needed = [q for q in terms if not any(o != q and o in q for o in terms)]
    if any(prefilter_regex(q) is None for q in needed):  # a control character: every line
        return index.lines.str.starts_with("{")
    regexes = [
        "(?i)(?:" + "|".join(str(prefilter_regex(q))[4:] for q in group) + ")"
        for group in term_groups(needed)
    ]
    fresh = sorted(set(regexes) - index.memo.keys())
    found = index.lines.to_frame("v").select(
        pl.col("v").str.contains(r).alias(str(i)) for i, r in enumerate(fresh)
    )
    index.memo.update((r, found[str(i)]) for i, r in enumerate(fresh))
    mask = index.special
    for regex in regexes:
        mask = mask | index.memo[regex]
    return mask


def query_lines(index: LineIndex, query_text: str) -> tuple[list[Pattern], pl.Series]:
    """A query's patterns and the lines that may hold one of them (file order), unparsed."""
    patterns = extract_patterns(query_text, index.mode)
    lines = index.lines
    return patterns, lines.filter(candidates(index, patterns)) if patterns else lines.clear()


def prepare_queries(index: GrepIndex | LineIndex, query_texts: Sequence[str]) -> None:
    """Each query's patterns and candidate lines, found with the indexing (a worker thread)."""
    if isinstance(index, LineIndex):
        for text in query_texts:
            if text not in index.prepared:
                index.prepared[text] = query_lines(index, text)


def rank_sample(index: GrepIndex | LineIndex, query_text: str) -> common.ChunkRanking:
    """Matched files by grep score (``order``: each file's best row); a :class:`LineIndex`
    parses only the candidate lines, and the ranking carries their chunk table."""
    if not isinstance(index, LineIndex):
        return search(index, query_text).ranking
    patterns, rows = index.prepared.get(query_text) or query_lines(index, query_text)
    if rows.is_empty():
        return _ranked(index.mode, [], patterns, np.zeros(0, dtype=np.int64), []).ranking
    block = b"".join(rows.cast(pl.Binary).to_list())  # each line ends with its break
    chunks = parse_block(index.path, block, list(common.CHUNK_COLUMNS))
    ranking = search(build_index(chunks, index.mode), query_text, patterns).ranking
    return dataclasses.replace(ranking, table=chunk_table(chunks))


@dataclass(frozen=True)
class Grep:
    """The grep retriever of one pattern mode, scored on gold files only (arb-grep §7-§8);
    ``marks``: cache folder of chunk files whose rows passed the check."""

    mode: PatternMode
    marks: Path | None
    name: str  # grep (strict) or grep-expanded
    model: str  # the pattern mode as the summary's model label
    index_ahead: int  # strict snapshots are light mapped lines (2 ahead), expanded ones 1
    ranker: str = "grep"
    gold_only: bool = True
    rank = staticmethod(rank_sample)
    prepare_queries = staticmethod(prepare_queries)

    def index(self, chunks: pl.DataFrame) -> GrepIndex:
        return build_index(chunks, self.mode)

    def index_snapshot(
        self, corpus: Corpus, snapshot: str, candidate_filter: CandidateFilter
    ) -> tuple[GrepIndex | LineIndex, pl.DataFrame] | None:
        """A snapshot's index and chunk frame; strict mode over all files keeps the unparsed
        lines (:class:`LineIndex`; each ranking carries its own table, the frame is empty)."""
        if self.mode == "strict" and candidate_filter == "all_files":
            path = corpus.chunk_path(snapshot)
            index = line_index(path, self.marks)
            if index is not None:
                corpus.check_counts(snapshot, path, index.rows)
                return index, _NO_CHUNKS
        chunks = common.candidate_chunks(corpus.chunks(snapshot), candidate_filter)
        return (build_index(chunks, self.mode), chunks) if chunks.height else None

    def stats(self) -> dict[str, str]:
        return {"pattern_mode": self.mode}

    def row_stats(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
        """arbwb-defined summary counts: rows with no pattern, and with no hit (§6.6)."""
        ranked = [r for r in rows if "patterns" in r]
        return {
            "no_pattern_samples": sum(1 for r in ranked if not r["patterns"]),
            "no_hit_samples": sum(1 for r in ranked if r["patterns"] and not r["top_files"]),
        }


def method(mode: PatternMode = "strict", marks: Path | None = None) -> common.RetrievalMethod:
    """The bound :class:`Grep` retriever of one pattern mode."""
    strict = mode == "strict"
    name = "grep" if strict else "grep-expanded"
    return bind(Grep(mode, marks, name, f"grep-{mode}", 2 if strict else 1))
