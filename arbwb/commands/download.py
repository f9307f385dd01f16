"""``arbwb download``: fetch, verify and extract ARB releases at a pinned revision."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from arbwb.commands import COMMANDS
from arbwb.paths import check_output_path
from arbwb.release import download as dl


def add_parser(subparsers: Any) -> None:
    """Register ``download``."""
    parser = subparsers.add_parser("download", help=COMMANDS["download"])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--release", nargs="+", metavar="ID", help="release ids, e.g. v2_code2test")
    which.add_argument(
        "--all",
        action="store_true",
        help=f"the five current releases: {', '.join(dl.CURRENT_RELEASES)}",
    )
    parser.add_argument(
        "--revision", required=True, help="hub revision (commit hash or tag) to pin the download to"
    )
    parser.add_argument("--dir", required=True, type=Path, help="data root to extract into")
    parser.add_argument(
        "--force", action="store_true", help="replace existing benchmark|corpus|eval|reports/R"
    )
    parser.add_argument("--repo-id", default=dl.HUB_REPO, help="Hugging Face dataset repository")
    parser.add_argument(
        "--mirror",
        type=Path,
        help="fetch from a local folder laid out like the hub (MIRROR/REVISION/releases/...)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Download each requested release in turn; stop at the first failure."""
    check_output_path(args.dir, kind="dir", field="--dir")
    releases = list(dl.CURRENT_RELEASES) if args.all else list(dict.fromkeys(args.release))
    fetcher: dl.Fetcher = (
        dl.FolderFetcher(args.mirror) if args.mirror else dl.HubFetcher(args.repo_id)
    )
    for release in releases:
        receipt = dl.download_release(
            release, root=args.dir, revision=args.revision, fetcher=fetcher, force=args.force
        )
        print(
            f"{release}: {receipt['file_count']} files, {receipt['bytes']} bytes, "
            f"sha256 {receipt['archive_sha256']} verified -> {', '.join(receipt['extracted'])}"
        )
    return 0
