"""Rank analysis (spec §13.3, §13.7, §13.8): ``arbwb depth`` calls :func:`build_report`;
notebook 08 calls :func:`run`, one report per comparison group plus examples and fusions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from arbwb.analysis import fusion_report
from arbwb.analysis import rank_analysis as ra
from arbwb.analysis.result import Table
from arbwb.errors import InputError
from arbwb.io.rankings import RunData
from arbwb.io.release import Release
from arbwb.io.runmeta import run_meta
from arbwb.tables import rows_to_markdown


@dataclass(frozen=True)
class DepthReport:
    """Every table of the rank analysis; given/fusion/ablation tables are None when their
    inputs (given labels, a ``rank_fusion`` run, a filtered run) are absent."""

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
    per = ra.per_sample(
        rankings,
        labels,
        samples,
        stored=pl.concat(stored) if stored else None,
        runs=list(runs),
        submitted=pl.concat([r.submitted for r in runs.values()]),
    )
    rows = ra.depth_rows(per, info.drop("components"))
    fusions = {
        r["run"]: r["components"] for r in info.iter_rows(named=True) if r["mode"] == "rank_fusion"
    }
    named = {c for components in fusions.values() for c in components} & set(runs)
    singles = sorted(named) or [name for name in runs if name not in fusions]
    has_given = (labels["role"] == "given").any()
    return DepthReport(
        per=per,
        depth_rows=rows,
        coverage=ra.cross_run_coverage(per),
        distribution=ra.coverage_distribution(per),
        all_miss=ra.all_miss_samples(per),
        given_top=ra.given_at_top(per, rankings, labels) if has_given else None,
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


def _hits(report: DepthReport) -> dict[str, dict[str, int]]:
    """Per task: samples by the number of runs hitting them at 20."""
    dist: dict[str, dict[str, int]] = {}
    for task, hits, n in report.distribution.iter_rows():
        dist.setdefault(task, {})[str(hits)] = n
    return dist


def to_json(report: DepthReport) -> dict[str, Any]:
    """The JSON document: upstream's ``depth_rows`` and ``cross_model_coverage``, then extras."""
    dist = _hits(report)
    extras = {
        "given_file_at_rank_1": report.given_top,
        "rank_fusion": report.fusion,
        "rank_fusion_reference": report.reference,
        "candidate_filter_ablation": report.ablation,
    }
    return {
        "depth_rows": report.depth_rows.to_dicts(),
        "cross_model_coverage": [
            {**row, "hit_model_count_distribution": dist.get(row["task"], {})}
            for row in report.coverage.to_dicts()
        ],
        "all_models_miss@20": report.all_miss.to_dicts(),
        **{k: None if frame is None else frame.to_dicts() for k, frame in extras.items()},
        "runs": report.info.to_dicts(),
    }


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
        lines += [rows_to_markdown(header, [list(r) for r in part.select(cols).iter_rows()]), ""]
    dist = {t: " ".join(f"{h}:{n}" for h, n in hits.items()) for t, hits in _hits(report).items()}
    lines += ["## Cross-run coverage at 20", ""]
    header = ["Task", "Samples", "Runs", "All miss@20", "Any hit@20", "Runs hitting: samples"]
    coverage = [[*r, dist.get(r[0], "")] for r in report.coverage.iter_rows()]
    lines += [rows_to_markdown(header, coverage), ""]
    for title, frame in (
        ("Rank fusion (spec 13.7)", report.fusion),
        ("Rank fusion component reference", report.reference),
        ("Candidate-filter ablation (spec 13.8, diagnostic)", report.ablation),
    ):
        if frame is not None:
            lines += [f"## {title}", ""]
            bare = fusion_report.methods_without_base(frame)
            if bare:
                lines += [f"No all_files run for {', '.join(bare)}: their deltas are n/a.", ""]
            lines += [rows_to_markdown(frame.columns, [list(r) for r in frame.iter_rows()]), ""]
    return "\n".join(lines)


#: Depth-row columns notebook 08 shows and records (the full rows go to the table).
SHOWN = [
    "run", "mode", "task", "samples", "unanswered", "missing_first_gold_rank",
    "median_first_gold_rank_hit_only", "p90_first_gold_rank_hit_only", "mean_mrr",
    "any_gold@1", "any_gold@5", "any_gold@20", "any_gold@50",
]  # fmt: skip
RECORDED = [*SHOWN[3:], "gold_recall@20"]
QUERY_CHARS = 160  # query text shown beside an all-miss sample


@dataclass(frozen=True)
class DepthOptions:
    """``fuse_runs``: arbwb-made RRF of stored runs of one group (spec §8, k = 60), written
    ``"a+b;a+c"``; each fusion is named ``arbwb:rrf_a_b``."""

    fuse_runs: str = ""


@dataclass(frozen=True)
class GroupDepth:
    """One comparison group's report, its all-miss examples (with gold files and the query's
    first characters) and the arbwb-made fusion tables."""

    report: DepthReport
    misses: pl.DataFrame
    made: dict[str, pl.DataFrame] = field(default_factory=dict)

    @property
    def miss_line(self) -> str:
        """How many samples every run of the group misses at 20."""
        if self.misses.is_empty():
            return "every sample is hit at rank <= 20 by at least one run"
        runs = self.report.per["run"].n_unique()
        return f"{self.misses.height} samples missed by all {runs} runs"

    @property
    def trap_counts(self) -> dict[str, int] | None:
        """(run, sample) pairs with a given file at rank 1, and how many of them are traps."""
        top = self.report.given_top
        return None if top is None else {"pairs": top.height, "traps": int(top["trap"].sum())}

    @property
    def trap_line(self) -> str:
        """:attr:`trap_counts` as a sentence, or why there are none."""
        counts = self.trap_counts
        if counts is None:
            return "no given-file labels (no benchmark samples), so traps cannot be shown"
        pairs, traps = counts["pairs"], counts["traps"]
        return f"{pairs} (run, sample) pairs put a given file at rank 1; {traps} are traps"

    @property
    def traps(self) -> pl.DataFrame | None:
        """Given-file traps at rank 1, else every rank-1 given file; None without given labels."""
        top = self.report.given_top
        if top is None:
            return None
        traps = top.filter(pl.col("trap"))
        return traps if traps.height else top


@dataclass(frozen=True)
class DepthResult:
    """Per-group rank analysis of a release; ``skipped`` when it holds no runs, ``problems``
    the ``fuse_runs`` entries left out (runs of several groups)."""

    groups: dict[str, GroupDepth]
    runs: list[str]
    notes: list[str]
    skipped: str | None = None
    problems: list[str] = field(default_factory=list)

    def tables(self) -> Sequence[Table]:
        """Every group's tables, named ``<group>__<table>``; absent parts write nothing."""
        out: list[Table] = []
        for group, part in self.groups.items():
            report = part.report
            out += [
                Table(f"{group}__depth_rows", report.depth_rows.drop("source")),
                Table(f"{group}__coverage", report.coverage),
                Table(f"{group}__coverage_distribution", report.distribution),
                Table(f"{group}__all_miss", part.misses),
            ]
            if report.given_top is not None:
                out.append(Table(f"{group}__given_at_rank_1", report.given_top))
            if report.fusion is not None and report.reference is not None:
                out.append(Table(f"{group}__rank_fusion", report.fusion))
                out.append(
                    Table(f"{group}__rank_fusion_reference", report.reference.drop("source"))
                )
            out += [Table(f"{group}__{name.replace(':', '_')}", t) for name, t in part.made.items()]
            if report.ablation is not None:
                out.append(Table(f"{group}__ablation", report.ablation))
        return out

    def records(self) -> Mapping[str, Any]:
        """Depth, coverage, misses, traps, fusion and ablation rows keyed ``<group>/...``."""
        reports = {g: part.report for g, part in self.groups.items()}
        out: dict[str, Any] = {
            "notes": self.notes,
            "runs": self.runs,
            "depth": {
                f"{g}/{row['run']}/{row['task']}": {k: row[k] for k in RECORDED}
                for g, r in reports.items()
                for row in r.depth_rows.iter_rows(named=True)
            },
            "coverage": {
                f"{g}/{row['task']}": row
                for g, r in reports.items()
                for row in r.coverage.to_dicts()
            },
            "all_miss": {g: r.all_miss["sample_id"].to_list() for g, r in reports.items()},
            "given_at_rank_1": {g: part.trap_counts for g, part in self.groups.items()},
            "rank_fusion": _keyed(
                {g: r.fusion for g, r in reports.items() if r.fusion is not None}, ["fusion"]
            ),
            "arbwb_fusion": {
                f"{g}/{name}/{row['task']}": row
                for g, part in self.groups.items()
                for name, table in part.made.items()
                for row in table.to_dicts()
            },
            "ablation": _keyed(
                {g: r.ablation for g, r in reports.items() if r.ablation is not None},
                ["method", "candidate_filter"],
            ),
        }
        if self.skipped is not None:
            out["skipped"] = self.skipped
        return out


def _keyed(frames: Mapping[str, pl.DataFrame], keys: list[str]) -> dict[str, Any]:
    """Rows of each group's frame keyed ``<group>/<key columns...>/<task>``."""
    return {
        "/".join([g, *(str(row[k]) for k in keys), row["task"]]): row
        for g, frame in frames.items()
        for row in frame.to_dicts()
    }


def run(release: Release, options: DepthOptions) -> DepthResult:
    """One :class:`DepthReport` per comparison group plus example slices; ``fuse_runs``
    fusions are built in the group holding all their runs."""
    given = release.labels.filter(pl.col("role") == "given")
    query = pl.col("query_text").str.slice(0, QUERY_CHARS)
    queries = release.samples.select("sample_id", query=query)
    made, problems = _fusions(release, options.fuse_runs)
    groups: dict[str, GroupDepth] = {}
    for group, members in release.groups.items():
        gold = release.gold[group]
        runs = {name: release.runs[name] for name in members}
        report = build_report(runs, pl.concat([gold, given]), release.samples)
        gold_files = (
            gold.unique(["sample_id", "path"], maintain_order=True)
            .group_by("sample_id", maintain_order=True)
            .agg(gold_files=pl.col("path").str.join(", "))
        )
        misses = report.all_miss.join(gold_files, on="sample_id", how="left")
        misses = misses.join(queries, on="sample_id", how="left")
        groups[group] = GroupDepth(report, misses, made.get(group, {}))
    where = release.root if release.root is not None else "this release"
    return DepthResult(
        groups=groups,
        runs=sorted(release.runs),
        notes=release.notes,
        skipped=None if groups else f"no runs found under {where}",
        problems=problems,
    )


def _fusions(release: Release, spec: str) -> tuple[dict[str, dict[str, pl.DataFrame]], list[str]]:
    """Fusion tables of each ``a+b`` of ``spec`` by group (the one holding all its runs), and
    the entries left out because no group holds all their runs."""
    made: dict[str, dict[str, pl.DataFrame]] = {}
    problems = []
    for entry in [s.strip() for s in spec.split(";") if s.strip()]:
        parts = [p.strip() for p in entry.split("+")]
        group = next((g for g, runs in release.groups.items() if set(parts) <= set(runs)), None)
        if group is None:
            problems.append(f"fuse_runs: {entry!r} names runs that are not all in one group")
            continue
        name = "arbwb:rrf_" + "_".join(parts)
        rankings = pl.concat([release.runs[p].rankings for p in parts])
        fused = fusion_report.fuse(rankings, parts, name=name)
        fusions = {name: parts}
        table = fusion_report.fusion_table(fused, release.gold[group], release.samples, fusions)
        made.setdefault(group, {})[name] = table
    return made, problems
