"""Rank analysis of a set of runs on one sample universe: every table of spec §13.3, §13.7, §13.8.

``arbwb depth`` and notebook 08 call :func:`build_report` once per comparison group; the
tables themselves come from :mod:`arbwb.analysis.depth` and :mod:`arbwb.analysis.fusion_report`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from arbwb.analysis import depth, fusion_report
from arbwb.errors import InputError
from arbwb.io.rankings import RunData
from arbwb.io.runmeta import run_meta
from arbwb.tables import rows_to_markdown


@dataclass(frozen=True)
class DepthReport:
    """Every table of the rank analysis; given/fusion/ablation tables are None when absent.

    ``given_top`` needs ``given`` labels (benchmark samples); ``fusion`` and ``reference`` need
    a run whose mode is ``rank_fusion``; ``ablation`` a run with a filter other than all_files.
    """

    per: pl.DataFrame
    depth_rows: pl.DataFrame
    coverage: pl.DataFrame
    distribution: pl.DataFrame
    all_miss: pl.DataFrame
    given_top: pl.DataFrame | None
    fusion: pl.DataFrame | None
    reference: pl.DataFrame | None
    ablation: pl.DataFrame | None
    info: pl.DataFrame


def run_info(runs: Mapping[str, RunData]) -> pl.DataFrame:
    """run, mode, candidate_filter, method, source for each run (summary beside the file)."""
    rows = []
    for name, data in runs.items():
        meta = run_meta(data.path, name)
        rows.append(
            {
                "run": name,
                "mode": meta.mode,
                "candidate_filter": meta.candidate_filter,
                "method": meta.method,
                "components": list(meta.components),
                "source": data.path,
            }
        )
    return pl.DataFrame(rows, schema_overrides={"components": pl.List(pl.String)})


def build_report(
    runs: Mapping[str, RunData], labels: pl.DataFrame, samples: pl.DataFrame
) -> DepthReport:
    """All tables for ``runs`` scored on ``labels`` gold (samples give task and repo)."""
    info = run_info(runs)
    rankings = pl.concat([r.rankings for r in runs.values()])
    stored = [s for s in (r.stored_for(labels) for r in runs.values()) if s is not None]
    per = depth.per_sample(
        rankings,
        labels,
        samples,
        stored=pl.concat(stored) if stored else None,
        runs=list(runs),
        submitted=pl.concat([r.submitted for r in runs.values()]),
    )
    rows = depth.depth_rows(per, info.drop("components"))
    fusions = {
        r["run"]: r["components"] for r in info.iter_rows(named=True) if r["mode"] == "rank_fusion"
    }
    named = {c for components in fusions.values() for c in components} & set(runs)
    singles = sorted(named) or [name for name in runs if name not in fusions]
    has_given = (labels["role"] == "given").any()
    return DepthReport(
        per=per,
        depth_rows=rows,
        coverage=depth.cross_run_coverage(per),
        distribution=depth.coverage_distribution(per),
        all_miss=depth.all_miss_samples(per),
        given_top=depth.given_at_top(per, rankings, labels) if has_given else None,
        fusion=fusion_report.fusion_table(rankings, labels, samples, fusions) if fusions else None,
        reference=fusion_report.reference_table(rows, singles) if fusions else None,
        ablation=fusion_report.ablation_table(rows) if fusion_report.has_ablation(info) else None,
        info=info,
    )


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


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    return [rows_to_markdown(header, rows), ""]


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
