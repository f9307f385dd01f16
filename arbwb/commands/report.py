"""``arbwb report``: one static report; ``--method`` first ranks retrievers into ``<out>/runs/``.
Exits 1 naming each failed notebook, 2 before running any when the inputs match nothing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from arbwb.commands import COMMANDS
from arbwb.paths import NOTEBOOKS_DIR, check_output_path


def add_parser(subparsers: Any) -> None:
    """Register the ``report`` subcommand."""
    parser = subparsers.add_parser(
        "report",
        help=COMMANDS["report"],
        description="A failing notebook costs only its own section: the report is still written, "
        "its index shows the failing cell and error, and the exit code is 1.",
    )
    parser.add_argument("--data", required=True, type=Path, help="ARB release root")
    parser.add_argument(
        "--runs",
        action="append",
        default=[],
        help="more run files or a glob, relative to --data, added to the default run set "
        "(repeatable)",
    )
    parser.add_argument(
        "--only-runs",
        default=None,
        help="run files glob replacing the default set (eval/*/*_details.jsonl), rel. to --data",
    )
    parser.add_argument(
        "--method",
        action="append",
        default=[],
        help="rank this retriever first and add its runs (built-in, package.module:factory or "
        "entry point; repeatable; see arbwb rank --list)",
    )
    parser.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help="plug-in option"
    )
    parser.add_argument(
        "--methods",
        type=Path,
        default=None,
        help="method table CSV (release,stem,method,family) joining runs across eval folders; "
        "default: arbwb's data/methods.csv with upstream's labels",
    )
    parser.add_argument("--out", required=True, type=Path, help="report folder (replaced whole)")
    parser.add_argument("--notebooks", type=Path, default=NOTEBOOKS_DIR, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help="seed passed to every notebook")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--jobs",
        type=_at_least_one,
        default=None,
        help="kernels running notebooks at once, each kept for the notebooks it runs in turn "
        "(default: the usable CPUs)",
    )
    parser.set_defaults(func=_run)


def _at_least_one(text: str) -> int:
    """``--jobs`` as a whole number of at least 1 (argparse names the option on failure)."""
    value = int(text)
    if value < 1:
        msg = f"must be at least 1, got {value}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _run(args: argparse.Namespace) -> int:
    check_output_path(args.out, kind="dir")
    # nbformat validates notebooks with jsonschema, whose optional IRI format checker builds the
    # rfc3987_syntax grammar when imported: 0.7 s before every report, for formats no notebook
    # schema uses. This command's process goes without that one checker (importing it fails);
    # kernels and a user's own sessions keep it.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    from arbwb.report.build import RUNS_DIR, ReportConfig, check_report_folder, run_report
    from arbwb.report.html import outcome_summary

    ranked: list[str] = []
    if args.method:
        check_report_folder(args.out.resolve())  # before runs are written into it
        from arbwb.retrievers.plugin import parse_options
        from arbwb.retrievers.release_runs import rank_release

        options = parse_options(args.option)
        paths = rank_release(args.method, args.data, args.out / RUNS_DIR, options=options)
        ranked = [str(p.resolve()) for p in paths]
    config = ReportConfig(
        data_dir=args.data,
        out_dir=args.out,
        runs_glob=args.only_runs,
        extra_runs=(*args.runs, *ranked),
        notebooks_dir=args.notebooks,
        seed=args.seed,
        progress=not args.no_progress,
        methods=args.methods,
        jobs=args.jobs,
    )
    result = run_report(config)
    index = result.out_dir / "index.html"
    for section in result.failed:
        print(f"arbwb report: {section.describe()}", file=sys.stderr)
    if result.failed:
        names = ", ".join(s.notebook for s in result.failed)
        print(
            f"arbwb report: {len(result.failed)} of {len(result.sections)} notebooks failed "
            f"({names}); the report with the other sections is at {index}",
            file=sys.stderr,
        )
        return 1
    print(f"{outcome_summary(result.sections)}; report written to {index}")
    return 0
