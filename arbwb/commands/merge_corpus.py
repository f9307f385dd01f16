"""``arbwb merge-corpus``: build ``corpus/v2_selective_mixed/corpus_manifest.jsonl`` (spec §1.4)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from arbwb.commands import COMMANDS
from arbwb.paths import check_output_path
from arbwb.release import merge
from arbwb.release.download import CURRENT_RELEASES


def add_parser(subparsers: Any) -> None:
    """Register ``merge-corpus``."""
    parser = subparsers.add_parser("merge-corpus", help=COMMANDS["merge-corpus"])
    parser.add_argument("--dir", required=True, type=Path, help="data root holding corpus/<R>/")
    parser.add_argument(
        "--releases",
        nargs="+",
        default=list(CURRENT_RELEASES),
        metavar="ID",
        help="releases to merge, in priority order (default: the five current ones)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help=f"output file (default: corpus/{merge.MERGED_RELEASE}/corpus_manifest.jsonl)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Merge, write atomically and print the counts."""
    output = args.out or merge.manifest_path(args.dir, merge.MERGED_RELEASE)
    check_output_path(output)
    merged = merge.merge_manifests(args.dir, args.releases)
    merge.write_merged_manifest(merged, output)
    read = sum(merged.inputs.values())
    print(
        f"{output}: {len(merged.rows)} unique snapshots from {read} manifest rows "
        f"({merged.duplicates} duplicates)"
    )
    return 0
