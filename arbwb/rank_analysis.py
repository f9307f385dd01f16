"""Rank analysis of a set of runs on one sample universe: every table of spec §13.3, §13.7, §13.8.

``arbwb depth`` and notebook 08 call :func:`build_report` once per comparison group; the
tables themselves come from :mod:`arbwb.depth` and :mod:`arbwb.fusion_report`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from arbwb import depth, fusion_report
from arbwb.io.rankings import RunData
from arbwb.io.runmeta import run_meta


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
    stored = [r.stored for r in runs.values() if r.stored is not None]
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
