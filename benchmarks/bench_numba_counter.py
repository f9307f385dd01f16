"""The §7.1 term counter as a numba kernel (``numba_termcount.py``) against the C module
(issue 24: "C, or a numba kernel if it matches within 1.5x and removes the compiler
requirement: measure both").

Counts every batch of one chunk file (default: the largest of the ARB-shaped release under
``$ARBWB_BENCH_DIR``), its columns as :func:`arbwb.retrievers.terms.count_batch` passes them
to the counter (blocks and batches as :func:`arbwb.retrievers.termcache.compute` reads them),
after checking that numba gives the C module's six results byte for byte on every batch and
the same :class:`~arbwb.retrievers.terms.BatchCounts`. Sides take turns, each the fastest of
``--rounds`` (wall and CPU time, the machine being shared); the pure-Python fallback once, for
scale. Then numba's one-off cost in fresh processes: ``import numba``, the first call's
compile with an empty cache (``cache=True``), and the same with the cache filled.
Skips (exit 0) where numba or the C module is missing. Measured 2026-12-02 (numba 0.68.1,
95 MiB chunk file, 2 shared cores, load 3-6): C 0.20 s CPU, numba 0.32 s (x1.64, not within
1.5x), Python fallback 3.9 s; the first 4- and 1-column calls compile for 5.7-9.5 s in all
(0.3 s from numba's cache).
Usage:
PYTHONPATH=/path/to/numba .venv/bin/python benchmarks/bench_numba_counter.py
[--chunk-file F] [--rounds 3] [--no-fallback]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl

from arbwb.io.chunkscan import iter_raw_blocks, parse_block
from arbwb.native import fallback
from arbwb.retrievers import terms
from arbwb.retrievers.common import CHUNK_COLUMNS, DOCUMENT_FIELDS
from arbwb.retrievers.termcache import BLOCK_BYTES

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _arb_shape import ROOT, VERSION  # noqa: E402  (benchmarks/ is not a package)

Counter = Callable[..., tuple[bytes, ...]]

#: Run in a fresh process: numba's import, then the first 4-column and 1-column calls.
FIRST_CALLS = """
import json, sys, time
import numpy as np
start = time.perf_counter()
import numba
imported = time.perf_counter()
sys.path.insert(0, sys.argv[1])
import numba_termcount
texts, offsets = b"getHTTPResponse snake_case", np.array([0, 15, 26], np.int64)
loaded = time.perf_counter()
numba_termcount.count(*[texts, offsets] * 4)
four = time.perf_counter()
numba_termcount.count(texts, offsets)
one = time.perf_counter()
print(json.dumps({"import numba": imported - start, "import module": loaded - imported,
                  "first call, 4 columns": four - loaded, "first call, 1 column": one - four}))
"""


def largest_chunk_file() -> Path:
    """The largest chunk file of the ARB-shaped release (built by ``_arb_shape.py``)."""
    files = list((ROOT / VERSION).glob("**/*.chunks.jsonl"))
    if not files:
        raise SystemExit(f"no chunk file under {ROOT / VERSION}: build it with _arb_shape.py")
    return max(files, key=lambda path: (path.stat().st_size, str(path)))


def document_batches(chunk_file: Path) -> Iterator[pl.DataFrame]:
    """The file's batches of §7.2 document fields, as ``termcache.compute`` reads them."""
    for raw in iter_raw_blocks(chunk_file, BLOCK_BYTES):
        block = parse_block(chunk_file, raw, list(CHUNK_COLUMNS))
        yield from terms.batches(block.select(DOCUMENT_FIELDS))


def batch_args(chunk_file: Path) -> list[tuple[Any, ...]]:
    """Every batch's counter arguments, the columns as ``count_batch`` passes them."""
    return [
        tuple(part for c in batch.get_columns() for part in terms._column_buffers(c))
        for batch in document_batches(chunk_file)
    ]


def count_all(counter: Counter, args: list[tuple[Any, ...]]) -> tuple[float, float]:
    """Wall and CPU seconds to count every batch."""
    wall, cpu = time.perf_counter(), time.process_time()
    for one in args:
        counter(*one)
    return time.perf_counter() - wall, time.process_time() - cpu


def batch_counts(counter: Counter, chunk_file: Path) -> list[terms.BatchCounts]:
    """``count_batch`` of every batch with ``counter`` in place of the module it uses."""
    saved = vars(terms)["termcount"]  # (count_batch looks it up on each call)
    vars(terms)["termcount"] = SimpleNamespace(count=counter)
    try:
        return [terms.count_batch(batch) for batch in document_batches(chunk_file)]
    finally:
        vars(terms)["termcount"] = saved


def same_counts(a: terms.BatchCounts, b: terms.BatchCounts) -> bool:
    """Whether two batches' counts are equal (arrays and vocabulary)."""
    arrays = ("nnz", "cols", "freq", "tokens")
    return (
        all(getattr(a, f).tobytes() == getattr(b, f).tobytes() for f in arrays)
        and (a.vocab is None) == (b.vocab is None)
        and (a.vocab is None or b.vocab is None or a.vocab.equals(b.vocab))
    )


def first_calls(cache: Path) -> dict[str, float]:
    """Seconds of numba's one-off steps in a fresh process with ``cache`` as numba's cache."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    out = subprocess.run(
        [sys.executable, "-c", FIRST_CALLS, str(HERE)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found: dict[str, float] = json.loads(out.splitlines()[-1])
    return found


def load() -> str:
    """The load averages (the machine is shared)."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    """Check equality, time the sides in turns, then numba's first calls; print tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk-file", type=Path, help="default: the largest of the release")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-fallback", action="store_true", help="skip the slow Python side")
    args = parser.parse_args()
    if importlib.util.find_spec("numba") is None:
        print("numba is not installed: nothing to measure (skipped)")
        return 0
    try:
        from arbwb.native import _termcount
    except ImportError:
        print("the C module is not built: nothing to compare (skipped)")
        return 0
    import numba_termcount

    chunk_file = args.chunk_file or largest_chunk_file()
    mib = chunk_file.stat().st_size / 2**20
    every = batch_args(chunk_file)
    print(f"{chunk_file} ({mib:.1f} MiB, {len(every)} batches); load {load()}")
    numba_termcount.count(*every[0])  # compiled (or loaded from the cache) before timing
    for k, one in enumerate(every):
        assert numba_termcount.count(*one) == _termcount.count(*one), f"batch {k} differs"
    c_counts = batch_counts(_termcount.count, chunk_file)
    numba_counts = batch_counts(numba_termcount.count, chunk_file)
    assert len(c_counts) == len(numba_counts)
    assert all(map(same_counts, c_counts, numba_counts)), "count_batch differs"
    del c_counts, numba_counts
    print("numba = C byte for byte on every batch (six results and count_batch)")

    sides: dict[str, Counter] = {"C": _termcount.count, "numba": numba_termcount.count}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for round_ in range(args.rounds):
        order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
        for name in order:
            times[name].append(count_all(sides[name], every))
    if not args.no_fallback:
        times["Python fallback"] = [count_all(fallback.count, every)]
    print(f"\nfastest of {args.rounds} rounds (sides in turns); load {load()}")
    print("| counter | wall s | CPU s | MiB/s (CPU) | CPU vs C |")
    print("|---|---|---|---|---|")
    c_cpu = min(cpu for _, cpu in times["C"])
    for name, found in times.items():
        wall, cpu = min(w for w, _ in found), min(c for _, c in found)
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {mib / cpu:.0f} | x{cpu / c_cpu:.2f} |")

    print(f"\nnumba's one-off cost in a fresh process (s); load {load()}")
    with tempfile.TemporaryDirectory() as cache:
        cold = first_calls(Path(cache))
        cached = first_calls(Path(cache))
    print("| step | empty cache | cache filled |")
    print("|---|---|---|")
    for step in cold:
        print(f"| {step} | {cold[step]:.2f} | {cached[step]:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
