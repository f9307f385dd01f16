"""``arbwb demo build [--out DIR] [--src DIR]``: regenerate the demo release byte for byte."""

from __future__ import annotations

import argparse
from typing import Any

from arbwb.commands import COMMANDS
from arbwb.paths import DEMO_DIR, check_output_path


def add_parser(subparsers: Any) -> None:
    """Register ``demo`` with its ``build`` action."""
    parser = subparsers.add_parser("demo", help=COMMANDS["demo"])
    actions = parser.add_subparsers(dest="demo_action", required=True, metavar="ACTION")
    build = actions.add_parser("build", help="write data/demo (or --out) deterministically")
    build.add_argument("--out", default=str(DEMO_DIR), help="output folder (default: data/demo)")
    build.add_argument(
        "--src",
        default=None,
        help="demo source folder (default: data/demo-src of the checkout arbwb runs from)",
    )
    build.set_defaults(func=run_build)


def run_build(args: argparse.Namespace) -> int:
    """Build the demo release and print what was written."""
    from arbwb.demo.build import build_demo

    check_output_path(args.out, kind="dir")
    result = build_demo(args.out, args.src)
    print(
        f"demo release written to {result.out}: {result.n_samples} samples, "
        f"{sum(len(c) for c in result.commits.values())} snapshots, runs {', '.join(result.runs)}"
    )
    return 0
