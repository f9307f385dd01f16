"""One ``evaluate`` over the RANKINGS and LABELS frames: rank metrics through the Polars
expressions of :mod:`arbwb.metrics.rank`, BCY through :mod:`arbwb.metrics.budget`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from arbwb import schemas
from arbwb.errors import InputError
from arbwb.io.corpus import Corpus
from arbwb.metrics.budget import ENGINE, bcy_metrics
from arbwb.metrics.rank import apply_stored_mrr, count_aggs, value_expr
from arbwb.metrics.spec import DEFAULT_METRICS, parse_metric


def _gold(labels: pl.DataFrame, samples: pl.DataFrame | None) -> pl.LazyFrame:
    """Distinct (sample_id, path) gold pairs of the evaluated samples (a lazy query)."""
    gold = labels.lazy().filter(pl.col("role") == "gold").select("sample_id", "path").unique()
    if samples is not None:
        ids = samples.lazy().select("sample_id").unique()
        gold = gold.join(ids, on="sample_id", how="semi")
    return gold


def snapshot_map(samples: pl.DataFrame) -> pl.DataFrame:
    """sample_id -> snapshot_id from a samples (or details) frame."""
    if "snapshot_id" in samples.columns:
        return samples.select("sample_id", "snapshot_id").unique()
    snapshot = pl.format("{}@{}", "repo", "base_commit").alias("snapshot_id")
    return samples.select("sample_id", snapshot).unique()


def evaluate(
    rankings: pl.DataFrame,
    labels: pl.DataFrame,
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    samples: pl.DataFrame | None = None,
    stored: pl.DataFrame | None = None,
    corpus: Corpus | None = None,
    fusion: bool = False,
    runs: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Per-sample METRICS of every run on every sample with gold (within ``samples``); an
    unranked sample scores zeros, so denominators never shrink (docs/metrics.md)."""
    specs = list({s.name: s for s in map(parse_metric, metrics)}.values())
    rank_specs = [s for s in specs if s.family != "bcy"]
    run_names = sorted(set(rankings["run"].unique().to_list()) | set(runs or ()))
    if not run_names:
        msg = "no run to evaluate: rankings is empty; name the runs with runs=[...]"
        raise ValueError(msg)
    # a few lazy queries collected together: small eager steps would each cost a query
    gold_query = _gold(labels, samples)
    grid_query = (
        pl.LazyFrame({"run": run_names}, schema={"run": pl.String})
        .join(gold_query.group_by("sample_id").agg(n_gold=pl.len().cast(pl.Int64)), how="cross")
        .sort("run", "sample_id")
    )
    ranked_query = rankings.lazy().join(
        gold_query.select("sample_id").unique(), on="sample_id", how="semi"
    )
    repeated = pl.struct("run", "sample_id", "path").is_duplicated().any()
    gold, grid, ranked, twice = pl.collect_all(
        [gold_query, grid_query, ranked_query, ranked_query.select(repeated)], engine=ENGINE
    )
    if twice.item():
        msg = "rankings repeat a path within a (run, sample); build them with load_rankings"
        raise ValueError(msg)
    flagged = (
        ranked.lazy()
        .join(gold.lazy().with_columns(is_gold=pl.lit(True)), on=["sample_id", "path"], how="left")
        .with_columns(pl.col("is_gold").fill_null(False))
    )
    counts = flagged.group_by("run", "sample_id").agg(count_aggs(rank_specs))
    per = (
        grid.lazy()
        .join(counts, on=["run", "sample_id"], how="left")
        .with_columns(pl.exclude("run", "sample_id", "n_gold", "first").fill_null(0))
    )
    per = apply_stored_mrr(per.with_columns(stored_rr=pl.lit(None, pl.Float64)), stored)
    values = {s.name: value_expr(s, fusion=fusion).cast(pl.Float64) for s in rank_specs}
    if "mrr" in values:
        values["mrr"] = pl.coalesce("stored_rr", values["mrr"])
    parts = []
    if values:
        parts.append(
            per.select("run", "sample_id", **values).unpivot(
                index=["run", "sample_id"], variable_name="metric", value_name="value"
            )
        )
    bcy_specs = [s for s in specs if s.family == "bcy"]
    if bcy_specs:
        if corpus is None:
            raise InputError("BCY metrics need a corpus (--corpus DIR)")
        if samples is None:
            raise InputError("BCY metrics need the samples (or details) frame to find snapshots")
        gold_labels = labels.join(gold, on="sample_id", how="semi")
        bcy = bcy_metrics(ranked, gold_labels, corpus, bcy_specs, snapshots=snapshot_map(samples))
        # every (run, sample) gets each BCY row; one the packer did not report scores 0
        names = pl.LazyFrame({"metric": [s.name for s in bcy_specs]}, schema={"metric": pl.String})
        full = grid.lazy().select("run", "sample_id").join(names, how="cross")
        joined = full.join(bcy.lazy(), on=["run", "sample_id", "metric"], how="left")
        parts.append(joined.with_columns(pl.col("value").fill_null(0.0)))
    order = {s.name: i for i, s in enumerate(specs)}
    long = (
        pl.concat(parts)
        .sort("run", "sample_id", pl.col("metric").replace_strict(order, return_dtype=pl.Int64))
        .collect(engine=ENGINE)
    )
    return schemas.validate(long, schemas.METRICS, name="metrics")


def coverage(
    rankings: pl.DataFrame,
    labels: pl.DataFrame,
    samples: pl.DataFrame | None = None,
    *,
    submitted: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Per run: n_expected (samples with gold), n_ranked, n_missing and n_error (``submitted``
    marks empty answers; without it a sample is ranked when it has rows)."""
    expected = _gold(labels, samples).select("sample_id").unique()
    answered = rankings.lazy().select("run", "sample_id", status=pl.lit("ok")).unique()
    if submitted is not None:
        answered = pl.concat([answered, submitted.lazy().select("run", "sample_id", "status")])
    runs = answered.select("run").unique().sort("run")
    answered = answered.join(expected, on="sample_id", how="semi").unique(
        ["run", "sample_id"], keep="last"
    )
    counts = answered.group_by("run").agg(
        n_ranked=(pl.col("status") == "ok").sum(), n_error=(pl.col("status") == "error").sum()
    )
    n_expected = expected.select(n_expected=pl.len().cast(pl.Int64))
    return (
        runs.join(counts, on="run", how="left")
        .with_columns(pl.col("n_ranked", "n_error").fill_null(0).cast(pl.Int64))
        .join(n_expected, how="cross")
        .with_columns(n_missing=pl.col("n_expected") - pl.col("n_ranked") - pl.col("n_error"))
        .select("run", "n_expected", "n_ranked", "n_missing", "n_error")
        .collect(engine=ENGINE)
    )
