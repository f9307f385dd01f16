"""Lexical and BM25 as one kind of retriever: a term index per snapshot, two ways to get it."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any

import polars as pl

from arbwb.retrievers import common
from arbwb.retrievers.termcache import TermSource, snapshot_indexer


class TermRetriever:
    """Lexical/BM25 as a retriever: chunk frames with a run-level :class:`TermMemo`, or with a
    ``source`` streamed snapshots (hooks ``index_snapshot`` and ``prefetch``); ``build`` indexes,
    ``rank`` ranks one query."""

    def __init__(
        self,
        name: str,
        ranker: str,
        build: Callable[[common.ChunkKeys, common.TermMatrix], Any],
        ranking: Callable[[Any, str], common.ChunkRanking],
        source: TermSource | None = None,
    ) -> None:
        self.name, self.ranker, self.build, self.rank = name, ranker, build, ranking
        self.source = source
        #: runner hooks, present only for a streamed source
        self.index_snapshot = None if source is None else snapshot_indexer(source, build)
        self.prefetch = None if source is None else source.prefetch

    @cached_property
    def memo(self) -> common.TermMemo:
        """The run's token memo, made on first use (it imports scipy, which a warm streamed
        run never needs: 0.1-0.2 s of its 0.8 s)."""
        return common.TermMemo()

    def index(self, chunks: pl.DataFrame) -> Any:
        """The index of a snapshot's candidate chunk frame (memo shared across snapshots)."""
        chunks = common.check_chunks(chunks)
        return self.build(common.chunk_keys(chunks), common.term_matrix(chunks, self.memo))

    def stats(self) -> dict[str, Any]:
        """Token-memo reuse, or the term cache's hits and misses with a source."""
        return self.memo.stats() if self.source is None else self.source.stats()
