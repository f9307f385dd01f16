"""Corpus scale (the paper's corpus table): snapshots, files, chunks, bytes and duplicated text,
read one snapshot at a time (docs/overview.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from arbwb import cache
from arbwb.errors import InputError
from arbwb.io.chunkscan import read_chunk_file
from arbwb.io.corpus import Corpus, manifest_rows

SNAPSHOTS = {
    "snapshot_id": pl.String,
    "repo": pl.String,
    # ok | missing (no ok row in any manifest) | unreadable (file absent) | incomplete (rows
    # differ from the manifest row's counts; its counts are those read)
    "status": pl.String,
    "chunk_file_bytes": pl.Int64,  # size of the chunk file on disk
    "chunks": pl.Int64,  # rows
    "symbol_chunks": pl.Int64,  # rows with kind "symbol"
    "files": pl.Int64,  # distinct paths of kind "file" rows
    "text_bytes": pl.Int64,  # UTF-8 bytes of all chunk texts
    "distinct_text_bytes": pl.Int64,  # the same, each distinct text of the snapshot once
    "new_text_bytes": pl.Int64,  # distinct texts no earlier snapshot (sorted by id) had
}
EXTENSIONS = {"repo": pl.String, "extension": pl.String, "files": pl.Int64}
KIND = "corpus-scale"  # cache kind of each chunk file's counts; Polars' text hash is in them
VERSION = f"scale-v1-polars-{pl.__version__}"
_STATS = (*list(SNAPSHOTS)[3:-1], "file_rows")  # an entry's counts, in this order
SCAN_COLUMNS = ["kind", "path", "text"]  # what a scan reads of a chunk file
_ENTRY_ARRAYS = {"stats", "extension", "files", "hash", "size"}  # else the entry is recomputed


@dataclass(frozen=True)
class Scale:
    """Per-snapshot counts (SNAPSHOTS), file extensions per repo (EXTENSIONS), and problems."""

    snapshots: pl.DataFrame
    extensions: pl.DataFrame
    problems: list[str]


def corpus_scale(corpus: Corpus, progress: Callable[[str], None] | None = None) -> Scale:
    """Scan every snapshot of the corpus view once, in id order; missing, unreadable and
    incomplete snapshots are counted and named in ``problems``. Each chunk file's counts are
    kept in the on-disk cache (kind ``corpus-scale``) when the corpus is cached."""
    folder = None if corpus.cache_dir is None else cache.kind_dir(KIND)
    listed = {row.snapshot_id for row in manifest_rows(corpus.manifests)}
    rows: list[dict[str, object]] = []
    extensions: list[pl.DataFrame] = []
    distinct: dict[int, pl.DataFrame] = {}  # each scanned snapshot's (hash, size) by row
    problems: list[str] = []
    for sid in sorted(listed | set(corpus.snapshot_ids())):
        repo = sid.rpartition("@")[0]
        empty = dict.fromkeys(list(SNAPSHOTS)[3:], 0)
        if not corpus.has(sid):
            rows.append({"snapshot_id": sid, "repo": repo, "status": "missing", **empty})
            continue
        try:
            path = corpus.chunk_path(sid)
        except InputError as exc:
            problems.append(str(exc))
            rows.append({"snapshot_id": sid, "repo": repo, "status": "unreadable", **empty})
            continue
        if progress is not None:
            progress(sid)
        stats, exts, texts = cached_scan(path, folder)
        problem = corpus.count_mismatch(sid, stats["chunks"], stats.pop("file_rows"))
        if problem is not None:
            problems.append(f"{path}: {problem}")
        status = "ok" if problem is None else "incomplete"
        distinct[len(rows)] = texts
        rows.append({"snapshot_id": sid, "repo": repo, "status": status, **stats})
        extensions.append(exts.with_columns(repo=pl.lit(repo)))
    ext = pl.concat([pl.DataFrame(schema=EXTENSIONS), *extensions], how="diagonal")
    ext = ext.group_by("repo", "extension").agg(pl.col("files").sum())
    frame = pl.DataFrame(rows, schema=SNAPSHOTS, orient="row")
    return Scale(
        _with_new_bytes(frame, distinct),
        ext.select(list(EXTENSIONS)).sort("repo", "extension"),
        problems,
    )


def _with_new_bytes(frame: pl.DataFrame, distinct: dict[int, pl.DataFrame]) -> pl.DataFrame:
    """``new_text_bytes``: per row, the bytes of its distinct texts no earlier row holds (the
    first occurrence of each hash in row order, found by one ``np.unique``)."""
    new = np.zeros(frame.height, dtype=np.int64)
    if distinct:
        hashes = np.concatenate([texts["hash"].to_numpy() for texts in distinct.values()])
        _, first = np.unique(hashes, return_index=True)
        del hashes
        owner = np.repeat(np.fromiter(distinct, np.int64), [t.height for t in distinct.values()])
        sizes = np.concatenate([texts["size"].to_numpy() for texts in distinct.values()])
        np.add.at(new, owner[first], sizes[first])
    return frame.with_columns(new_text_bytes=pl.Series(new))


def cached_scan(
    path: Path, folder: Path | None, rows: pl.DataFrame | None = None
) -> tuple[dict[str, int], pl.DataFrame, pl.DataFrame]:
    """:func:`_scan` of one chunk file, from its cache entry when ``folder`` holds one (saved
    there on a miss); ``rows``: its :data:`SCAN_COLUMNS` when the caller already read them."""
    entry = None if folder is None else cache.entry_path(folder, path, VERSION, ".npz")
    arrays = None if entry is None or not entry.is_file() else cache.read_arrays(entry)
    if (
        arrays is not None
        and arrays.keys() >= _ENTRY_ARRAYS
        and len(arrays["stats"]) == len(_STATS)
        and len(arrays["hash"]) == len(arrays["size"])
        and len(arrays["extension"]) == len(arrays["files"])
    ):
        # copies: a frame over the mapped entry would keep its file open until the scan ends
        stats = dict(zip(_STATS, map(int, arrays["stats"]), strict=True))
        counts = {"extension": arrays["extension"].tolist(), "files": np.array(arrays["files"])}
        texts = pl.DataFrame({"hash": np.array(arrays["hash"]), "size": np.array(arrays["size"])})
        return stats, pl.DataFrame(counts, schema=dict(list(EXTENSIONS.items())[1:])), texts
    stats, exts, texts = _scan(path, read_chunk_file(path, SCAN_COLUMNS) if rows is None else rows)
    if entry is not None:
        arrays = {
            "stats": np.array([stats[k] for k in _STATS], dtype=np.int64),
            "extension": np.array(exts["extension"].to_list(), dtype=np.str_),
            "files": exts["files"].to_numpy(),
            "hash": texts["hash"].to_numpy(),
            "size": texts["size"].to_numpy(),
        }
        cache.write_arrays(entry, arrays)
    return stats, exts, texts


def _scan(path: Path, rows: pl.DataFrame) -> tuple[dict[str, int], pl.DataFrame, pl.DataFrame]:
    """One chunk file's rows: counts, file extensions, and the bytes of each distinct text (by
    hash)."""
    frame = rows.with_columns(
        pl.col("text").str.len_bytes().cast(pl.Int64).alias("size"),
        pl.col("text").hash(seed=0).alias("hash"),
    )
    distinct = frame.unique("hash", maintain_order=True).select("hash", "size")
    file_paths = frame.filter(pl.col("kind") == "file").select("path").unique()
    stats = {
        "chunk_file_bytes": path.stat().st_size,
        "chunks": frame.height,
        "symbol_chunks": int((frame["kind"] == "symbol").sum()),
        "files": file_paths.height,
        "file_rows": int((frame["kind"] == "file").sum()),  # checked, not a column
        "text_bytes": int(frame["size"].sum()),
        "distinct_text_bytes": int(distinct["size"].sum()),
    }
    exts = (
        file_paths.select(
            pl.col("path").str.extract(r"(\.[^./]+)$").str.to_lowercase().alias("extension")
        )
        .drop_nulls()
        .group_by("extension")
        .agg(pl.len().cast(pl.Int64).alias("files"))
        .sort("extension")
    )
    return stats, exts, distinct


def scale_totals(scale: Scale) -> dict[str, float | int]:
    """Release totals: snapshots, files, chunks, bytes and the share of distinct chunk text an
    earlier snapshot already holds (arbwb-defined)."""
    frame = scale.snapshots
    by_status = {s: int((frame["status"] == s).sum()) for s in ("ok", "missing", "unreadable")}
    sums = {
        c: int(frame[c].sum())
        for c in ("chunks", "symbol_chunks", "files", "chunk_file_bytes", "text_bytes")
    }
    distinct = int(frame["distinct_text_bytes"].sum())
    new = int(frame["new_text_bytes"].sum())
    share = 1.0 - new / distinct if distinct else 0.0
    return {
        "snapshots": frame.height,
        **{f"snapshots_{k}": v for k, v in by_status.items()},
        "repos": frame["repo"].n_unique(),
        **sums,
        "distinct_text_bytes": distinct,
        "new_text_bytes": new,
        "duplicated_text_share": share,
    }
