"""``arbwb depth``: first-gold depth, cross-run coverage, fusion and ablation (spec §13.3-13.8)."""

from __future__ import annotations

import argparse
from typing import Any

from arbwb.commands import COMMANDS, add_format
from arbwb.paths import check_output_path


def add_parser(subparsers: Any) -> None:
    """Register ``arbwb depth``."""
    parser = subparsers.add_parser("depth", help=COMMANDS["depth"])
    parser.add_argument("runs", nargs="+", help="ARB details files (or other rankings), one each")
    parser.add_argument("--samples", help="samples file or release folder (gold); else details")
    add_format(parser, ("json", "markdown"))
    parser.add_argument("--out", help="write here (atomically) instead of stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load the runs, build every table and print (or write) JSON or Markdown."""
    import json
    import sys

    from arbwb.analysis import depth
    from arbwb.analysis.scoring import check_known, load_runs
    from arbwb.io.samples import load_samples
    from arbwb.jsonio import sha256_file, write_text_atomic

    check_output_path(args.out)
    runs = {r.run: r for r in load_runs(args.runs)}
    if args.samples:
        sample_set = load_samples(args.samples)
        for data in runs.values():
            check_known(data, sample_set)
        labels, samples = sample_set.labels, sample_set.samples
    else:
        labels, samples = depth.details_gold(runs)
    report = depth.build_report(runs, labels, samples)
    if args.format == "json":
        doc = depth.to_json(report)
        doc["inputs"] = [{"path": p, "sha256": sha256_file(p)} for p in args.runs]
        text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    else:
        text = depth.to_markdown(report)
    if args.out:
        write_text_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return 0
