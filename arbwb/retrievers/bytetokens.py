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

from typing import Any

import numpy as np
import polars as pl


class ArrowArray:
    """An Arrow array seen only through the Arrow PyCapsule interface: Polars then imports it
    without loading ``pyarrow.compute``."""

    def __init__(self, array: Any) -> None:
        self.array = array

    def __arrow_c_array__(self, requested_schema: object | None = None) -> Any:
        """The array's (schema, array) capsules."""
        return self.array.__arrow_c_array__(requested_schema)


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
    upper = (raw - np.uint8(65)) < 26  # wraps below "A": one comparison per class
    lower = (raw - np.uint8(97)) < 26
    alnum = upper | lower | ((raw - np.uint8(48)) < 10)
    # cut[j]: a token cannot continue across position j (between bytes j - 1 and j): an end,
    # a text start, a byte that is no letter or digit on either side, or a camel pair.
    cut = np.empty(n + 1, dtype=bool)
    np.logical_or(~(alnum[:-1] & alnum[1:]), lower[:-1] & upper[1:], out=cut[1:n])
    cut[heads] = True
    cut[0] = True
    begins = np.flatnonzero(cut[:n] & alnum)
    lengths = np.flatnonzero(cut[1:] & alnum) + 1 - begins
    offsets = np.zeros(len(begins) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = raw[alnum] | np.uint8(0x20)
    tokens = pa.LargeStringArray.from_buffers(
        len(begins), pa.py_buffer(offsets), pa.py_buffer(data)
    )
    firsts = np.searchsorted(begins, heads).astype(np.int64)  # each text's first token
    starts = pa.Array.from_buffers(pa.int64(), len(firsts), [None, pa.py_buffer(firsts)])
    lists = pa.LargeListArray.from_arrays(starts, tokens)  # (pa.array would load pandas)
    return pl.Series(texts.name, ArrowArray(lists))
