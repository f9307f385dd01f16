"""Term statistics of a snapshot's chunks for lexical/BM25 (spec §7.1-7.3), cached on disk.

A chunk file is tokenised block by block (memory stays flat); the entry keeps the chunk
columns without text, the counts (CSC) and every per-snapshot piece a ranker derives, as
plain arrays, so a warm run reads arrays only. Keyed by the chunk file's identity
(:func:`arbwb.cache.file_key`), written atomically. On a cold cache a second process computes
missing entries from the run's last snapshot backwards while the run works forwards
(:meth:`TermSource.prefetch`; benchmarks/README.md has the measurement).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb import cache
from arbwb.io.chunkscan import CHUNK_FIELDS, iter_raw_blocks, parse_block
from arbwb.io.corpus import Corpus
from arbwb.io.lazycols import coded, ints, picked
from arbwb.io.pathclass import CandidateFilter, keep_path
from arbwb.metrics.chunks import ChunkTable
from arbwb.retrievers.common import (
    CHUNK_COLUMNS,
    DOCUMENT_FIELDS,
    BonusNeedles,
    ChunkKeys,
    ChunkPaths,
    ColumnCounts,
    TermMatrix,
    bonus_needles,
    bonus_text,
    chunk_keys,
    codes_of,
)
from arbwb.retrievers.strkeys import Needles, SortedVocab, StringTable

VERSION = "terms-v4"
KIND = "terms"
SUFFIX = ".npz"
#: The chunk columns kept beside the counts (the CHUNKS columns rankers use, minus text).
META_COLUMNS = ("chunk_id", "path", "kind", "symbol", "start_line", "end_line", "n_chars")
META_SCHEMA = {c: CHUNK_FIELDS.get(c, pl.Int64) for c in META_COLUMNS}
#: Entry arrays with one value per chunk (checked when an entry is read).
PER_CHUNK: tuple[str, ...] = ("doc_len", "n_unique", "path_codes", "tiebreak", "symbol_codes")
PER_CHUNK += ("kind_codes", "start_line", "end_line", "n_chars")
#: The arrays of the bonus needles an entry keeps (:class:`Needles`' fields, in order).
NEEDLE_ARRAYS = ("keys", "owners", "lengths", "empty")
#: Bytes per block: fewer, larger Polars and Arrow calls cost less CPU (measured: 4 MiB
#: about 7% below 2 MiB) for a few MB more per block in flight.
BLOCK_BYTES = 4 * 2**20


@dataclass(frozen=True)
class SnapshotTerms:
    """A chunk file's chunks (``META_COLUMNS``, file order) and their §7.1 term counts (CSC)."""

    chunks: pl.DataFrame
    counts: ColumnCounts
    terms: list[str]
    doc_len: npt.NDArray[np.int64]  # tokens per chunk document
    n_unique: npt.NDArray[np.int64]  # distinct terms per chunk document


def compute(chunk_file: Path) -> SnapshotTerms:
    """Read and tokenise a chunk file block by block (text is never held whole)."""
    from arbwb.retrievers.terms import TermMerger, batches, count_batch

    metas: list[pl.DataFrame] = []
    merger = TermMerger()
    n_chars = pl.col("text").str.len_chars().cast(pl.Int64).alias("n_chars")
    for raw in iter_raw_blocks(chunk_file, BLOCK_BYTES):
        block = parse_block(chunk_file, raw, list(CHUNK_COLUMNS))
        metas.append(block.with_columns(n_chars).select(META_COLUMNS))
        for batch in batches(block.select(DOCUMENT_FIELDS)):  # the §7.2 document, unjoined
            merger.add(count_batch(batch))
    found, doc_len = merger.finish()
    chunks = pl.concat(metas) if metas else pl.DataFrame(schema=META_SCHEMA)
    terms, rows = found.terms, found.counts
    del found
    n_unique = np.diff(rows.indptr)
    csc = rows.tocsc()
    del rows  # the row-major copy is freed before the caller goes on
    counts = ColumnCounts(csc.indptr, csc.indices, csc.data, (csc.shape[0], csc.shape[1]))
    return SnapshotTerms(chunks, counts, terms, doc_len, n_unique)


def _strings(name: str, table: StringTable) -> dict[str, npt.NDArray[Any]]:
    return {name: table.data, f"{name}_offsets": table.offsets}


def _to_arrays(terms: SnapshotTerms) -> dict[str, npt.NDArray[Any]]:
    """The cache entry of a snapshot: its counts and every per-chunk piece rankers and details
    rows need (codes, tie order, bonus needles)."""
    chunks = terms.chunks
    keys = chunk_keys(chunks)
    kind_codes, kinds = codes_of(chunks["kind"])
    needles = bonus_needles(keys.paths.names, keys.symbols)
    counts = terms.counts
    small = counts.data.size == 0 or int(counts.data.max()) <= np.iinfo(np.uint16).max
    return {
        "indptr": counts.indptr.astype(np.int64, copy=False),
        "indices": counts.indices.astype(np.int32, copy=False),
        "data": counts.data.astype(np.uint16 if small else np.int32),
        "shape": np.array(counts.shape, dtype=np.int64),
        "doc_len": terms.doc_len.astype(np.int64, copy=False),
        "n_unique": terms.n_unique.astype(np.int64, copy=False),
        **_strings("terms", StringTable.of(terms.terms)),
        "path_codes": keys.paths.codes.astype(np.int64, copy=False),
        **_strings("paths", StringTable.of(keys.paths.names)),
        "tiebreak": keys.tiebreak.astype(np.int64, copy=False),
        "symbol_codes": keys.symbol_codes.astype(np.int64, copy=False),
        **_strings("symbols", StringTable.of(keys.symbols)),
        "kind_codes": kind_codes,
        **_strings("kinds", StringTable.of(kinds)),
        **_strings("chunk_ids", StringTable.of(chunks["chunk_id"].to_list())),
        **{c: chunks[c].cast(pl.Int64).to_numpy() for c in ("start_line", "end_line", "n_chars")},
        **{f"needle_{name}": getattr(needles.needles, name) for name in NEEDLE_ARRAYS},
    }


def _table(arrays: Mapping[str, npt.NDArray[Any]], name: str) -> StringTable:
    return StringTable(arrays[name], arrays[f"{name}_offsets"])


@dataclass(frozen=True)
class StoredTerms:
    """A snapshot's entry as views of its arrays; the chunk frame and term list are built only
    when read (the rankers never read them)."""

    counts: ColumnCounts
    doc_len: npt.NDArray[np.int64]
    n_unique: npt.NDArray[np.int64]
    keys: ChunkKeys
    table: ChunkTable
    vocab: SortedVocab

    @classmethod
    def of(cls, arrays: Mapping[str, npt.NDArray[Any]]) -> StoredTerms:
        """The entry's pieces (a KeyError or ValueError when it is not such an entry)."""
        rows, cols = (int(x) for x in arrays["shape"])
        counts = ColumnCounts(arrays["indptr"], arrays["indices"], arrays["data"], (rows, cols))
        paths, symbols = _table(arrays, "paths").to_list(), _table(arrays, "symbols")
        path_codes, symbol_codes = arrays["path_codes"], arrays["symbol_codes"]
        needles = Needles(
            size=2 * len(paths) + len(symbols),
            **{name: arrays[f"needle_{name}"] for name in NEEDLE_ARRAYS},
            text_of=bonus_text(paths, symbols),
        )
        keys = ChunkKeys(
            ChunkPaths(path_codes, paths),
            arrays["tiebreak"],
            symbol_codes,
            symbols,
            BonusNeedles(needles, len(paths)),
        )
        table = ChunkTable(
            paths=coded(path_codes, paths),
            kinds=coded(arrays["kind_codes"], _table(arrays, "kinds")),
            symbols=coded(symbol_codes, symbols),
            starts=ints(arrays["start_line"]),
            ends=ints(arrays["end_line"]),
            chunk_ids=_table(arrays, "chunk_ids"),
            n_chars=ints(arrays["n_chars"]),
        )
        vocab = SortedVocab(_table(arrays, "terms"))
        return cls(counts, arrays["doc_len"], arrays["n_unique"], keys, table, vocab)

    @cached_property
    def chunks(self) -> pl.DataFrame:
        """The chunk columns (``META_COLUMNS``) as a frame, built from the entry."""
        names = ("chunk_ids", "paths", "kinds", "symbols", "starts", "ends", "n_chars")
        columns = [getattr(self.table, name)[:] for name in names]  # META_COLUMNS' order
        return pl.DataFrame(dict(zip(META_COLUMNS, columns, strict=True)), schema=META_SCHEMA)

    @cached_property
    def terms(self) -> list[str]:
        """The vocabulary (column order)."""
        return self.vocab.terms.to_list()


def _from_arrays(arrays: dict[str, npt.NDArray[Any]]) -> StoredTerms | None:
    """The entry's :class:`StoredTerms`, or None when it is not a complete, consistent entry."""
    try:
        stored = StoredTerms.of(arrays)
    except (KeyError, ValueError, IndexError, UnicodeDecodeError):
        return None
    rows, cols = stored.counts.shape
    if any(len(arrays[name]) != rows for name in PER_CHUNK) or len(stored.vocab) != cols:
        return None
    if len(stored.table.chunk_ids) != rows or len(stored.counts.indptr) != cols + 1:
        return None
    return stored


@dataclass
class TermSource:
    """Snapshot term statistics from the disk cache in ``folder`` (None: always computed);
    counts hits and misses for the summary."""

    folder: Path | None
    hits: int = 0
    misses: int = 0
    _pending: list[Path] = field(default_factory=list)  # not yet taken, in run order
    _ahead: dict[Path, Future[None]] = field(default_factory=dict)  # handed to the helper
    _pool: ProcessPoolExecutor | None = None
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def prefetch(
        self, corpus: Corpus, snapshot_ids: Sequence[str], candidate_filter: CandidateFilter
    ) -> None:
        """With a second core and a writable cache, a helper process computes and saves the
        missing entries one at a time from the run's last snapshot backwards, while
        :meth:`load` works forwards, so the two meet in the middle."""
        del candidate_filter
        if self.folder is None or _usable_cpus() < 2:
            return
        files = dict.fromkeys(corpus.chunk_path(sid) for sid in snapshot_ids)  # run order
        entries = {f: cache.entry_path(self.folder, f, VERSION, SUFFIX) for f in files}
        self._pending = [f for f in files if not entries[f].exists()]
        if len(self._pending) >= 2:
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
            self._give_helper()

    def _give_helper(self, _done: object = None) -> None:
        """Hand the helper the last snapshot not yet taken (chained as each one finishes, so
        an interrupted run waits at most for the one in hand); stop it when none is left."""
        with self._lock:
            if self._pool is None or self.folder is None:  # (a pool only with a folder)
                return
            if not self._pending:
                self._pool.shutdown(wait=False)
                self._pool = None
                return
            chunk_file = self._pending.pop()
            with suppress(RuntimeError):  # the interpreter is exiting: nothing more to hand
                future = self._pool.submit(_save, chunk_file, self.folder)
                self._ahead[chunk_file] = future
                future.add_done_callback(self._give_helper)

    def load(self, corpus: Corpus, snapshot_id: str) -> StoredTerms:
        """The snapshot's term statistics (cached, else computed and saved), rows counted
        against the manifest row."""
        chunk_file = corpus.chunk_path(snapshot_id)
        terms = self._load(chunk_file)
        corpus.check_counts(snapshot_id, chunk_file, terms.counts.shape[0])
        return terms

    def _load(self, chunk_file: Path) -> StoredTerms:
        with self._lock:  # taken here, so the helper is never handed it
            if chunk_file in self._pending:
                self._pending.remove(chunk_file)
            ahead = self._ahead.pop(chunk_file, None)
        saved = ahead is not None and not ahead.cancel()
        if saved and ahead is not None:
            with suppress(Exception):  # a file the helper could not read is read here again,
                ahead.result()  # so its error is raised (and located) as without the helper
        entry = None
        if self.folder is not None:
            entry = cache.entry_path(self.folder, chunk_file, VERSION, SUFFIX)
            arrays = cache.read_arrays(entry)
            found = None if arrays is None else _from_arrays(arrays)
            if found is not None:
                self.misses += saved
                self.hits += not saved
                return found
        self.misses += 1
        arrays = _to_arrays(compute(chunk_file))
        if entry is not None:
            cache.write_arrays(entry, arrays)
        return StoredTerms.of(arrays)

    def stats(self) -> dict[str, Any]:
        """Snapshots whose term statistics came from the disk cache vs were computed."""
        return {"term_cache_hits": self.hits, "term_cache_misses": self.misses}


def _usable_cpus() -> int:
    """CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _save(chunk_file: Path, folder: Path) -> None:
    """Compute a chunk file's entry and save it (:meth:`TermSource.prefetch`'s helper); keyed
    just before the file is read, as :meth:`TermSource.load` keys it, not when it was queued."""
    entry = cache.entry_path(folder, chunk_file, VERSION, SUFFIX)
    cache.write_arrays(entry, _to_arrays(compute(chunk_file)), warn=False)


def candidate_terms(
    snapshot: SnapshotTerms | StoredTerms, candidate_filter: CandidateFilter
) -> tuple[ChunkKeys, ChunkTable, TermMatrix] | None:
    """The candidate chunks (spec §6.2, file order): keys, details table and term matrix; None
    if none is left. Codes stay valid (the filter keeps whole paths); rows are renumbered."""
    stored = snapshot if isinstance(snapshot, StoredTerms) else StoredTerms.of(_to_arrays(snapshot))
    keys, table, counts = stored.keys, stored.table, stored.counts
    doc_len, n_unique = stored.doc_len, stored.n_unique
    if candidate_filter != "all_files":
        names = keys.paths.names
        kept = np.array([keep_path(p, candidate_filter) for p in names], dtype=bool)
        mask = kept[keys.paths.codes] if len(names) else np.zeros(0, dtype=bool)
        if not mask.all():
            keys, table, counts = _kept(keys, table, counts, mask)
            doc_len, n_unique = doc_len[mask], n_unique[mask]
    if not keys.n_chunks:
        return None
    matrix = TermMatrix(
        counts=counts,
        vocab=stored.vocab,
        doc_len=doc_len.astype(np.float64),  # token counts: exact in float64
        n_unique=n_unique.astype(np.float64),
        df=np.diff(counts.indptr).astype(np.int64),
    )
    return keys, table, matrix


def _kept(
    keys: ChunkKeys, table: ChunkTable, counts: ColumnCounts, mask: npt.NDArray[np.bool_]
) -> tuple[ChunkKeys, ChunkTable, ColumnCounts]:
    """The keys, details table and CSC counts of the rows ``mask`` keeps, renumbered (the tie
    order and each column's ascending rows are kept)."""
    rows = np.flatnonzero(mask)
    new_row = np.cumsum(mask, dtype=np.int64) - 1  # of each kept row (others: meaningless)
    tiebreak = new_row[keys.tiebreak[mask[keys.tiebreak]]]
    paths = ChunkPaths(keys.paths.codes[rows], keys.paths.names)
    keys = replace(keys, paths=paths, tiebreak=tiebreak, symbol_codes=keys.symbol_codes[rows])
    table = ChunkTable(*(picked(getattr(table, f.name), rows) for f in fields(table)))
    keep = mask[counts.indices]
    before = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(keep, out=before[1:])
    indices = new_row[counts.indices[keep]].astype(np.int32)
    shape = (len(rows), counts.shape[1])
    return keys, table, ColumnCounts(before[counts.indptr], indices, counts.data[keep], shape)


def snapshot_indexer(
    source: TermSource, build: Callable[[ChunkKeys, TermMatrix], Any]
) -> Callable[[Corpus, str, CandidateFilter], tuple[Any, ChunkTable] | None]:
    """An ``index_snapshot`` hook building ``build(keys, matrix)`` from ``source``, with the
    candidate chunks' details table."""

    def index_snapshot(
        corpus: Corpus, snapshot_id: str, candidate_filter: CandidateFilter
    ) -> tuple[Any, ChunkTable] | None:
        prepared = candidate_terms(source.load(corpus, snapshot_id), candidate_filter)
        if prepared is None:
            return None
        keys, table, matrix = prepared
        return build(keys, matrix), table

    return index_snapshot
