"""A worker process computing term-cache entries: ``python -m arbwb.retrievers.termworker``.

Reads one JSON object from stdin, ``{"folder": F, "shares": [[chunk_file, ...], ...]}``, and
computes each missing entry of every share in that order
(:func:`arbwb.retrievers.termcache.warm_entry`), printing ``<index>\\t<ok|fail>`` (the file's
index in the shares laid end to end) as soon as it is saved, so the parent loads it meanwhile.
The shares after the first run in processes forked once numpy and scipy are imported, so
those imports are paid once (Linux, while this process has a single thread; else they run
here after the first share). The job is read after those imports, so a run whose term cache
is empty starts the worker first thing (:func:`arbwb.retrievers.termspawn.start_early`) and
sends the job once it knows the missing entries; an empty stdin ends the worker.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import signal
import sys
from pathlib import Path

_PR_SET_PDEATHSIG = 1  # Linux uapi linux/prctl.h


def main() -> int:
    """Compute the shares listed on stdin, reporting each entry on stdout."""
    gc.disable()  # a short-lived process making few reference cycles: collections cost CPU
    import numpy  # noqa: F401  # thread-free imports, shared with the forked workers
    import scipy.sparse  # noqa: F401

    text = sys.stdin.read()  # the job (a few KB: the parent never waits on the pipe)
    if not text:
        return 0
    job = json.loads(text)
    folder = Path(job["folder"])
    shares: list[list[str]] = job["shares"]
    starts = [sum(len(s) for s in shares[:k]) for k in range(len(shares))]
    mine, forked = [0] if shares else [], False
    children: list[int] = []
    for k in range(1, len(shares)):
        pid = _fork()
        if pid == 0:  # the child computes share k only
            mine, forked = [k], True
            children.clear()
            break
        if pid is None:
            mine.append(k)
        else:
            children.append(pid)
    from arbwb.retrievers.termcache import warm_entry, worker_init

    worker_init()
    for k in mine:
        for i, name in enumerate(shares[k]):
            status = "ok" if warm_entry(folder, Path(name)) else "fail"
            os.write(1, f"{starts[k] + i}\t{status}\n".encode())  # one write: lines never mix
    if forked:
        os._exit(0)  # a forked worker: nothing of the parent's to clean up
    for pid in children:
        os.waitpid(pid, 0)
    return 0


def _fork() -> int | None:
    """``os.fork()`` (0 in the child, which dies with this process), or None when forking is
    not safe here (not Linux, or other threads exist)."""
    if not sys.platform.startswith("linux") or len(os.listdir("/proc/self/task")) != 1:
        return None
    try:
        prctl = ctypes.CDLL(None).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent ended before the call took effect
            os._exit(1)
    return pid


if __name__ == "__main__":
    sys.exit(main())
