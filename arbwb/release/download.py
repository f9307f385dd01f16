"""Fetch, verify (published SHA-256) and safely extract ARB release bundles (spec §1.2); moved into
place only when whole, with a receipt written last, so an interrupted run never looks complete."""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, Protocol

from arbwb.errors import InputError
from arbwb.jsonio import read_json, sha256_file, write_json
from arbwb.paths import RELEASE_ORDER

HUB_REPO = "eyuansu71/agent_retrieval_bench"
LEGACY_BUNDLE = "agent_retrieval_bench"
CURRENT_RELEASES = RELEASE_ORDER  # the five subset releases, in spec §1.4's merge order
RELEASE_KINDS = ("benchmark", "corpus", "eval", "reports")
INSTALL_HINT = "install it with: pip install 'arbwb[download]'"
_BLOCK = 1 << 20


class Fetcher(Protocol):
    """Places hub file ``filename`` (at ``revision``) under ``local_dir``; returns its path."""

    @property
    def source(self) -> str:
        """Where files come from, for the receipt."""
        ...

    def __call__(self, filename: str, *, revision: str, local_dir: Path) -> Path: ...


@dataclass(frozen=True)
class HubFetcher:
    """Fetcher backed by ``huggingface_hub.hf_hub_download`` (resumes interrupted downloads)."""

    repo_id: str = HUB_REPO

    @property
    def source(self) -> str:
        """The dataset repository, as an ``hf://`` address."""
        return f"hf://datasets/{self.repo_id}"

    def __call__(self, filename: str, *, revision: str, local_dir: Path) -> Path:
        try:
            from huggingface_hub import hf_hub_download
        except ImportError:
            msg = f"downloading releases needs huggingface_hub; {INSTALL_HINT}"
            raise InputError(msg) from None
        try:
            got = hf_hub_download(
                self.repo_id, filename, repo_type="dataset", revision=revision, local_dir=local_dir
            )
        except Exception as exc:  # network/hub errors of any kind become one clear message
            msg = (
                f"could not fetch {filename} from {self.repo_id} at revision {revision!r}: "
                f"{type(exc).__name__}: {exc}; check the release id and revision, then rerun"
            )
            raise InputError(msg, path=filename) from None
        return Path(got)


@dataclass(frozen=True)
class FolderFetcher:
    """Fetcher reading ``folder/<revision>/<filename>`` (a local mirror laid out like the hub);
    copies resume through ``<dest>.incomplete``, so a cut copy is never taken for a whole file."""

    folder: Path

    @property
    def source(self) -> str:
        """The mirror folder."""
        return str(self.folder)

    def __call__(self, filename: str, *, revision: str, local_dir: Path) -> Path:
        source = Path(self.folder) / revision / filename
        if not source.is_file():
            msg = f"no such file in the mirror at revision {revision!r}; check --release/--revision"
            raise InputError(msg, path=source)
        dest = local_dir / filename
        dest.parent.mkdir(parents=True, exist_ok=True)
        partial = dest.with_name(dest.name + ".incomplete")
        offset = partial.stat().st_size if partial.exists() else 0
        if offset > source.stat().st_size:  # not a prefix of the source: copy it again
            offset = 0
        with source.open("rb") as src, partial.open("r+b" if offset else "wb") as out:
            src.seek(offset)
            out.seek(offset)
            out.truncate()
            shutil.copyfileobj(src, out, _BLOCK)
        os.replace(partial, dest)
        return dest


def archive_stem(release: str) -> str:
    """Archive stem of a release: ``agent_retrieval_bench_R`` (the legacy bundle keeps its name)."""
    return LEGACY_BUNDLE if release == LEGACY_BUNDLE else f"{LEGACY_BUNDLE}_{release}"


def archive_path(release: str) -> str:
    """Hub path (and path under the data root) of a release archive, spec §1.2."""
    return f"releases/{release}/{archive_stem(release)}.tar.zst"


def receipt_path(root: str | Path, release: str) -> Path:
    """Where the receipt of an extracted release lives: beside its archive."""
    return Path(root) / "releases" / release / f"{archive_stem(release)}.receipt.json"


def read_receipt(root: str | Path, release: str) -> dict[str, Any] | None:
    """The receipt of a finished download of ``release`` under ``root``, or None."""
    path = receipt_path(root, release)
    return read_json(path) if path.is_file() else None


def parse_checksum(path: Path, *, expected_archive: str) -> str:
    """Expected hex SHA-256 from a ``.sha256`` file whose first line is ``HEX  RELPATH``."""
    try:
        lines = path.read_text(encoding="utf-8").strip().splitlines()
    except UnicodeDecodeError:
        raise InputError("checksum file is not UTF-8 text", path=path) from None
    fields = lines[0].split() if lines else []
    if len(fields) < 2:
        msg = f"first line must be '<sha256> <archive path>', got {lines[0] if lines else ''!r}"
        raise InputError(msg, path=path, line=1)
    digest, target = fields[0].lower(), fields[1]
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise InputError(f"not a hex SHA-256, got {fields[0]!r}", path=path, line=1)
    if PurePosixPath(target) != PurePosixPath(expected_archive):
        msg = f"checksum names {target!r}, expected {expected_archive!r}"
        raise InputError(msg, path=path, line=1)
    return digest


def check_member(member: tarfile.TarInfo, release: str) -> None:
    """Refuse archive members that could escape the data root or are not release data: only
    files, folders and inside links under ``benchmark|corpus|eval|reports/R/`` (arbwb-defined)."""
    name = member.name
    parts = PurePosixPath(name).parts
    if name.startswith("/") or (parts and ":" in parts[0]) or ".." in parts or not parts:
        raise InputError(f"unsafe member name {name!r} (absolute or with '..')", field=name)
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        raise InputError(f"member {name!r} is a device file or FIFO", field=name)
    top_ok = parts[0] in RELEASE_KINDS and (
        parts[1] == release if len(parts) > 1 else member.isdir()
    )
    if not top_ok:
        msg = f"member {name!r} lies outside {'|'.join(RELEASE_KINDS)}/{release}/"
        raise InputError(msg, field=name)
    if member.issym() or member.islnk():  # a symlink's target is relative to its folder
        base = posixpath.dirname(name) if member.issym() else ""
        target = posixpath.normpath(posixpath.join(base, member.linkname))
        if member.linkname.startswith("/") or target == ".." or target.startswith(("/", "../")):
            raise InputError(f"link {name!r} points outside the release", field=name)


class _ZstdReader:
    """Readable zstd stream that fails when the data ends inside a frame (``zstandard``'s own
    reader silently shortens it, so a cut archive would extract as a smaller release)."""

    def __init__(self, raw: BinaryIO, zstd: Any) -> None:
        self._raw = raw
        self._zstd = zstd
        self._decoder = zstd.ZstdDecompressor().decompressobj()
        self._buffer = bytearray()
        self._done = False

    def _fill(self) -> None:
        block = self._raw.read(_BLOCK)
        if self._decoder.eof:
            leftover = self._decoder.unused_data + block
            if not leftover:
                self._done = True
                return
            self._decoder = self._zstd.ZstdDecompressor().decompressobj()
            block = leftover
        elif not block:
            msg = "compressed data ends inside a zstd frame"
            raise EOFError(msg)
        self._buffer += self._decoder.decompress(block)

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` decompressed bytes (all remaining when negative)."""
        while not self._done and (size < 0 or len(self._buffer) < size):
            self._fill()
        cut = len(self._buffer) if size < 0 else min(size, len(self._buffer))
        out = bytes(self._buffer[:cut])
        del self._buffer[:cut]
        return out


def extract_archive(archive: Path, dest: Path, release: str) -> tuple[int, int]:
    """Stream-extract a ``.tar.zst`` into ``dest``, every member checked: (file count, file
    bytes); InputError for a corrupt or truncated archive (the caller cleans ``dest``)."""
    try:
        import zstandard as zstd
    except ImportError:
        raise InputError(f"extracting releases needs zstandard; {INSTALL_HINT}") from None
    files = size = 0
    try:
        with archive.open("rb") as raw:
            stream = _ZstdReader(raw, zstd)
            with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]
                for member in tar:
                    try:
                        check_member(member, release)
                    except InputError as exc:
                        raise InputError(exc.reason, path=archive, field=exc.field) from None
                    tar.extract(member, dest, filter="data")
                    if member.isfile():
                        files += 1
                        size += member.size
            while tail := stream.read(_BLOCK):  # reach the frame end, so a cut is noticed
                if tail.strip(b"\0"):
                    msg = "data after the end-of-archive marker"
                    raise tarfile.ReadError(msg)
    except (tarfile.TarError, EOFError, zstd.ZstdError) as exc:
        msg = (
            f"archive is corrupt or truncated ({type(exc).__name__}: {exc}); nothing was extracted"
        )
        raise InputError(msg, path=archive) from None
    return files, size


@contextlib.contextmanager
def _staging(root: Path, release: str) -> Iterator[Path]:
    """A hidden temporary folder beside the targets, removed whatever happens."""
    for stale in root.glob(f".arbwb-extract-{release}-*"):
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".arbwb-extract-{release}-", dir=root))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _existing_targets(root: Path, release: str) -> list[Path]:
    return [root / kind / release for kind in RELEASE_KINDS if (root / kind / release).exists()]


def _fetch_verified(fetcher: Fetcher, root: Path, release: str, revision: str) -> tuple[Path, str]:
    """Fetch the checksum and archive (reusing a local archive that already matches)."""
    relative = archive_path(release)
    checksum = fetcher(relative + ".sha256", revision=revision, local_dir=root)
    expected = parse_checksum(checksum, expected_archive=relative)
    archive = root / relative
    if archive.is_file() and sha256_file(archive) == expected:
        return archive, expected
    archive = fetcher(relative, revision=revision, local_dir=root)
    actual = sha256_file(archive)
    if actual != expected:
        archive.unlink()
        msg = (
            f"SHA-256 mismatch: published {expected}, got {actual}; the archive was removed, "
            "rerun to fetch it again (if it persists, the hub files disagree at this revision)"
        )
        raise InputError(msg, path=archive)
    return archive, expected


def download_release(
    release: str,
    *,
    root: str | Path,
    revision: str,
    fetcher: Fetcher | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Download, verify and extract one release under ``root``; return its receipt. Existing
    release folders are replaced only with ``force``, after the new extraction succeeded."""
    if not release or "/" in release or release.startswith("."):
        raise InputError(f"not a release id, got {release!r}", field="release")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    existing = _existing_targets(root, release)
    if existing and not force:
        state = "" if read_receipt(root, release) else " (no receipt: maybe an interrupted run)"
        names = ", ".join(str(p) for p in existing)
        msg = f"refusing to overwrite existing {names}{state}; rerun with --force to replace them"
        raise InputError(msg, path=root)
    fetch = fetcher if fetcher is not None else HubFetcher()
    archive, digest = _fetch_verified(fetch, root, release, revision)
    with _staging(root, release) as tmp:
        files, size = extract_archive(archive, tmp, release)
        if not (tmp / "benchmark" / release).is_dir():
            raise InputError(f"archive has no benchmark/{release}/ folder", path=archive)
        receipt_path(root, release).unlink(missing_ok=True)
        for target in _existing_targets(root, release):
            shutil.rmtree(target)
        moved = []
        for kind in RELEASE_KINDS:
            if (tmp / kind / release).exists():
                (root / kind).mkdir(exist_ok=True)
                os.replace(tmp / kind / release, root / kind / release)
                moved.append(f"{kind}/{release}")
    receipt = {
        "release": release,
        "revision": revision,
        "source": fetch.source,
        "archive": archive_path(release),
        "archive_sha256": digest,
        "file_count": files,
        "bytes": size,
        "extracted": moved,
        "completed_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    write_json(receipt_path(root, release), receipt)
    return receipt
