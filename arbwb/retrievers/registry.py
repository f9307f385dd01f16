"""Chunk retrievers by name: each factory returns a ready :class:`RetrievalMethod`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from arbwb import schemas
from arbwb.io.corpus import Corpus
from arbwb.io.pathclass import CandidateFilter
from arbwb.retrievers.common import RetrievalMethod, rank_row, snapshot_index

if TYPE_CHECKING:
    from arbwb.retrievers import dense, repomap
    from arbwb.retrievers.grep import PatternMode
    from arbwb.retrievers.termcache import TermSource


@dataclass(frozen=True)
class MethodOptions:
    """Options a method factory may use (``dense``: model/encoder/cache; ``repomap``: the rest)."""

    model: str | None = None
    encoder: dense.Encoder | None = None
    cache_dir: str | Path | None = None
    weights: repomap.Weights | None = None  # None: the spec's defaults
    index_cache_dir: Path | None = None
    #: lexical/BM25: stream snapshots from the chunk files (term statistics cached in
    #: ``term_cache_dir`` when given) instead of indexing chunk frames with a token memo.
    stream_terms: bool = False
    term_cache_dir: Path | None = None
    #: grep: marks of chunk files whose rows passed the general check (once until they change)
    checked_dir: Path | None = None


def _source(options: MethodOptions) -> TermSource | None:
    from arbwb.retrievers.termcache import TermSource

    return TermSource(options.term_cache_dir) if options.stream_terms else None


def _term(options: MethodOptions, *, name: str) -> RetrievalMethod:
    from arbwb.retrievers import bm25, lexical

    if name == "lexical":
        return lexical.method(_source(options))
    return bm25.method(okapi=name == "bm25", source=_source(options))


def _grep(options: MethodOptions, *, mode: PatternMode) -> RetrievalMethod:
    from arbwb.retrievers import grep

    return grep.method(mode, options.checked_dir)


def _dense(options: MethodOptions) -> RetrievalMethod:
    from arbwb.retrievers import dense

    return dense.method(options.model, encoder=options.encoder, cache_dir=options.cache_dir)


def _repomap(options: MethodOptions) -> RetrievalMethod:
    from arbwb.retrievers import repomap

    weights = options.weights or repomap.Weights()
    return repomap.method(weights, cache_dir=options.index_cache_dir)


#: Chunk retrievers by name; each factory imports its module and returns a ready
#: :class:`RetrievalMethod` (dense loads its model), so ranking with one method loads only its code.
METHODS: dict[str, Callable[[MethodOptions], RetrievalMethod]] = {
    **{n: functools.partial(_term, name=n) for n in ("lexical", "bm25-arb", "bm25")},
    "grep": functools.partial(_grep, mode="strict"),
    "grep-expanded": functools.partial(_grep, mode="expanded"),
    "dense": _dense,
    "repomap": _repomap,
}


def get_method(name: str, options: MethodOptions | None = None) -> RetrievalMethod:
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
    """Full file rankings (RANKINGS frame, run = method name) of ``samples`` over ``corpus``; a
    missing or empty snapshot's samples get no rows (scorers count them as failures)."""
    method = get_method(name, options)
    frames = [schemas.empty(schemas.RANKINGS)]
    for (snapshot,), group in samples.group_by("snapshot_id", maintain_order=True):
        has = corpus.has(str(snapshot))
        prepared = snapshot_index(method, corpus, str(snapshot), candidate_filter) if has else None
        if prepared is None:
            continue
        for row in group.iter_rows(named=True):
            ranking = rank_row(method, prepared[0], row)
            n = len(ranking.files)
            columns: dict[str, Any] = {"run": [name] * n, "sample_id": [row["sample_id"]] * n}
            columns |= {"rank": np.arange(1, n + 1), "path": ranking.files}
            frames.append(pl.DataFrame(columns | {"score": ranking.file_scores}, schemas.RANKINGS))
    return pl.concat(frames)
