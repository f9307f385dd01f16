"""What ``arbwb score`` computes, as a library: per-sample metrics of stored runs and their
sample-weighted means overall, per task and per group, as frames a notebook can use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import polars as pl

from arbwb.errors import InputError
from arbwb.io.corpus import Corpus
from arbwb.io.rankings import RunData, load_rankings
from arbwb.io.samples import SampleSet
from arbwb.metrics import DEFAULT_METRICS, coverage, evaluate, parse_metric, snapshot_map
from arbwb.metrics.aggregate import aggregate
from arbwb.metrics.budget import STORED_PREFIX

T = TypeVar("T")
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
    """Look up the token costs of every run's top-``depth`` paths in one corpus pass, so each
    chunk file is read once and the per-run BCY lookups are served from memory."""
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
    return _score_group([run], samples, metrics, corpus)[0]


def score_all(
    runs: Sequence[RunData],
    samples: SampleSet | None = None,
    metrics: Sequence[str] = DEFAULT_METRICS,
    corpus: Corpus | None = None,
) -> list[Scored]:
    """:func:`score_run` of every run, the same numbers from fewer queries: runs judged by the
    same gold (``samples``, or equal gold and details rows) are evaluated together, as
    :func:`~arbwb.metrics.evaluate` and the BCY packer work per (run, sample) anyway."""
    if len({run.run for run in runs}) < len(runs):  # names key the joint evaluation
        return [score_run(run, samples, metrics, corpus) for run in runs]
    groups = _batches(runs, lambda first, run: _same_gold(first, run, samples))
    if corpus is not None and needs_corpus(metrics) and len(groups) > 1:
        prefetch_costs(runs, samples, corpus)  # each chunk file read once, not per group
    done: dict[str, Scored] = {}
    for group in groups:
        done |= {s.run.run: s for s in _score_group(group, samples, metrics, corpus)}
    return [done[run.run] for run in runs]


def _same_gold(first: RunData, other: RunData, samples: SampleSet | None) -> bool:
    """Whether two runs are judged alike: shared samples, or equal gold and details rows
    (their file line numbers aside)."""
    if samples is not None:
        return True
    if first.labels is None or first.details is None or other.labels is None:
        return False
    if other.details is None or not first.labels.equals(other.labels):
        return False
    return _same_samples(first.details, other.details)


def _batches(items: Sequence[T], same: Callable[[T, T], bool]) -> list[list[T]]:
    """``items`` in batches, in order: each joins the first batch whose first item is ``same``."""
    batches: list[list[T]] = []
    for item in items:
        batch = next((b for b in batches if same(b[0], item)), None)
        if batch is None:
            batches.append([item])
        else:
            batch.append(item)
    return batches


def _score_group(
    runs: Sequence[RunData],
    samples: SampleSet | None,
    metrics: Sequence[str],
    corpus: Corpus | None,
) -> list[Scored]:
    """:func:`score_run` of runs sharing their gold, with one evaluation for all of them."""
    first = runs[0]
    if samples is not None:
        for run in runs:
            check_known(run, samples)
        labels, frame = samples.labels, samples.samples
    elif first.labels is not None and first.details is not None:
        labels, frame = first.labels, first.details
    else:
        msg = "this rankings format carries no gold; pass --samples with the sample file"
        raise InputError(msg, path=first.path)
    stored = [s for s in (run.stored_for(labels) for run in runs) if s is not None]
    values = evaluate(
        pl.concat([run.rankings for run in runs]),
        labels,
        metrics=metrics,
        samples=frame,
        stored=pl.concat(stored) if stored else None,
        corpus=corpus,
        runs=[run.run for run in runs],
    )
    counts = coverage(
        pl.concat([run.rankings for run in runs]),
        labels,
        frame,
        submitted=pl.concat([run.submitted for run in runs]),
    )
    by_run = {row.pop("run"): row for row in counts.iter_rows(named=True)}
    if len(runs) > 1 and any(run.run not in by_run for run in runs):
        return [score_run(run, samples, metrics, corpus) for run in runs]  # one at a time
    n_missing = None
    if corpus is not None and needs_corpus(metrics):
        from arbwb.metrics.budget import missing_snapshots

        n_missing = missing_snapshots(labels, corpus, snapshots=snapshot_map(frame)).height
    parts = values.partition_by("run", as_dict=True, maintain_order=True)
    out = []
    for run in runs:
        counted = {k: int(v) for k, v in by_run[run.run].items()}
        if n_missing is not None:
            counted["n_missing_snapshot"] = n_missing
        own = parts.get((run.run,), values.clear())
        own_frame = frame if samples is not None or run.details is None else run.details
        out.append(Scored(run, own, own_frame, counted))
    return out


def score_table(scored: Sequence[Scored], by: str | None = None) -> pl.DataFrame:
    """Long means table (run, grouping, group, metric, n, value), grouping by grouping and run
    by run; runs with equal sample frames are aggregated in one call."""
    batches = _batches(scored, lambda first, s: _same_samples(first.samples, s.samples))
    frames = []
    for key in [None, "task"] + ([by] if by not in (None, "task") else []):
        parts = []
        for batch in batches:
            metrics = pl.concat([s.metrics for s in batch])
            means = (
                aggregate(metrics) if key is None else aggregate(metrics, batch[0].samples, by=key)
            )
            parts.append(
                means.select(
                    "run",
                    grouping=pl.lit(key or "overall"),
                    group=pl.lit("overall") if key is None else pl.col(key).cast(pl.String),
                    metric="metric",
                    n="n",
                    value="value",
                )
            )
        if parts:
            order = {s.run.run: i for i, s in enumerate(scored)}
            level = pl.concat(parts)
            frames.append(level.sort(pl.col("run").replace_strict(order), maintain_order=True))
    if not frames:
        return pl.DataFrame(schema=SCORES_SCHEMA)
    return pl.concat(frames).cast(SCORES_SCHEMA)  # type: ignore[arg-type]


def _same_samples(first: pl.DataFrame, other: pl.DataFrame) -> bool:
    """Whether two sample frames group samples alike (details file line numbers aside)."""
    if first is other or first.equals(other):
        return True
    drop = [c for c in ("line",) if c in first.columns and c in other.columns]
    return first.drop(drop).equals(other.drop(drop))


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
    return score_table(score_all(data, samples, names, corpus), by)


def run_summaries(scored: Sequence[Scored], by: str | None = None) -> list[dict[str, Any]]:
    """The JSON summary of each run (counts, overall means and means per task and ``by``),
    from one means table for all of them."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for row in score_table(scored, by).iter_rows(named=True):
        rows.setdefault(row["run"], []).append(row)
    return [_summary(s, rows.get(s.run.run, [])) for s in scored]


def _summary(scored: Scored, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The JSON summary of one run from its rows of the means table (in table order)."""
    summary: dict[str, Any] = {
        "run": scored.run.run,
        "n": scored.counts["n_expected"],
        "n_missing": scored.counts["n_missing"],
        "n_error": scored.counts["n_error"],
        **{k: v for k, v in scored.counts.items() if k == "n_missing_snapshot"},
    }
    levels: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        groups = levels.setdefault(row["grouping"], {})
        groups.setdefault(row["group"], {"n": row["n"]})[row["metric"]] = row["value"]
    for grouping, groups in levels.items():
        if grouping == "overall":
            summary["overall"] = {k: v for k, v in groups["overall"].items() if k != "n"}
        else:
            summary[f"by_{grouping}"] = groups
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
