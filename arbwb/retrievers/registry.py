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
from arbwb.retrievers import METHOD_NAMES
from arbwb.retrievers.common import RetrievalMethod, rank_row, snapshot_index

if TYPE_CHECKING:
    from arbwb.retrievers import dense, repomap


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


def _make(options: MethodOptions, *, name: str) -> RetrievalMethod:
    """The built-in ``name``, its module imported only now (dense loads its model)."""
    if name in ("lexical", "bm25-arb", "bm25"):
        from arbwb.retrievers import bm25, lexical
        from arbwb.retrievers.termcache import TermSource

        source = TermSource(options.term_cache_dir) if options.stream_terms else None
        if name == "lexical":
            return lexical.method(source)
        return bm25.method(okapi=name == "bm25", source=source)
    if name in ("grep", "grep-expanded"):
        from arbwb.retrievers import grep

        return grep.method("strict" if name == "grep" else "expanded", options.checked_dir)
    if name == "dense":
        from arbwb.retrievers import dense

        return dense.method(options.model, encoder=options.encoder, cache_dir=options.cache_dir)
    from arbwb.retrievers import repomap

    weights = options.weights or repomap.Weights()
    return repomap.method(weights, cache_dir=options.index_cache_dir)


#: Chunk retrievers by name (every ``METHOD_NAMES`` entry but ``rrf``), each made by
#: :func:`_make`, so ranking with one method loads only its code.
METHODS: dict[str, Callable[[MethodOptions], RetrievalMethod]] = {
    name: functools.partial(_make, name=name) for name in METHOD_NAMES if name != "rrf"
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
