"""The ``arbwb`` command and the one error boundary of every subcommand: a user error prints one
line (exit 2), Ctrl-C 130, a closed stdout 141; bugs (and ``--debug``) keep their traceback."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from arbwb import __version__
from arbwb.commands import COMMANDS, module_name
from arbwb.errors import user_message

EXIT_USAGE = 2  # bad input, like argparse's usage errors
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE


def _selected(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line (the first non-option word), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Parser listing every subcommand; only ``command``'s module is imported and configured."""
    parser = argparse.ArgumentParser(
        prog="arbwb", description="Agent Retrieval Bench analysis workbench"
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of every error, not one line"
    )
    parser.add_argument("--version", action="version", version=f"arbwb {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        if name == command:
            importlib.import_module(module_name(name)).add_parser(sub)
        else:
            sub.add_parser(name, help=help_text)
    return parser


def _silence_stdout() -> None:
    """Point stdout at devnull so the interpreter's final flush cannot fail again (Python docs)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand inside the error boundary described in the module docstring."""
    words = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(_selected(words)).parse_args(words)
    prefix = f"arbwb {args.command}"
    try:
        code: int = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the boundary
    except KeyboardInterrupt:
        if args.debug:
            raise
        hint = getattr(args, "interrupt_hint", "")
        print(f"{prefix}: interrupted{f'; {hint}' if hint else ''}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        message = user_message(exc)
        if message is None or args.debug:
            raise
        print(f"{prefix}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    return code


if __name__ == "__main__":
    sys.exit(main())
