"""Pure-Python stand-ins for the C modules, used where they are not built (no compiler at
install) or ``ARBWB_NO_NATIVE=1`` asks for them (:mod:`arbwb.native.select`).

:func:`count` gives :func:`arbwb.native._termcount.count`'s results byte for byte, with the
Polars splitter RepoMap uses (:func:`arbwb.tokenize.token_lists`). :func:`scan` declines every
file, so strict grep reads each the general way, which finds the same lines and special marks.
"""

from __future__ import annotations

import mmap
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa

from arbwb.tokenize import token_lists

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


def count(*columns: Bytes) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes]:
    """(nnz, cols, freq, tokens, vocab_offsets, vocab_bytes) as
    :func:`arbwb.native._termcount.count` gives them for 1 to 8 (data, offsets) column pairs:
    :func:`arbwb.tokenize.token_lists` of each row's texts, numbered by first appearance, then
    each row's (term, count) pairs in order of first appearance."""
    if not 2 <= len(columns) <= 2 * MAX_COLUMNS or len(columns) % 2:
        msg = "count(data, offsets, ...): 1 to 8 pairs"
        raise TypeError(msg)
    n_texts, lists = -1, []
    for col in range(len(columns) // 2):
        data = _raw(columns[2 * col])
        offsets = _offsets(data.size, columns[2 * col + 1], col, n_texts)
        n_texts = offsets.size - 1
        ascii_only = np.where(data < 0x80, data, np.uint8(32))  # non-ASCII only separates
        buffers = [None, pa.py_buffer(offsets), pa.py_buffer(ascii_only)]
        texts = pa.Array.from_buffers(pa.large_string(), n_texts, buffers)
        lists.append(token_lists(pl.Series(str(col), texts)))
    rows = pl.DataFrame(lists).select(tok=pl.concat_list(pl.all())).with_row_index("row")
    flat = rows.explode("tok").drop_nulls("tok")
    vocab = flat["tok"].unique(maintain_order=True)
    ids = vocab.to_frame().with_row_index("id")
    flat = flat.join(ids, on="tok", how="left", maintain_order="left")
    pairs = flat.group_by("row", "id", maintain_order=True).len()
    ends = np.zeros(len(vocab) + 1, np.int64)
    np.cumsum(vocab.str.len_bytes().to_numpy(), out=ends[1:])
    return (
        np.bincount(pairs["row"].to_numpy(), minlength=n_texts).astype(np.int64).tobytes(),
        pairs["id"].cast(pl.Int32).to_numpy().tobytes(),
        pairs["len"].cast(pl.Int32).to_numpy().tobytes(),
        np.bincount(flat["row"].to_numpy(), minlength=n_texts).astype(np.int64).tobytes(),
        ends.tobytes(),
        "".join(vocab.to_list()).encode(),
    )


def scan(
    data: Buffer | mmap.mmap, strings: tuple[bytes, ...], ints: tuple[bytes, ...], /
) -> tuple[bytes, bytes] | None:
    """None, as :func:`arbwb.native._jsonlines.scan` gives for a file it leaves: the general reading
    (lines, special marks, the full check; else the full parse) then ranks it the same; a
    one-pass check in Python would cost more than that reading saves."""
    return None
