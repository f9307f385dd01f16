"""The pure-Python fallbacks (:mod:`arbwb.native.fallback`) against the C modules, on one chunk
file of data/demo's chunk rows repeated to about ``--mib`` MiB: §7.1 term counts of every
row's §7.2 document fields (the lexical/BM25 cold path, in :mod:`arbwb.retrievers.terms`'s
batches) and strict grep's :func:`~arbwb.retrievers.grep.line_index`. Same results asserted;
prints the best of ``--repeats`` times and the slow-down. Usage:
.venv/bin/python benchmarks/bench_fallback.py [--mib 8 --repeats 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from arbwb.native import fallback as native_fallback
from arbwb.native import select as _native_select
from arbwb.native.select import LineScanner, TermCounter
from arbwb.retrievers import grep, terms

ROOT = Path(__file__).resolve().parents[1]
CHUNKS = sorted((ROOT / "data" / "demo" / "corpus").glob("*/*/*.chunks.jsonl"))


def best(repeats: int, run: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest of ``repeats`` runs' seconds, and the result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def term_counts(counter: TermCounter, fields: pl.DataFrame) -> list[tuple[bytes, ...]]:
    """Every batch's counts, its columns passed as :func:`terms.count_batch` passes them."""
    return [
        counter.count(*(part for c in batch.get_columns() for part in terms._column_buffers(c)))
        for batch in terms.batches(fields)
    ]


def line_index(scanner: LineScanner, path: Path) -> tuple[list[str], list[bool], int]:
    """The file's strict-grep line index (lines, special marks, rows) with ``scanner``."""
    _native_select.jsonlines = scanner  # line_index looks it up on each call
    index = grep.line_index(path)
    assert index is not None
    return index.lines.to_list(), index.special.to_list(), index.rows


def main() -> int:
    """Build the file, time both implementations of each step, print them and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=8.0, help="chunk file size")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    try:
        from arbwb.native import _jsonlines, _termcount
    except ImportError:
        print("the C modules are not built: nothing to compare")
        return 1
    one = b"".join(path.read_bytes() for path in CHUNKS)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.chunks.jsonl"
        path.write_bytes(one * max(1, round(args.mib * 2**20 / len(one))))
        mib = path.stat().st_size / 2**20
        fields = pl.read_ndjson(path).select("path", "symbol", "kind", "text")
        print(f"{mib:.1f} MiB chunk file, {fields.height} rows; best of {args.repeats}")
        steps = [
            ("term counts", partial(term_counts, fields=fields), _termcount),
            ("grep line_index", partial(line_index, path=path), _jsonlines),
        ]
        for name, step, native in steps:
            c_s, c_result = best(args.repeats, partial(step, native))
            py_s, py_result = best(args.repeats, partial(step, native_fallback))
            assert py_result == c_result, name
            print(
                f"{name:16s} C {c_s * 1000:6.0f} ms ({mib / c_s:5.0f} MiB/s)   "
                f"Python {py_s * 1000:6.0f} ms ({mib / py_s:5.0f} MiB/s)   x{py_s / c_s:.1f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
