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
    from arbwb.analysis import taxonomy
    from arbwb.jsonio import dumps_upstream

    frame = taxonomy.annotate_path(args.samples)
    if args.format == "jsonl":
        for record in taxonomy.records(frame):
            sys.stdout.write(dumps_upstream(record) + "\n")  # spec §0 JSONL writing
    elif args.format == "csv":
        sys.stdout.write(_csv(frame))
    else:
        sys.stdout.write(_markdown(frame))
    return 0


def _csv(frame: Any) -> str:
    """The 10.6 fields as CSV; list fields as JSON arrays (arbwb-defined)."""
    import polars as pl

    from arbwb.analysis.taxonomy import RECORD_FIELDS, records
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


def _markdown(frame: Any) -> str:
    """Spec 13.4: distribution, by task, and up to 4 examples per label; then flags."""
    import polars as pl

    from arbwb.analysis import taxonomy
    from arbwb.tables import to_markdown as markdown_table

    parts = [
        "# Agentic-relevance taxonomy (spec 10, 13.4)\n",
        f"Samples: {frame.height}\n",
        "## Distribution\n",
        markdown_table(taxonomy.distribution(frame)),
        "## By task\n",
        markdown_table(taxonomy.by_task(frame)),
        "## Examples\n",
    ]
    chosen = taxonomy.examples(frame)
    for label in taxonomy.LABELS:
        rows = chosen.filter(pl.col("primary_relevance_type") == label)
        if rows.height == 0:
            continue
        lines = []
        for row in rows.iter_rows(named=True):
            gold = ", ".join(row["gold_files"][:3]) or "(no annotation gold)"
            why = "; ".join(row["evidence"][:2])
            lines.append(
                f"- `{row['sample_id']}` ({row['task_type']}, {row['repo']}, "
                f"{row['confidence']}) -> {gold}: {why}\n"
            )
        parts += [f"### {label}\n", "".join(lines)]
    flags = (
        frame.select("flags")
        .explode("flags")
        .drop_nulls()
        .group_by("flags")
        .agg(pl.len().cast(pl.Int64).alias("Samples"))
        .sort("flags")
        .rename({"flags": "Flag (arbwb-defined)"})
    )
    if flags.height:
        parts += ["## Flags (quirks reproduced, missing inputs)\n", markdown_table(flags)]
    return "\n".join(parts)
