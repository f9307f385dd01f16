"""The ``arbwb`` command: argument parsing only; a command's module is imported when it runs."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from arbwb import native
from arbwb.commands import COMMANDS, module_name
from arbwb.errors import InputError


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
    native.apply()
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
