"""Identifier-splitter tokens (spec §7.1) of many texts at once, found on their UTF-8 bytes.

Non-ASCII bytes only separate tokens, so boundaries are numpy comparisons over the bytes,
in blocks of ``BLOCK_BYTES`` (small reused temporaries beat fresh memory's page faults), each
block one Arrow list chunk (no Python string per token). Checked against ``split_identifiers``
in tests/test_repomap_index_fast.py.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.tokenize import identifier_token_bytes

if TYPE_CHECKING:
    import pyarrow as pa

#: Bytes of whole texts scanned at once (a longer text is one block).
BLOCK_BYTES = 1 << 18


class ArrowChunks:
    """Arrow arrays seen only through the PyCapsule stream interface (Polars then skips
    ``pyarrow.compute``)."""

    def __init__(self, chunks: list[pa.Array], kind: pa.DataType) -> None:
        import pyarrow as pa

        self.chunked = pa.chunked_array(chunks, type=kind)

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> Any:
        """The chunks' stream capsule."""
        return self.chunked.__arrow_c_stream__(requested_schema)


def _chunk(raw: npt.NDArray[np.uint8], heads: npt.NDArray[np.int64]) -> pa.Array:
    """The token lists of the texts in ``raw`` starting at ``heads``, as one Arrow list array."""
    import pyarrow as pa

    begins, lengths, data = identifier_token_bytes(raw, heads)
    offsets = np.zeros(len(begins) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    tokens = pa.LargeStringArray.from_buffers(
        len(begins), pa.py_buffer(offsets), pa.py_buffer(data)
    )
    firsts = np.searchsorted(begins, heads).astype(np.int64)  # each text's first token
    starts = pa.Array.from_buffers(pa.int64(), len(firsts), [None, pa.py_buffer(firsts)])
    return pa.LargeListArray.from_arrays(starts, tokens)  # (pa.array would load pandas)


def token_lists(texts: pl.Series) -> pl.Series:
    """Each text's identifier-splitter tokens in text order (repeats kept), as a
    ``List(String)`` series aligned with ``texts`` (a null text has none)."""
    import pyarrow as pa

    if texts.is_empty():
        return pl.Series(texts.name, [], dtype=pl.List(pl.String))
    array = texts.fill_null("").to_arrow(compat_level=pl.CompatLevel.oldest())
    _, offset_buffer, data_buffer = array.buffers()
    ends = np.frombuffer(offset_buffer, dtype=np.int64)[
        array.offset : array.offset + len(array) + 1
    ]
    empty = np.zeros(0, dtype=np.uint8)
    raw = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else empty
    chunks: list[pa.Array] = []
    for first, last in _blocks(ends):
        lo = int(ends[first])
        chunks.append(_chunk(raw[lo : ends[last]], ends[first : last + 1] - lo))
    return pl.Series(texts.name, ArrowChunks(chunks, pa.large_list(pa.large_string())))


def _blocks(marks: npt.NDArray[np.int64]) -> Iterator[tuple[int, int]]:
    """(first, last) text ranges of about ``BLOCK_BYTES`` (at least one, maybe empty)."""
    total = int(marks[-1] - marks[0])
    starts = np.unique(np.searchsorted(marks[:-1], marks[0] + np.arange(0, total, BLOCK_BYTES)))
    inner = starts[(starts > 0) & (starts < len(marks) - 1)]
    yield from pairwise([0, *inner.tolist(), len(marks) - 1])


def distinct_text_tokens(texts: Sequence[str], name: str = "text") -> pl.Series:
    """Each text's distinct tokens in order of first appearance, by the C term counter."""
    import pyarrow as pa

    from arbwb.retrievers.terms import count_batch

    found = count_batch(pl.Series(name, texts, dtype=pl.String))
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(found.nnz, out=starts[1:])
    vocab = found.vocab if found.vocab is not None else pa.array([], pa.large_binary())
    ids = pa.Array.from_buffers(pa.int32(), len(found.cols), [None, pa.py_buffer(found.cols)])
    lists = pa.LargeListArray.from_arrays(
        pa.Array.from_buffers(pa.int64(), len(starts), [None, pa.py_buffer(starts)]),
        vocab.cast(pa.large_string()).take(ids),  # (Arrow indices: numpy ones import pandas)
    )
    return pl.Series(name, ArrowChunks([lists], lists.type))
