"""``arbwb score``: per-run metric means (overall, per task, per group) from ranking files."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any

import polars as pl

from arbwb.aggregate import aggregate
from arbwb.errors import InputError
from arbwb.io.rankings import RunData, load_rankings
from arbwb.io.samples import SampleSet, load_samples, sample_files
from arbwb.jsonio import sha256_file, write_text_atomic
from arbwb.metrics import DEFAULT_METRICS, coverage, evaluate, parse_metric, snapshot_map


@dataclass(frozen=True)
class Scored:
    """One run's per-sample metrics with the sample frame and counts they came from."""

    run: RunData
    metrics: pl.DataFrame
    samples: pl.DataFrame
    counts: dict[str, int]


def add_parser(subparsers: Any) -> None:
    """Register ``arbwb score``."""
    parser = subparsers.add_parser(
        "score", help="score ranking files (ARB details, predictions, TREC, Parquet/CSV)"
    )
    parser.add_argument("rankings", nargs="+", help="ranking files, one run each")
    parser.add_argument("--samples", help="samples file or release folder (gold); else details")
    parser.add_argument(
        "--metrics",
        default=",".join(DEFAULT_METRICS),
        help="comma-separated metric names (default: %(default)s)",
    )
    parser.add_argument("--by", choices=("task", "repo", "split"), help="extra grouping")
    parser.add_argument("--format", choices=("json", "csv", "markdown"), default="json")
    parser.add_argument("--out", help="write here (atomically) instead of stdout")
    parser.add_argument("--corpus", help="corpus folder (needed for bcy@B metrics)")
    parser.set_defaults(func=run)


def _metric_names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    try:
        return [parse_metric(name).name for name in names] or list(DEFAULT_METRICS)
    except ValueError as exc:
        raise InputError(str(exc), field="--metrics") from None


def _check_known(run: RunData, samples: SampleSet, samples_path: str) -> None:
    """Every ranked sample id must exist in --samples (a typo would silently score 0)."""
    unknown = run.submitted.join(samples.samples, on="sample_id", how="anti")
    if unknown.height:
        row = unknown.row(0, named=True)
        msg = f"sample id {row['sample_id']!r} is not in --samples {samples_path}"
        raise InputError(msg, path=run.path, line=row["line"], field="sample_id")


def score_run(
    run: RunData, samples: SampleSet | None, metrics: list[str], corpus: Any, samples_path: str
) -> Scored:
    """Evaluate one run against --samples gold, or against the gold in its details rows."""
    if samples is not None:
        _check_known(run, samples, samples_path)
        labels, frame = samples.labels, samples.samples
    elif run.labels is not None and run.details is not None:
        labels, frame = run.labels, run.details
    else:
        msg = "this rankings format carries no gold; pass --samples with the sample file"
        raise InputError(msg, path=run.path)
    values = evaluate(
        run.rankings,
        labels,
        metrics=metrics,
        samples=frame,
        stored=run.stored,
        corpus=corpus,
        runs=[run.run],
    )
    counts = coverage(run.rankings, labels, frame, submitted=run.submitted).row(0, named=True)
    counted = {k: int(v) for k, v in counts.items() if k != "run"}
    if corpus is not None and any(parse_metric(m).family == "bcy" for m in metrics):
        from arbwb.budget import missing_snapshots

        missing = missing_snapshots(labels, corpus, snapshots=snapshot_map(frame))
        counted["n_missing_snapshot"] = missing.height
    return Scored(run, values, frame, counted)


def _grouped(scored: Scored, by: str) -> dict[str, dict[str, Any]]:
    table = aggregate(scored.metrics, scored.samples, by=by)
    out: dict[str, dict[str, Any]] = {}
    for row in table.iter_rows(named=True):
        group = out.setdefault(row[by], {"n": row["n"]})
        group[row["metric"]] = row["value"]
    return out


def _run_summary(scored: Scored, by: str | None) -> dict[str, Any]:
    overall = aggregate(scored.metrics)
    summary: dict[str, Any] = {
        "run": scored.run.run,
        "n": scored.counts["n_expected"],
        "n_missing": scored.counts["n_missing"],
        "n_error": scored.counts["n_error"],
        **{k: v for k, v in scored.counts.items() if k == "n_missing_snapshot"},
        "overall": dict(zip(overall["metric"], overall["value"], strict=True)),
        "by_task": _grouped(scored, "task"),
    }
    if by not in (None, "task"):
        summary[f"by_{by}"] = _grouped(scored, by)
    return summary


def _markdown(summaries: list[dict[str, Any]], metrics: list[str], by: str | None) -> str:
    """Leaderboard tables (4 decimals, spec §5.9): overall, then one per task / group."""
    sections: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = [
        ("overall", [(s["run"], {"n": s["n"], **s["overall"]}) for s in summaries])
    ]
    for key in ["by_task"] + ([f"by_{by}"] if by not in (None, "task") else []):
        groups = sorted({g for s in summaries for g in s[key]})
        for group in groups:
            rows = [(s["run"], s[key][group]) for s in summaries if group in s[key]]
            sections.append((f"{key.removeprefix('by_')}: {group}", rows))
    lines: list[str] = []
    for title, rows in sections:
        lines += [f"## {title}", "", "| run | n | " + " | ".join(metrics) + " |"]
        lines.append("|---|---:|" + "---:|" * len(metrics))
        for run, values in rows:
            cells = [_cell(values.get(m)) for m in metrics]
            lines.append(f"| {run} | {values['n']} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _csv(scored: list[Scored], by: str | None) -> str:
    """Long table: run, grouping, group, metric, n, value."""
    frames = [
        aggregate(s.metrics).select(
            "run",
            grouping=pl.lit("overall"),
            group=pl.lit("overall"),
            metric="metric",
            n="n",
            value="value",
        )
        for s in scored
    ]
    for key in ["task"] + ([by] if by not in (None, "task") else []):
        frames += [
            aggregate(s.metrics, s.samples, by=key).select(
                "run", grouping=pl.lit(key), group=key, metric="metric", n="n", value="value"
            )
            for s in scored
        ]
    return pl.concat(frames).write_csv()


def run(args: argparse.Namespace) -> int:
    """Load, score and print (or write) one summary for all given runs."""
    metrics = _metric_names(args.metrics)
    samples = load_samples(args.samples) if args.samples else None
    corpus = None
    if args.corpus:
        from arbwb.io.corpus import open_corpus

        corpus = open_corpus(args.corpus)
    runs: dict[str, RunData] = {}
    for path in args.rankings:
        data = load_rankings(path)
        if data.run in runs:
            msg = f"run name {data.run!r} also comes from {runs[data.run].path}; rename a file"
            raise InputError(msg, path=path)
        runs[data.run] = data
    scored = [score_run(r, samples, metrics, corpus, args.samples) for r in runs.values()]
    summaries = [_run_summary(s, args.by) for s in scored]
    inputs = [*args.rankings, *(sample_files(args.samples) if args.samples else [])]
    if args.format == "json":
        document = {
            "runs": summaries,
            "metrics": metrics,
            "inputs": [{"path": str(p), "sha256": sha256_file(p)} for p in inputs],
        }
        text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    else:
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
        text = (
            _markdown(summaries, metrics, args.by)
            if args.format == "markdown"
            else _csv(scored, args.by)
        )
    if args.out:
        write_text_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return 0
