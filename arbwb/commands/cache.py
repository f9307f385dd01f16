"""``arbwb cache info|clear``: what the on-disk cache holds, and emptying it."""

from __future__ import annotations

import argparse
from typing import Any

from arbwb.commands import COMMANDS


def add_parser(subparsers: Any) -> None:
    """Register ``cache`` with its ``info`` and ``clear`` actions."""
    parser = subparsers.add_parser("cache", help=COMMANDS["cache"])
    actions = parser.add_subparsers(dest="cache_action", required=True, metavar="ACTION")
    actions.add_parser("info", help="cache folder, entries and bytes per kind")
    clear = actions.add_parser("clear", help="remove every entry (or one kind's)")
    clear.add_argument("--kind", default=None, help="only this kind, e.g. file-costs")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the cache's contents, or clear it."""
    from arbwb import cache
    from arbwb.tables import to_markdown

    root = cache.cache_root()
    if args.cache_action == "clear":
        print(f"{root}: removed {cache.clear(root, args.kind)} files")
        return 0
    table = cache.info(root)
    print(f"cache folder: {root} (set ARBWB_CACHE_DIR to move it)")
    print(to_markdown(table) if table.height else "empty")
    return 0
