"""``arbwb selective``: repo-grouped out-of-fold abstention calibration of runs (spec §9.6)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from arbwb.commands import COMMANDS, add_output, emit
from arbwb.paths import check_output_path


def add_parser(subparsers: Any) -> None:
    """Register ``selective``."""
    parser = subparsers.add_parser("selective", help=COMMANDS["selective"])
    parser.add_argument("runs", nargs="+", help="run files; the first is the fold reference")
    parser.add_argument("--samples", required=True, help="samples file or release folder")
    parser.add_argument("--protocol", choices=("mixed", "natural"), default="mixed")
    parser.add_argument("--folds", type=int, default=5, help="repo-grouped folds (default 5)")
    add_output(parser, ("json", "markdown"))
    parser.add_argument(
        "--confidence",
        choices=("auto", "details", "rankings"),
        default="auto",
        help="details `confidence`, or the rank-1 score (auto: details when present)",
    )
    parser.add_argument(
        "--missing-confidence",
        choices=("error", "zero"),
        default="error",
        help="missing/NaN confidences: refuse (default) or read as 0.0 like upstream (§9.2)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load runs and samples, calibrate under the protocol, print JSON or Markdown."""
    from arbwb.analysis.scoring import load_runs
    from arbwb.analysis.selective import calibration_json, calibration_markdown
    from arbwb.analysis.selective_folds import calibrate
    from arbwb.analysis.selective_rows import selective_rows
    from arbwb.io.samples import load_samples

    check_output_path(args.out)
    sample_set = load_samples(args.samples)
    rows = {}
    for data in load_runs(args.runs):
        rows[data.run] = selective_rows(
            data,
            sample_set.samples,
            sample_set.labels,
            source=args.confidence,
            missing=args.missing_confidence,
        )
    calibration = calibrate(rows, protocol=args.protocol, folds=args.folds)
    report = calibration_json(calibration)
    reference = next(iter(rows.values()))
    unranked = sample_set.samples.join(reference, on="sample_id", how="anti")["sample_id"]
    report["protocol"]["unranked_samples"] = {
        "count": unranked.len(),
        "sample_ids": sorted(unranked.to_list()),
    }
    text = (
        json.dumps(report, indent=2, sort_keys=True) + "\n"
        if args.format == "json"
        else calibration_markdown(report)
    )
    emit(text, args.out)
    return 0
