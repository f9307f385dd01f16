"""Term counts of a snapshot's chunk documents reused, exactly, for the next snapshot of a repo.

Snapshots of one repository share much of their chunk text (ARB: most of it), so a document
already counted in the previous snapshot need not be tokenised again. A document is looked up
by a 64-bit hash of its text and reused only if the full texts are equal (a hash collision
merely means counting afresh), so reused counts are exactly the counts of fresh tokenising
(arbwb-defined speed-up; results are unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa
import scipy.sparse as sp

from arbwb.retrievers.terms import BatchCounts, TermCounts, batches, combine, count_batch


@dataclass(frozen=True)
class DocMemo:
    """A snapshot's documents (row order) and their term counts, indexed by text hash."""

    docs: pl.Series
    hashes: npt.NDArray[np.uint64]  # ascending
    rows: npt.NDArray[np.int64]  # the document row of each hash
    counts: sp.csr_matrix  # document x term
    terms: pa.LargeBinaryArray  # the terms of ``counts``' columns

    def find(self, docs: pl.Series) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(indices into ``docs``, memo rows) of the documents whose exact text is memoised."""
        hashes = doc_hashes(docs)
        at = np.minimum(np.searchsorted(self.hashes, hashes), len(self.hashes) - 1)
        where = np.flatnonzero(self.hashes[at] == hashes)
        rows = self.rows[at[where]]
        equal = self.docs.gather(rows).eq_missing(docs.gather(where))
        same = equal.arg_true().to_numpy()  # faster than a boolean to_numpy
        return where[same], rows[same]


def doc_hashes(docs: pl.Series) -> npt.NDArray[np.uint64]:
    """64-bit hashes of documents (Polars' string hash: fixed within a process, which is where
    a memo lives)."""
    return docs.hash(seed=0).to_numpy()


def build_memo(docs: pl.Series, found: TermCounts) -> DocMemo | None:
    """The memo of documents ``docs`` counted as ``found`` (None if there is no document)."""
    if docs.is_empty():
        return None
    hashes = doc_hashes(docs)
    order = np.argsort(hashes, kind="stable")
    terms = pa.array(found.terms, pa.large_string()).cast(pa.large_binary())
    whole = docs.rechunk()  # one chunk: gathering rows from many is much slower
    return DocMemo(whole, hashes[order], order.astype(np.int64), found.counts.tocsr(), terms)


def count_docs(docs: pl.Series, memo: DocMemo | None) -> list[BatchCounts]:
    """§7.1 term counts of ``docs`` in batches; memoised documents reuse their counts."""
    if memo is None:
        return [count_batch(batch) for batch in batches(docs)]
    where, rows = memo.find(docs)
    if not len(where):
        return [count_batch(batch) for batch in batches(docs)]
    fresh = np.ones(len(docs), dtype=bool)
    fresh[where] = False
    fresh_at = np.flatnonzero(fresh)
    pieces = []
    offset = 0
    for batch in batches(docs.gather(fresh_at)):
        pieces.append((fresh_at[offset : offset + len(batch)], count_batch(batch)))
        offset += len(batch)
    sub = memo.counts[rows]
    present = np.zeros(len(memo.terms), dtype=bool)
    present[sub.indices] = True
    used = np.flatnonzero(present)  # the terms these rows use, renumbered without a sort
    cols = (np.cumsum(present, dtype=np.int32) - 1)[sub.indices]
    reused = BatchCounts(
        len(rows),
        np.repeat(np.arange(len(rows), dtype=np.int32), np.diff(sub.indptr)),
        cols.astype(np.int32),
        sub.data.astype(np.int32, copy=False),
        memo.terms.take(pa.array(used)) if len(used) else None,
    )
    pieces.append((where, reused))
    return [combine(len(docs), pieces)]
