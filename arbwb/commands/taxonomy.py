"""``arbwb taxonomy``: agentic-relevance annotation records (spec 10.6) and 13.4 tables."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from arbwb.commands import COMMANDS

FORMATS = ("jsonl", "csv", "markdown")


def add_parser(subparsers: Any) -> None:
    """Register ``taxonomy``."""
    parser = subparsers.add_parser("taxonomy", help=COMMANDS["taxonomy"])
    parser.add_argument(
        "--samples",
        type=Path,
        required=True,
        help="samples JSONL, release folder or single-release root",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="jsonl",
        help="jsonl: one spec 10.6 record per sample (default); csv: the same fields, lists as "
        "JSON; markdown: the spec 13.4 distribution tables and examples",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Annotate every record (no-gold and malformed ones included) and print them."""
    from arbwb.analysis import relevance, taxonomy
    from arbwb.jsonio import dumps_upstream

    frame = relevance.annotate_path(args.samples)
    if args.format == "jsonl":
        for record in relevance.records(frame):
            sys.stdout.write(dumps_upstream(record) + "\n")  # spec §0 JSONL writing
    elif args.format == "csv":
        sys.stdout.write(_csv(frame))
    else:
        sys.stdout.write(taxonomy.markdown(frame))
    return 0


def _csv(frame: Any) -> str:
    """The 10.6 fields as CSV; list fields as JSON arrays (arbwb-defined)."""
    import polars as pl

    from arbwb.analysis.relevance import RECORD_FIELDS, records
    from arbwb.jsonio import dumps_upstream

    rows = [
        {k: dumps_upstream(v) if isinstance(v, list) else v for k, v in record.items()}
        for record in records(frame)
    ]
    schema = {k: pl.String for k in RECORD_FIELDS} | {
        "semantic_overlap_score": pl.Float64,
        "structural_signal_count": pl.Int64,
        "workflow_signal_count": pl.Int64,
    }
    text: str = pl.DataFrame(rows, schema=schema, orient="row").write_csv()
    return text
