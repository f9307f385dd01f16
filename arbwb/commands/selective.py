"""``arbwb selective``: repo-grouped out-of-fold abstention calibration of runs (spec §9.6)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from arbwb.commands import COMMANDS


def add_parser(subparsers: Any) -> None:
    """Register ``selective``."""
    parser = subparsers.add_parser("selective", help=COMMANDS["selective"])
    parser.add_argument("runs", nargs="+", help="run files; the first is the fold reference")
    parser.add_argument("--samples", required=True, help="samples file or release folder")
    parser.add_argument("--protocol", choices=("mixed", "natural"), default="mixed")
    parser.add_argument("--folds", type=int, default=5, help="repo-grouped folds (default 5)")
    parser.add_argument("--format", choices=("json", "markdown"), default="json")
    parser.add_argument("--out", help="write here (atomically) instead of stdout")
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


def _cell(value: Any) -> str:
    if value is None:
        return "-inf"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]


def markdown(report: dict[str, Any]) -> str:
    """The repo-grouped CV report tables of spec §13.6 (4 decimals; -inf for null thresholds)."""
    protocol = report["protocol"]
    keys = (
        "positive_pass_rate",
        "no_gold_abstain_rate",
        "balanced_accuracy",
        "selective_accuracy",
        "selective_success@20",
        "coverage",
    )
    lines = [f"## Out-of-fold ({protocol['protocol']}, {protocol['folds']} folds)", ""]
    header = ["Ranker", "Pos. pass", "No-gold abstain", "Balanced acc.", "Selective acc."]
    header += ["Success@20", "Coverage", "No-abstain Success@20"]
    rows = [
        [r["run"], *(r["out_of_fold"][k] for k in keys), r["no_abstain"]["selective_success@20"]]
        for r in report["runs"]
    ]
    lines += _table(header, rows)
    lines += ["", "## Fold composition", ""]
    composition = []
    first = report["runs"][0]
    for fold in first["folds"]:
        samples = fold["test_samples"]
        repos = ", ".join(fold["test_repos"])
        composition.append([fold["fold"], samples, fold["test_positive"], fold["test_no_gold"]])
        composition[-1].append(repos)
    lines += _table(["Fold", "Samples", "Positive", "No-gold", "Repositories"], composition)
    for r in report["runs"]:
        lines += ["", f"## {r['run']}", ""]
        per = [
            [
                f["fold"],
                f["threshold"],
                f["test_samples"],
                *(f["test_metrics"][k] for k in (keys[0], keys[1], keys[2], keys[4])),
            ]
            for f in r["folds"]
        ]
        header = ["Fold", "Threshold", "Test n", "Pos. pass", "No-gold abstain"]
        lines += _table([*header, "Balanced acc.", "Success@20"], per)
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    """Load runs and samples, calibrate under the protocol, print JSON or Markdown."""
    from arbwb import selective as sel
    from arbwb.errors import InputError
    from arbwb.io.rankings import load_rankings
    from arbwb.io.samples import load_samples
    from arbwb.jsonio import write_text_atomic

    sample_set = load_samples(args.samples)
    rows = {}
    for path in args.runs:
        data = load_rankings(path)
        if data.run in rows:
            msg = f"two runs are named {data.run!r}; rename one file"
            raise InputError(msg, path=path)
        rows[data.run] = sel.selective_rows(
            data,
            sample_set.samples,
            sample_set.labels,
            source=args.confidence,
            missing=args.missing_confidence,
        )
    calibration = sel.calibrate(rows, protocol=args.protocol, folds=args.folds)
    report = sel.calibration_json(calibration)
    reference = next(iter(rows.values()))
    unranked = sample_set.samples.join(reference, on="sample_id", how="anti")["sample_id"]
    report["protocol"]["unranked_samples"] = {
        "count": unranked.len(),
        "sample_ids": sorted(unranked.to_list()),
    }
    text = (
        json.dumps(report, indent=2, sort_keys=True) + "\n"
        if args.format == "json"
        else markdown(report)
    )
    if args.out:
        write_text_atomic(Path(args.out), text)
    else:
        sys.stdout.write(text)
    return 0
