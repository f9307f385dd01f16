"""The on-disk cache of data derived from chunk files (token costs, indexes, embeddings).

Location: ``$ARBWB_CACHE_DIR``, else ``$XDG_CACHE_HOME/arbwb``, else ``~/.cache/arbwb``; one
folder per kind of entry. An entry's key hashes the source file's resolved path, size,
mtime and inode with the kind's format version, so a changed chunk file is never served
stale. Entries are written atomically (temporary file, then rename, no fsync: an entry
that is unreadable is recomputed), so concurrent processes at worst compute it twice.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import shutil
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arbwb.jsonio import atomic_open

if TYPE_CHECKING:  # numpy and polars load with the entries, not with every cache user
    import numpy.typing as npt
    import polars as pl

_BLOB_MAGIC = b"ARBWB-BLOB-1\n"
_ALIGN = 64


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
    import polars as pl

    try:
        return pl.read_parquet(path)
    except (OSError, pl.exceptions.ComputeError):
        return None


def read_frames(paths: list[str], *, source: str) -> pl.DataFrame | None:
    """Cached Parquet frames of one schema in one read, each row's file in column ``source``;
    None when any is absent or unreadable (then the caller falls back to :func:`read_frame`)."""
    import polars as pl

    try:
        return pl.read_parquet(paths, include_file_paths=source)
    except (OSError, pl.exceptions.PolarsError):
        return None


def write_frame(path: Path, frame: pl.DataFrame) -> None:
    """Write a Parquet entry atomically, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb", durable=False) as handle:
        frame.write_parquet(handle)


def read_arrays(path: Path) -> dict[str, npt.NDArray[Any]] | None:
    """A cached ``.npz`` entry's arrays, or None when absent or unreadable (then recomputed)."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as entry:
            return {name: entry[name] for name in entry.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        return None


def write_arrays(path: Path, arrays: Mapping[str, npt.NDArray[Any]]) -> None:
    """Write an uncompressed ``.npz`` entry atomically, creating its folder."""
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb", durable=False) as handle:
        np.savez(handle, **dict(arrays))  # type: ignore[arg-type]


def write_blob(path: Path, arrays: Mapping[str, npt.NDArray[Any]]) -> None:
    """Write arrays as one raw entry (magic, JSON header, 64-byte aligned buffers) atomically.

    arbwb-defined format: no compression and no checksum, so reading maps the file and views
    its buffers without a copy; a torn or foreign file fails the size checks of
    :func:`read_blob` and is recomputed.
    """
    import numpy as np

    layout, offset = {}, 0
    for name, array in arrays.items():
        layout[name] = {"dtype": array.dtype.str, "shape": list(array.shape), "offset": offset}
        offset += -(-array.nbytes // _ALIGN) * _ALIGN
    header = json.dumps({"arrays": layout, "size": offset}, sort_keys=True).encode("ascii")
    head = _BLOB_MAGIC + len(header).to_bytes(8, "little") + header
    head += bytes(-len(head) % _ALIGN)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb", durable=False) as handle:
        handle.write(head)
        for array in arrays.values():
            data = np.ascontiguousarray(array)
            handle.write(data.tobytes() if data.nbytes < 2**16 else data.data.cast("B"))
            handle.write(bytes(-data.nbytes % _ALIGN))


def read_blob(path: Path) -> dict[str, npt.NDArray[Any]] | None:
    """A :func:`write_blob` entry's arrays (read-only views of the mapped file), or None when
    it is absent, torn or not such an entry (then it is recomputed)."""
    import numpy as np

    try:
        with path.open("rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # ValueError: an empty file cannot be mapped
        return None
    try:
        if mapped[: len(_BLOB_MAGIC)] != _BLOB_MAGIC:
            return None
        start = len(_BLOB_MAGIC) + 8
        length = int.from_bytes(mapped[len(_BLOB_MAGIC) : start], "little")
        header = json.loads(mapped[start : start + length])
        base = start + length + (-(start + length) % _ALIGN)
        if base + int(header["size"]) != len(mapped):
            return None
        out = {}
        for name, spec in header["arrays"].items():
            dtype = np.dtype(spec["dtype"])
            shape = tuple(int(n) for n in spec["shape"])
            count = int(np.prod(shape, dtype=np.int64))
            at = base + int(spec["offset"])
            array = np.frombuffer(mapped, dtype=dtype, count=count, offset=at)
            out[name] = array.reshape(shape)
        return out
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def info(root: Path | None = None) -> pl.DataFrame:
    """Entries and bytes per kind (sub-folder) of the cache."""
    import polars as pl

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
