"""Upstream's path-aware TF-IDF-style lexical ranker, exactly (spec §7.1, §7.2)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.retrievers.common import (
    ChunkPaths,
    ChunkRanking,
    Method,
    TermMatrix,
    TermMemo,
    check_chunks,
    chunk_paths,
    codes_of,
    corpus_order,
    query_terms,
    rank_chunks,
    term_matrix,
    term_rows,
    tiebreak_order,
)
from arbwb.retrievers.termcache import TermSource, snapshot_indexer

PATH_BONUS = 25.0
BASENAME_BONUS = 8.0
SYMBOL_BONUS = 5.0


@dataclass(frozen=True)
class LexicalIndex:
    """Term sets of one snapshot's chunks plus the distinct lower-cased paths/basenames/symbols."""

    terms: TermMatrix
    n_chunks: int
    paths: ChunkPaths
    tiebreak: npt.NDArray[np.int64]
    lower_paths: list[str]
    lower_basenames: list[str]
    symbol_codes: npt.NDArray[np.int64]
    lower_symbols: list[str]


def build_index(chunks: pl.DataFrame, memo: TermMemo | None = None) -> LexicalIndex:
    """Index a snapshot's candidate chunks (file and symbol rows) for :func:`rank_sample`."""
    chunks = check_chunks(chunks)
    return index_from_terms(chunks, term_matrix(chunks, memo))


def index_from_terms(chunks: pl.DataFrame, terms: TermMatrix) -> LexicalIndex:
    """The index of chunks (``path``, ``symbol``, ``chunk_id`` columns) with their terms."""
    paths = chunk_paths(chunks)
    symbol_codes, symbols = codes_of(chunks["symbol"])
    return LexicalIndex(
        terms=terms,
        n_chunks=chunks.height,
        paths=paths,
        tiebreak=tiebreak_order(chunks),
        lower_paths=[p.lower() for p in paths.names],
        lower_basenames=[p.rsplit("/", 1)[-1].lower() for p in paths.names],
        symbol_codes=symbol_codes,
        lower_symbols=[s.lower() for s in symbols],
    )


def scores(index: LexicalIndex, query_text: str) -> npt.NDArray[np.float64] | None:
    """Per-chunk lexical score, or None when the query has no tokens.

    ``raw(c) = Σ_{distinct t in q ∩ set(c)} (1 + ln n_q(t))·ln((N+1)/(1+df(t)) + 1)
    + 25·[lower(path) ⊂ lower(q)] + 8·[lower(basename) ⊂ lower(q)] + 5·[symbol ≠ "" and
    lower(symbol) ⊂ lower(q)]``; ``score(c) = raw(c) / max(1, sqrt(|set(c)|))``, N = max(1, chunks).
    Terms are summed left to right in order of first occurrence in q, like upstream.
    """
    terms = query_terms(query_text)
    if not terms:
        return None
    n = max(1, index.n_chunks)
    raw = np.zeros(index.n_chunks, dtype=np.float64)
    for _, n_q, rows, _counts in term_rows(index.terms, terms):
        df = len(rows)
        raw[rows] += (1 + math.log(n_q)) * math.log((n + 1) / (1 + df) + 1)
    lowered = query_text.lower()
    path_hit = np.array([p in lowered for p in index.lower_paths], dtype=bool)
    base_hit = np.array([b in lowered for b in index.lower_basenames], dtype=bool)
    symbol_hit = np.array([s != "" and s in lowered for s in index.lower_symbols], dtype=bool)
    raw[path_hit[index.paths.codes]] += PATH_BONUS
    raw[base_hit[index.paths.codes]] += BASENAME_BONUS
    raw[symbol_hit[index.symbol_codes]] += SYMBOL_BONUS
    return raw / np.maximum(1.0, np.sqrt(index.terms.n_unique))


def rank_sample(index: LexicalIndex, query_text: str) -> ChunkRanking:
    """Chunks by (score desc, path, chunk_id); a token-free query keeps corpus order, score 0."""
    chunk_scores = scores(index, query_text)
    if chunk_scores is None:
        return corpus_order(index.paths)
    return rank_chunks(chunk_scores, index.tiebreak, index.paths)


def method(source: TermSource | None = None) -> Method:
    """The ``lexical`` method: with a ``source``, snapshots are streamed from the chunk files
    with their term statistics cached on disk; else from chunk frames with a run-level token
    memo (snapshots share most chunk text)."""
    if source is not None:
        return Method(
            name="lexical",
            ranker="lexical",
            build_index=build_index,
            rank_sample=rank_sample,
            stats=source.stats,
            prefetch=source.prefetch,
            index_snapshot=snapshot_indexer(source, index_from_terms),
        )
    memo = TermMemo()
    return Method(
        name="lexical",
        ranker="lexical",
        build_index=lambda chunks: build_index(chunks, memo),
        rank_sample=rank_sample,
        stats=memo.stats,
    )


#: A ready instance (its memo only caches a pure function of document text, so sharing is safe).
