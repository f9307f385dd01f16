"""Identifier-splitter tokens (spec S§7.1) of many texts at once, found on their UTF-8 bytes.

A token is a maximal run of ASCII letters and digits, also split between a lower-case and a
following upper-case ASCII letter, lower-cased. Every byte of a non-ASCII character is
≥ 0x80, so it only separates tokens, as the splitter's ``[A-Za-z0-9]+`` has it. So the token
boundaries are a few numpy comparisons over the concatenated bytes, and the token bytes are
the token positions kept with bit 0x20 set (lower case; digits already have it). The tokens
go to Polars as one Arrow list array (no Python string per token), where each text's list is
made distinct. arbwb-defined speed-up; tests/test_repomap_index_fast.py checks it against
``split_identifiers`` text by text.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

#: Bytes of whole texts scanned at once (a longer text is one block).
BLOCK_BYTES = 1 << 18
#: Token starts, token lengths and token bytes of a scanned text buffer.
Found = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.uint8]]


class ArrowArray:
    """An Arrow array seen only through the Arrow PyCapsule interface: Polars then imports it
    without loading ``pyarrow.compute``."""

    def __init__(self, array: Any) -> None:
        self.array = array

    def __arrow_c_array__(self, requested_schema: object | None = None) -> Any:
        """The array's (schema, array) capsules."""
        return self.array.__arrow_c_array__(requested_schema)


def _token_bytes(raw: npt.NDArray[np.uint8], heads: npt.NDArray[np.int64]) -> Found:
    """Token starts, token lengths and the lower-cased token bytes of ``raw``, whose texts
    start at ``heads`` (then its end). Few full-size temporaries, reused in place (``out=``):
    fresh memory costs more page faults than the arithmetic."""
    n = len(raw)
    scratch = np.empty(n, dtype=np.uint8)
    upper, lower, alnum = (np.empty(n, dtype=bool) for _ in range(3))
    # One comparison per class: bytes below the class's first wrap around to large values.
    np.less(np.subtract(raw, 65, out=scratch), 26, out=upper)
    np.less(np.subtract(raw, 97, out=scratch), 26, out=lower)
    np.less(np.subtract(raw, 48, out=scratch), 10, out=alnum)
    np.logical_or(alnum, upper, out=alnum)
    np.logical_or(alnum, lower, out=alnum)
    # cut[j]: a token cannot continue across position j (between bytes j - 1 and j): an end,
    # a text start, a byte that is no letter or digit on either side, or a camel pair.
    camel = np.logical_and(lower[:-1], upper[1:], out=lower[:-1])
    joined = np.logical_and(alnum[:-1], alnum[1:], out=upper[:-1])
    cut = np.empty(n + 1, dtype=bool)
    np.logical_or(np.logical_not(joined, out=joined), camel, out=cut[1:n])
    cut[heads] = True
    cut[0] = True
    begins = np.flatnonzero(np.logical_and(cut[:n], alnum, out=upper))
    lengths = np.flatnonzero(np.logical_and(cut[1:], alnum, out=upper))
    lengths += 1
    lengths -= begins
    data = raw[alnum]
    return begins, lengths, np.bitwise_or(data, 0x20, out=data)


def _blockwise(raw: npt.NDArray[np.uint8], heads: npt.NDArray[np.int64]) -> Found:
    """:func:`_token_bytes` of ``raw`` in blocks of whole texts of about ``BLOCK_BYTES``:
    small temporaries are reused from the heap, large ones come as fresh zeroed pages."""
    n = len(raw)
    firsts = np.unique(np.searchsorted(heads[:-1], np.arange(0, n, BLOCK_BYTES)))
    bounds = np.append(firsts, len(heads) - 1).tolist()
    parts = []
    for first, last in pairwise(bounds):  # texts first .. last - 1
        lo = int(heads[first])
        begins, lengths, data = _token_bytes(raw[lo : heads[last]], heads[first : last + 1] - lo)
        parts.append((begins + lo, lengths, data))
    if len(parts) == 1:
        return parts[0]
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )


def distinct_tokens(texts: pl.Series) -> pl.Series:
    """Each text's distinct identifier-splitter tokens in order of first appearance, as a
    ``List(String)`` series aligned with ``texts`` (a null text has none)."""
    return token_lists(texts).list.unique(maintain_order=True)


def token_lists(texts: pl.Series) -> pl.Series:
    """Each text's identifier-splitter tokens in text order (repeats kept), as a
    ``List(String)`` series aligned with ``texts`` (a null text has none)."""
    import pyarrow as pa

    array = texts.fill_null("").to_arrow(compat_level=pl.CompatLevel.oldest())
    _, offset_buffer, data_buffer = array.buffers()
    ends = np.frombuffer(offset_buffer, dtype=np.int64)[
        array.offset : array.offset + len(array) + 1
    ]
    raw = np.frombuffer(data_buffer, dtype=np.uint8)[ends[0] : ends[-1]] if data_buffer else None
    heads = ends - ends[0]  # start of each text, then the end of the last one
    n = int(heads[-1])
    if raw is None or n == 0:
        return pl.Series(texts.name, [[] for _ in range(len(texts))], dtype=pl.List(pl.String))
    begins, lengths, data = _blockwise(raw, heads)
    offsets = np.zeros(len(begins) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    tokens = pa.LargeStringArray.from_buffers(
        len(begins), pa.py_buffer(offsets), pa.py_buffer(data)
    )
    firsts = np.searchsorted(begins, heads).astype(np.int64)  # each text's first token
    starts = pa.Array.from_buffers(pa.int64(), len(firsts), [None, pa.py_buffer(firsts)])
    lists = pa.LargeListArray.from_arrays(starts, tokens)  # (pa.array would load pandas)
    return pl.Series(texts.name, ArrowArray(lists))
