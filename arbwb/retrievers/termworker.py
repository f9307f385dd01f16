"""A worker process computing term-cache entries: ``python -m arbwb.retrievers.termworker``.

Reads one JSON object from stdin, ``{"folder": F, "files": [chunk_file, ...], "processes":
N}``, and computes each missing entry (:func:`arbwb.retrievers.termcache.warm_entry`),
printing ``<index>\\t<ok|fail>`` (the file's index in ``files``) as soon as it is saved, so
the parent loads it meanwhile. Up to N processes share the files: the others are forked once
numpy and scipy are imported, so those imports are paid once (Linux, while this process has
a single thread), and each process claims the next file in run order whenever it is free
(:func:`_claims`), so they end together however long each file takes. Elsewhere this process
computes every file. The job is read after those imports, so a run whose term cache is empty
starts the worker first thing (:func:`arbwb.retrievers.termspawn.start_early`) and sends the
job once it knows the missing entries; an empty stdin ends the worker.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

_PR_SET_PDEATHSIG = 1  # Linux uapi linux/prctl.h
_RECORD = 4  # bytes per claimed file index in the claims pipe (little-endian)


def main() -> int:
    """Compute the files listed on stdin, reporting each entry on stdout."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to report
    gc.disable()  # a short-lived process making few reference cycles: collections cost CPU
    import numpy  # noqa: F401  # thread-free imports, shared with the forked workers
    import scipy.sparse  # noqa: F401

    text = sys.stdin.read()  # the job (a few KB: the parent never waits on the pipe)
    if not text:
        return 0
    job = json.loads(text)
    folder = Path(job["folder"])
    files: list[str] = job["files"]
    processes = min(int(job["processes"]), len(files))
    linux = sys.platform.startswith("linux")  # where forking (and the claims pipe) is used
    claims = _claims_pipe(len(files)) if processes > 1 and linux else None
    children: list[int] = []
    for _ in range(1, processes if claims is not None else 1):
        pid = _fork()
        if pid is None:  # not safe here: the processes so far claim every file
            break
        if pid == 0:  # a forked worker: it claims files like this one
            children.clear()
            break
        children.append(pid)
    from arbwb.retrievers.termcache import warm_entry, worker_init

    worker_init()
    for index in _claims(claims) if claims is not None else range(len(files)):
        status = "ok" if warm_entry(folder, Path(files[index])) else "fail"
        os.write(1, f"{index}\t{status}\n".encode())  # one write: lines never mix
    for pid in children:
        os.waitpid(pid, 0)
    # Everything is reported and written: skip the interpreter's teardown, which frees a
    # large heap and many modules one by one while the run waits for this exit.
    sys.stderr.flush()
    os._exit(0)


def _claims_pipe(n: int) -> int | None:
    """The read end of a pipe holding the indices ``0 .. n-1`` in order (its write end
    closed), or None when they do not fit in it (then this process computes every file)."""
    import fcntl  # Linux only (the caller checks)

    read, write = os.pipe()
    size = n * _RECORD
    if size > 2**16:  # grow past the default 64 KiB (up to the system's limit)
        with contextlib.suppress(OSError):
            fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, size)
    os.set_blocking(write, False)
    records = b"".join(i.to_bytes(_RECORD, "little") for i in range(n))
    try:
        written = os.write(write, records)
    except BlockingIOError:
        written = 0
    os.close(write)
    if written != size:
        os.close(read)
        return None
    return read


def _claims(read: int) -> Iterator[int]:
    """The file indices this process claims, in run order: each read takes one record, and
    reads of a pipe never interleave, so every index goes to exactly one process."""
    while len(record := os.read(read, _RECORD)) == _RECORD:
        yield int.from_bytes(record, "little")


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
    try:
        sys.exit(main())
    except BrokenPipeError:  # the parent has ended (interrupted): nobody is left to tell
        os._exit(0)
