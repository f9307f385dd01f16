"""Chunk retrievers by name: each factory returns a ready :class:`Method`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from arbwb.io.corpus import Corpus
from arbwb.pathclass import CandidateFilter
from arbwb.retrievers import bm25, dense, grep, lexical, repomap
from arbwb.retrievers.common import Method, rank_samples
from arbwb.retrievers.termcache import TermSource


@dataclass(frozen=True)
class MethodOptions:
    """Options a method factory may use (``dense``: model/encoder/cache; ``repomap``: the rest)."""

    model: str | None = None
    encoder: dense.Encoder | None = None
    cache_dir: str | Path | None = None
    weights: repomap.Weights = field(default_factory=repomap.Weights)
    index_cache_dir: Path | None = None
    #: lexical/BM25: stream snapshots from the chunk files (term statistics cached in
    #: ``term_cache_dir`` when given) instead of indexing chunk frames with a token memo.
    stream_terms: bool = False
    term_cache_dir: Path | None = None


def _source(options: MethodOptions) -> TermSource | None:
    return TermSource(options.term_cache_dir) if options.stream_terms else None


def _dense(options: MethodOptions) -> Method:
    return dense.method(options.model, encoder=options.encoder, cache_dir=options.cache_dir)


#: Chunk retrievers by name; each factory returns a ready :class:`Method` (dense loads its model).
METHODS: dict[str, Callable[[MethodOptions], Method]] = {
    "lexical": lambda o: lexical.method(_source(o)),
    "bm25-arb": lambda o: bm25.method(source=_source(o)),
    "bm25": lambda o: bm25.method(okapi=True, source=_source(o)),
    "grep": lambda _: grep.METHOD,
    "grep-expanded": lambda _: grep.METHOD_EXPANDED,
    "dense": _dense,
    "repomap": lambda o: repomap.method(o.weights, cache_dir=o.index_cache_dir),
}


def get_method(name: str, options: MethodOptions | None = None) -> Method:
    """The chunk retriever called ``name``; unknown names fail listing the valid ones."""
    factory = METHODS.get(name)
    if factory is None:
        hint = " (rrf fuses stored runs: use arbwb.retrievers.fusion)" if name == "rrf" else ""
        msg = f"unknown retrieval method {name!r}{hint}; choose one of {sorted(METHODS)}"
        raise ValueError(msg)
    return factory(options or MethodOptions())


def rank(
    name: str,
    samples: pl.DataFrame,
    corpus: Corpus,
    *,
    candidate_filter: CandidateFilter = "all_files",
    options: MethodOptions | None = None,
) -> pl.DataFrame:
    """Full file rankings (RANKINGS frame, run = method name) of ``samples`` over ``corpus``."""
    method = get_method(name, options)
    return rank_samples(method, samples, corpus, candidate_filter=candidate_filter, run=name)
