"""Per-file token costs of a snapshot (FILES rows) and their on-disk cache entries: the
complete table, else the partial one of the paths looked up so far (absent ones as null
costs), keyed by the chunk file and the row counts its manifest row promises (so an entry
never vouches for counts it was not checked against); beside them every path's line count
(spec §11). Entries looked up together are also bundled into one file, keyed by those
entries' identities, so the next such lookup reads one file (arbwb-defined).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from arbwb import cache
from arbwb.schemas import FILES, validate

VERSION = "files-v2"
KIND = "file-costs"
BUNDLES = "bundles"  # sub-folder of the bundles of entries read together
Costs = tuple[int, int, int]  # n_tokens, n_lines, n_bytes of one file row


@dataclass
class Known:
    """Token costs known for one snapshot: per path (None: no file row), and whether ``rows``
    holds every file row (then an unlisted path has none)."""

    complete: bool
    rows: dict[str, Costs | None]
    #: The entry's (complete, partial) paths, fixed when the costs were first looked up,
    #: before the chunk file was read: costs read from a file that changed meanwhile are saved
    #: under the identity it had then, which no later lookup takes, never under the new one.
    entries: tuple[Path, Path] | None = None


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
    columns = frame.select("path", "n_tokens", "n_lines", "n_bytes").iter_rows()
    return {
        path: None if tokens is None else (tokens, n, size) for path, tokens, n, size in columns
    }


#: A chunk file and what its manifest row promises (:meth:`arbwb.io.corpus.Corpus.source`).
Source = tuple[Path, str]


def _entry(folder: Path, source: Source, suffix: str) -> Path:
    chunk_file, promise = source
    return cache.entry_path(folder, chunk_file, f"{VERSION}:{promise}", suffix)


def _paths(folder: Path, source: Source) -> tuple[Path, Path]:
    """The (complete, partial) entry paths of a chunk file."""
    return _entry(folder, source, ".parquet"), _entry(folder, source, ".paths.parquet")


def load_lines(folder: Path | None, source: Source) -> pl.DataFrame | None:
    """The cached ``path, file_lines`` of every path of a chunk file, or None."""
    entry = None if folder is None else _entry(folder, source, ".lines.parquet")
    return None if entry is None or not entry.is_file() else cache.read_frame(entry)


def has_lines(folder: Path, source: Source) -> bool:
    """Whether the chunk file's ``path, file_lines`` are cached (the entry is not read)."""
    return _entry(folder, source, ".lines.parquet").is_file()


def save_lines(folder: Path | None, source: Source, lines: pl.DataFrame) -> None:
    """Keep a chunk file's ``path, file_lines`` (no-op without a folder)."""
    if folder is not None:
        cache.write_frame(_entry(folder, source, ".lines.parquet"), lines)


def has_complete(folder: Path, source: Source) -> bool:
    """Whether the chunk file's complete costs are cached."""
    return _paths(folder, source)[0].is_file()


def load(folder: Path | None, source: Source) -> Known:
    """The cached costs of a chunk file (complete, else partial), or an empty Known."""
    if folder is None:
        return Known(complete=False, rows={})
    entries = _paths(folder, source)
    for path, is_complete in zip(entries, (True, False), strict=True):
        frame = cache.read_frame(path) if path.is_file() else None
        if frame is not None:
            return Known(complete=is_complete, rows=_rows(frame), entries=entries)
    return Known(complete=False, rows={}, entries=entries)


def load_many(folder: Path | None, sources: Mapping[str, Source]) -> dict[str, Known]:
    """:func:`load` of many chunk files (by snapshot id) from their bundle, else one Parquet
    read of all their entries (then bundled): two dozen small reads cost more than scoring."""
    entries = {} if folder is None else {s: _paths(folder, f) for s, f in sources.items()}
    out = {sid: Known(complete=False, rows={}, entries=entries.get(sid)) for sid in sources}
    found = _existing(entries)
    if not found or folder is None:
        return out
    bundle = _bundle_path(folder, found) if len(found) > 1 else None
    frame = cache.read_frame(bundle) if bundle is not None and bundle.is_file() else None
    if frame is None or not set(frame["entry"].unique()) <= found.keys():
        frame = cache.read_frames(list(found), source="entry")
        if frame is None or not set(frame["entry"].unique()) <= found.keys():
            # an unreadable entry (or unexpected file names): one by one, recomputing bad ones
            return {sid: load(folder, source) for sid, source in sources.items()}
        if bundle is not None:
            cache.write_frame(bundle, frame)
    parts = frame.partition_by("entry", as_dict=True)
    for entry, (sid, is_complete) in found.items():
        out[sid].complete = is_complete
        out[sid].rows = _rows(parts[(entry,)]) if (entry,) in parts else {}
    return out


def save_bundle(folder: Path | None, known: Mapping[str, tuple[Source, Known]]) -> None:
    """Bundle the entries of these snapshots (source, costs saved), which were looked up
    together, for the next :func:`load_many` of them; no-op without a folder or an entry."""
    if folder is None or len(known) < 2:  # one entry is read as fast as its bundle
        return
    found = _existing(
        {sid: k.entries or _paths(folder, source) for sid, (source, k) in known.items()}
    )
    bundle = _bundle_path(folder, found)
    kinds_match = all(known[sid][1].complete == is_complete for sid, is_complete in found.values())
    if bundle is None or len(found) < len(known) or not kinds_match:
        return  # an entry is missing, or another process completed one meanwhile
    frames = [
        _entry_frame(sid, known[sid][1]).with_columns(entry=pl.lit(entry))
        for entry, (sid, _) in found.items()
    ]
    cache.write_frame(bundle, pl.concat(frames))


def _existing(entries: Mapping[str, tuple[Path, Path]]) -> dict[str, tuple[str, bool]]:
    """Entry path -> (snapshot id, complete) of the snapshots (by their (complete, partial)
    entry paths) with an entry (complete first)."""
    found: dict[str, tuple[str, bool]] = {}
    for sid, (complete, partial) in entries.items():
        for path, is_complete in ((complete, True), (partial, False)):
            if path.is_file():
                found[str(path)] = (sid, is_complete)
                break
    return found


def _bundle_path(folder: Path, entries: Mapping[str, object]) -> Path | None:
    """Where the bundle of exactly these entry files, as they are now, lives (None if one
    vanished meanwhile)."""
    parts = [VERSION]
    for entry in sorted(entries):
        try:
            stat = Path(entry).stat()
        except OSError:
            return None
        parts.append(
            f"{entry}:{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}:"
            f"{stat.st_dev}"
        )
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]
    return folder / BUNDLES / f"{digest}.parquet"


def save(folder: Path | None, source: Source, snapshot_id: str, known: Known) -> None:
    """Write the costs of a chunk file to its entry (atomically; where ``known`` was looked
    up, :attr:`Known.entries`); no-op without a folder."""
    if folder is None:
        return
    complete, partial = known.entries or _paths(folder, source)
    cache.write_frame(complete if known.complete else partial, _entry_frame(snapshot_id, known))


def _entry_frame(snapshot_id: str, known: Known) -> pl.DataFrame:
    """The FILES-style frame an entry holds (absent paths as null costs while partial)."""
    rows = {p: c for p, c in known.rows.items() if _utf8(p)}  # no chunk file holds the others
    return files_frame({snapshot_id: rows}, keep_absent=not known.complete)


def _utf8(text: str) -> bool:
    """Whether ``text`` can be stored as UTF-8 (a lone surrogate cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
