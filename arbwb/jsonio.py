"""JSON/JSONL reading with located errors, upstream-style serialisation, atomic writes."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from arbwb.errors import InputError


def dumps_upstream(obj: Any) -> str:
    """Serialise like upstream: sorted keys, raw non-ASCII, default separators (spec §0)."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)


def as_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (for optional object fields)."""
    return value if isinstance(value, dict) else {}


def _reject_constant(value: str) -> Any:
    msg = f"{value} is not valid JSON (NaN/Infinity are not allowed)"
    raise ValueError(msg)


def loads_strict(text: str) -> Any:
    """Parse JSON, refusing NaN/Infinity, which upstream never writes."""
    return json.loads(text, parse_constant=_reject_constant)


def iter_jsonl(
    path: str | Path, *, allow_empty: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line_number, object)`` of each non-blank line of a JSONL file (spec §0); a line that
    is not a JSON object or UTF-8, or an empty file (unless ``allow_empty``), is an InputError."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    seen = False
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8").strip()
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"not valid UTF-8 ({exc.reason})", path=path, line=number
                ) from None
            if not text:
                continue
            try:
                obj = loads_strict(text)
            except ValueError as exc:
                raise InputError(f"malformed JSON: {exc}", path=path, line=number) from None
            if not isinstance(obj, dict):
                msg = f"expected a JSON object, got {type(obj).__name__}"
                raise InputError(msg, path=path, line=number)
            seen = True
            yield number, obj
    if not seen and not allow_empty:
        raise InputError("file has no records (empty file)", path=path)


def read_json(path: str | Path) -> Any:
    """Read one JSON document, raising :class:`InputError` with the location on failure."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 ({exc.reason})", path=path) from None
    if not text.strip():
        raise InputError("file is empty", path=path)
    try:
        return loads_strict(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON: {exc.msg}", path=path, line=exc.lineno) from None
    except ValueError as exc:
        raise InputError(f"malformed JSON: {exc}", path=path) from None


def _process_umask() -> int:
    """The process umask, read once at import: from ``/proc/self/status`` on Linux, elsewhere
    set and restored before arbwb starts a thread (``os.umask`` is racy across threads)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    old = os.umask(0o022)
    os.umask(old)
    return old


UMASK = _process_umask()


def new_file_mode(*, folder: bool = False) -> int:
    """The mode ``open()`` or ``mkdir()`` would give a new file or folder under the umask."""
    return (0o777 if folder else 0o666) & ~UMASK


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (``hashlib.file_digest``)."""
    with Path(path).open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", *, durable: bool = True) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` (mode as ``open()`` gives); rename it over ``path``
    only on success. An OSError naming no file or the temporary one is raised naming ``path``;
    ``durable`` fsyncs first (results; a recomputable cache entry needs only the rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as handle:
            os.fchmod(fd, new_file_mode())  # mkstemp makes it 0600; outputs respect the umask
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno is not None and exc.filename in (None, tmp):
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write text to ``path`` atomically."""
    with atomic_open(path, "w") as handle:
        handle.write(text)


def write_json(path: str | Path, obj: Any) -> None:
    """Write a JSON file like upstream: indent 2, sorted keys, trailing newline; atomic."""
    write_text_atomic(path, json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2) + "\n")


def write_jsonl(path: str | Path, rows: Iterable[Any]) -> None:
    """Write JSONL like upstream (one sorted-key object per line); atomic."""
    with atomic_open(path, "w") as handle:
        for row in rows:
            handle.write(dumps_upstream(row) + "\n")
