"""One error type for bad input, and the one-line message of any error the user can fix."""

from __future__ import annotations

import errno
from pathlib import Path


class InputError(ValueError):
    """Input that would make a number wrong, located: ``FILE:LINE: field 'F': what is wrong``
    (unknown parts left out); the CLI prints it as one line and exits 2."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field
        self.reason = message
        where = self.path or ""
        if line is not None:
            where = f"{where}:{line}" if where else f"line {line}"
        parts = [p for p in (where, f"field {field!r}" if field else "") if p]
        prefix = ": ".join(parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)


_PATH_FIXES = {
    errno.EISDIR: "pass the path of a file inside it",
    errno.ENOTDIR: "a part of the path is a file, not a folder; choose another path",
    errno.EACCES: "choose a location you can write to, or fix its permissions",
    errno.EPERM: "choose a location you can write to, or fix its permissions",
    errno.EROFS: "choose a location on a writable file system",
    errno.ENOSPC: "free some space or write elsewhere",
    errno.EDQUOT: "free some space or write elsewhere",
}
#: errno values that mean "this path cannot be used" (the user can fix it), not a bug.
_PATH_ERRNOS = frozenset(_PATH_FIXES).union(
    (errno.ENOENT, errno.EEXIST, errno.ENOTEMPTY, errno.ENAMETOOLONG, errno.ELOOP, errno.EFBIG)
)


def user_message(exc: BaseException) -> str | None:
    """One line for an error the user can fix (bad input; an OSError whose errno says the path
    cannot be used: path, reason and fix); None for a bug."""
    if isinstance(exc, InputError):
        return str(exc)
    if not isinstance(exc, OSError) or exc.errno not in _PATH_ERRNOS:
        return None
    reason = exc.strerror or type(exc).__name__
    fix = _PATH_FIXES.get(exc.errno)
    text = f"{reason.lower()}; {fix}" if fix else reason.lower()
    return f"{exc.filename}: {text}" if exc.filename is not None else text
