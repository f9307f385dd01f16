"""``arbwb contextbench score``: ContextBench predictions scored as the upstream evaluator does."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from arbwb.commands import COMMANDS, add_output, emit, input_hashes, json_text
from arbwb.errors import InputError
from arbwb.paths import check_output_path


def add_parser(subparsers: Any) -> None:
    """Register ``contextbench score``."""
    parser = subparsers.add_parser("contextbench", help=COMMANDS["contextbench"])
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    score = actions.add_parser(
        "score", help="per-run coverage/precision/F1 at file, line (span, symbol) level"
    )
    score.add_argument(
        "predictions", nargs="+", help="unified records (.json/.jsonl) or agent trajectories"
    )
    score.add_argument("--rows", required=True, help="ContextBench Parquet (gold)")
    score.add_argument("--corpus", help="corpus folder: file lists and line counts per snapshot")
    score.add_argument(
        "--repos",
        help="folder of OWNER__NAME git repositories or plain checkouts at the base commit: "
        "exact paths, bytes (span level)",
    )
    score.add_argument(
        "--symbols", action="store_true", help="block level (needs the optional tree-sitter extra)"
    )
    score.add_argument("--per-instance", help="write every §3.3 output record here (JSONL)")
    add_output(score, ("json", "markdown"), "write the summary here (atomically) instead of stdout")
    score.set_defaults(func=run_score)


def _summary(scored: Any, aggregate: Any, editloc: Any) -> dict[str, Any]:
    """One run's summary: counts, the three aggregations per level, trajectory, EditLoc."""
    import polars as pl

    errors = Counter(i["record"]["error"] for i in scored.records if "error" in i["record"])
    levels: dict[str, Any] = {}
    for row in aggregate.filter(pl.col("run") == scored.run).iter_rows(named=True):
        trajectory = {k: row[k] for k in ("auc_coverage", "redundancy")}
        stats = {k: row[k] for k in ("coverage", "precision", "f1_mean", "f1_harmonic")}
        levels.setdefault(row["level"], trajectory)[row["aggregation"]] = stats
    edit = {
        row["aggregation"]: {k: row[k] for k in ("recall", "precision", "f1_mean", "n")}
        for row in editloc.filter(pl.col("run") == scored.run).iter_rows(named=True)
    }
    return {
        "run": scored.run,
        "n_predictions": len(scored.records),
        "n_valid": len(scored.records) - sum(errors.values()),
        "errors": dict(sorted(errors.items())),
        "n_unpredicted": scored.n_unpredicted,
        "path_resolution": scored.resolution,
        "levels": levels,
        "editloc": edit,
    }


_TITLES = {
    "micro": "micro (evaluator CLI; F1 = harmonic mean, arbwb-defined)",
    "macro": "macro over valid instances (F1 = mean per-instance F1, F1 hm = harmonic mean)",
    "macro_errors_as_zero": "macro, error rows as zeros (statistics.py)",
}
_STATS = {"coverage": "R", "precision": "P", "f1_mean": "F1", "f1_harmonic": "F1 hm"}


def _markdown(summaries: list[dict[str, Any]], aggregate: Any) -> str:
    """One table per aggregation: run, valid/error counts, then R/P/F1 per level (4 decimals);
    a statistic the whole aggregation leaves null (micro's mean F1) is left out."""
    import polars as pl

    from arbwb.contextbench.instance import LEVELS
    from arbwb.tables import to_markdown

    rows = [(s["run"], s["n_valid"], sum(s["errors"].values())) for s in summaries]
    schema = {"run": pl.String, "valid": pl.Int64, "errors": pl.Int64}
    counts = pl.DataFrame(rows, schema=schema, orient="row")
    levels = [lv for lv in LEVELS if lv in aggregate["level"].to_list()]
    lines: list[str] = []
    for aggregation, title in _TITLES.items():
        part = aggregate.filter(pl.col("aggregation") == aggregation)
        table = counts
        for level in levels:
            stats = [pl.col(c).alias(f"{level} {m}") for c, m in _STATS.items()]
            cell = part.filter(pl.col("level") == level).select("run", *stats)
            table = table.join(cell, on="run", how="left", maintain_order="left")
        if part.height:
            table = table.select(c for c in table.columns if table[c].null_count() < table.height)
        lines += [f"## {title}", "", to_markdown(table)]
    return "\n".join(lines)


def run_score(args: argparse.Namespace) -> int:
    """Load rows and runs, score, print the summary; per-instance records on request."""
    from arbwb.contextbench.aggregate import aggregate as aggregate_results
    from arbwb.contextbench.aggregate import aggregate_editloc
    from arbwb.contextbench.score import editloc_frame, results_frame, score_predictions
    from arbwb.contextbench.sources import choose_source
    from arbwb.contextbench.symbols import optional_finder
    from arbwb.io.contextbench import Predictions, load_rows
    from arbwb.io.contextbench_agents import load_predictions
    from arbwb.io.corpus import open_corpus
    from arbwb.jsonio import write_jsonl

    check_output_path(args.out)
    check_output_path(args.per_instance, field="--per-instance")
    rows = load_rows(args.rows)
    runs: dict[str, Predictions] = {}
    for path in args.predictions:
        loaded = load_predictions(path)
        if loaded.run in runs:
            msg = f"run name {loaded.run!r} also comes from {runs[loaded.run].path}; rename a file"
            raise InputError(msg, path=path)
        runs[loaded.run] = loaded
    corpus = open_corpus(args.corpus) if args.corpus else None
    source = choose_source(repos_dir=args.repos, corpus=corpus).source
    finder, why = optional_finder(args.symbols)
    if why:
        raise InputError(why, field="--symbols")
    scored = score_predictions(list(runs.values()), rows, source=source, symbol_finder=finder)
    results = results_frame(scored)
    aggregate = aggregate_results(results)
    editloc = aggregate_editloc(editloc_frame(scored))
    summaries = [_summary(s, aggregate, editloc) for s in scored]
    if args.per_instance:
        write_jsonl(
            args.per_instance,
            [{"run": s.run, **item["record"]} for s in scored for item in s.records],
        )
    for s in summaries:
        if s["errors"] or s["n_unpredicted"]:
            print(
                f"arbwb contextbench score: run {s['run']!r}: {s['errors'] or 'no'} error rows "
                f"(excluded from micro/macro, zeros in macro_errors_as_zero); "
                f"{s['n_unpredicted']} of {rows.instances.height} instances not predicted",
                file=sys.stderr,
            )
    if source is None:
        print(
            "arbwb contextbench score: no --repos/--corpus: paths resolved lexically "
            "(arbwb-defined), span and symbol levels skipped",
            file=sys.stderr,
        )
    if args.format == "json":
        inputs = [p for p in (*args.predictions, args.rows) if Path(p).is_file()]
        rows_info = {
            "path": args.rows,
            "n": rows.instances.height,
            "excluded": rows.excluded.height,
        }
        document = {"runs": summaries, "rows": rows_info, "inputs": input_hashes(inputs)}
        text = json_text(document)
    else:
        text = _markdown(summaries, aggregate)
    emit(text, args.out)
    return 0
