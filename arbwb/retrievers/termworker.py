"""A worker process computing term-cache entries: ``python -m arbwb.retrievers.termworker``.

Reads one JSON object from stdin, ``{"folder": F, "files": [chunk_file, ...]}``,
computes each missing entry in that order (:func:`arbwb.retrievers.termcache.warm_entry`) and
prints ``<index>\\t<ok|fail>`` as soon as it is saved, so the parent loads it meanwhile.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> int:
    """Compute the entries listed on stdin, reporting each one on stdout."""
    job = json.loads(sys.stdin.read())  # read before the heavy imports: the parent is writing
    from arbwb.retrievers.termcache import warm_entry, worker_init

    worker_init()
    folder = Path(job["folder"])
    for k, name in enumerate(job["files"]):
        status = "ok" if warm_entry(folder, Path(name)) else "fail"
        print(f"{k}\t{status}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
