"""Types of the C module :mod:`arbwb.native._jsonlines` (arbwb/native/_jsonlines.c); callers reach
it, or its
fallback :func:`arbwb.native.fallback.scan`, through :mod:`arbwb.native.select`."""

import mmap

from typing_extensions import Buffer

def scan(
    data: Buffer | mmap.mmap, strings: tuple[bytes, ...], ints: tuple[bytes, ...], /
) -> tuple[bytes, bytes] | None:
    """(bounds, special) of the lines of ``data`` when each is certainly a JSON object with
    each key of ``strings`` once as a string and each of ``ints`` once as an integer, else
    None; see the C docstring."""
