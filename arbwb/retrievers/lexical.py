"""Upstream's path-aware TF-IDF-style lexical ranker, exactly (spec §7.1, §7.2)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.retrievers import common
from arbwb.retrievers.interface import bind
from arbwb.retrievers.term_retriever import TermRetriever
from arbwb.retrievers.termcache import TermSource

PATH_BONUS = 25.0
BASENAME_BONUS = 8.0
SYMBOL_BONUS = 5.0


@dataclass(frozen=True)
class LexicalIndex:
    """Keys and term sets of a snapshot's chunks, the bonus needles and each chunk's normaliser."""

    keys: common.ChunkKeys
    terms: common.TermMatrix
    needles: common.BonusNeedles
    norm: npt.NDArray[np.float64]


def build_index(chunks: pl.DataFrame, memo: common.TermMemo | None = None) -> LexicalIndex:
    """Index a snapshot's candidate chunks (file and symbol rows) for :func:`rank_sample`."""
    chunks = common.check_chunks(chunks)
    return index_from_terms(common.chunk_keys(chunks), common.term_matrix(chunks, memo))


def index_from_terms(keys: common.ChunkKeys, terms: common.TermMatrix) -> LexicalIndex:
    """The index of chunks (their :class:`ChunkKeys`) with their terms."""
    return LexicalIndex(keys, terms, keys.bonus(), np.maximum(1.0, np.sqrt(terms.n_unique)))


def scores(index: LexicalIndex, query_text: str) -> npt.NDArray[np.float64] | None:
    """Per-chunk lexical score (§7.2, docs/retrievers.md#lexical), or None for a token-free
    query; terms summed in query order, the bonuses' ``in`` tests by :class:`Needles`."""
    terms = common.query_terms(query_text)
    if not terms:
        return None
    n_chunks, codes = index.keys.n_chunks, index.keys.paths.codes
    n = max(1, n_chunks)
    raw = np.zeros(n_chunks, dtype=np.float64)
    for _, n_q, rows, _counts in common.term_rows(index.terms, terms):
        df = len(rows)
        raw[rows] += (1 + math.log(n_q)) * math.log((n + 1) / (1 + df) + 1)
    path_hit, base_hit, symbol_hit = index.needles.hits(query_text.lower())
    raw[path_hit[codes]] += PATH_BONUS
    raw[base_hit[codes]] += BASENAME_BONUS
    raw[symbol_hit[index.keys.symbol_codes]] += SYMBOL_BONUS
    return raw / index.norm


def rank_sample(index: LexicalIndex, query_text: str) -> common.ChunkRanking:
    """Chunks by (score desc, path, chunk_id); a token-free query keeps corpus order, score 0."""
    return common.rank_chunks(scores(index, query_text), index.keys.tiebreak, index.keys.paths)


def method(source: TermSource | None = None) -> common.RetrievalMethod:
    """The ``lexical`` method: with a ``source``, snapshots streamed with cached term
    statistics; else chunk frames with a run-level token memo."""
    return bind(TermRetriever("lexical", "lexical", index_from_terms, rank_sample, source))
