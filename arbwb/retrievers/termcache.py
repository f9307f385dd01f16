"""Term statistics of a snapshot's chunks for lexical/BM25 (spec §7.1-7.3), cached on disk.

A chunk file is read in blocks of whole lines (only the columns rankers use), each block's
documents are tokenised (:mod:`arbwb.retrievers.terms`) and its text dropped, so memory stays
flat however large the file. What is kept is small: the chunk columns without ``text`` (plus
``n_chars``, the text length the 8k packing uses) and the chunk x term counts (CSC). That
entry is written to ``<cache>/terms/<key>.bin`` (:func:`arbwb.cache.write_blob`) keyed by
the chunk file's path, size, mtime and inode (:func:`arbwb.cache.file_key`), so a changed
chunk file is never served stale; the write is atomic, so concurrent processes at worst
compute it twice. Counting runs on two threads (``WORKERS``).
"""

from __future__ import annotations

import io
import multiprocessing
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
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
#: Missing entries from which a run computes part of them in a second process.
MIN_PREFETCH = 4


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
    GIL), at most ``AHEAD`` blocks in flight, and merged in file order: the result does not
    depend on the scheduling.
    """
    from arbwb.retrievers.terms import merge_counts

    metas: list[pl.DataFrame] = []
    parts: list[BatchCounts] = []
    pending: deque[Future[tuple[pl.DataFrame, list[BatchCounts]]]] = deque()

    def take() -> None:
        meta, counted = pending.popleft().result()
        metas.append(meta)
        parts.extend(counted)

    with ThreadPoolExecutor(WORKERS, thread_name_prefix="arbwb-terms") as pool:
        for block in iter_raw_blocks(chunk_file):
            pending.append(pool.submit(_count_block, chunk_file, block))
            if len(pending) >= AHEAD:
                take()
        while pending:
            take()
    found = merge_counts(parts)
    parts.clear()
    chunks = pl.concat(metas) if metas else _empty_meta()
    terms, rows = found.terms, found.counts
    del found
    summed = np.zeros(len(rows.data) + 1, dtype=np.int64)
    np.cumsum(rows.data, out=summed[1:])
    doc_len, n_unique = np.diff(summed[rows.indptr]), np.diff(rows.indptr).astype(np.int64)
    del summed
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
    pending: dict[Path, Future[bool]] = field(default_factory=dict)

    def prefetch(
        self, corpus: Corpus, snapshot_ids: Sequence[str], candidate_filter: CandidateFilter
    ) -> None:
        """Compute the missing entries of about half the run's bytes in a second process.

        arbwb-defined: uses the machine's second core. Chunk files whose entry is absent are
        split in run order, each going to whichever side has fewer bytes so far (the first to
        this process), so both sides advance through the run together; :meth:`load` waits
        for an entry the other process owns and then reads it like any cached entry. Without
        a cache folder, or with fewer than two missing entries, nothing happens.
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
        here = there = 0
        theirs = []
        for chunk_file in missing:
            size = chunk_file.stat().st_size
            if there < here:
                theirs.append(chunk_file)
                there += size
            else:
                here += size
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        for chunk_file in theirs:
            self.pending[chunk_file] = pool.submit(warm_entry, self.folder, chunk_file)
        pool.shutdown(wait=False)  # the worker exits once its queue is done

    def load(self, corpus: Corpus, snapshot_id: str) -> SnapshotTerms:
        """The snapshot's term statistics: the cached entry if valid, else computed (and saved)."""
        chunk_file = corpus.chunk_path(snapshot_id)
        entry = None
        prefetched = self.pending.pop(chunk_file, None)
        if prefetched is not None and _finished(prefetched):
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
        ``term_cache_prefetched`` of the hits, by the second process this run)."""
        return {
            "term_cache_hits": self.hits,
            "term_cache_misses": self.misses,
            "term_cache_prefetched": self.ahead,
        }


def _finished(future: Future[bool]) -> bool:
    """Wait for a prefetch; False when it failed (the entry is then computed here, where a bad
    chunk file raises its located error)."""
    try:
        return future.result()
    except Exception:  # a broken worker must not stop the run: this process computes it
        return False


def warm_entry(folder: Path, chunk_file: Path) -> bool:
    """Compute and save a chunk file's entry unless present (the second process's task)."""
    entry = cache.entry_path(folder, chunk_file, VERSION, ".bin")
    if entry.is_file():
        return True
    try:
        cache.write_blob(entry, _to_arrays(compute(chunk_file)))
    except Exception:  # reported by the main process, which recomputes this file
        return False
    return True


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
