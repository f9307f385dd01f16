"""The ``arbwb`` command: argument parsing only; a command's module is imported when it runs."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from arbwb.commands import COMMANDS, module_name
from arbwb.errors import InputError

#: arbwb-defined process defaults for native libraries, read when they load (a command imports
#: them after :func:`main` sets these); a value already in the environment wins.
NATIVE_DEFAULTS = {
    # OpenBLAS's idle workers sleep at once (2**4 cycles) instead of busy-waiting ~0.1 s of
    # CPU after numpy loads and after every BLAS call.
    "OPENBLAS_THREAD_TIMEOUT": "4",
    # Polars' jemalloc keeps freed pages 5 s (Polars' own default: 0.5 s, appended before this),
    # so the next chunk file reuses them instead of faulting in and zeroing fresh ones.
    "_RJEM_MALLOC_CONF": "dirty_decay_ms:5000,muzzy_decay_ms:5000",
}


def _selected(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line (the first non-option word), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Parser listing every subcommand; only ``command``'s module is imported and configured."""
    parser = argparse.ArgumentParser(
        prog="arbwb", description="Agent Retrieval Bench analysis workbench"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        if name == command:
            importlib.import_module(module_name(name)).add_parser(sub)
        else:
            sub.add_parser(name, help=help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; bad input exits 2 with a one-line message naming file, line and field."""
    for name, value in NATIVE_DEFAULTS.items():
        os.environ.setdefault(name, value)
    words = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(_selected(words)).parse_args(words)
    try:
        code: int = args.func(args)
    except InputError as exc:
        print(f"arbwb {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
