"""``arbwb cache info|clear``: what the on-disk cache holds, and emptying it."""

from __future__ import annotations

import argparse
from typing import Any

from arbwb.commands import COMMANDS

CLEAR_HELP = (
    "remove arbwb's entries (every kind's, or one kind's): only files named like arbwb's "
    "entries inside the kind folders; anything else is left and listed. A folder without "
    "arbwb's CACHEDIR.TAG is cleared only if it holds nothing but kind folders"
)


def add_parser(subparsers: Any) -> None:
    """Register ``cache`` with its ``info`` and ``clear`` actions."""
    from arbwb.cache import KINDS  # standard library only: ``--help`` stays light

    parser = subparsers.add_parser("cache", help=COMMANDS["cache"])
    actions = parser.add_subparsers(dest="cache_action", required=True, metavar="ACTION")
    actions.add_parser("info", help="cache folder, entries and bytes per kind")
    clear = actions.add_parser("clear", help=CLEAR_HELP, description=CLEAR_HELP)
    clear.add_argument("--kind", default=None, choices=list(KINDS), help="only this kind")
    parser.set_defaults(func=run)


def _files(n: int) -> str:
    return f"{n} file{'' if n == 1 else 's'}"


def _left(names: list[str]) -> str:
    """``; left N files arbwb did not write: a, b/`` or nothing."""
    if not names:
        return ""
    return f"; left {_files(len(names))} arbwb did not write: {', '.join(names)}"


def run(args: argparse.Namespace) -> int:
    """Print the cache's contents, or clear it."""
    from arbwb import cache
    from arbwb.tables import to_markdown

    root = cache.cache_root()
    if args.cache_action == "clear":
        cleared = cache.clear(root, args.kind)
        print(f"{root}: removed {_files(cleared.removed)}{_left(cleared.left)}")
        return 0
    table = cache.info(root)
    print(f"cache folder: {root} (set ARBWB_CACHE_DIR to move it)")
    print(to_markdown(table) if table.height else "empty")
    others = cache.foreign(root)
    if others:
        print(f"{_files(len(others))} arbwb did not write (cache clear leaves these)")
    return 0
