"""``arbwb depth``: first-gold depth, cross-run coverage, fusion and ablation (spec §13.3-13.8)."""

from __future__ import annotations

import argparse
from typing import Any

from arbwb.commands import COMMANDS, add_output, emit, input_hashes, json_text
from arbwb.paths import check_output_path


def add_parser(subparsers: Any) -> None:
    """Register ``arbwb depth``."""
    parser = subparsers.add_parser("depth", help=COMMANDS["depth"])
    parser.add_argument("runs", nargs="+", help="ARB details files (or other rankings), one each")
    parser.add_argument("--samples", help="samples file or release folder (gold); else details")
    add_output(parser, ("json", "markdown"))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load the runs, build every table and print (or write) JSON or Markdown."""
    from arbwb.analysis import depth
    from arbwb.analysis.scoring import check_known, load_runs
    from arbwb.io.samples import load_samples

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
        doc["inputs"] = input_hashes(args.runs)
        text = json_text(doc)
    else:
        text = depth.to_markdown(report)
    emit(text, args.out)
    return 0
