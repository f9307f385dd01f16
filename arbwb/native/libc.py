"""arbwb-defined process defaults for native libraries (standard library only).

Native libraries read these variables when they load, so :func:`apply` runs before a command
imports them; a value already in the environment wins.
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
    """Set every default that the environment does not set already (none with
    ``ARBWB_ABLATE=defaults``, for benchmarks/bench_ablation.py only)."""
    if "defaults" in os.environ.get("ARBWB_ABLATE", ""):
        return
    for name, value in DEFAULTS.items():
        os.environ.setdefault(name, value)
