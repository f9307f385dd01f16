"""Types of the C module :mod:`arbwb.native._termcount` (arbwb/native/_termcount.c); callers reach
it, or its
fallback :func:`arbwb.native.fallback.count`, through :mod:`arbwb.native.select`."""

from typing import Any, TypeAlias

import numpy.typing as npt
from typing_extensions import Buffer

#: Anything with the buffer protocol (numpy's stubs do not declare it for its arrays).
Bytes: TypeAlias = Buffer | npt.NDArray[Any]

def count(*columns: Bytes) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes]:
    """(nnz, cols, freq, tokens, vocab_offsets, vocab_bytes) of the texts
    ``data[offsets[i]:offsets[i + 1]]`` of 1 to 8 (data, offsets) column pairs, row i being
    the columns' texts i one after the other; see the C docstring."""
