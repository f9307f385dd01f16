"""``arbwb contextbench score``: ContextBench predictions scored as the upstream evaluator does."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import Any

from arbwb.commands import COMMANDS
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
    score.add_argument("--format", choices=("json", "markdown"), default="json")
    score.add_argument("--per-instance", help="write every §3.3 output record here (JSONL)")
    score.add_argument("--out", help="write the summary here (atomically) instead of stdout")
    score.set_defaults(func=run_score)


def _summary(scored: Any, aggregate: Any, editloc: Any) -> dict[str, Any]:
    """One run's summary: counts, the three aggregations per level, trajectory, EditLoc."""
    import polars as pl

    errors = Counter(
        item["record"]["error"] for item in scored.records if "error" in item["record"]
    )
    mine = aggregate.filter(pl.col("run") == scored.run)
    levels: dict[str, Any] = {}
    for row in mine.iter_rows(named=True):
        level = levels.setdefault(
            row["level"],
            {"auc_coverage": row["auc_coverage"], "redundancy": row["redundancy"]},
        )
        level[row["aggregation"]] = {
            k: row[k] for k in ("coverage", "precision", "f1_mean", "f1_harmonic")
        }
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


def _markdown(summaries: list[dict[str, Any]]) -> str:
    """One table per aggregation: run, valid/error counts, then R/P/F1 per level (4 decimals)."""
    from arbwb.tables import cell, rows_to_markdown

    levels = [
        lv for lv in ("file", "symbol", "span", "line") if any(lv in s["levels"] for s in summaries)
    ]
    lines: list[str] = []
    titles = {
        "micro": "micro (evaluator CLI; F1 = harmonic mean, arbwb-defined)",
        "macro": "macro over valid instances (F1 = mean per-instance F1 | harmonic mean)",
        "macro_errors_as_zero": "macro, error rows as zeros (statistics.py)",
    }
    for aggregation, title in titles.items():
        lines += [f"## {title}", ""]
        header = ["run", "valid", "errors"]
        header += [f"{lv} {m}" for lv in levels for m in ("R", "P", "F1")]
        rows = []
        for s in summaries:
            cells: list[Any] = []
            for level in levels:
                got = s["levels"].get(level, {}).get(aggregation)
                if got is None:
                    cells += [None] * 3
                    continue
                f1 = (
                    got["f1_harmonic"]
                    if got["f1_mean"] is None
                    else f"{cell(got['f1_mean'])} | {cell(got['f1_harmonic'])}"
                )
                cells += [got["coverage"], got["precision"], f1]
            rows.append([s["run"], s["n_valid"], sum(s["errors"].values()), *cells])
        lines.append(rows_to_markdown(header, rows))
    return "\n".join(lines)


def run_score(args: argparse.Namespace) -> int:
    """Load rows and runs, score, print the summary; per-instance records on request."""
    from arbwb.contextbench import evaluate as cb
    from arbwb.io.checkout import corpus_source, first_source, repos_source
    from arbwb.io.contextbench import Predictions, load_rows
    from arbwb.io.contextbench_agents import load_predictions
    from arbwb.jsonio import sha256_file, write_jsonl, write_text_atomic

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
    corpus = None
    if args.corpus:
        from arbwb.io.corpus import open_corpus

        corpus = corpus_source(open_corpus(args.corpus))
    source = first_source(repos_source(args.repos) if args.repos else None, corpus)
    finder = None
    if args.symbols:
        from arbwb.contextbench.symbols import tree_sitter_finder

        try:
            finder = tree_sitter_finder()
        except ImportError as exc:
            raise InputError(str(exc), field="--symbols") from None
    scored = cb.score_predictions(list(runs.values()), rows, source=source, symbol_finder=finder)
    results = cb.results_frame(scored)
    aggregate = cb.aggregate(results)
    editloc = cb.aggregate_editloc(cb.editloc_frame(scored))
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
        inputs = [*args.predictions, args.rows]
        document = {
            "runs": summaries,
            "rows": {
                "path": args.rows,
                "n": rows.instances.height,
                "excluded": rows.excluded.height,
            },
            "inputs": [{"path": str(p), "sha256": sha256_file(p)} for p in inputs if _is_file(p)],
        }
        text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    else:
        text = _markdown(summaries)
    if args.out:
        write_text_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return 0


def _is_file(path: str) -> bool:
    from pathlib import Path

    return Path(path).is_file()
