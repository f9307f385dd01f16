"""Pure-Python stand-ins for the C modules, used where they are not built (no compiler at
install) or ``ARBWB_NO_NATIVE=1`` asks for them (:mod:`arbwb.native.select`).

:func:`count` gives :func:`arbwb.native._termcount.count`'s results byte for byte, with numpy (the
token finder RepoMap uses, :func:`arbwb.tokenize.identifier_token_bytes`) and Arrow's
``dictionary_encode`` (the numbering the C counter reproduces). :func:`scan` declines every
file, so strict grep reads each the general way, which finds the same lines and special marks.
"""

from __future__ import annotations

import mmap
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from arbwb.tokenize import identifier_token_bytes

if TYPE_CHECKING:
    from typing_extensions import Buffer

    from arbwb.native._termcount import Bytes

#: Column pairs one call takes at most (as the C module).
MAX_COLUMNS = 8


def _raw(buffer: Bytes) -> npt.NDArray[np.uint8]:
    """A buffer's bytes as a zero-copy numpy view (like the C module's ``PyBUF_SIMPLE``)."""
    return np.frombuffer(buffer, np.uint8)  # type: ignore[arg-type]  # (stubs: not any Buffer)


def _offsets(size: int, offsets: Bytes, col: int, n_texts: int) -> npt.NDArray[np.int64]:
    """A column's int64 offsets into ``size`` bytes of data, refused with the C module's
    errors unless they are ``n_texts`` + 1 (any number when negative) and non-decreasing."""
    raw = _raw(offsets)
    found = raw[: raw.size - raw.size % 8].view(np.int64)
    if raw.size % 8 or not found.size or (n_texts >= 0 and found.size != n_texts + 1):
        msg = f"column {col}: expected one more offset than texts"
        raise ValueError(msg)
    outside = (found[:-1] < 0) | (found[:-1] > found[1:]) | (found[1:] > size)
    if outside.any():
        msg = f"column {col}, offsets[{int(np.argmax(outside))}]: text outside the data"
        raise ValueError(msg)
    return found


def _tokens(
    data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], pa.Array]:
    """The tokens of a column's texts: each one's text (row), and their lower-cased bytes as
    an Arrow array, in text order."""
    heads = offsets - offsets[0]
    begins, lengths, token_bytes = identifier_token_bytes(data[offsets[0] : offsets[-1]], heads)
    ends = np.zeros(begins.size + 1, np.int64)
    np.cumsum(lengths, out=ends[1:])
    buffers = [None, pa.py_buffer(ends), pa.py_buffer(token_bytes)]
    rows = np.searchsorted(heads, begins, side="right") - 1
    return rows, pa.Array.from_buffers(pa.large_binary(), begins.size, buffers)


def _view(
    buffer: pa.Buffer | None, dtype: type[np.int32 | np.int64], n: int, at: int
) -> npt.NDArray[Any]:
    """``n`` values from value ``at`` of an Arrow buffer, as a zero-copy numpy view
    (pyarrow's own conversions import pandas)."""
    if buffer is None or not n:
        return np.zeros(n, dtype)
    return np.frombuffer(buffer, dtype, n, at * np.dtype(dtype).itemsize)


def count(*columns: Bytes) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes]:
    """(nnz, cols, freq, tokens, vocab_offsets, vocab_bytes) as
    :func:`arbwb.native._termcount.count`
    gives them for 1 to 8 (data, offsets) column pairs: the tokens in row order, numbered by
    ``dictionary_encode``, then each row's (term, count) pairs in order of first appearance."""
    if not 2 <= len(columns) <= 2 * MAX_COLUMNS or len(columns) % 2:
        msg = "count(data, offsets, ...): 1 to 8 pairs"
        raise TypeError(msg)
    n_texts, rows, found = -1, [], []
    for col in range(len(columns) // 2):
        data = _raw(columns[2 * col])
        offsets = _offsets(data.size, columns[2 * col + 1], col, n_texts)
        n_texts = offsets.size - 1
        column_rows, tokens = _tokens(data, offsets)
        rows.append(column_rows)
        found.append(tokens)
    row = np.concatenate(rows)
    tokens = pa.concat_arrays(found)
    if len(found) > 1:  # a row's tokens: those of its first text, then its second's, ...
        order = np.argsort(row, kind="stable")
        row = row[order]
        index = pa.Array.from_buffers(pa.int64(), order.size, [None, pa.py_buffer(order)])
        tokens = tokens.take(index)
    encoded = pc.dictionary_encode(tokens)
    vocab, ids = encoded.dictionary, encoded.indices
    n_terms = max(len(vocab), 1)
    keys = row * n_terms + _view(ids.buffers()[1], np.int32, len(ids), ids.offset)
    pairs, first, freq = np.unique(keys, return_index=True, return_counts=True)
    by_first = np.argsort(first)
    pairs, freq = pairs[by_first], freq[by_first]
    ends = _view(vocab.buffers()[1], np.int64, len(vocab) + 1, vocab.offset)
    text = vocab.buffers()[2]
    return (
        np.bincount(pairs // n_terms, minlength=n_texts).astype(np.int64, copy=False).tobytes(),
        (pairs % n_terms).astype(np.int32).tobytes(),
        freq.astype(np.int32).tobytes(),
        np.bincount(row, minlength=n_texts).astype(np.int64, copy=False).tobytes(),
        (ends - ends[0]).tobytes(),
        b"" if text is None else text[int(ends[0]) : int(ends[-1])].to_pybytes(),
    )


def scan(
    data: Buffer | mmap.mmap, strings: tuple[bytes, ...], ints: tuple[bytes, ...], /
) -> tuple[bytes, bytes] | None:
    """None, as :func:`arbwb.native._jsonlines.scan` gives for a file it leaves: the general reading
    (lines, special marks, the full check; else the full parse) then ranks it the same; a
    one-pass check in Python would cost more than that reading saves."""
    return None
