"""Per-file token costs of a snapshot (FILES rows) and their on-disk cache entries.

A snapshot's entry is the complete FILES table once every file row was read, else the
partial table of the paths looked up so far (absent paths kept as null costs). Entries live
under ``<cache>/file-costs`` keyed by the chunk file (:func:`arbwb.cache.file_key`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from arbwb import cache
from arbwb.schemas import FILES, validate

VERSION = "files-v2"
KIND = "file-costs"
Costs = tuple[int, int, int]  # n_tokens, n_lines, n_bytes of one file row


@dataclass
class Known:
    """Token costs known for one snapshot: per path (None: no file row), and whether ``rows``
    holds every file row (then an unlisted path has none)."""

    complete: bool
    rows: dict[str, Costs | None]


def files_frame(
    rows: Mapping[str, Mapping[str, Costs | None]], *, keep_absent: bool = False
) -> pl.DataFrame:
    """A FILES frame from costs per snapshot and path; absent paths only with ``keep_absent``
    (as null costs, the partial cache entry's form)."""
    records = [
        (sid, path, *(costs or (None, None, None)))
        for sid, by_path in rows.items()
        for path, costs in by_path.items()
        if costs is not None or keep_absent
    ]
    frame = pl.DataFrame(records, schema=FILES, orient="row")
    return frame if keep_absent else validate(frame, FILES, name="files")


def _rows(frame: pl.DataFrame) -> dict[str, Costs | None]:
    """Cached FILES-style rows back to costs per path (null costs: no file row)."""
    return {
        path: None if n_tokens is None else (n_tokens, n_lines, n_bytes)
        for path, n_tokens, n_lines, n_bytes in frame.select(
            "path", "n_tokens", "n_lines", "n_bytes"
        ).iter_rows()
    }


def _paths(folder: Path, chunk_file: Path) -> tuple[Path, Path]:
    complete = cache.entry_path(folder, chunk_file, VERSION, ".parquet")
    return complete, complete.with_suffix(".paths.parquet")


def load(folder: Path | None, chunk_file: Path) -> Known:
    """The cached costs of a chunk file (complete, else partial), or an empty Known."""
    if folder is not None:
        complete, partial = _paths(folder, chunk_file)
        for path, is_complete in ((complete, True), (partial, False)):
            frame = cache.read_frame(path) if path.is_file() else None
            if frame is not None:
                return Known(complete=is_complete, rows=_rows(frame))
    return Known(complete=False, rows={})


def load_many(folder: Path | None, chunk_files: Mapping[str, Path]) -> dict[str, Known]:
    """:func:`load` of many chunk files (by snapshot id) with one Parquet read for all entries.

    Reading two dozen small entries one by one costs more than the scoring they serve.
    """
    found: dict[str, tuple[str, bool]] = {}  # entry path -> (snapshot id, complete)
    if folder is not None:
        for sid, chunk_file in chunk_files.items():
            complete, partial = _paths(folder, chunk_file)
            for path, is_complete in ((complete, True), (partial, False)):
                if path.is_file():
                    found[str(path)] = (sid, is_complete)
                    break
    out = {sid: Known(complete=False, rows={}) for sid in chunk_files}
    if not found:
        return out
    frame = cache.read_frames(list(found), source="entry")
    if frame is None or not set(frame["entry"].unique()) <= found.keys():
        # an unreadable entry (or unexpected file names): one by one, recomputing bad ones
        return {sid: load(folder, chunk_file) for sid, chunk_file in chunk_files.items()}
    for sid, is_complete in found.values():
        out[sid].complete = is_complete
    columns = frame.select("entry", "path", "n_tokens", "n_lines", "n_bytes")
    for entry, path, n_tokens, n_lines, n_bytes in columns.iter_rows():
        rows = out[found[entry][0]].rows
        rows[path] = None if n_tokens is None else (n_tokens, n_lines, n_bytes)
    return out


def save(folder: Path | None, chunk_file: Path, snapshot_id: str, known: Known) -> None:
    """Write the costs of a chunk file to its entry (atomically); no-op without a folder."""
    if folder is None:
        return
    complete, partial = _paths(folder, chunk_file)
    rows = {p: c for p, c in known.rows.items() if _utf8(p)}  # no chunk file holds the others
    frame = files_frame({snapshot_id: rows}, keep_absent=not known.complete)
    cache.write_frame(complete if known.complete else partial, frame)


def _utf8(text: str) -> bool:
    """Whether ``text`` can be stored as UTF-8 (a lone surrogate cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
