"""CLI subcommands, one module each (``merge-corpus`` lives in ``merge_corpus.py``).

:data:`COMMANDS` names every subcommand with its one-line help, so ``arbwb --help`` lists
them without importing any. A command module defines ``add_parser(subparsers)`` (which sets
``func``) and imports its library modules only inside ``run``, so ``arbwb X --help`` stays fast.
"""

import argparse

COMMANDS: dict[str, str] = {
    "score": "score ranking files (ARB details, predictions, TREC, Parquet/CSV)",
    "report": "run every notebook with papermill; write figures, tables, notebook HTML, index.html",
    "rank": "rank an ARB release with a baseline and write ARB details + summary",
    "snapshot": "build corpus snapshots from git",
    "validate": "validate samples: schema, leakage, duplicates, corpus membership, counts",
    "download": "download, verify and extract ARB release bundles (spec §1.2)",
    "merge-corpus": "merge the subset corpus manifests into the selective one",
    "demo": "build the embedded demo release (demo data)",
    "cache": "show or clear the on-disk cache of chunk-file derived data",
    "depth": "first-gold depth per run and task, and cross-run coverage (spec 13.3)",
    "selective": "calibrate abstention thresholds out of fold, grouped by repository (spec 9)",
    "granularity": "span granularity: gold-file sizes, evidence density, line overlap",
    "taxonomy": "label samples with ARB's agentic-relevance types (spec 10) and print the records",
    "contextbench": "score ContextBench contexts",
}


def module_name(command: str) -> str:
    """The module of a subcommand: ``merge-corpus`` -> ``arbwb.commands.merge_corpus``."""
    return f"arbwb.commands.{command.replace('-', '_')}"


def add_format(
    parser: argparse.ArgumentParser, choices: tuple[str, ...], default: str = "json"
) -> None:
    """``--format``: the same help and shown default in every command that prints a summary."""
    parser.add_argument(
        "--format", choices=choices, default=default, help="output format (default: %(default)s)"
    )
