"""Relevance taxonomy (notebook 02, ``arbwb taxonomy``, spec §10, §13.4): labels from
:mod:`.relevance`, slice tables from :mod:`.slices`, runs scored on their own group's samples.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from arbwb.analysis import slices as sl
from arbwb.analysis.relevance import CORE_TASKS, LABELS, annotate_samples
from arbwb.analysis.result import Resampling, Table
from arbwb.io.corpus import open_corpus
from arbwb.io.release import Release
from arbwb.tables import to_markdown

#: Columns of the example browser (spec 13.4 order keys first, then why each label).
BROWSER_COLUMNS: tuple[str, ...] = (
    "primary_relevance_type", "sample_id", "task_type", "repo", "confidence",
    "semantic_overlap_score", "structural_signal_count", "workflow_signal_count",
    "secondary_relevance_types", "query_token_overlap", "gold_files", "evidence", "flags", "reason",
)  # fmt: skip


def distribution(frame: pl.DataFrame) -> pl.DataFrame:
    """``Primary type | Samples`` of spec 13.4 (labels in sorted order, present ones only)."""
    return (
        frame.group_by("primary_relevance_type")
        .agg(pl.len().cast(pl.Int64).alias("Samples"))
        .sort("primary_relevance_type")
        .rename({"primary_relevance_type": "Primary type"})
    )


def by_task(frame: pl.DataFrame) -> pl.DataFrame:
    """``Task | <four labels>`` counts of spec 13.4 (zeros shown; tasks sorted)."""
    counts = frame.group_by("task_type").agg(
        (pl.col("primary_relevance_type") == label).sum().cast(pl.Int64).alias(label)
        for label in LABELS
    )
    return counts.rename({"task_type": "Task"}).sort("Task")


def examples(frame: pl.DataFrame, *, per_label: int | None = 4) -> pl.DataFrame:
    """Rows per primary label sorted as spec 13.4: confidence != high, -d, sample_id."""
    not_high, neg_d = pl.col("confidence") != "high", -pl.col("semantic_overlap_score")
    ordered = frame.sort("primary_relevance_type", not_high, neg_d, "sample_id")
    if per_label is None:
        return ordered
    return ordered.group_by("primary_relevance_type", maintain_order=True).head(per_label)


def flag_counts(annotations: pl.DataFrame) -> pl.DataFrame:
    """``task_type, flags, samples``: how many samples of each task carry each flag code."""
    return (
        annotations.select("task_type", "flags")
        .explode("flags")
        .drop_nulls("flags")
        .group_by("task_type", "flags")
        .agg(pl.len().alias("samples"))
        .sort("task_type", "flags")
    )


def confidence_counts(labelled: pl.DataFrame) -> pl.DataFrame:
    """``primary_relevance_type, confidence, samples``: the confidence mix per slice (10.5)."""
    return (
        labelled.group_by("primary_relevance_type", "confidence")
        .agg(pl.len().alias("samples"))
        .sort("primary_relevance_type", "confidence")
    )


def markdown(annotations: pl.DataFrame, *, per_label: int = 4) -> str:
    """Spec 13.4's report of an annotation frame: distribution, by task, up to ``per_label``
    examples per label, then the flag counts (quirks reproduced, missing inputs)."""
    chosen = examples(annotations, per_label=per_label).select(
        pl.col("primary_relevance_type").alias("Label"),
        pl.col("sample_id").alias("Sample"),
        pl.col("task_type").alias("Task"),
        pl.col("repo").alias("Repo"),
        pl.col("confidence").alias("Confidence"),
        pl.col("gold_files").list.head(3).list.join(", ").alias("Gold"),
        pl.col("evidence").list.head(2).list.join("; ").alias("Why"),
    )
    flags = (
        flag_counts(annotations)
        .group_by("flags")
        .agg(pl.col("samples").sum().cast(pl.Int64).alias("Samples"))
        .sort("flags")
        .rename({"flags": "Flag (arbwb-defined)"})
    )
    parts = [
        "# Agentic-relevance taxonomy (spec 10, 13.4)\n",
        f"Samples: {annotations.height}\n",
        "## Distribution\n",
        to_markdown(distribution(annotations)),
        "## By task\n",
        to_markdown(by_task(annotations)),
        "## Examples\n",
        to_markdown(chosen.with_columns(pl.col("Gold").replace("", "(no annotation gold)"))),
    ]
    if flags.height:
        parts += ["## Flags (quirks reproduced, missing inputs)\n", to_markdown(flags)]
    return "\n".join(parts)


def with_corpus(release: Release, corpus: str) -> Release:
    """The release with notebook 02's ``corpus`` choice: ``""`` its own corpus (if any),
    ``"none"`` no corpus (no BCY), else the corpus folder or data root ``corpus``."""
    if corpus == "none":
        return dataclasses.replace(release, corpus=None)
    if corpus:
        return dataclasses.replace(release, corpus=open_corpus(corpus))
    return release


@dataclass(frozen=True)
class TaxonomyOptions:
    """Corpus choice (see :func:`with_corpus`), RRF combinations per group, example rows per
    label, resampling of intervals and tests, and the data folder named in skip reasons."""

    corpus: str = ""
    rrf_max: int = 20
    examples_per_label: int = 8
    resampling: Resampling = field(default_factory=Resampling)
    data_dir: str = ""


@dataclass(frozen=True)
class TaxonomyResult:
    """Annotations (every sample) and the labelled ones (query and gold present), their
    tables, and the slice board (None without runs, ``skipped_slices`` says so)."""

    notes: list[str]
    annotations: pl.DataFrame
    labelled: pl.DataFrame
    distribution: pl.DataFrame
    by_task: pl.DataFrame
    flags: pl.DataFrame
    confidence: pl.DataFrame
    left_out: pl.DataFrame
    examples: pl.DataFrame
    metric_names: tuple[str, ...]
    runs: list[str]
    slices: sl.SliceBoard | None
    skipped: str | None
    skipped_slices: str | None

    @property
    def labels_missing(self) -> list[str]:
        """Labels no labelled sample has as its primary type."""
        present = set(self.distribution["Primary type"].to_list())
        return [label for label in LABELS if label not in present]

    def tables(self) -> list[Table]:
        """The tables notebook 02 writes, in its order (lists of the browser joined by ``; ``)."""
        browser = self.examples.with_columns(pl.col(pl.List(pl.String)).list.join("; "))
        return [
            Table("distribution", self.distribution),
            Table("by_task", self.by_task),
            Table("flags", self.flags),
            Table("confidence", self.confidence),
            Table("left_out", self.left_out),
            *(self.slices.tables() if self.slices is not None else []),
            Table("examples", browser),
        ]

    def records(self) -> dict[str, Any]:
        """Notebook 02's key numbers (``skipped``/``skipped_slices`` only when they apply)."""
        out: dict[str, Any] = {
            "notes": self.notes,
            "n_annotated": self.annotations.height,
            "n_incomplete": self.annotations.height - self.labelled.height,
        }
        if self.skipped:
            out["skipped"] = self.skipped
        by_task = self.by_task.iter_rows(named=True)
        core = self.labelled.filter(pl.col("task_type").is_in(list(CORE_TASKS)))
        out |= {
            "distribution": dict(self.distribution.iter_rows()),
            "by_task": {row["Task"]: {k: row[k] for k in LABELS} for row in by_task},
            "flags": {f"{t}/{f}": n for t, f, n in self.flags.iter_rows()},
            "confidence": {f"{label}/{lv}": n for label, lv, n in self.confidence.iter_rows()},
            "bcy": sl.BCY_METRIC in self.metric_names,
            "runs": self.runs,
        }
        if self.skipped_slices:
            out["skipped_slices"] = self.skipped_slices
        out["left_out"] = {f"{t}/{w}": n for t, w, n in self.left_out.iter_rows()}
        out |= self.slices.records() if self.slices is not None else {}
        return out | {
            "labels_present": sorted(self.distribution["Primary type"].to_list()),
            "labels_missing": self.labels_missing,
            "core_distribution": dict(distribution(core).iter_rows()) if core.height else {},
        }


def run(release: Release, options: TaxonomyOptions) -> TaxonomyResult:
    """Label every sample, tabulate the labels, and score the runs per slice (spec 10.7)."""
    release = with_corpus(release, options.corpus)
    where = options.data_dir or "the release"
    annotations = annotate_samples(release.samples)
    labelled = annotations.filter(pl.col("complete"))
    names = sl.slice_metric_names(release)
    board = None
    if release.runs:
        board = sl.slice_board(
            release, annotations, rrf_max=options.rrf_max, resampling=options.resampling
        )
    browser = examples(labelled, per_label=options.examples_per_label)
    return TaxonomyResult(
        notes=release.notes,
        annotations=annotations,
        labelled=labelled,
        distribution=distribution(labelled),
        by_task=by_task(labelled),
        flags=flag_counts(annotations),
        confidence=confidence_counts(labelled),
        left_out=sl.exclusions(annotations),
        examples=browser.select(BROWSER_COLUMNS),
        metric_names=names,
        runs=sorted(release.runs),
        slices=board,
        skipped=(
            None
            if labelled.height
            else f"no samples with query and gold under {where}: nothing to label"
        ),
        skipped_slices=(
            None
            if release.runs
            else f"no runs under {where}: the label distribution is all there is"
        ),
    )
