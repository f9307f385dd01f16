"""The on-disk cache of data derived from chunk files (token costs, indexes, embeddings).

Location: ``$ARBWB_CACHE_DIR``, else ``$XDG_CACHE_HOME/arbwb``, else ``~/.cache/arbwb``; one
folder per kind of entry. An entry's key hashes the source file's resolved path, size,
mtime and inode with the kind's format version, so a changed chunk file is never served
stale. Entries are written atomically (temporary file, then rename), so concurrent
processes at worst compute the same entry twice.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.jsonio import atomic_open


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """The cache folder for this environment (not created here)."""
    env = os.environ if env is None else env
    if env.get("ARBWB_CACHE_DIR"):
        return Path(env["ARBWB_CACHE_DIR"])
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "arbwb"
    return Path.home() / ".cache" / "arbwb"


def file_key(source: Path, version: str) -> str:
    """Key of data derived from ``source``: its path, size, mtime and inode plus ``version``."""
    stat = source.stat()
    parts = (version, str(source.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino)
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:32]


def entry_path(folder: Path, source: Path, version: str, suffix: str) -> Path:
    """Where the entry of ``source`` lives under ``folder`` (e.g. ``<root>/file-costs``)."""
    return folder / f"{file_key(source, version)}{suffix}"


def read_frame(path: Path) -> pl.DataFrame | None:
    """A cached Parquet frame, or None when absent or unreadable (then it is recomputed)."""
    try:
        return pl.read_parquet(path)
    except (OSError, pl.exceptions.ComputeError):
        return None


def write_frame(path: Path, frame: pl.DataFrame) -> None:
    """Write a Parquet entry atomically, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as handle:
        frame.write_parquet(handle)


def read_arrays(path: Path) -> dict[str, npt.NDArray[Any]] | None:
    """A cached ``.npz`` entry's arrays, or None when absent or unreadable (then recomputed)."""
    try:
        with np.load(path, allow_pickle=False) as entry:
            return {name: entry[name] for name in entry.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        return None


def write_arrays(path: Path, arrays: Mapping[str, npt.NDArray[Any]]) -> None:
    """Write an uncompressed ``.npz`` entry atomically, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as handle:
        np.savez(handle, **dict(arrays))  # type: ignore[arg-type]


def info(root: Path | None = None) -> pl.DataFrame:
    """Entries and bytes per kind (sub-folder) of the cache."""
    root = cache_root() if root is None else root
    rows = []
    if root.is_dir():
        for kind in sorted(p for p in root.iterdir() if p.is_dir()):
            files = [f for f in kind.rglob("*") if f.is_file()]
            rows.append((kind.name, len(files), sum(f.stat().st_size for f in files)))
    return pl.DataFrame(
        rows, schema={"kind": pl.String, "entries": pl.Int64, "bytes": pl.Int64}, orient="row"
    )


def clear(root: Path | None = None, kind: str | None = None) -> int:
    """Remove every entry (or one kind's); returns the number of files removed."""
    root = cache_root() if root is None else root
    target = root if kind is None else root / kind
    if not target.is_dir():
        return 0
    removed = sum(1 for f in target.rglob("*") if f.is_file())
    shutil.rmtree(target)
    return removed
