"""arbwb-defined process defaults for native libraries (standard library only).

Native libraries read these variables when they load, so :func:`apply` runs before a command
imports them; a value already in the environment wins. Worker processes started by arbwb
(:mod:`arbwb.retrievers.termspawn`) replace these defaults with their own, but never a value
the user set (:func:`is_default`).
"""

from __future__ import annotations

import os

DEFAULTS = {
    # OpenBLAS's idle workers sleep at once (2**4 cycles) instead of busy-waiting ~0.1 s of
    # CPU after numpy loads and after every BLAS call.
    "OPENBLAS_THREAD_TIMEOUT": "4",
    # Polars' jemalloc keeps freed pages 5 s (Polars' own default: 0.5 s, appended before this),
    # so the next chunk file reuses them instead of faulting in and zeroing fresh ones.
    "_RJEM_MALLOC_CONF": "dirty_decay_ms:5000,muzzy_decay_ms:5000",
}


def apply() -> None:
    """Set every default that the environment does not set already."""
    for name, value in DEFAULTS.items():
        os.environ.setdefault(name, value)


def is_default(name: str) -> bool:
    """Whether ``name`` is unset or holds arbwb's default (not a value the user chose)."""
    return os.environ.get(name, DEFAULTS.get(name)) == DEFAULTS.get(name)
