"""Term statistics of a snapshot's chunks for lexical/BM25 (spec §7.1-7.3), cached on disk.

A chunk file is read in blocks of whole lines (only the columns rankers use), each block's
documents are tokenised (:mod:`arbwb.retrievers.terms`) and its text dropped, so memory stays
flat however large the file. What is kept is small: the chunk columns without ``text`` (plus
``n_chars``, the text length the 8k packing uses) and the chunk x term counts (CSC). That
entry is written to ``<cache>/terms/<key>.bin`` (:func:`arbwb.cache.write_blob`) keyed by
the chunk file's path, size, mtime and inode (:func:`arbwb.cache.file_key`), so a changed
chunk file is never served stale; the write is atomic, so concurrent processes at worst
compute it twice. Counting runs on two threads (``WORKERS``); a run's missing entries are
computed by ``PROCESSES`` worker processes (:meth:`TermSource.prefetch`,
:mod:`arbwb.retrievers.termworker`) while this process ranks.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import json
import os
import subprocess
import sys
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb import cache
from arbwb.io.chunkscan import CHUNK_FIELDS, iter_raw_blocks, parse_block
from arbwb.io.corpus import Corpus
from arbwb.pathclass import CandidateFilter, keep_path
from arbwb.retrievers.common import CHUNK_COLUMNS, ColumnCounts, TermMatrix, document_expr

if TYPE_CHECKING:  # the term counter (pyarrow) loads only when a chunk file is tokenised
    from arbwb.retrievers.terms import BatchCounts

VERSION = "terms-v2"
KIND = "terms"
#: The chunk columns kept beside the counts (the CHUNKS columns rankers use, minus text).
META_COLUMNS = ("chunk_id", "path", "kind", "symbol", "start_line", "end_line", "n_chars")
#: Threads parsing and tokenising a chunk file's blocks, and blocks in flight at most.
WORKERS, AHEAD = 2, 2
#: Bytes per block: fewer, larger Polars and Arrow calls cost less CPU (measured: 4 MiB
#: about 7% below 2 MiB) for a few MB more per block in flight.
BLOCK_BYTES = 4 * 2**20
#: Missing entries from which a run computes them in worker processes, and how many.
MIN_PREFETCH, PROCESSES = 4, 2
#: Worker processes' allocators: one glibc arena, Arrow on glibc, Polars' jemalloc returning
#: freed pages soon, which keeps their peak memory down (their own variables win).
WORKER_ENV = {
    "MALLOC_ARENA_MAX": "1",
    "ARROW_DEFAULT_MEMORY_POOL": "system",
    "_RJEM_MALLOC_CONF": "dirty_decay_ms:1000,muzzy_decay_ms:0",
}
#: glibc mallopt (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, M_TOP_PAD) in the worker processes.
_MALLOPT = ((-3, 32 * 2**20), (-1, 256 * 2**20), (-2, 64 * 2**20))


@dataclass(frozen=True)
class SnapshotTerms:
    """A chunk file's chunks (``META_COLUMNS``, file order) and their §7.1 term counts.

    ``counts[c, t]`` = occurrences of ``terms[t]`` in chunk c's §7.2 document (CSC).
    """

    chunks: pl.DataFrame
    counts: ColumnCounts
    terms: list[str]
    doc_len: npt.NDArray[np.int64]  # tokens per chunk document
    n_unique: npt.NDArray[np.int64]  # distinct terms per chunk document


def compute(chunk_file: Path) -> SnapshotTerms:
    """Read and tokenise a chunk file block by block (text is never held whole).

    Blocks are parsed and counted by ``WORKERS`` threads (Polars, numpy and Arrow release the
    GIL), at most ``AHEAD`` blocks in flight; each block's counts join the file's as it
    arrives, in file order (:class:`arbwb.retrievers.terms.TermMerger`), so the result does
    not depend on the scheduling.
    """
    from arbwb.retrievers.terms import TermMerger

    metas: list[pl.DataFrame] = []
    merger = TermMerger()
    pending: deque[Future[tuple[pl.DataFrame, list[BatchCounts]]]] = deque()

    def take() -> None:
        meta, counted = pending.popleft().result()
        metas.append(meta)
        for part in counted:
            merger.add(part)

    with ThreadPoolExecutor(WORKERS, thread_name_prefix="arbwb-terms") as pool:
        for block in iter_raw_blocks(chunk_file, BLOCK_BYTES):
            pending.append(pool.submit(_count_block, chunk_file, block))
            if len(pending) >= AHEAD:
                take()
        while pending:
            take()
    found, doc_len = merger.finish()
    chunks = pl.concat(metas) if metas else _empty_meta()
    terms, rows = found.terms, found.counts
    del found
    n_unique = np.diff(rows.indptr)
    csc = rows.tocsc()
    del rows  # the row-major copy is freed before the caller goes on
    counts = ColumnCounts(csc.indptr, csc.indices, csc.data, (csc.shape[0], csc.shape[1]))
    return SnapshotTerms(chunks, counts, terms, doc_len, n_unique)


def _count_block(chunk_file: Path, raw: bytes) -> tuple[pl.DataFrame, list[BatchCounts]]:
    """One block's chunk columns (``META_COLUMNS``) and the term counts of its documents."""
    from arbwb.retrievers.terms import batches, count_batch

    block = parse_block(chunk_file, raw, list(CHUNK_COLUMNS))
    n_chars = pl.col("text").str.len_chars().cast(pl.Int64).alias("n_chars")
    meta = block.with_columns(n_chars).select(META_COLUMNS)
    docs = block.select(document_expr().alias("doc"))["doc"]
    del block
    return meta, [count_batch(batch) for batch in batches(docs)]


def _empty_meta() -> pl.DataFrame:
    schema = {c: CHUNK_FIELDS.get(c, pl.Int64) for c in META_COLUMNS}
    return pl.DataFrame(schema=schema)


def _to_arrays(terms: SnapshotTerms) -> dict[str, npt.NDArray[Any]]:
    meta = io.BytesIO()
    terms.chunks.write_ipc(meta)
    counts = terms.counts
    small = counts.data.size == 0 or int(counts.data.max()) <= np.iinfo(np.uint16).max
    return {
        "indptr": counts.indptr.astype(np.int64, copy=False),
        "indices": counts.indices.astype(np.int32, copy=False),
        "data": counts.data.astype(np.uint16 if small else np.int32),  # widened on load
        "shape": np.array(counts.shape, dtype=np.int64),
        "doc_len": terms.doc_len.astype(np.int64, copy=False),
        "n_unique": terms.n_unique.astype(np.int32),
        "terms": np.frombuffer("\n".join(terms.terms).encode("ascii"), dtype=np.uint8),
        "meta": np.frombuffer(meta.getvalue(), dtype=np.uint8),
    }


def _from_arrays(arrays: dict[str, npt.NDArray[Any]]) -> SnapshotTerms | None:
    try:
        shape = tuple(int(x) for x in arrays["shape"])
        # counts stay int32 (exact; BM25 arithmetic promotes them to float64 per term)
        data = arrays["data"].astype(np.int32)
        counts = ColumnCounts(arrays["indptr"], arrays["indices"], data, (shape[0], shape[1]))
        text = arrays["terms"].tobytes().decode("ascii")
        chunks = pl.read_ipc(io.BytesIO(arrays["meta"].tobytes()))
        doc_len = arrays["doc_len"].astype(np.int64, copy=False)
        n_unique = arrays["n_unique"].astype(np.int64)
    except (KeyError, ValueError, OSError, pl.exceptions.ComputeError):
        return None
    terms = text.split("\n") if text else []
    rows = chunks.height
    if len(terms) != shape[1] or rows != shape[0] or len(doc_len) != rows != len(n_unique):
        return None
    return SnapshotTerms(chunks, counts, terms, doc_len, n_unique)


@dataclass
class TermSource:
    """Snapshot term statistics from the disk cache in ``folder`` (None: always computed).

    Stateful on purpose: counts entries served from disk vs computed, for the run summary.
    """

    folder: Path | None
    hits: int = 0
    misses: int = 0
    ahead: int = 0
    pending: dict[Path, _Worker] = field(default_factory=dict)

    def prefetch(
        self, corpus: Corpus, snapshot_ids: Sequence[str], candidate_filter: CandidateFilter
    ) -> None:
        """Compute the run's missing entries in ``PROCESSES`` worker processes.

        arbwb-defined: uses every core while this process only loads entries and ranks, so its
        memory stays that of a warm run (the workers' is freed when they exit). Missing chunk
        files are split between the workers in run order (:func:`shares`); :meth:`load` waits
        for an entry and then reads it like any cached entry. Without a cache folder, or with
        fewer than ``MIN_PREFETCH`` missing entries, nothing happens (they are computed here).
        """
        del candidate_filter  # entries hold every chunk; the filter applies when loading
        if self.folder is None:
            return
        missing = []
        for snapshot_id in snapshot_ids:
            chunk_file = corpus.chunk_path(snapshot_id)
            entry = cache.entry_path(self.folder, chunk_file, VERSION, ".bin")
            if chunk_file not in missing and not entry.is_file():
                missing.append(chunk_file)
        if len(missing) < MIN_PREFETCH:
            return
        for share in shares(missing, PROCESSES):
            if share:
                worker = _Worker.start(self.folder, share)
                self.pending.update(dict.fromkeys(share, worker))

    def load(self, corpus: Corpus, snapshot_id: str) -> SnapshotTerms:
        """The snapshot's term statistics: the cached entry if valid, else computed (and saved)."""
        chunk_file = corpus.chunk_path(snapshot_id)
        entry = None
        worker = self.pending.pop(chunk_file, None)
        if worker is not None and worker.wait_for(chunk_file):
            self.ahead += 1
        if self.folder is not None:
            entry = cache.entry_path(self.folder, chunk_file, VERSION, ".bin")
            arrays = cache.read_blob(entry)
            found = None if arrays is None else _from_arrays(arrays)
            if found is not None:
                self.hits += 1
                return found
        self.misses += 1
        terms = compute(chunk_file)
        if entry is not None:
            cache.write_blob(entry, _to_arrays(terms))
        return terms

    def stats(self) -> dict[str, Any]:
        """Snapshots whose term statistics came from the disk cache vs were computed (here or,
        ``term_cache_prefetched`` of the hits, by the worker processes this run)."""
        return {
            "term_cache_hits": self.hits,
            "term_cache_misses": self.misses,
            "term_cache_prefetched": self.ahead,
        }


@dataclass
class _Worker:
    """A worker process computing a share of the run's entries, in order, and which of them
    it has reported (True: saved; False: failed, so the parent computes it and reports the
    located error)."""

    process: subprocess.Popen[str]
    files: list[Path]
    done: dict[Path, bool] = field(default_factory=dict)

    @classmethod
    def start(cls, folder: Path, files: list[Path]) -> _Worker:
        """Launch ``python -m arbwb.retrievers.termworker`` on ``files`` (run order).

        Its environment adds ``WORKER_ENV`` (unless set already) and this arbwb's folder to
        PYTHONPATH, so it imports the same package.
        """
        job = [str(chunk_file) for chunk_file in files]
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
        env = WORKER_ENV | dict(os.environ) | {"PYTHONPATH": path}
        process = subprocess.Popen(
            [sys.executable, "-m", "arbwb.retrievers.termworker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        worker = cls(process, list(files))
        weakref.finalize(worker, _stop, process)  # abandoned (e.g. the run failed): stopped
        assert process.stdin is not None
        process.stdin.write(json.dumps({"folder": str(folder), "files": job}))
        process.stdin.close()
        return worker

    def wait_for(self, chunk_file: Path) -> bool:
        """Wait until the worker reports ``chunk_file``; False if it failed or the worker
        ended without reporting it."""
        stdout = self.process.stdout
        assert stdout is not None
        while chunk_file not in self.done:
            line = stdout.readline()
            index, _, status = line.rstrip("\n").partition("\t")
            if not index.isdigit() or int(index) >= len(self.files):  # ended (or garbled)
                self.done.update((f, False) for f in self.files if f not in self.done)
                break
            self.done[self.files[int(index)]] = status == "ok"
        if len(self.done) == len(self.files) and self.process.poll() is None:
            stdout.close()
            self.process.wait()
        return self.done[chunk_file]


def _stop(process: subprocess.Popen[str]) -> None:
    """Terminate a worker if it still runs (its entries are written atomically) and reap it."""
    process.terminate()  # a no-op once it has been waited for
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def warm_entry(folder: Path, chunk_file: Path) -> bool:
    """Compute and save a chunk file's entry unless present (a worker process's task)."""
    entry = cache.entry_path(folder, chunk_file, VERSION, ".bin")
    if entry.is_file():
        return True
    try:
        cache.write_blob(entry, _to_arrays(compute(chunk_file)))
    except Exception:  # reported by the main process, which recomputes this file
        return False
    return True


def shares(files: Sequence[Path], n: int) -> list[list[Path]]:
    """``files`` (run order) split between ``n`` workers: each file goes to the worker with
    the fewest bytes so far (the first on ties), so the workers advance through the run
    together and each computes its files in run order."""
    out: list[list[Path]] = [[] for _ in range(n)]
    loads = [0] * n
    for chunk_file in files:
        k = loads.index(min(loads))
        out[k].append(chunk_file)
        loads[k] += chunk_file.stat().st_size
    return out


def worker_init() -> None:
    """Tune a worker's malloc (Linux glibc, via ctypes): keep freed memory for reuse instead
    of returning and faulting it in again for every block; the worker's memory is returned
    when it exits. Elsewhere, or if the call fails, nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    for option, value in _MALLOPT:
        mallopt(option, value)


def candidate_terms(
    snapshot: SnapshotTerms, candidate_filter: CandidateFilter
) -> tuple[pl.DataFrame, TermMatrix] | None:
    """The candidate chunks (spec §6.2, file order) and their term matrix; None if none left."""
    chunks, counts = snapshot.chunks, snapshot.counts
    doc_len, n_unique = snapshot.doc_len, snapshot.n_unique
    if candidate_filter != "all_files":
        kept = {p for p in chunks["path"].unique().to_list() if keep_path(p, candidate_filter)}
        mask = chunks["path"].is_in(sorted(kept)).to_numpy()
        if not mask.all():
            rows = np.flatnonzero(mask)
            kept_rows = counts.to_scipy()[rows].tocsc()
            chunks = chunks[rows]
            shape = (kept_rows.shape[0], kept_rows.shape[1])
            counts = ColumnCounts(kept_rows.indptr, kept_rows.indices, kept_rows.data, shape)
            doc_len, n_unique = doc_len[rows], n_unique[rows]
    if not chunks.height:
        return None
    matrix = TermMatrix(
        counts=counts,
        vocab={t: i for i, t in enumerate(snapshot.terms)},
        doc_len=doc_len.astype(np.float64),  # token counts: exact in float64
        n_unique=n_unique.astype(np.float64),
        df=np.diff(counts.indptr).astype(np.int64),
    )
    return chunks, matrix


def snapshot_indexer(
    source: TermSource, build: Callable[[pl.DataFrame, TermMatrix], Any]
) -> Callable[[Corpus, str, CandidateFilter], tuple[Any, pl.DataFrame] | None]:
    """A :class:`Method` ``index_snapshot`` building ``build(chunks, matrix)`` from ``source``;
    the chunk frame it returns carries ``n_chars`` instead of ``text``."""

    def index_snapshot(
        corpus: Corpus, snapshot_id: str, candidate_filter: CandidateFilter
    ) -> tuple[Any, pl.DataFrame] | None:
        prepared = candidate_terms(source.load(corpus, snapshot_id), candidate_filter)
        if prepared is None:
            return None
        chunks, matrix = prepared
        return build(chunks, matrix), chunks

    return index_snapshot
