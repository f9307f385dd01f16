"""Vectorised §7.1 term counts: the identifier splitter run over UTF-8 bytes with numpy.

The splitter (spec §7.1: a space between ``[a-z][A-Z]``, then maximal ``[A-Za-z0-9]+`` runs,
lower-cased) is ASCII-only, so its tokens are found on the UTF-8 bytes of a batch of texts
(:func:`arbwb.retrievers.bytetokens.token_bytes`, shared with RepoMap), their lower-cased
bytes become one Arrow binary array, hashed (``dictionary_encode``), and per-text counts come
from one sort per batch. Exactly :func:`arbwb.tokenize.split_identifiers` (property-tested).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from arbwb.retrievers.bytetokens import token_bytes

#: Texts per batch: a few MB of chunk text, so the per-byte arrays stay small.
BATCH_ROWS = 2048


@dataclass(frozen=True)
class TermCounts:
    """Term counts of texts: ``counts[i, j]`` = occurrences of ``terms[j]`` in text i (CSR,
    int32).

    ``terms`` is the local vocabulary (no particular order); a row's columns are not sorted.
    """

    counts: sp.csr_matrix
    terms: list[str]


def _byte_tokens(
    text: pa.LargeStringArray,
) -> tuple[npt.NDArray[np.int64], pa.LargeBinaryArray]:
    """Tokens per text (counts, in text order) and all tokens lower-cased, in order
    (:func:`arbwb.retrievers.bytetokens.token_bytes` over the texts' bytes).

    The tokens are binary (ASCII bytes), which Arrow hashes faster than strings.
    """
    _, offsets_buf, data_buf = text.buffers()
    offsets = np.frombuffer(offsets_buf, np.int64, len(text) + 1, text.offset * 8)
    first = int(offsets[0])
    size = int(offsets[-1]) - first
    offsets = offsets - first
    if size == 0 or data_buf is None:
        empty = pa.array([], pa.large_binary())
        return np.zeros(len(text), np.int64), empty
    begins, lengths, lowered = token_bytes(np.frombuffer(data_buf, np.uint8, size, first), offsets)
    token_offsets = np.zeros(len(begins) + 1, dtype=np.int64)
    np.cumsum(lengths, out=token_offsets[1:])
    buffers = [None, pa.py_buffer(token_offsets), pa.py_buffer(lowered)]
    tokens = pa.Array.from_buffers(pa.large_binary(), len(begins), buffers)
    per_text = np.diff(np.searchsorted(begins, offsets))
    return per_text, tokens


def _ints(array: pa.Array) -> npt.NDArray[Any]:
    """An Arrow integer array without nulls as a zero-copy numpy view.

    ``np.asarray`` goes through pyarrow's conversion, which costs about 13 ns per value the
    first time (measured: 0.13 s of CPU per 95 MiB chunk file for the token ids alone).
    """
    dtype = np.dtype(array.type.to_pandas_dtype())
    buffer = array.buffers()[1]
    if buffer is None or not len(array):
        return np.zeros(0, dtype)
    return np.frombuffer(buffer, dtype, len(array), array.offset * dtype.itemsize)


def _pair_counts(
    per_text: npt.NDArray[np.int64], ids: npt.NDArray[Any], n_ids: int
) -> tuple[npt.NDArray[np.signedinteger[Any]], npt.NDArray[np.int64]]:
    """Distinct ``row * n_ids + id`` keys of the tokens (ascending; int32 when they fit) and
    their counts."""
    dtype = np.int32 if len(per_text) * n_ids < 2**31 else np.int64  # int32 sorts faster
    keys: npt.NDArray[np.signedinteger[Any]] = np.repeat(
        np.arange(len(per_text), dtype=dtype), per_text
    )
    keys *= n_ids
    keys += ids.astype(dtype, copy=False)
    keys.sort()
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    first = np.flatnonzero(new)
    counts = np.diff(np.append(first, len(keys)))
    return keys[first], counts


def _batch_arrow(batch: pl.Series) -> pa.LargeStringArray:
    arrow = batch.fill_null("").cast(pl.String).to_arrow()
    if arrow.type != pa.large_string():
        arrow = arrow.cast(pa.large_string())
    return arrow


def batches(texts: pl.Series, size: int = BATCH_ROWS) -> Iterator[pl.Series]:
    """``texts`` in consecutive slices of ``size`` (zero-copy)."""
    for start in range(0, len(texts), size):
        yield texts.slice(start, size)


@dataclass(frozen=True)
class BatchCounts:
    """One batch's (text, local term, count) triples and its local vocabulary (see
    :func:`count_batch`); batches are independent, so they can be counted in parallel."""

    n_texts: int
    rows: npt.NDArray[np.int32]  # text index within the batch
    cols: npt.NDArray[np.int32]  # index into ``vocab``
    freq: npt.NDArray[np.int32]
    vocab: pa.Array | None  # None: the batch has no token
    tokens: npt.NDArray[np.int64]  # tokens per text (the sum of its counts)


def count_batch(batch: pl.Series) -> BatchCounts:
    """§7.1 term counts of one batch of texts (null counts as empty), as triples."""
    per_text, tokens = _byte_tokens(_batch_arrow(batch))
    if not len(tokens):
        empty = np.zeros(0, dtype=np.int32)
        return BatchCounts(len(batch), empty, empty, empty, None, per_text)
    encoded = pc.dictionary_encode(tokens)
    size = len(encoded.dictionary)
    keys, freq = _pair_counts(per_text, _ints(encoded.indices), size)
    rows = keys // size  # division by one scalar is vectorised; a remainder is not
    keys -= rows * size
    return BatchCounts(
        len(batch),
        rows.astype(np.int32, copy=False),
        keys.astype(np.int32, copy=False),
        freq.astype(np.int32),
        encoded.dictionary,
        per_text,
    )


class TermMerger:
    """Consecutive batches' counts gathered compactly (their term ids, counts, per-text sizes
    and small vocabularies, not their rows), merged into one sorted vocabulary at the end by
    one Arrow hash. Stateful on purpose: fed batch by batch."""

    def __init__(self) -> None:
        self.vocab: list[pa.Array] = []
        self.cols: list[npt.NDArray[np.int32]] = []  # ids into the concatenated vocabularies
        self.freq: list[npt.NDArray[np.int32]] = []
        self.nnz: list[npt.NDArray[np.int64]] = []  # distinct terms per text
        self.tokens: list[npt.NDArray[np.int64]] = []  # tokens per text
        self.n_local = 0

    def add(self, part: BatchCounts) -> None:
        """Append the next batch's texts."""
        bounds = np.searchsorted(part.rows, np.arange(part.n_texts + 1))  # rows ascend
        self.nnz.append(np.diff(bounds))
        self.tokens.append(part.tokens)
        if part.vocab is not None:
            self.cols.append(part.cols + np.int32(self.n_local))
            self.freq.append(part.freq)
            self.vocab.append(part.vocab)
            self.n_local += len(part.vocab)

    def finish(self) -> tuple[TermCounts, npt.NDArray[np.int64]]:
        """The CSR counts (terms sorted, so the result does not depend on the batching) and
        the tokens per text; the merger is emptied."""
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
        order = _ints(pc.array_sort_indices(merged.dictionary))  # bytes order = str order
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        global_id = rank[_ints(merged.indices)]
        terms: list[str] = merged.dictionary.take(order).cast(pa.large_string()).to_pylist()
        cols = global_id[np.concatenate(self.cols)]
        data = np.concatenate(self.freq)
        self.vocab.clear()
        self.cols.clear()
        self.freq.clear()
        self.n_local = 0
        shape = (len(nnz), len(terms))
        matrix = sp.csr_matrix((data, cols, indptr), shape=shape, copy=False)
        return TermCounts(matrix, terms), tokens


def merge_counts(parts: Iterable[BatchCounts]) -> TermCounts:
    """The CSR term counts of consecutive batches' texts, terms sorted (:class:`TermMerger`)."""
    merger = TermMerger()
    for part in parts:
        merger.add(part)
    return merger.finish()[0]


def count_terms(texts: Iterable[pl.Series]) -> TermCounts:
    """§7.1 term counts of texts given in consecutive batches (null counts as empty), as CSR.

    Each batch is tokenised and hashed on its own and then dropped, so memory holds one
    batch's tokens plus the (row, term, count) triples, never the whole input's tokens.
    """
    return merge_counts(count_batch(batch) for batch in texts)
