"""``arbwb score``: upstream-exact means of ranking files (the numbers come from
arbwb.analysis.scoring)."""

from __future__ import annotations

import argparse
from typing import Any

from arbwb import commands
from arbwb.metrics.spec import VALID_FORMS
from arbwb.paths import check_output_path

DEFAULT_METRICS = "recall@5,recall@10,recall@20,mrr"


def add_parser(subparsers: Any) -> None:
    """Register ``arbwb score``."""
    parser = subparsers.add_parser("score", help=commands.COMMANDS["score"])
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
    commands.add_output(parser, ("json", "csv", "markdown"))
    parser.add_argument("--corpus", help="corpus folder or data root (needed for bcy@B metrics)")
    commands.add_corpus_flags(parser)
    parser.set_defaults(func=run)


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
    from arbwb.analysis import scoring
    from arbwb.io.samples import load_samples, sample_files

    check_output_path(args.out)
    metrics = scoring.metric_names([m.strip() for m in args.metrics.split(",") if m.strip()])
    samples = load_samples(args.samples) if args.samples else None
    corpus = commands.open_corpus_for(args, args.corpus, None) if args.corpus else None
    runs = scoring.load_runs(args.rankings)
    scored = scoring.score_all(runs, samples, metrics, corpus)
    summaries = scoring.run_summaries(scored, args.by)
    if args.format == "json":
        inputs = [*args.rankings, *(sample_files(args.samples) if args.samples else [])]
        text = commands.json_text(
            {"runs": summaries, "metrics": metrics, "inputs": commands.input_hashes(inputs)}
        )
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
    commands.emit(text, args.out)
    return 0
