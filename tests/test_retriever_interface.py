"""The one retriever interface: bind reads declared attributes; the runner calls optional hooks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb.errors import InputError
from arbwb.io.corpus import Corpus, open_corpus
from arbwb.io.samples import load_samples
from arbwb.paths import DEMO_DIR
from arbwb.retrievers import lexical
from arbwb.retrievers.common import ChunkRanking
from arbwb.retrievers.interface import bind
from arbwb.retrievers.runner import run_method


class Counting:
    """A score retriever with its own prefetch and stats hooks."""

    name = "counting"

    def __init__(self) -> None:
        self.params = {"k": 1}
        self.prefetched: list[str] = []

    def index(self, chunks: pl.DataFrame) -> int:
        return chunks.height

    def score(self, index: int, query: str) -> Sequence[float]:
        return [float(len(query) % (i + 2)) for i in range(index)]

    def prefetch(self, corpus: Corpus, snapshot_ids: Sequence[str], candidate_filter: str) -> None:
        self.prefetched = list(snapshot_ids)

    def stats(self) -> dict[str, Any]:
        return {"prefetched_snapshots": len(self.prefetched)}


def test_bind_reads_declared_attributes_with_defaults() -> None:
    method = bind(Counting(), "unused")
    assert (method.name, method.ranker, method.model, method.family) == (
        "counting",
        "counting",
        None,
        None,
    )
    assert dict(method.params) == {"k": 1} and not method.gold_only and method.index_ahead == 0
    builtin = lexical.method()
    assert builtin.hook("prefetch") is None and builtin.hook("index_snapshot") is None
    assert builtin.stats() == {"token_memo_hits": 0, "token_memo_misses": 0}


def test_a_ranking_retriever_needs_an_index() -> None:
    class NoIndex:
        def rank(self, index: Any, query: str) -> ChunkRanking:
            raise AssertionError

    with pytest.raises(InputError, match="no index"):
        bind(NoIndex())


def test_the_runner_calls_a_plugins_prefetch_and_records_its_stats(tmp_path: Path) -> None:
    retriever = Counting()
    corpus = open_corpus(DEMO_DIR)
    sample_set = load_samples(DEMO_DIR / "benchmark/demo")
    summary = run_method(bind(retriever), sample_set, corpus, tmp_path / "c_details.jsonl")
    snapshots = {s for s in sample_set.samples["snapshot_id"].to_list() if corpus.has(s)}
    assert sorted(retriever.prefetched) == sorted(snapshots)
    assert summary["prefetched_snapshots"] == len(snapshots)
