"""Span granularity (spec §11): gold-file sizes, span density and the file-vs-line diagnostic,
with arbwb-defined intervals (docs/granularity.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from arbwb.analysis import spanyield
from arbwb.analysis.result import Resampling, Table
from arbwb.errors import InputError
from arbwb.io.corpus import Corpus
from arbwb.io.release import Release
from arbwb.metrics.aggregate import percentile
from arbwb.metrics.budget import DEFAULT_BUDGETS
from arbwb.metrics.intervals import merge_intervals
from arbwb.tables import rows_to_markdown

TASKS = ("code2test", "comment2context", "trace2code", "edit2ripple")
#: Tasks with span gold (spec §2.5); span density covers these (spec §11 "core samples").
CORE_TASKS = ("code2test", "comment2context", "trace2code")
LINE_THRESHOLDS = (500, 1000, 2000, 5000)
RATIO_THRESHOLDS = ("0.10", "0.25")
MISSING_MANIFEST = "missing_manifest"
MISSING_PATH = "missing_path"

SIZES: dict[str, type[pl.DataType]] = {
    "sample_id": pl.String,
    "task": pl.String,
    "repo": pl.String,
    "base_commit": pl.String,
    "snapshot_id": pl.String,
    "path": pl.String,
    "file_lines": pl.Int64,  # null when unresolved
    "reason": pl.String,  # null, missing_manifest or missing_path
}
DENSITY: dict[str, type[pl.DataType]] = {
    "sample_id": pl.String,
    "task": pl.String,
    "path": pl.String,
    "evidence_lines": pl.Int64,
    "file_lines": pl.Int64,
    "ratio": pl.Float64,
}
_LINES = {"snapshot_id": pl.String, "path": pl.String, "file_lines": pl.Int64}
UNRESOLVED: dict[str, type[pl.DataType]] = {
    "repo": pl.String,
    "base_commit": pl.String,
    "path": pl.String,
    "reason": pl.String,
    "occurrences": pl.Int64,  # sample-gold occurrences of the file (arbwb-defined)
}


def distribution(values: Sequence[float]) -> dict[str, float | None]:
    """{count, min, median, p75, p90, p95, max} under the granularity percentile rule."""
    return {
        "count": len(values),
        "min": min(values) if values else None,
        "median": percentile(values, 0.5),
        "p75": percentile(values, 0.75),
        "p90": percentile(values, 0.9),
        "p95": percentile(values, 0.95),
        "max": max(values) if values else None,
    }


def fraction_over_lines(
    values: Sequence[int], thresholds: Sequence[int] = LINE_THRESHOLDS
) -> dict[str, float | None]:
    """Share of values strictly greater than each threshold (null without values)."""
    return {
        str(t): sum(1 for v in values if v > t) / len(values) if values else None
        for t in thresholds
    }


def fraction_ratio_at_most(
    ratios: Sequence[float], thresholds: Sequence[str] = RATIO_THRESHOLDS
) -> dict[str, float | None]:
    """Share of evidence/file ratios ≤ each threshold (keys as written, e.g. ``"0.10"``)."""
    return {
        t: sum(1 for r in ratios if r <= float(t)) / len(ratios) if ratios else None
        for t in thresholds
    }


def merged_line_count(intervals: Iterable[tuple[int, int]]) -> int:
    """Lines covered by the valid intervals (start ≥ 1, end ≥ start) after merging (§5.8)."""
    valid = [(s, e) for s, e in intervals if s >= 1 and e >= s]
    return sum(e - s + 1 for s, e in merge_intervals(valid))


def line_counts(corpus: Corpus, wanted: Mapping[str, Iterable[str]]) -> pl.DataFrame:
    """(snapshot_id, path, file_lines) of the wanted paths, one snapshot at a time; an unknown
    or unreadable snapshot has no rows, so its paths are ``missing_path`` (spec §0)."""
    frames = [pl.DataFrame(schema=_LINES)]
    absent = set(missing_chunk_files(corpus, wanted))
    for sid in sorted(wanted):
        if corpus.has(sid) and sid not in absent:
            counts = corpus.line_counts(sid, wanted[sid])
            frames.append(counts.select(pl.lit(sid).alias("snapshot_id"), "path", "file_lines"))
    return pl.concat(frames)


def missing_chunk_files(corpus: Corpus, snapshot_ids: Iterable[str]) -> list[str]:
    """Snapshots the manifest lists as usable whose chunk file cannot be found (arbwb note)."""
    missing = []
    for sid in sorted(set(snapshot_ids)):
        if corpus.has(sid):
            try:
                corpus.chunk_path(sid)
            except InputError:
                missing.append(sid)
    return missing


def positive_samples(samples: pl.DataFrame) -> pl.DataFrame:
    """The positive samples (stratum ``positive``): the population of spec §11."""
    return samples.filter(pl.col("stratum") == "positive")


def _core(samples: pl.DataFrame) -> pl.DataFrame:
    """Positive samples of the core tasks (the span population of spec §11)."""
    return positive_samples(samples).filter(pl.col("task").is_in(CORE_TASKS))


def _valid_spans(spans: pl.DataFrame) -> pl.DataFrame:
    """Gold-span rows with start >= 1 and end >= start."""
    start, end = pl.col("start_line"), pl.col("end_line")
    return spans.filter(pl.col("kind") == "span", start >= 1, end >= start)


def gold_file_sizes(samples: pl.DataFrame, labels: pl.DataFrame, corpus: Corpus) -> pl.DataFrame:
    """One SIZES row per positive sample-gold occurrence: its line count, or why it has none
    (``missing_manifest``, ``missing_path``; null ``file_lines``)."""
    positives = positive_samples(samples).select(
        "sample_id", "task", "repo", "base_commit", "snapshot_id"
    )
    occurrences = positives.join(
        labels.filter(pl.col("role") == "gold").select("sample_id", "path"),
        on="sample_id",
        maintain_order="left",
    )
    by_snapshot = occurrences.group_by("snapshot_id").agg("path").iter_rows()
    counts = line_counts(corpus, {sid: set(paths) for sid, paths in by_snapshot}).filter(
        pl.col("file_lines") > 0
    )
    known = pl.col("snapshot_id").is_in(pl.Series(corpus.snapshot_ids(), dtype=pl.String).implode())
    frame = occurrences.join(
        counts, on=["snapshot_id", "path"], how="left", maintain_order="left"
    ).with_columns(
        reason=pl.when(~known)
        .then(pl.lit(MISSING_MANIFEST))
        .when(pl.col("file_lines").is_null())
        .then(pl.lit(MISSING_PATH))
    )
    return frame.select(list(SIZES))


def _groups(samples: pl.DataFrame, tasks: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(group name, tasks) for each listed task present among ``samples``, then ``overall``."""
    present = set(samples["task"].to_list())
    return [(t, [t]) for t in tasks if t in present] + [("overall", list(tasks))]


def file_size_summary(sizes: pl.DataFrame, samples: pl.DataFrame) -> dict[str, Any]:
    """``file_sizes`` of spec §11 per task (in TASKS order, when present) and ``overall``."""
    positives = positive_samples(samples)
    tasks = [*TASKS, *sorted(set(positives["task"].to_list()) - set(TASKS))]
    out: dict[str, Any] = {}
    for name, members in _groups(positives, tasks):
        in_group = pl.col("task").is_in(members)
        lines = sizes.filter(in_group & pl.col("file_lines").is_not_null())["file_lines"].to_list()
        out[name] = {
            "samples": positives.filter(in_group).height,
            "gold_file_occurrences": len(lines),
            "file_lines": distribution(lines),
            "fraction_over_lines": fraction_over_lines(lines),
        }
    return out


def span_density(samples: pl.DataFrame, spans: pl.DataFrame, sizes: pl.DataFrame) -> pl.DataFrame:
    """DENSITY rows (spec §11): per core positive sample and valid gold-span path with a known
    line count, merged evidence lines, file lines and their ratio."""
    core = _core(samples)
    known = (
        sizes.filter(pl.col("file_lines").is_not_null())
        .select("snapshot_id", "path", "file_lines")
        .unique(["snapshot_id", "path"], keep="first")
    )
    valid = _valid_spans(spans)
    pairs = (
        core.select("sample_id", "task", "snapshot_id")
        .join(valid, on="sample_id", maintain_order="left")
        .group_by("sample_id", "task", "snapshot_id", "path", maintain_order=True)
        .agg(starts=pl.col("start_line"), ends=pl.col("end_line"))
        .join(known, on=["snapshot_id", "path"], maintain_order="left")
    )
    evidence = [
        merged_line_count(zip(starts, ends, strict=True))
        for starts, ends in pairs.select("starts", "ends").iter_rows()
    ]
    frame = pairs.with_columns(pl.Series("evidence_lines", evidence, dtype=pl.Int64))
    return frame.with_columns(ratio=pl.col("evidence_lines") / pl.col("file_lines")).select(
        list(DENSITY)
    )


def span_summary(
    density: pl.DataFrame, samples: pl.DataFrame, spans: pl.DataFrame
) -> dict[str, Any]:
    """``span_evidence`` of spec §11 per core task and ``overall`` (``samples_with_spans``:
    core positive samples with a valid gold span)."""
    core = _core(samples)
    with_spans = core.join(_valid_spans(spans).select("sample_id"), on="sample_id", how="semi")
    out: dict[str, Any] = {}
    for name, members in _groups(core, CORE_TASKS):
        in_group = pl.col("task").is_in(members)
        rows = density.filter(in_group)
        ratios = rows["ratio"].to_list()
        out[name] = {
            "samples": core.filter(in_group).height,
            "samples_with_spans": with_spans.filter(in_group).height,
            "span_file_occurrences": rows.height,
            "evidence_lines": distribution(rows["evidence_lines"].to_list()),
            "evidence_ratio": distribution(ratios),
            "fraction_ratio_at_most": fraction_ratio_at_most(ratios),
        }
    return out


def unresolved(sizes: pl.DataFrame) -> pl.DataFrame:
    """Unresolved gold files as upstream lists them: one row per (repo, base_commit, path),
    in first-occurrence order, with its reason and ``occurrences`` (sample-gold occurrences
    of the entry; arbwb-defined)."""
    return (
        sizes.filter(pl.col("reason").is_not_null())
        .group_by("repo", "base_commit", "path", maintain_order=True)
        .agg(pl.col("reason").first(), pl.len().cast(pl.Int64).alias("occurrences"))
        .select(list(UNRESOLVED))
    )


@dataclass(frozen=True)
class Analysis:
    """The granularity frames (SIZES, DENSITY, spanyield.PACKING) and, per run, whether it
    was re-ranked and how that went."""

    sizes: pl.DataFrame
    density: pl.DataFrame
    packing: pl.DataFrame
    plans: dict[str, spanyield.Rerank]
    checks: dict[str, spanyield.Checks]


_SIZE_HEADER = (
    *("Task", "Samples", "Gold files", "Median lines", "P90", "P95", "Max"),
    *(">500", ">1k", ">2k", ">5k"),
)
_SPAN_HEADER = (
    *("Task", "Samples with spans", "Span-file pairs", "Median evidence lines", "P90"),
    *("Median evidence/file", "<=10% of file", "<=25% of file"),
)
_METHOD_HEADER = (
    *("Method", "n", "File R@20", "File exposure@8k chars"),
    *("Line recall", "Line precision", "Line F1"),
)
_PACKING_HEADER = (
    *("Run", "Packing", "Budget", "n", "Line recall", "Line precision", "Line F1"),
    "Yielded lines",
)


def _int(value: float | None) -> str:
    return "--" if value is None else f"{value:.0f}"


def _pct(value: float | None) -> str:
    return "--" if value is None else f"{100 * value:.1f}%"


def _metric(value: float | None) -> str:
    return "--" if value is None else f"{value:.4f}"


def markdown(result: Mapping[str, Any]) -> str:
    """The three tables of spec §13.5 and the unresolved-file warning, then arbwb's
    re-ranked line packing (labelled arbwb-defined)."""
    size_rows = (
        [task, str(samples), str(files), *map(_int, row[:4]), *map(_pct, row[4:])]
        for task, samples, files, *row in file_size_table(result).iter_rows()
    )
    span_rows = (
        [task, f"{spans}/{samples}", str(pairs), _int(median), _int(p90), *map(_pct, shares)]
        for task, samples, spans, pairs, median, p90, *shares in span_table(result).iter_rows()
    )
    method_rows = (
        [r["method"], str(r["samples"])]
        + [_metric(r[k]) for k in ("file_recall@20", "file_exposure@8k_chars")]
        + [_metric(r[f"line_{k}@8k_chars"]) for k in ("recall", "precision", "f1")]
        for r in result["method_sensitivity"]
    )
    parts = [
        "## Gold file size (lines)\n",
        rows_to_markdown(_SIZE_HEADER, size_rows),
        "## Span evidence density\n",
        rows_to_markdown(_SPAN_HEADER, span_rows),
        "## File-level vs line-level (legacy 8,000-character packing)\n",
        rows_to_markdown(_METHOD_HEADER, method_rows),
    ]
    if result["unresolved"]:
        parts.append(_warning(result))
    packing = result.get("arbwb", {}).get("line_packing", [])
    if packing:
        packing_rows = (
            [r["run"], r["packing"], str(r["budget"]), str(r["samples"])]
            + [_metric(r[k]) for k in ("line_recall", "line_precision", "line_f1")]
            + [f"{r['overlap_lines']:.1f}"]
            for r in packing
        )
        parts += [
            "## Re-ranked line packing and span yield (arbwb-defined)\n",
            rows_to_markdown(_PACKING_HEADER, packing_rows),
        ]
    return "\n".join(parts)


def _warning(result: Mapping[str, Any]) -> str:
    """Upstream's warning line: unique unresolved files by reason, plus their occurrences."""
    missing = result["unresolved"]
    reasons = sorted({r["reason"] for r in missing})
    counts = ", ".join(f"{x}: {sum(r['reason'] == x for r in missing)}" for x in reasons)
    occurrences = result.get("arbwb", {}).get("unresolved_occurrences")
    extra = "" if occurrences is None else f"; {occurrences} sample-gold occurrences"
    return (
        f"Warning: {len(missing)} gold files (repo, commit, path) unresolved ({counts}{extra}).\n"
    )


def file_size_table(result: Mapping[str, Any]) -> pl.DataFrame:
    """Spec §13.5 table (1) as a frame (full precision; fractions as shares, not percent)."""
    rows = [
        {"task": name, "samples": grp["samples"], "gold_files": grp["gold_file_occurrences"]}
        | {k: grp["file_lines"][k] for k in ("median", "p90", "p95", "max")}
        | {f">{t}": grp["fraction_over_lines"][str(t)] for t in LINE_THRESHOLDS}
        for name, grp in result["file_sizes"].items()
    ]
    return pl.DataFrame(rows, infer_schema_length=None)


def span_table(result: Mapping[str, Any]) -> pl.DataFrame:
    """Spec §13.5 table (2) as a frame (full precision; shares, not percent)."""
    rows = [
        {
            "task": name,
            "samples": grp["samples"],
            "samples_with_spans": grp["samples_with_spans"],
            "span_file_pairs": grp["span_file_occurrences"],
            "median_evidence_lines": grp["evidence_lines"]["median"],
            "p90_evidence_lines": grp["evidence_lines"]["p90"],
            "median_evidence_ratio": grp["evidence_ratio"]["median"],
        }
        | {f"ratio<={t}": grp["fraction_ratio_at_most"][t] for t in RATIO_THRESHOLDS}
        for name, grp in result["span_evidence"].items()
    ]
    return pl.DataFrame(rows, infer_schema_length=None)


@dataclass(frozen=True)
class GranularityOptions:
    """Token budgets of the span-yield packing, whether arbwb's baselines are re-ranked,
    bootstrap settings, and the data folder named in skip reasons."""

    budgets: Sequence[int] = DEFAULT_BUDGETS
    rerank: bool = True
    resampling: Resampling = field(default_factory=Resampling)
    data_dir: str = ""


@dataclass(frozen=True)
class GranularityResult:
    """The granularity report (``report``, the CLI's JSON) and the frames notebook 03 shows;
    ``skipped`` says why there is nothing (then every frame is empty)."""

    skipped: str | None
    analysis: Analysis | None = None
    report: Mapping[str, Any] = field(default_factory=dict)
    file_sizes: pl.DataFrame = field(default_factory=pl.DataFrame)
    evidence_density: pl.DataFrame = field(default_factory=pl.DataFrame)
    methods: pl.DataFrame = field(default_factory=pl.DataFrame)
    reranked: pl.DataFrame = field(default_factory=pl.DataFrame)
    line_packing: pl.DataFrame = field(default_factory=pl.DataFrame)
    unresolved: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=UNRESOLVED))

    @property
    def tasks(self) -> list[str]:
        """The tasks of :data:`TASKS` that have positive samples, in that order."""
        return [t for t in TASKS if t in self.report.get("file_sizes", {})]

    @property
    def not_span_capable(self) -> list[str]:
        """Runs whose stored line metrics predict no lines (no line-level numbers)."""
        return [
            r["method"] for r in self.report.get("method_sensitivity", []) if not r["span_capable"]
        ]

    def tables(self) -> list[Table]:
        """Spec §13.5 tables (1)-(3), then the re-ranked line packing when there is one."""
        if self.skipped:
            return []
        tables = [
            Table("gold_file_size", self.file_sizes),
            Table("evidence_density", self.evidence_density),
            Table("method_sensitivity", self.methods),
        ]
        return tables + (
            [Table("line_packing", self.line_packing)] if self.line_packing.height else []
        )

    def records(self) -> dict[str, Any]:
        """Notebook 03's key numbers; ``unresolved`` counts unique files as upstream does."""
        if self.skipped:
            return {"skipped": self.skipped}
        report = self.report
        overall, spans = report["file_sizes"]["overall"], report["span_evidence"]["overall"]
        out: dict[str, Any] = {
            "unresolved": len(report["unresolved"]),
            "unresolved_occurrences": report["arbwb"]["unresolved_occurrences"],
            "gold_file_occurrences": overall["gold_file_occurrences"],
            "samples": overall["samples"],
        }
        out |= {f"file_lines_{k}": overall["file_lines"][k] for k in ("median", "p90", "max")}
        out |= {
            "fraction_over_500": overall["fraction_over_lines"]["500"],
            "span_file_pairs": spans["span_file_occurrences"],
            "evidence_lines_median": spans["evidence_lines"]["median"],
            "evidence_ratio_median": spans["evidence_ratio"]["median"],
            "fraction_ratio_at_most_0.25": spans["fraction_ratio_at_most"]["0.25"],
        }
        for row in report["method_sensitivity"]:
            out[f"file_recall@20/{row['method']}"] = row["file_recall@20"]
            out[f"line_f1@8k_chars/{row['method']}"] = row["line_f1@8k_chars"]
        out["not_span_capable"] = self.not_span_capable
        for row in report["arbwb"]["line_packing"]:
            key = f"span_yield/{row['packing']}@{row['budget']}/{row['run']}"
            out[key] = row["line_recall"]
        reranked = report["arbwb"]["reranked"]
        out["reranked"] = sorted(k for k, v in reranked.items() if v["status"] == "reranked")
        return out


def run(release: Release, options: GranularityOptions) -> GranularityResult:
    """Gold-file sizes, evidence density, the file-vs-line diagnostic of every run with details
    and the re-ranked runs' span yield; skipped (with the reason) without corpus or positives."""
    where = options.data_dir or "the release"
    if release.corpus is None:
        reason = "gold-file sizes need corpus/<release>/corpus_manifest.jsonl"
        return GranularityResult(f"no corpus in {where}: {reason}")
    if positive_samples(release.samples).is_empty():
        return GranularityResult(f"no positive samples in {where}: nothing to measure")
    runs = [run for run in release.runs.values() if run.details is not None]
    samples, spans, corpus = release.samples, release.spans, release.corpus
    sizes = gold_file_sizes(samples, release.labels, corpus)
    plans = {run.run: spanyield.rerank_plan(run) for run in runs} if options.rerank else {}
    pairs = [(run, plans[run.run]) for run in runs if run.run in plans]
    packing, checks = spanyield.packing_table(
        pairs, samples, release.labels, spans, corpus, budgets=options.budgets
    )
    missing_files = missing_chunk_files(corpus, sizes["snapshot_id"].to_list())
    analysis = Analysis(sizes, span_density(samples, spans, sizes), packing, plans, checks)
    n_boot, seed = options.resampling.n_boot, options.resampling.seed
    boot = {"n_boot": n_boot, "seed": seed}
    missing = unresolved(sizes)
    reranked = {
        name: {"status": plan.status} | (vars(checks[name]) if name in checks else {})
        for name, plan in plans.items()
    }
    line_packing = spanyield.packing_summary(packing, n_boot=n_boot, seed=seed).to_dicts()
    summary = {
        "file_sizes": file_size_summary(sizes, samples),
        "span_evidence": span_summary(analysis.density, samples, spans),
        "method_sensitivity": spanyield.file_vs_line(runs),
        "unresolved": missing.drop("occurrences").to_dicts(),
        "arbwb": {
            "note": (
                "arbwb-defined: percentile-bootstrap intervals (n_boot, seed), line packing of "
                "re-ranked arbwb baselines (legacy_chars = spec 5.8; files/chunks = canonical "
                "5.7 token packing credited with the packed text lines) and span yield"
            ),
            **boot,
            "intervals": spanyield.diagnostic_intervals(runs, **boot),
            "reranked": reranked,
            "line_packing": line_packing,
            "missing_chunk_files": missing_files,
            "unresolved_occurrences": int(missing["occurrences"].sum()),
        },
    }
    return GranularityResult(
        skipped=None,
        analysis=analysis,
        report=summary,
        file_sizes=file_size_table(summary),
        evidence_density=span_table(summary),
        methods=pl.DataFrame(summary["method_sensitivity"], infer_schema_length=None),
        reranked=pl.DataFrame(
            [{"run": k} | v for k, v in reranked.items()], infer_schema_length=None
        ),
        line_packing=pl.DataFrame(line_packing, infer_schema_length=None),
        unresolved=missing,
    )
