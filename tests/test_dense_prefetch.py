"""Dense: distinct passages of all snapshots encoded once, up front, in length-sorted batches."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import polars as pl
from test_retrievers_core import frame

from arbwb.retrievers import dense


class HashEncoder:
    """Deterministic vectors from each text's SHA-256; records every batch it receives."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, texts: Sequence[str], is_query: bool) -> npt.NDArray[np.float64]:
        self.batches.append(list(texts))
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], np.uint8) for t in texts]
        return np.asarray(rows, dtype=np.float64) + 1.0


def snapshots() -> list[pl.DataFrame]:
    """Three snapshots sharing most passages (one text edited per snapshot)."""
    base = [("c1", "a.py", "file", "", "x" * 30), ("c2", "b.py", "file", "", "short")]
    return [frame([*base, ("c3", "c.py", "file", "", "edited " * k)]) for k in (1, 2, 1)]


def test_prefetch_encodes_each_distinct_text_once_by_length_and_keeps_stats() -> None:
    frames = snapshots()
    plain = dense.EmbeddingCache(HashEncoder(), batch_size=2)
    expected = [plain.embed(dense.passages(f)) for f in frames]
    encoder = HashEncoder()
    cache = dense.EmbeddingCache(encoder, batch_size=2)
    dense.prefetch_frames(cache, frames)
    distinct = list(dict.fromkeys(p for f in frames for p in dense.passages(f)))
    sent = [t for batch in encoder.batches for t in batch]
    assert Counter(sent) == Counter(distinct)  # every distinct passage exactly once
    assert sent == sorted(distinct, key=len)  # one length-sorted pass across snapshots
    got = [cache.embed(dense.passages(f)) for f in frames]
    assert len(encoder.batches) == 2  # nothing more was encoded while indexing
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b)
    assert (cache.hits, cache.misses) == (plain.hits, plain.misses) == (5, 4)
