"""The on-disk cache of data derived from chunk files (token costs, indexes, embeddings).

Location: ``$ARBWB_CACHE_DIR``, else ``$XDG_CACHE_HOME/arbwb``, else ``~/.cache/arbwb``; one
folder per kind of entry, from the fixed registry :data:`KINDS`.

Identity (arbwb-defined, git's index rule): an entry's key hashes the kind's format version
with the source file's resolved path, size, mtime, ctime, inode and device. ctime cannot be
set back (``touch -r`` and ``os.utime`` restore mtime only), and a file deleted and recreated
gets a new ctime even when the file system reuses its inode number. Timestamps tick coarsely
(the kernel's clock tick, a second on some file systems), so an edit in the same tick as the
file's last change can leave every stat field equal (git's "racy clean"): when the file's
mtime or ctime lies within :data:`RACY_WINDOW_NS` of the time the key is taken, or after it,
the key also hashes the file's bytes (BLAKE2b, streamed). A later edit then either lands in
a later tick (a new ctime) or changes the digest. Readers and writers take keys with this
one function, so a racy/settled mismatch costs at most a miss, never a stale hit; and once a
racy file has settled, its racy entry is moved to the stat key (:func:`entry_path`), so a
release scored right after it was extracted is not recomputed. Only a file looked up while it
was racy is ever hashed again after it settled: a cold or warm run over settled files hashes
nothing, however recently they were written. Residual holes: a
clock set back; a file system whose clock is more than the window away from this machine's;
a racy file edited and restored to the same bytes while an entry was computed from it.

Entries are written atomically (temporary file, then rename, no fsync: an entry that is
unreadable is recomputed), so concurrent processes at worst compute it twice. A cache that
cannot be written (the folder is a file, read-only, full) is reported once per process on
stderr and the run goes on uncached. The root holds a ``CACHEDIR.TAG`` (the Cache Directory
Tagging spec, https://bford.info/cachedir/) naming arbwb, which ``arbwb cache clear`` checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import struct
import sys
import time
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from arbwb.errors import InputError
from arbwb.jsonio import atomic_open, sha256_file

if TYPE_CHECKING:  # numpy and polars load with the entries, not with every cache user
    import numpy.typing as npt
    import polars as pl

#: Files changed this close to (or after) the time a key is taken get their bytes hashed too.
RACY_WINDOW_NS = 3 * 10**9
#: Suffix of the empty mark left beside an entry's settled name while its file is racy.
RACY_MARK = ".racy"
#: Every kind of entry arbwb writes: its folder under the root, and what it holds.
KINDS: Mapping[str, str] = {
    "file-costs": "per-file token costs and line counts of a snapshot (BCY), and bundles",
    "terms": "lexical/BM25 term statistics of a snapshot",
    "embeddings": "dense passage vectors by model and text SHA-256",
    "repomap": "RepoMap snapshot indexes",
    "checked": "empty marks of chunk files whose rows passed grep's check",
    "corpus-scale": "a snapshot's chunk, file and text-byte counts (the corpus table)",
    "sha256": "SHA-256 digests of input files (the report's manifest)",
}
_HEX = r"[0-9a-f]{32,64}"
#: The files arbwb writes in each kind folder, as (sub-folder, file name) patterns; ``clear``
#: removes only these, and the temporaries of interrupted writes (``.<name>.<random>.tmp``,
#: :func:`arbwb.jsonio.atomic_open`).
_ENTRY_NAMES: Mapping[str, tuple[str, str]] = {
    "file-costs": (r"(?:bundles/)?", rf"{_HEX}(?:\.paths|\.lines)?\.parquet(?:\{RACY_MARK})?"),
    "corpus-scale": ("", rf"{_HEX}\.npz(?:\{RACY_MARK})?"),
    "sha256": ("", rf"{_HEX}\.sha256(?:\{RACY_MARK})?"),
    "terms": ("", rf"{_HEX}\.npz(?:\{RACY_MARK})?"),
    "embeddings": (r"[0-9a-f]{16}/", r"shard-[0-9]+-[0-9]+\.npz(?:\.tmp\.npz)?"),
    "repomap": ("", rf"{_HEX}\.npz(?:\{RACY_MARK})?"),
    "checked": ("", rf"{_HEX}\.ok(?:\{RACY_MARK})?"),
}
_ENTRY_RE = {
    kind: re.compile(rf"{folder}(?:{name}|\.{name}\.[a-z0-9_]+\.tmp)")
    for kind, (folder, name) in _ENTRY_NAMES.items()
}
TAG_NAME = "CACHEDIR.TAG"
_TAG_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
_TAG_TEXT = (
    f"{_TAG_SIGNATURE}\n# This file is a cache directory tag created by arbwb.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)
_WARNED: list[str] = []  # the one warning this process printed about an unwritable cache


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """The cache folder for this environment (not created here)."""
    env = os.environ if env is None else env
    if env.get("ARBWB_CACHE_DIR"):
        return Path(env["ARBWB_CACHE_DIR"])
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "arbwb"
    return Path.home() / ".cache" / "arbwb"


def kind_dir(kind: str, root: Path | None = None) -> Path | None:
    """The folder of one kind of entry under the cache root, created (with the root's tag);
    None after the one warning when it cannot be, so the caller runs uncached."""
    if kind not in KINDS:
        msg = f"unknown cache kind {kind!r}; known kinds: {', '.join(KINDS)}"
        raise ValueError(msg)
    root = cache_root() if root is None else root
    folder = root / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _tag(root)
    except OSError as exc:
        warn_unwritable(folder, exc)
        return None
    return folder


def _tag(root: Path) -> None:
    """Write the root's ``CACHEDIR.TAG`` unless it has one or holds anything but known kinds
    (a folder shared with other files is never claimed as arbwb's)."""
    if (root / TAG_NAME).exists() or not set(os.listdir(root)) <= KINDS.keys():
        return
    with atomic_open(root / TAG_NAME, "w", durable=False) as handle:
        handle.write(_TAG_TEXT)


def is_tagged(root: Path) -> bool:
    """Whether ``root`` holds a ``CACHEDIR.TAG`` that arbwb wrote (signature and arbwb line)."""
    try:
        text = (root / TAG_NAME).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return text.startswith(_TAG_SIGNATURE) and "arbwb" in text


def warn_unwritable(path: Path, exc: OSError) -> None:
    """Say once per process, on stderr, that the cache cannot be written and the run goes on
    without it (a cache problem never costs the result)."""
    if _WARNED:
        return
    reason = exc.strerror or type(exc).__name__
    msg = (
        f"arbwb: warning: cannot write the cache at {path} ({reason}); going on without it "
        "(set ARBWB_CACHE_DIR to a writable folder, or pass --no-cache)"
    )
    _WARNED.append(msg)
    print(msg, file=sys.stderr)


def file_key(source: Path, version: str) -> str:
    """Key of data derived from ``source``: ``version``, its resolved path, size, mtime,
    ctime, inode and device, plus its bytes' digest while it is racy (module docstring)."""
    return _file_key(source, version)[0]


def _file_key(source: Path, version: str) -> tuple[str, list[object], bool]:
    """:func:`file_key`, its stat parts (the key's once ``source`` settles), and whether
    ``source`` is racy now."""
    stat = source.stat()
    parts: list[object] = [version, source.resolve(), stat.st_size, stat.st_mtime_ns]
    parts += [stat.st_ctime_ns, stat.st_ino, stat.st_dev]
    if max(stat.st_mtime_ns, stat.st_ctime_ns) > time.time_ns() - RACY_WINDOW_NS:
        return _hash([*parts, content_digest(source)]), parts, True
    return _hash(parts), parts, False


def _hash(parts: list[object]) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:32]


def content_digest(source: Path) -> str:
    """BLAKE2b of a file's bytes, streamed (:func:`hashlib.file_digest`)."""
    with source.open("rb") as handle:
        return hashlib.file_digest(handle, "blake2b").hexdigest()


def entry_path(folder: Path, source: Path, version: str, suffix: str) -> Path:
    """Where the entry of ``source`` lives under ``folder`` (e.g. ``<root>/file-costs``).

    A racy ``source`` leaves an empty mark under the name its entry will have once it settles
    (``<stat key><suffix>.racy``); a settled one with no entry but such a mark (its stat
    unchanged since) is hashed once and its racy entry, if one was written, moved to the stat
    key. A settled file without a mark is never hashed (a fresh download costs nothing).
    """
    key, parts, racy = _file_key(source, version)
    if racy:
        with contextlib.suppress(OSError):  # a cache that cannot be written: no promotion
            (folder / f"{_hash(parts)}{suffix}{RACY_MARK}").touch()
        return folder / f"{key}{suffix}"
    path = folder / f"{key}{suffix}"
    mark = path.with_name(path.name + RACY_MARK)
    if path.exists() or not mark.exists():
        return path
    with contextlib.suppress(OSError):  # FileNotFoundError: no racy entry was written
        os.replace(folder / f"{_hash([*parts, content_digest(source)])}{suffix}", path)
    with contextlib.suppress(OSError):
        mark.unlink()
    return path


def store(path: Path, write: Callable[[IO[bytes]], object], *, warn: bool = True) -> bool:
    """Write one entry atomically through ``write(handle)``, creating its folder; False when
    the cache cannot be written (then, with ``warn``, the one warning)."""
    try:
        with atomic_open(path, "wb", durable=False) as handle:
            write(handle)
    except OSError as exc:
        if warn:
            warn_unwritable(path.parent, exc)
        return False
    return True


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


def write_frame(path: Path, frame: pl.DataFrame) -> bool:
    """Write a Parquet entry atomically (:func:`store`); False when the cache is unwritable."""
    return store(path, frame.write_parquet)


def read_arrays(path: Path) -> dict[str, npt.NDArray[Any]] | None:
    """A cached ``.npz`` entry's arrays as read-only views of the memory-mapped file (its
    members are stored uncompressed), so a run reads only the pages it touches (measured: 24
    entries, 162 MB, 0.42 s read whole, 0.06 s mapped); None when absent or unreadable. Sizes
    are checked, zip's CRC-32 is not (entries are written atomically)."""
    import mmap

    import numpy as np
    from numpy.lib import format as npy

    readers = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}
    try:
        with path.open("rb") as handle, zipfile.ZipFile(handle) as archive:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            arrays = {}
            for member in archive.infolist():
                if member.compress_type != zipfile.ZIP_STORED or member.flag_bits & 1:
                    raise ValueError(member.filename)  # not as write_arrays stores it
                handle.seek(member.header_offset + 26)  # local header: name and extra lengths
                name_length, extra_length = struct.unpack("<HH", handle.read(4))
                end = handle.seek(name_length + extra_length, os.SEEK_CUR) + member.file_size
                shape, fortran, dtype = readers[npy.read_magic(handle)](handle)
                name, start = member.filename.removesuffix(".npy"), handle.tell()
                array = np.ndarray(shape, dtype, data, start, order="F" if fortran else "C")
                if start + array.nbytes != end:  # the member holds exactly its array
                    raise ValueError(member.filename)
                arrays[name] = array
            return arrays
    except (OSError, ValueError, TypeError, KeyError, zipfile.BadZipFile, EOFError):
        return None


def write_arrays(path: Path, arrays: Mapping[str, npt.NDArray[Any]], *, warn: bool = True) -> bool:
    """Write an uncompressed ``.npz`` entry atomically (:func:`store`); False when the cache
    is unwritable (then, with ``warn``, the one warning)."""
    import numpy as np

    def write(handle: IO[bytes]) -> None:
        np.savez(handle, **dict(arrays))  # type: ignore[arg-type]

    return store(path, write, warn=warn)


def sha256_of(source: Path) -> str:
    """Hex SHA-256 of a file's bytes, kept under its key (kind ``sha256``): a report's manifest
    lists every input's digest, and re-reading gigabytes of unchanged chunk files for it cost
    seconds per run."""
    folder = kind_dir("sha256")
    entry = None if folder is None else entry_path(folder, source, "sha256-v1", ".sha256")
    if entry is not None and entry.is_file():
        with contextlib.suppress(OSError, UnicodeDecodeError):
            kept = entry.read_text(encoding="ascii")
            if re.fullmatch("[0-9a-f]{64}", kept):
                return kept
    digest = sha256_file(source)
    if entry is not None:
        store(entry, lambda handle: handle.write(digest.encode("ascii")))
    return digest


def _walk(folder: Path) -> list[tuple[str, Path]]:
    """Every regular file under ``folder`` (symbolic links not followed) by its path relative
    to ``folder`` (``/``-separated), and every symbolic link as a file."""
    found = []
    for top, dirs, names in os.walk(folder):
        here = Path(top)
        links = [d for d in dirs if (here / d).is_symlink()]
        dirs[:] = [d for d in dirs if d not in links]
        for name in [*names, *links]:
            found.append(((here / name).relative_to(folder).as_posix(), here / name))
    return sorted(found)


def _is_entry(kind: str, relative: str, path: Path) -> bool:
    """Whether a file under a kind folder is one arbwb writes there (name, regular file)."""
    return _ENTRY_RE[kind].fullmatch(relative) is not None and not path.is_symlink()


def _kind_folder(root: Path, kind: str) -> Path | None:
    """``root/kind`` when it is a real folder (a symbolic link is never entered)."""
    folder = root / kind
    return folder if folder.is_dir() and not folder.is_symlink() else None


def foreign(root: Path | None = None) -> list[str]:
    """What arbwb did not write under the root: other top-level files and folders (a folder
    with a trailing ``/``) and non-entry files inside kind folders (``kind/name``)."""
    root = cache_root() if root is None else root
    if not root.is_dir():
        return []
    out = []
    for name in sorted(os.listdir(root)):
        if name == TAG_NAME:
            continue
        folder = _kind_folder(root, name) if name in KINDS else None
        if folder is None:
            path = root / name
            out.append(f"{name}/" if path.is_dir() and not path.is_symlink() else name)
            continue
        out += [f"{name}/{rel}" for rel, path in _walk(folder) if not _is_entry(name, rel, path)]
    return out


def info(root: Path | None = None) -> pl.DataFrame:
    """Entries and bytes per known kind present in the cache (:data:`KINDS`; other files are
    :func:`foreign`; racy marks are neither)."""
    import polars as pl

    root = cache_root() if root is None else root
    rows = []
    for kind in KINDS:
        folder = _kind_folder(root, kind)
        if folder is None:
            continue
        files = [
            path
            for rel, path in _walk(folder)
            if _is_entry(kind, rel, path) and not rel.endswith(RACY_MARK)
        ]
        rows.append((kind, len(files), sum(f.stat().st_size for f in files)))
    return pl.DataFrame(
        rows, schema={"kind": pl.String, "entries": pl.Int64, "bytes": pl.Int64}, orient="row"
    )


@dataclass(frozen=True)
class Cleared:
    """What :func:`clear` removed (entry files) and left (:func:`foreign` names)."""

    removed: int
    left: list[str]


def clear(root: Path | None = None, kind: str | None = None) -> Cleared:
    """Remove arbwb's entries (every kind's, or ``kind``'s), and nothing else.

    Only files named like the entries arbwb writes, inside the known kind folders, are
    removed (then kind folders left empty); foreign files and folders stay and are reported.
    A root that arbwb did not tag (``CACHEDIR.TAG``) is cleared only when it holds nothing
    but known kind folders, so pointing ``ARBWB_CACHE_DIR`` at a shared folder removes
    nothing. Raises :class:`InputError` for an unknown kind or such a shared folder.
    """
    root = cache_root() if root is None else root
    if kind is not None and kind not in KINDS:
        msg = f"unknown cache kind {kind!r}; known kinds: {', '.join(KINDS)}"
        raise InputError(msg, field="--kind")
    left = foreign(root)
    tops = {name.split("/", 1)[0].rstrip("/") for name in left}
    if left and not is_tagged(root) and not tops <= KINDS.keys():
        msg = (
            f"not clearing {root}: it has no CACHEDIR.TAG written by arbwb and holds files "
            f"arbwb did not write ({', '.join(left[:5])}); point ARBWB_CACHE_DIR at arbwb's "
            "own cache folder"
        )
        raise InputError(msg, path=root)
    removed = 0
    for name in KINDS if kind is None else [kind]:
        folder = _kind_folder(root, name)
        if folder is None:
            continue
        for rel, path in _walk(folder):
            if _is_entry(name, rel, path):
                path.unlink(missing_ok=True)
                removed += not rel.endswith(RACY_MARK)  # racy marks are not counted
        for top, _, _ in sorted(os.walk(folder), reverse=True):  # deepest first
            if not os.listdir(top):
                os.rmdir(top)
    mine = left if kind is None else [n for n in left if n.startswith(f"{kind}/")]
    return Cleared(removed, mine)
