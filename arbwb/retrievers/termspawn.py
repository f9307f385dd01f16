"""Starting term-cache worker processes (:mod:`arbwb.retrievers.termworker`), early or not.

Standard library only, so a command can start the worker before importing anything heavy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from arbwb.native import libc as native

#: Worker processes' allocators: one glibc arena, Arrow on glibc, Polars' jemalloc returning
#: freed pages soon, which keeps their peak memory down; no BLAS thread pool (no BLAS call),
#: so the worker can fork; one Polars thread (the worker processes already fill the cores:
#: Polars' own parallel parsing only added CPU, measured). A value the user set wins; arbwb's
#: own process defaults (:mod:`arbwb.native.libc`) do not.
WORKER_ENV = {
    "MALLOC_ARENA_MAX": "1",
    "ARROW_DEFAULT_MEMORY_POOL": "system",
    "_RJEM_MALLOC_CONF": "dirty_decay_ms:1000,muzzy_decay_ms:0",
    "OPENBLAS_NUM_THREADS": "1",
    "POLARS_MAX_THREADS": "1",
}
#: The worker started ahead of its job by :func:`start_early`, until a run takes it.
_EARLY: list[subprocess.Popen[str]] = []


def spawn() -> subprocess.Popen[str]:
    """Launch ``python -m arbwb.retrievers.termworker`` (stdin and stdout piped, text).

    Its environment is :func:`worker_env`.
    """
    return subprocess.Popen(
        [sys.executable, "-m", "arbwb.retrievers.termworker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=worker_env(),
    )


def worker_env() -> dict[str, str]:
    """This process's environment with ``WORKER_ENV`` where the user set no value, and this
    arbwb's folder first on PYTHONPATH, so the worker imports the same package."""
    package_root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    chosen = {name: value for name, value in WORKER_ENV.items() if native.is_default(name)}
    return dict(os.environ) | chosen | {"PYTHONPATH": path}


def start_early(folder: Path) -> None:
    """Start the worker now when the term cache ``folder`` holds no entry (a cold run), so its
    imports overlap this process's; :func:`take_early` hands it to the run. arbwb-defined."""
    if not _EARLY and not (folder.is_dir() and any(folder.glob("*.bin"))):
        _EARLY.append(spawn())


def take_early() -> subprocess.Popen[str] | None:
    """The worker :func:`start_early` started, if any (taken: later calls return None)."""
    return _EARLY.pop() if _EARLY else None


def discard_early() -> None:
    """End the early worker unused: it reads an empty job and exits (reaped by subprocess)."""
    process = take_early()
    if process is not None and process.stdin is not None:
        process.stdin.close()
