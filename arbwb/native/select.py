"""The C modules, or their pure-Python fallbacks (:mod:`arbwb.native.fallback`) where a C
module is not built (no compiler at install) or ``ARBWB_NO_NATIVE=1`` asks for them (tests,
CI): chosen once per process, with one line on stderr naming what is replaced.

Callers import :data:`termcount` and :data:`jsonlines` from here, never the C modules.
"""

from __future__ import annotations

import contextlib
import importlib
import mmap
import os
import sys
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from typing_extensions import Buffer

    from arbwb.native._termcount import Bytes

#: Set to anything but "" or "0": use the fallbacks even where the C modules are built.
NO_NATIVE = "ARBWB_NO_NATIVE"


class TermCounter(Protocol):
    """What :mod:`arbwb.native._termcount` offers (arbwb/native/_termcount.pyi)."""

    def count(self, *columns: Bytes) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes]:
        """Term counts of column pairs (:func:`arbwb.native._termcount.count`)."""
        ...


class LineScanner(Protocol):
    """What :mod:`arbwb.native._jsonlines` offers (arbwb/native/_jsonlines.pyi)."""

    def scan(
        self, data: Buffer | mmap.mmap, strings: tuple[bytes, ...], ints: tuple[bytes, ...], /
    ) -> tuple[bytes, bytes] | None:
        """A chunk file's checked lines, or None (:func:`arbwb.native._jsonlines.scan`)."""
        ...


def _select() -> tuple[TermCounter, LineScanner]:
    """The C modules that import, unless :data:`NO_NATIVE` is set; the fallback for the
    others, announced in one line."""
    forced = os.environ.get(NO_NATIVE, "") not in ("", "0")
    names = ("arbwb.native._termcount", "arbwb.native._jsonlines")
    found: dict[str, Any] = dict.fromkeys(names)
    for name in () if forced else names:
        with contextlib.suppress(ImportError):
            found[name] = importlib.import_module(name)
    missing = [name for name, module in found.items() if module is None]
    if missing:
        from arbwb.native import fallback

        why = f"off ({NO_NATIVE}={os.environ[NO_NATIVE]})" if forced else "not built (no compiler?)"
        plural = "s" if len(missing) > 1 else ""
        notice = f"C extension{plural} {' and '.join(missing)} {why}"
        print(f"arbwb: {notice}; using the slower pure-Python fallback", file=sys.stderr)
        found = {name: module or fallback for name, module in found.items()}
    return found["arbwb.native._termcount"], found["arbwb.native._jsonlines"]


termcount, jsonlines = _select()
