"""One error type for bad input, so every message names the file, line and field."""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """Input that would make a number wrong: names where it is and how to fix it.

    The message reads ``FILE:LINE: field 'F': what is wrong``; parts that are
    unknown are left out. The CLI turns it into a one-line error and exit code 2.
    """

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
