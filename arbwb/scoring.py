"""What ``arbwb score`` computes, as a library: per-sample metrics of stored runs and their
sample-weighted means overall, per task and per group, as frames a notebook can use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from arbwb.errors import InputError
from arbwb.io.corpus import Corpus
from arbwb.io.rankings import RunData, load_rankings
from arbwb.io.samples import SampleSet
from arbwb.metrics import DEFAULT_METRICS, coverage, evaluate, parse_metric, snapshot_map
from arbwb.metrics.aggregate import aggregate
from arbwb.metrics.budget import STORED_PREFIX

SCORES_SCHEMA = {
    "run": pl.String,
    "grouping": pl.String,
    "group": pl.String,
    "metric": pl.String,
    "n": pl.Int64,
    "value": pl.Float64,
}


@dataclass(frozen=True)
class Scored:
    """One run's per-sample metrics with the sample frame and counts they came from."""

    run: RunData
    metrics: pl.DataFrame
    samples: pl.DataFrame
    counts: dict[str, int]


def metric_names(names: Sequence[str]) -> list[str]:
    """Canonical metric names (DEFAULT_METRICS when empty); a bad name is an InputError."""
    try:
        return [parse_metric(name).name for name in names] or list(DEFAULT_METRICS)
    except ValueError as exc:
        raise InputError(str(exc), field="--metrics") from None


def load_runs(paths: Sequence[str | Path]) -> list[RunData]:
    """Load ranking files; two files giving the same run name are refused."""
    runs: dict[str, RunData] = {}
    for path in paths:
        data = load_rankings(path)
        if data.run in runs:
            msg = f"run name {data.run!r} also comes from {runs[data.run].path}; rename a file"
            raise InputError(msg, path=path)
        runs[data.run] = data
    return list(runs.values())


def needs_corpus(metrics: Sequence[str]) -> bool:
    """Whether any metric reads file token costs from the corpus (BCY)."""
    return any(parse_metric(m).family == "bcy" for m in metrics)


def prefetch_costs(
    runs: Sequence[RunData],
    samples: SampleSet | None,
    corpus: Corpus,
    *,
    depth: int = STORED_PREFIX,
) -> None:
    """Look up the token costs of every run's top-``depth`` paths in one corpus pass.

    BCY asks the corpus run by run; runs ranking different paths of a snapshot would each
    rescan its chunk file for the paths still unknown. Asking for the union first reads each
    chunk file once; the later per-run lookups are then served from memory.
    """
    wanted: dict[str, set[str]] = {}
    for run in runs:
        frame = samples.samples if samples is not None else run.details
        if frame is None:
            continue
        pairs = (
            run.rankings.filter((pl.col("rank") <= depth) & (pl.col("path") != ""))
            .join(snapshot_map(frame), on="sample_id")
            .select("snapshot_id", "path")
            .unique()
        )
        for sid, path in pairs.iter_rows():
            wanted.setdefault(sid, set()).add(path)
    corpus.file_costs({sid: paths for sid, paths in wanted.items() if corpus.has(sid)})


def check_known(run: RunData, samples: SampleSet) -> None:
    """Every ranked sample id must exist in the samples (a typo would silently score 0)."""
    unknown = run.submitted.join(samples.samples, on="sample_id", how="anti")
    if unknown.height:
        row = unknown.row(0, named=True)
        msg = f"sample id {row['sample_id']!r} is not in --samples; fix the id or the samples"
        raise InputError(msg, path=run.path, line=row["line"], field="sample_id")


def score_run(
    run: RunData,
    samples: SampleSet | None = None,
    metrics: Sequence[str] = DEFAULT_METRICS,
    corpus: Corpus | None = None,
) -> Scored:
    """Evaluate one run against the samples' gold, or against the gold in its details rows."""
    if samples is not None:
        check_known(run, samples)
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
    if corpus is not None and needs_corpus(metrics):
        from arbwb.metrics.budget import missing_snapshots

        missing = missing_snapshots(labels, corpus, snapshots=snapshot_map(frame))
        counted["n_missing_snapshot"] = missing.height
    return Scored(run, values, frame, counted)


def score_table(scored: Sequence[Scored], by: str | None = None) -> pl.DataFrame:
    """Long means table: run, grouping (overall | task | ``by``), group, metric, n, value."""
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
                "run",
                grouping=pl.lit(key),
                group=pl.col(key).cast(pl.String),
                metric="metric",
                n="n",
                value="value",
            )
            for s in scored
        ]
    if not frames:
        return pl.DataFrame(schema=SCORES_SCHEMA)
    return pl.concat(frames).cast(SCORES_SCHEMA)  # type: ignore[arg-type]


def score_runs(
    runs: Sequence[str | Path | RunData],
    *,
    samples: SampleSet | None = None,
    metrics: Sequence[str] = DEFAULT_METRICS,
    corpus: Corpus | None = None,
    by: str | None = None,
) -> pl.DataFrame:
    """``arbwb score``'s numbers for ranking files (or loaded runs) as one long frame."""
    paths = [r for r in runs if not isinstance(r, RunData)]
    loaded = iter(load_runs(paths))
    data = [r if isinstance(r, RunData) else next(loaded) for r in runs]
    names = metric_names(list(metrics))
    return score_table([score_run(r, samples, names, corpus) for r in data], by)


def run_summary(scored: Scored, by: str | None = None) -> dict[str, Any]:
    """The JSON summary of one run: counts, overall means and means per task (and ``by``)."""
    table = score_table([scored], by)
    summary: dict[str, Any] = {
        "run": scored.run.run,
        "n": scored.counts["n_expected"],
        "n_missing": scored.counts["n_missing"],
        "n_error": scored.counts["n_error"],
        **{k: v for k, v in scored.counts.items() if k == "n_missing_snapshot"},
    }
    for grouping, part in table.group_by("grouping", maintain_order=True):
        groups: dict[str, dict[str, Any]] = {}
        for row in part.iter_rows(named=True):
            groups.setdefault(row["group"], {"n": row["n"]})[row["metric"]] = row["value"]
        if grouping[0] == "overall":
            summary["overall"] = {k: v for k, v in groups["overall"].items() if k != "n"}
        else:
            summary[f"by_{grouping[0]}"] = groups
    return summary


def wide_sections(table: pl.DataFrame, metrics: Sequence[str]) -> list[tuple[str, pl.DataFrame]]:
    """Readable sections of a score table: (title, run x metric frame with n), overall first."""
    sections = []
    for (grouping, group), part in table.group_by("grouping", "group", maintain_order=True):
        wide = part.pivot(on="metric", index=["run", "n"], values="value")
        title = "overall" if grouping == "overall" else f"{grouping}: {group}"
        sections.append(
            (title, wide.select("run", "n", *[m for m in metrics if m in wide.columns]))
        )
    order = {"overall": 0}
    return sorted(sections, key=lambda s: (order.get(s[0], 1), s[0]))
