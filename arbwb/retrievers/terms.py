"""§7.1 term counts of batches of texts, found on their UTF-8 bytes by a C scanner.

The splitter is ASCII-only, so :mod:`arbwb.native._termcount` (or its numpy stand-in) counts a
batch in one pass over its Arrow buffer; vocabularies are merged once, sorted. Exactly
:func:`arbwb.tokenize.split_identifiers` (property-tested).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from arbwb.native.select import termcount

#: Texts per batch: a few MB of chunk text (each batch's vocabulary is merged at the end).
BATCH_ROWS = 2048


@dataclass(frozen=True)
class TermCounts:
    """Term counts of texts: ``counts[i, j]`` = occurrences of ``terms[j]`` in text i (CSR)."""

    counts: sp.csr_matrix
    terms: list[str]


def _ints(array: pa.Array) -> npt.NDArray[Any]:
    """An Arrow integer array without nulls as a zero-copy numpy view (measured: ``np.asarray``
    cost 0.13 s of CPU per 95 MiB chunk file for the token ids alone)."""
    dtype = np.dtype(array.type.to_pandas_dtype())
    buffer = array.buffers()[1]
    if buffer is None or not len(array):
        return np.zeros(0, dtype)
    return np.frombuffer(buffer, dtype, len(array), array.offset * dtype.itemsize)


def _column_buffers(column: pl.Series) -> tuple[Any, npt.NDArray[np.int64]]:
    """A string column's UTF-8 bytes and int64 offsets (null as empty), as Arrow holds them."""
    arrow = column.fill_null("").cast(pl.String).to_arrow()
    if arrow.type != pa.large_string():
        arrow = arrow.cast(pa.large_string())
    _, offsets_buf, data_buf = arrow.buffers()
    offsets = np.frombuffer(offsets_buf, np.int64, len(arrow) + 1, arrow.offset * 8)
    return (data_buf if data_buf is not None else b""), offsets


Part = TypeVar("Part", pl.Series, pl.DataFrame)


def batches(texts: Part, size: int = BATCH_ROWS) -> Iterator[Part]:
    """``texts`` (a series or frame) in consecutive slices of ``size`` rows (zero-copy)."""
    for start in range(0, len(texts), size):
        yield texts.slice(start, size)


@dataclass(frozen=True)
class BatchCounts:
    """One batch's term counts, text by text, and its local vocabulary (:func:`count_batch`)."""

    nnz: npt.NDArray[np.int64]  # distinct terms per text: its run of ``cols`` and ``freq``
    cols: npt.NDArray[np.int32]  # index into ``vocab``
    freq: npt.NDArray[np.int32]
    vocab: pa.Array | None  # None: the batch has no token
    tokens: npt.NDArray[np.int64]  # tokens per text (the sum of its counts)


def count_batch(batch: pl.Series | pl.DataFrame) -> BatchCounts:
    """§7.1 term counts of one batch of texts (null as empty; terms numbered by first
    appearance); a frame's row counts its columns' texts one after the other, unjoined."""
    columns = batch.get_columns() if isinstance(batch, pl.DataFrame) else [batch]
    found = termcount.count(*(part for c in columns for part in _column_buffers(c)))
    nnz, cols, freq, tokens, vocab_offsets, vocab_bytes = found
    n_terms = len(vocab_offsets) // 8 - 1
    vocab = None
    if n_terms:
        buffers = [None, pa.py_buffer(vocab_offsets), pa.py_buffer(vocab_bytes)]
        vocab = pa.Array.from_buffers(pa.large_binary(), n_terms, buffers)
    return BatchCounts(
        np.frombuffer(nnz, np.int64),
        np.frombuffer(cols, np.int32),
        np.frombuffer(freq, np.int32),
        vocab,
        np.frombuffer(tokens, np.int64),
    )


class TermMerger:
    """Consecutive batches' counts gathered compactly, merged into one sorted vocabulary at the
    end by one Arrow hash (fed batch by batch)."""

    def __init__(self) -> None:
        self.vocab: list[pa.Array] = []
        self.cols: list[npt.NDArray[np.int32]] = []  # ids into the concatenated vocabularies
        self.freq: list[npt.NDArray[np.int32]] = []
        self.nnz: list[npt.NDArray[np.int64]] = []  # distinct terms per text
        self.tokens: list[npt.NDArray[np.int64]] = []  # tokens per text
        self.n_local = 0

    def add(self, part: BatchCounts) -> None:
        """Append the next batch's texts."""
        self.nnz.append(part.nnz)
        self.tokens.append(part.tokens)
        if part.vocab is not None:
            self.cols.append(part.cols + np.int32(self.n_local))
            self.freq.append(part.freq)
            self.vocab.append(part.vocab)
            self.n_local += len(part.vocab)

    def finish(self) -> tuple[TermCounts, npt.NDArray[np.int64]]:
        """The CSR counts (terms sorted: independent of the batching) and tokens per text."""
        nnz = np.concatenate(self.nnz) if self.nnz else np.zeros(0, dtype=np.int64)
        tokens = np.concatenate(self.tokens) if self.tokens else np.zeros(0, dtype=np.int64)
        self.nnz.clear()
        self.tokens.clear()
        indptr = np.zeros(len(nnz) + 1, dtype=np.int64)
        np.cumsum(nnz, out=indptr[1:])
        if not self.vocab:
            counts = sp.csr_matrix((len(nnz), 0), dtype=np.int32)
            return TermCounts(counts, []), tokens
        merged = pc.dictionary_encode(pa.concat_arrays(self.vocab))
        sorted_ids = pc.array_sort_indices(merged.dictionary)  # bytes order = str order
        order = _ints(sorted_ids)
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        global_id = rank[_ints(merged.indices)]
        # (an Arrow index array: a numpy one makes pyarrow import pandas, 0.2 s per process)
        terms: list[str] = merged.dictionary.take(sorted_ids).cast(pa.large_string()).to_pylist()
        cols = global_id[np.concatenate(self.cols)]
        data = np.concatenate(self.freq)
        self.vocab.clear()
        self.cols.clear()
        self.freq.clear()
        self.n_local = 0
        shape = (len(nnz), len(terms))
        matrix = sp.csr_matrix((data, cols, indptr), shape=shape, copy=False)
        return TermCounts(matrix, terms), tokens


def count_terms(texts: Iterable[pl.Series]) -> TermCounts:
    """§7.1 term counts (CSR) of texts in consecutive batches (one batch's tokens in memory)."""
    merger = TermMerger()
    for batch in texts:
        merger.add(count_batch(batch))
    return merger.finish()[0]


def distinct_text_tokens(texts: Sequence[str], name: str = "text") -> pl.Series:
    """Each text's distinct tokens in order of first appearance, by the term counter."""
    found = count_batch(pl.Series(name, texts, dtype=pl.String))
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(found.nnz, out=starts[1:])
    vocab = found.vocab if found.vocab is not None else pa.array([], pa.large_binary())
    ids = pa.Array.from_buffers(pa.int32(), len(found.cols), [None, pa.py_buffer(found.cols)])
    lists = pa.LargeListArray.from_arrays(
        pa.Array.from_buffers(pa.int64(), len(starts), [None, pa.py_buffer(starts)]),
        vocab.cast(pa.large_string()).take(ids),  # (Arrow indices: numpy ones import pandas)
    )
    return pl.Series(name, lists)
