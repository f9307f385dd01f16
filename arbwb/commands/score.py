"""``arbwb score``: upstream-exact means of ranking files (the numbers come from
arbwb.analysis.scoring)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arbwb.commands import COMMANDS, add_format
from arbwb.metrics.spec import VALID_FORMS
from arbwb.paths import check_output_path

if TYPE_CHECKING:
    from arbwb.io.corpus import Corpus

DEFAULT_METRICS = "recall@5,recall@10,recall@20,mrr"


def add_parser(subparsers: Any) -> None:
    """Register ``arbwb score``."""
    parser = subparsers.add_parser("score", help=COMMANDS["score"])
    parser.add_argument("rankings", nargs="+", help="ranking files, one run each")
    parser.add_argument("--samples", help="samples file or release folder (gold); else details")
    parser.add_argument(
        "--metrics",
        default=DEFAULT_METRICS,
        help=f"comma-separated metric names, of the forms {VALID_FORMS} (default: %(default)s)",
    )
    parser.add_argument(
        "--by",
        choices=("repo", "split"),
        help="add means per repo or split (overall and per-task means are always given)",
    )
    add_format(parser, ("json", "csv", "markdown"))
    parser.add_argument("--out", help="write here (atomically) instead of stdout")
    parser.add_argument("--corpus", help="corpus folder or data root (needed for bcy@B metrics)")
    parser.add_argument(
        "--no-cache", action="store_true", help="do not read or write the on-disk cache"
    )
    parser.add_argument(
        "--allow-incomplete-snapshots",
        action="store_true",
        help="count a snapshot whose chunk file disagrees with its manifest row as missing",
    )
    parser.set_defaults(func=run)


def open_corpus_for(args: argparse.Namespace, path: str | Path, release: str | None) -> Corpus:
    """The corpus of a command with ``--no-cache`` and ``--allow-incomplete-snapshots``; each
    snapshot the latter leaves out is named on stderr (instead of a Python warning)."""
    import sys
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


def _warn_missing(summaries: list[dict[str, Any]]) -> None:
    import sys

    for s in summaries:
        if s["n_missing"] or s["n_error"]:
            print(
                f"arbwb score: run {s['run']!r}: {s['n_missing']} of {s['n']} samples have "
                f"no prediction and {s['n_error']} are errors (scored as 0)",
                file=sys.stderr,
            )
        if s.get("n_missing_snapshot"):
            print(
                f"arbwb score: run {s['run']!r}: {s['n_missing_snapshot']} samples rank a "
                "snapshot the corpus lacks (BCY scored as 0); build it or pass the right "
                "--corpus",
                file=sys.stderr,
            )


def run(args: argparse.Namespace) -> int:
    """Load, score and print (or write) one summary for all given runs."""
    import json
    import sys

    from arbwb.analysis import scoring
    from arbwb.io.samples import load_samples, sample_files
    from arbwb.jsonio import sha256_file, write_text_atomic

    check_output_path(args.out)
    metrics = scoring.metric_names([m.strip() for m in args.metrics.split(",") if m.strip()])
    samples = load_samples(args.samples) if args.samples else None
    corpus = None
    if args.corpus:
        corpus = open_corpus_for(args, args.corpus, None)
    runs = scoring.load_runs(args.rankings)
    scored = scoring.score_all(runs, samples, metrics, corpus)
    summaries = scoring.run_summaries(scored, args.by)
    if args.format == "json":
        inputs = [*args.rankings, *(sample_files(args.samples) if args.samples else [])]
        document = {
            "runs": summaries,
            "metrics": metrics,
            "inputs": [{"path": str(p), "sha256": sha256_file(p)} for p in inputs],
        }
        text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    else:
        from arbwb import tables

        _warn_missing(summaries)
        table = scoring.score_table(scored, args.by)
        if args.format == "csv":
            text = tables.to_csv(table)
        else:
            text = "".join(
                f"## {title}\n\n{tables.to_markdown(frame)}\n"
                for title, frame in scoring.wide_sections(table, metrics)
            )
    if args.out:
        write_text_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return 0
