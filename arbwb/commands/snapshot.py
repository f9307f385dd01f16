"""``arbwb snapshot build``: rebuild ARB corpus chunk files from a git repository (spec §3)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from arbwb.commands import COMMANDS
from arbwb.paths import check_output_path


def add_parser(subparsers: Any) -> None:
    """Register ``snapshot build``."""
    parser = subparsers.add_parser("snapshot", help=COMMANDS["snapshot"])
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = actions.add_parser(
        "build", help="write OUT/OWNER__NAME/SHA.chunks.jsonl and merge corpus_manifest.jsonl"
    )
    build.add_argument("--git", required=True, help="git directory (bare or with a worktree)")
    build.add_argument("--repo", required=True, help="repository name OWNER/NAME")
    build.add_argument("--commit", required=True, action="append", help="commit (repeatable)")
    build.add_argument("--out", required=True, help="corpus folder, e.g. data/corpus/R")
    build.add_argument(
        "--generated-at",
        default=None,
        help="manifest timestamp (default: SOURCE_DATE_EPOCH if set, else now, UTC seconds)",
    )
    build.set_defaults(func=run_build)


def run_build(args: argparse.Namespace) -> int:
    """Build every ``--commit``; exit 1 when some commit is missing (its row says so)."""
    from arbwb.release.snapshot import build_snapshots, generated_at

    check_output_path(args.out, kind="dir")
    stamp = generated_at(args.generated_at, os.environ.get("SOURCE_DATE_EPOCH"))
    rows = build_snapshots(args.git, args.repo, args.commit, args.out, stamp=stamp)
    missing = [r["base_commit"] for r in rows if r["status"] != "ok"]
    for row in rows:
        if row["status"] == "ok":
            print(
                f"{row['repo']}@{row['base_commit']}: {row['chunk_count']} chunks, "
                f"{row['file_count']} files, {row['symbol_count']} symbols, "
                f"{row['skipped_large']} skipped large"
            )
    if missing:
        print(
            f"arbwb snapshot build: commits not in {args.git}: {', '.join(missing)} "
            "(written as status missing_commit)",
            file=sys.stderr,
        )
        return 1
    return 0
