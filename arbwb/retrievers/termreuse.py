"""Term counts of a snapshot's chunk documents reused, exactly, for the next snapshot of a repo.

Snapshots of one repository share much of their chunk text (ARB: most of it), so a document
already counted in the previous snapshot need not be tokenised again. The memo of a snapshot
holds no text: per document a 64-bit hash of its text and where its line lies in the chunk
file, plus the counts. A document whose hash is memoised has that line read back and parsed,
and its counts are reused only if the two document texts are equal (a collision merely
means counting afresh), so reused counts are exactly those of fresh tokenising
(arbwb-defined speed-up; results are unchanged).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa
import scipy.sparse as sp

from arbwb.io.chunkscan import parse_block
from arbwb.retrievers.common import document_expr
from arbwb.retrievers.terms import BatchCounts, TermCounts, batches, combine, count_batch

#: The chunk columns a document is made of (spec §7.2).
DOC_COLUMNS = ["path", "symbol", "kind", "text"]


@dataclass(frozen=True)
class BlockSpans:
    """A block's document hashes and the byte span of each row's line in the chunk file."""

    hashes: npt.NDArray[np.uint64]
    starts: npt.NDArray[np.int64]  # -1: the row's line is not known (never reused)
    lengths: npt.NDArray[np.int64]


@dataclass(frozen=True)
class DocMemo:
    """A snapshot's document hashes, line spans and term counts (no text)."""

    chunk_file: Path
    hashes: npt.NDArray[np.uint64]  # ascending, of the rows whose line is known
    rows: npt.NDArray[np.int64]  # the document row of each hash
    starts: npt.NDArray[np.int64]  # the line of each row in ``chunk_file``
    lengths: npt.NDArray[np.int64]
    counts: sp.csr_matrix  # document x term
    terms: pa.LargeBinaryArray  # the terms of ``counts``' columns

    def find(self, docs: pl.Series) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(indices into ``docs``, memo rows) of the documents whose exact text is memoised."""
        empty = np.zeros(0, dtype=np.int64)
        if not len(self.hashes) or docs.is_empty():
            return empty, empty
        hashes = doc_hashes(docs)
        at = np.minimum(np.searchsorted(self.hashes, hashes), len(self.hashes) - 1)
        where = np.flatnonzero(self.hashes[at] == hashes)
        rows = self.rows[at[where]]
        if not len(where):
            return empty, empty
        old = self.documents(rows)
        if old is None:
            return empty, empty
        same = old.eq_missing(docs.gather(where)).arg_true().to_numpy()
        return where[same], rows[same]

    def documents(self, rows: npt.NDArray[np.int64]) -> pl.Series | None:
        """The documents of memo ``rows``, read back from the chunk file (None if it cannot
        be read as it was: the memo is then not used)."""
        try:
            with self.chunk_file.open("rb") as handle:
                fd = handle.fileno()
                lines = [
                    os.pread(fd, int(n), int(at))
                    for at, n in zip(self.starts[rows], self.lengths[rows], strict=True)
                ]
            block = parse_block(self.chunk_file, b"\n".join(lines) + b"\n", DOC_COLUMNS)
        except Exception:  # changed or vanished since: count afresh
            return None
        if block.height != len(rows):
            return None
        return block.select(document_expr().alias("doc"))["doc"]


def doc_hashes(docs: pl.Series) -> npt.NDArray[np.uint64]:
    """64-bit hashes of documents (Polars' string hash: fixed within a process, which is where
    a memo lives)."""
    return docs.hash(seed=0).to_numpy()


def block_spans(raw: bytes, start: int, docs: pl.Series) -> BlockSpans:
    """Hashes and line spans of a block's documents; ``raw`` is the block's bytes, found at
    byte ``start`` of the chunk file. Lines are known only when the block's lines are exactly
    its rows (one non-empty line each)."""
    newlines = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 10)
    ends = newlines if raw.endswith(b"\n") else np.append(newlines, len(raw))
    begins = np.zeros(len(ends), dtype=np.int64)
    begins[1:] = ends[:-1] + 1
    lengths = (ends - begins).astype(np.int64)
    if len(ends) != len(docs) or not (lengths > 0).all():
        lengths = np.zeros(len(docs), dtype=np.int64)
        begins = np.full(len(docs), -1 - start, dtype=np.int64)
    return BlockSpans(doc_hashes(docs), begins + start, lengths)


def build_memo(chunk_file: Path, spans: list[BlockSpans], found: TermCounts) -> DocMemo:
    """The memo of a chunk file whose blocks' spans are ``spans`` and counts ``found``."""
    hashes = np.concatenate([s.hashes for s in spans])
    starts = np.concatenate([s.starts for s in spans])
    lengths = np.concatenate([s.lengths for s in spans])
    known = np.flatnonzero(starts >= 0)
    order = known[np.argsort(hashes[known], kind="stable")]
    terms = pa.array(found.terms, pa.large_string()).cast(pa.large_binary())
    return DocMemo(chunk_file, hashes[order], order, starts, lengths, found.counts, terms)


def count_docs(docs: pl.Series, memo: DocMemo | None) -> list[BatchCounts]:
    """§7.1 term counts of ``docs`` in batches; memoised documents reuse their counts."""
    where, rows = (None, None) if memo is None else memo.find(docs)
    if memo is None or where is None or rows is None or not len(where):
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
