"""Types of the C module :mod:`arbwb._jsoncheck` (arbwb/_jsoncheck.c)."""

import mmap

from typing_extensions import Buffer

def rows_clean(
    data: Buffer | mmap.mmap, strings: tuple[bytes, ...], ints: tuple[bytes, ...], /
) -> bool:
    """Whether every line of ``data`` is certainly a JSON object with each key of ``strings``
    once as a string and each of ``ints`` once as an integer; see the C docstring."""
