"""BM25 over chunk documents: upstream's exact variant (``bm25-arb``, spec §7.3) and rank-bm25's
(``bm25``); they differ only in IDF (docs/retrievers.md#bm25-arb-and-bm25)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.retrievers import common
from arbwb.retrievers.interface import bind
from arbwb.retrievers.term_retriever import TermRetriever
from arbwb.retrievers.termcache import TermSource

K1 = 1.5
B = 0.75
OKAPI_EPSILON = 0.25


@dataclass(frozen=True)
class BM25Index:
    """Term counts and length normaliser ``k1·(1 - b + b·dl/avgdl)`` of a snapshot's chunks;
    ``okapi_idf`` None: upstream's IDF, computed per term in Python (upstream's floats)."""

    keys: common.ChunkKeys
    terms: common.TermMatrix
    norm: npt.NDArray[np.float64]
    okapi_idf: npt.NDArray[np.float64] | None


def upstream_idf(n_docs: int, df: int) -> float:
    """Upstream (Lucene-style) IDF: ``ln(1 + (N - df + 0.5)/(df + 0.5))``, N = max(1, chunks)."""
    n = max(1, n_docs)
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def okapi_idf(n_docs: int, df: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """rank-bm25 BM25Okapi IDF per column: ``ln(N - df + 0.5) - ln(df + 0.5)``, negatives
    replaced by ``ε·mean(idf)`` over the present terms; absent terms 0 (never used)."""
    present = df > 0
    values = np.zeros(len(df), dtype=np.float64)
    values[present] = np.log(n_docs - df[present] + 0.5) - np.log(df[present] + 0.5)
    if present.any():
        # fsum: exactly rounded, so the floor does not depend on the vocabulary's column order
        floor = OKAPI_EPSILON * math.fsum(values[present]) / int(present.sum())
        values[present & (values < 0)] = floor
    return values


def build_index(
    chunks: pl.DataFrame, memo: common.TermMemo | None = None, *, okapi: bool = False
) -> BM25Index:
    """Index for upstream's BM25 (``bm25-arb``), or rank-bm25's BM25Okapi with ``okapi``."""
    chunks = common.check_chunks(chunks)
    return index_from_terms(
        common.chunk_keys(chunks), common.term_matrix(chunks, memo), okapi=okapi
    )


def index_from_terms(
    keys: common.ChunkKeys, terms: common.TermMatrix, *, okapi: bool = False
) -> BM25Index:
    """The index of chunks (their :class:`ChunkKeys`) with their term counts."""
    n = keys.n_chunks
    avgdl = float(terms.doc_len.sum()) / n if n else 0.0
    if avgdl > 0:
        norm = K1 * (1 - B + B * terms.doc_len / avgdl)
    else:
        norm = np.full(n, K1 * (1 - B), dtype=np.float64)
    return BM25Index(keys, terms, norm, okapi_idf(n, terms.df) if okapi else None)


def build_okapi_index(chunks: pl.DataFrame, memo: common.TermMemo | None = None) -> BM25Index:
    """Index for rank-bm25's BM25Okapi formula (``bm25``) over the same chunk documents."""
    return build_index(chunks, memo, okapi=True)


def scores(index: BM25Index, query_text: str) -> npt.NDArray[np.float64] | None:
    """Per-chunk BM25 (§7.3), or None for a token-free query; terms summed in query order, the
    ``tf`` bracket evaluated first (upstream's floats bit for bit, TV6)."""
    terms = common.query_terms(query_text)
    if not terms:
        return None
    n_chunks = index.keys.n_chunks
    total = np.zeros(n_chunks, dtype=np.float64)
    for col, n_q, rows, tf in common.term_rows(index.terms, terms):
        if index.okapi_idf is None:
            idf = upstream_idf(n_chunks, len(rows))
        else:
            idf = float(index.okapi_idf[col])
        weight = n_q * idf
        total[rows] += weight * (tf * (K1 + 1) / (tf + index.norm[rows]))
    return total


def rank_sample(index: BM25Index, query_text: str) -> common.ChunkRanking:
    """Chunks by (BM25 desc, path, chunk_id); a token-free query keeps corpus order, score 0."""
    return common.rank_chunks(scores(index, query_text), index.keys.tiebreak, index.keys.paths)


def method(*, okapi: bool = False, source: TermSource | None = None) -> common.RetrievalMethod:
    """``bm25-arb`` (upstream) or ``bm25`` (rank-bm25 formula); ``source`` as in lexical."""
    name, ranker = ("bm25", "bm25-okapi") if okapi else ("bm25-arb", "bm25")
    build = functools.partial(index_from_terms, okapi=okapi)
    return bind(TermRetriever(name, ranker, build, rank_sample, source))
