"""The upstream aggregations of scored rows (contextbench-spec §8, per run and level; EditLoc
per run) and per-instance METRICS for the leaderboard's intervals and tests (arbwb-defined)."""

from __future__ import annotations

from typing import Literal

import polars as pl

from arbwb import schemas
from arbwb.contextbench.instance import LEVELS, f1, ratio

AGGREGATIONS = ("micro", "macro", "macro_errors_as_zero")


def aggregate(results: pl.DataFrame) -> pl.DataFrame:
    """Per (run, level, aggregation) of docs/contextbench.md (micro: evaluator CLI; macro: paper;
    macro_errors_as_zero: statistics.py): coverage, precision, both F1s, AUC, redundancy, counts."""
    valid = results.filter(pl.col("error").is_null())
    errors = results.filter(pl.col("error").is_not_null())
    rows: list[tuple[object, ...]] = []
    for run in results["run"].unique(maintain_order=True).to_list():
        mine = valid.filter(pl.col("run") == run)
        err = errors.filter(pl.col("run") == run)
        n_error = err.filter(pl.col("error") != "missing_gold").height
        n_missing = err.filter(pl.col("error") == "missing_gold").height
        for level in [lv for lv in LEVELS if lv in mine["level"].to_list()]:
            part = mine.filter(pl.col("level") == level)
            sums = part.select(pl.col("intersection", "gold_size", "pred_size").sum()).row(0)
            means = part.select(pl.col(*_MEANS).mean()).row(0)
            zero = tuple(float(part[c].sum()) / (part.height + n_error) for c in _MEANS)
            micro = (ratio(sums[0], sums[1]), ratio(sums[0], sums[2]), None, *means[3:])
            for name, (c, p, f1_mean, auc, red) in zip(
                AGGREGATIONS, (micro, means, zero), strict=True
            ):
                hm = None if c is None or p is None else f1(c, p)
                counts = (part.height, n_error, n_missing)
                rows.append((run, level, name, c, p, f1_mean, hm, auc, red, *counts))
    return pl.DataFrame(rows, schema=dict(AGGREGATE), orient="row")


_MEANS = ("coverage", "precision", "f1", "auc_coverage", "redundancy")
AGGREGATE: schemas.Schema = {
    "run": pl.String,
    "level": pl.String,
    "aggregation": pl.String,
    "coverage": pl.Float64,
    "precision": pl.Float64,
    "f1_mean": pl.Float64,  # mean of per-instance F1 (statistics.py); null for micro
    "f1_harmonic": pl.Float64,  # harmonic mean of the aggregated coverage and precision
    "auc_coverage": pl.Float64,
    "redundancy": pl.Float64,
    "n_valid": pl.Int64,
    "n_error": pl.Int64,
    "n_missing_gold": pl.Int64,
}
EDITLOC_AGGREGATE: schemas.Schema = {
    "run": pl.String,
    "aggregation": pl.String,
    "recall": pl.Float64,
    "precision": pl.Float64,
    "f1_mean": pl.Float64,
    "n": pl.Int64,
}


def aggregate_editloc(editloc_rows: pl.DataFrame) -> pl.DataFrame:
    """EditLoc per run: micro (evaluator: Σhits/Σgold lines, Σhits/Σpred lines) and macro
    (editloc_stats.py: mean recall, mean precision, mean per-instance F1)."""
    rows: list[tuple[object, ...]] = []
    for run in editloc_rows["run"].unique(maintain_order=True).to_list():
        part = editloc_rows.filter(pl.col("run") == run)
        sums = part.select(pl.col("intersection", "gold_size", "pred_size").sum())
        hits, gold, pred = sums.row(0)
        f1s = [f1(r, p) for r, p in part.select("recall", "precision").iter_rows()]
        n = part.height
        micro = (ratio(hits, gold), ratio(hits, pred), None)
        macro = (sum(part["recall"]) / n, sum(part["precision"]) / n, sum(f1s) / len(f1s))
        rows += [(run, name, *values, n) for name, values in (("micro", micro), ("macro", macro))]
    return pl.DataFrame(rows, schema=dict(EDITLOC_AGGREGATE), orient="row")


def metrics_frame(
    results: pl.DataFrame,
    editloc_rows: pl.DataFrame | None = None,
    *,
    errors: Literal["zero", "drop"] = "zero",
) -> pl.DataFrame:
    """METRICS ``<level>.coverage|precision|f1``, ``auc.<level>``, ``redundancy.<level>``,
    ``editloc.recall|precision``; error rows (not missing_gold) are zeros at every level the
    run scores (statistics.py, §13.7) or dropped with ``errors="drop"``."""
    valid = results.filter(pl.col("error").is_null())
    level = pl.col("level")
    names = {stat: level + f".{stat}" for stat in ("coverage", "precision", "f1")}
    names |= {"auc_coverage": pl.lit("auc.") + level, "redundancy": pl.lit("redundancy.") + level}
    parts = [valid.select("run", "sample_id", metric=m, value=pl.col(c)) for c, m in names.items()]
    if errors == "zero":
        scored = pl.concat(parts).select("run", "metric").unique()
        failed = results.filter(pl.col("error").is_not_null(), pl.col("sample_id").is_not_null())
        zeros = failed.select("run", "sample_id").join(scored, on="run")
        parts.append(zeros.with_columns(value=pl.lit(0.0)))
    if editloc_rows is not None and editloc_rows.height:
        parts += [
            editloc_rows.select("run", "sample_id", metric=pl.lit(f"editloc.{c}"), value=pl.col(c))
            for c in ("recall", "precision")
        ]
    long = pl.concat(parts).sort("run", "sample_id", "metric", maintain_order=True)  # stable
    return schemas.validate(long, schemas.METRICS, name="metrics")
