"""``arbwb depth``: first-gold depth, cross-run coverage, fusion and ablation (spec §13.3-13.8)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from arbwb.errors import InputError
from arbwb.io.rankings import RunData, load_rankings

if TYPE_CHECKING:
    from arbwb.rank_analysis import DepthReport


def add_parser(subparsers: Any) -> None:
    """Register ``arbwb depth``."""
    parser = subparsers.add_parser(
        "depth", help="first-gold depth per run and task, and cross-run coverage (spec 13.3)"
    )
    parser.add_argument("runs", nargs="+", help="ARB details files (or other rankings), one each")
    parser.add_argument("--samples", help="samples file or release folder (gold); else details")
    parser.add_argument("--format", choices=("json", "markdown"), default="json")
    parser.add_argument("--out", help="write here (atomically) instead of stdout")
    parser.set_defaults(func=run)


def _load(paths: list[str]) -> dict[str, RunData]:
    runs: dict[str, RunData] = {}
    for path in paths:
        data = load_rankings(path)
        if data.run in runs:
            msg = f"run name {data.run!r} also comes from {runs[data.run].path}; rename a file"
            raise InputError(msg, path=path)
        runs[data.run] = data
    return runs


def details_gold(runs: dict[str, RunData]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Gold LABELS and sample rows from the runs' details; the first run naming a sample wins."""
    with_gold = [(i, r) for i, r in enumerate(runs.values()) if r.labels is not None]
    if not with_gold:
        first = next(iter(runs.values()))
        msg = "these rankings carry no gold; pass --samples with the sample file"
        raise InputError(msg, path=first.path)
    labels = pl.concat(
        [r.labels.with_columns(order=pl.lit(i)) for i, r in with_gold if r.labels is not None]
    )
    owner = labels.group_by("sample_id").agg(order=pl.col("order").min())
    gold = labels.join(owner, on=["sample_id", "order"], how="semi").drop("order")
    details = [r.details for _, r in with_gold if r.details is not None]
    samples = pl.concat(details).unique("sample_id", keep="first", maintain_order=True)
    return gold, samples


def _check_known(run: RunData, samples: pl.DataFrame, source: str) -> None:
    """Every ranked sample id must exist in --samples (a typo would silently count as a miss)."""
    unknown = run.submitted.join(samples, on="sample_id", how="anti")
    if unknown.height:
        row = unknown.row(0, named=True)
        msg = f"sample id {row['sample_id']!r} is not in --samples {source}"
        raise InputError(msg, path=run.path, line=row["line"], field="sample_id")


def _records(frame: pl.DataFrame | None) -> list[dict[str, Any]] | None:
    return None if frame is None else frame.to_dicts()


def to_json(report: DepthReport) -> dict[str, Any]:
    """The JSON document: upstream's ``depth_rows`` and ``cross_model_coverage``, then extras."""
    dist: dict[str, dict[str, int]] = {}
    for task, hits, n in report.distribution.iter_rows():
        dist.setdefault(task, {})[str(hits)] = n
    coverage = [
        {**row, "hit_model_count_distribution": dist.get(row["task"], {})}
        for row in report.coverage.to_dicts()
    ]
    doc: dict[str, Any] = {
        "depth_rows": report.depth_rows.to_dicts(),
        "cross_model_coverage": coverage,
        "all_models_miss@20": report.all_miss.to_dicts(),
        "given_file_at_rank_1": _records(report.given_top),
        "rank_fusion": _records(report.fusion),
        "rank_fusion_reference": _records(report.reference),
        "candidate_filter_ablation": _records(report.ablation),
        "runs": report.info.to_dicts(),
    }
    return doc


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return [*lines, ""]


def to_markdown(report: DepthReport) -> str:
    """Spec §13.3's per-task depth tables and coverage, then §13.7 / §13.8 when present."""
    lines: list[str] = []
    cols = ["run", "mode", "any_gold@1", "any_gold@5", "any_gold@10", "any_gold@20"]
    cols += ["any_gold@50", "median_first_gold_rank_hit_only", "missing_first_gold_rank"]
    cols += ["mean_mrr", "mean_gold_coverage@8k"]
    header = ["Model", "Mode", "Any@1", "Any@5", "Any@10", "Any@20", "Any@50"]
    header += ["Median Hit Rank", "Misses", "MRR", "Gold@8k"]
    rows = report.depth_rows
    for task in rows["task"].unique(maintain_order=True).to_list():
        part = rows.filter(pl.col("task") == task).sort("mean_mrr", "run", descending=[True, False])
        lines += [f"## First-gold depth: {task}", ""]
        lines += _table(header, [list(r) for r in part.select(cols).iter_rows()])
    dist: dict[str, list[str]] = {}
    for task, hits, n in report.distribution.iter_rows():
        dist.setdefault(task, []).append(f"{hits}:{n}")
    lines += ["## Cross-run coverage at 20", ""]
    lines += _table(
        ["Task", "Samples", "Runs", "All miss@20", "Any hit@20", "Runs hitting: samples"],
        [[*r, " ".join(dist.get(r[0], []))] for r in report.coverage.iter_rows()],
    )
    for title, frame in (
        ("Rank fusion (spec 13.7)", report.fusion),
        ("Rank fusion component reference", report.reference),
        ("Candidate-filter ablation (spec 13.8, diagnostic)", report.ablation),
    ):
        if frame is not None:
            lines += [f"## {title}", ""]
            if "delta_mrr_vs_all_files" in frame.columns:
                bare = frame.filter(pl.col("delta_mrr_vs_all_files").is_null())["method"]
                if bare.len():
                    names = ", ".join(bare.unique(maintain_order=True).to_list())
                    lines += [f"No all_files run for {names}: their deltas are n/a.", ""]
            lines += _table(frame.columns, [list(r) for r in frame.iter_rows()])
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Load the runs, build every table and print (or write) JSON or Markdown."""
    from arbwb.jsonio import sha256_file, write_text_atomic

    runs = _load(args.runs)
    if args.samples:
        from arbwb.io.samples import load_samples

        sample_set = load_samples(args.samples)
        for data in runs.values():
            _check_known(data, sample_set.samples, args.samples)
        labels, samples = sample_set.labels, sample_set.samples
    else:
        labels, samples = details_gold(runs)
    from arbwb.rank_analysis import build_report

    report = build_report(runs, labels, samples)
    if args.format == "json":
        doc = to_json(report)
        doc["inputs"] = [{"path": p, "sha256": sha256_file(p)} for p in args.runs]
        text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    else:
        text = to_markdown(report)
    if args.out:
        write_text_atomic(Path(args.out), text)
    else:
        sys.stdout.write(text)
    return 0
