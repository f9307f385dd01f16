"""``arbwb granularity``: gold-file sizes, span density, file-vs-line overlap (spec §11, §13.5)."""

from __future__ import annotations

import argparse
from typing import Any

from arbwb.commands import COMMANDS, add_output, emit, json_text
from arbwb.errors import InputError
from arbwb.paths import check_output_path


def add_parser(subparsers: Any) -> None:
    """Register ``arbwb granularity``."""
    parser = subparsers.add_parser("granularity", help=COMMANDS["granularity"])
    parser.add_argument("--samples", required=True, help="samples file or release folder")
    parser.add_argument(
        "--corpus", required=True, help="corpus folder, or a release root with corpus/*/ folders"
    )
    parser.add_argument("--runs", nargs="*", default=[], help="ARB details files, one run each")
    parser.add_argument(
        "--budgets",
        default="4000,8000,16000,32000",
        help="token budgets of the re-ranked line packing (default: %(default)s)",
    )
    parser.add_argument(
        "--no-rerank", action="store_true", help="skip re-ranking arbwb's own baseline runs"
    )
    parser.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    add_output(parser, ("json", "markdown"))
    parser.set_defaults(func=run)


def _budgets(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        msg = f"expected comma-separated token counts, got {text!r}"
        raise InputError(msg, field="--budgets") from None


def run(args: argparse.Namespace) -> int:
    """Load samples, corpus view and runs; print the report as JSON or Markdown."""
    from arbwb.analysis import granularity
    from arbwb.analysis.result import Resampling
    from arbwb.io.corpus import open_corpus
    from arbwb.io.rankings import load_rankings
    from arbwb.io.release import Release
    from arbwb.io.samples import load_samples

    check_output_path(args.out)
    samples = load_samples(args.samples)
    corpus = open_corpus(args.corpus)
    runs = [load_rankings(path, fmt="details") for path in args.runs]
    by_name = {run.run: run for run in runs}
    if len(by_name) < len(runs):
        msg = "two --runs files share a run name; pass each run once"
        raise InputError(msg, field="--runs")
    release = Release(samples.samples, samples.labels, samples.spans, by_name, corpus, [])
    options = granularity.GranularityOptions(
        budgets=_budgets(args.budgets),
        rerank=not args.no_rerank,
        resampling=Resampling(n_boot=args.n_boot, seed=args.seed),
        data_dir=str(args.samples),
    )
    outcome = granularity.run(release, options)
    if outcome.skipped:
        raise InputError(outcome.skipped, path=args.samples)
    report = outcome.report
    emit(json_text(report) if args.format == "json" else granularity.markdown(report), args.out)
    return 0
