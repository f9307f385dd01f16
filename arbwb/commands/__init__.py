"""CLI subcommands, one module each (listed in :data:`COMMANDS` so ``--help`` imports none), and
the output and corpus options several share; a command imports library modules when it runs."""

from __future__ import annotations

import sys
from collections.abc import Iterable

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (CLI start-up)
if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from arbwb.io.corpus import Corpus

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


def emit(text: str, out: str | None) -> None:
    """A command's output: written to ``out`` (``--out``) atomically, else to stdout."""
    if out:
        from arbwb.jsonio import write_text_atomic

        write_text_atomic(out, text)
    else:
        sys.stdout.write(text)


def json_text(document: object) -> str:
    """A JSON output document: indented, non-ASCII kept, one final newline."""
    import json

    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def input_hashes(paths: Iterable[str | Path]) -> list[dict[str, str]]:
    """``{path, sha256}`` of each input file, for a JSON output's provenance."""
    from arbwb.jsonio import sha256_file

    return [{"path": str(p), "sha256": sha256_file(p)} for p in paths]


def add_corpus_flags(parser: argparse.ArgumentParser) -> None:
    """``--no-cache`` and ``--allow-incomplete-snapshots``, read by :func:`open_corpus_for`."""
    parser.add_argument(
        "--no-cache", action="store_true", help="do not read or write the on-disk cache"
    )
    parser.add_argument(
        "--allow-incomplete-snapshots",
        action="store_true",
        help="count a snapshot whose chunk file disagrees with its manifest row as missing",
    )


def open_corpus_for(args: argparse.Namespace, path: str | Path, release: str | None) -> Corpus:
    """The corpus of a command with :func:`add_corpus_flags`; each snapshot left out as
    incomplete is named on stderr (instead of a Python warning)."""
    import warnings

    from arbwb.io.corpus import IncompleteSnapshotWarning, open_corpus

    allow = args.allow_incomplete_snapshots
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteSnapshotWarning)
        corpus = open_corpus(
            path, release, use_cache=not args.no_cache, on_mismatch="missing" if allow else "error"
        )
    for sid, problem in corpus.incomplete.items():
        print(
            f"arbwb {args.command}: warning: snapshot {sid} counted as missing: {problem}",
            file=sys.stderr,
        )
    return corpus


def add_output(
    parser: argparse.ArgumentParser,
    choices: tuple[str, ...],
    out: str = "write here (atomically) instead of stdout",
) -> None:
    """``--format`` (default json) and ``--out``, alike in every command that prints a summary."""
    help_text = "output format (default: %(default)s)"
    parser.add_argument("--format", choices=choices, default="json", help=help_text)
    parser.add_argument("--out", help=out)
