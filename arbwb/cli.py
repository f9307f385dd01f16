"""The ``arbwb`` command: subcommands live in :mod:`arbwb.commands`, one module each."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from arbwb import commands
from arbwb.errors import InputError


def build_parser() -> argparse.ArgumentParser:
    """Parser with one subcommand per module of :mod:`arbwb.commands` (each has ``add_parser``)."""
    parser = argparse.ArgumentParser(
        prog="arbwb", description="Agent Retrieval Bench analysis workbench"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"arbwb.commands.{info.name}")
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; bad input exits 2 with a one-line message naming file, line and field."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except InputError as exc:
        print(f"arbwb {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
