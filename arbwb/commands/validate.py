"""``arbwb validate``: check released samples (spec §2.10-2.11) and list every problem."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arbwb.commands import COMMANDS
from arbwb.paths import check_output_path

if TYPE_CHECKING:
    from arbwb.release.validate import ReleaseReport


def add_parser(subparsers: Any) -> None:
    """Register ``validate``."""
    parser = subparsers.add_parser("validate", help=COMMANDS["validate"])
    parser.add_argument(
        "path", type=Path, help="release root (with benchmark/<R>/), benchmark folder or JSONL file"
    )
    parser.add_argument(
        "--corpus", type=Path, help="corpus folder for membership checks (default: ROOT/corpus/<R>)"
    )
    parser.add_argument("--json", type=Path, help="also write the full report as JSON (atomic)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print problems, corpus status and the summary table; exit 1 when anything is invalid."""
    import polars as pl

    from arbwb.jsonio import write_json
    from arbwb.release.validate import summary_table, validate_path
    from arbwb.tables import to_markdown

    check_output_path(args.json, field="--json")
    reports = validate_path(args.path, corpus=args.corpus)
    for report in reports:
        for problem in report.problems:
            print(problem)
    for report in reports:
        print(f"{report.name}: {len(report.problems)} problems; corpus membership {report.corpus}")
    table = summary_table(reports)
    print(to_markdown(table.with_columns(pl.col("expected").cast(pl.String).fill_null("-"))))
    if args.json:
        write_json(args.json, [_as_json(r) for r in reports])
    return 1 if any(r.problems for r in reports) else 0


def _as_json(report: ReleaseReport) -> dict[str, Any]:
    data = dataclasses.asdict(report)
    data["files"] = [str(f) for f in report.files]
    data["strata"] = [
        {"stratum": group, "task": task, "samples": n} for (group, task), n in report.strata.items()
    ]
    return data
