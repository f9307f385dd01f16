"""The upstream aggregations of scored rows (contextbench-spec §8) and the METRICS frame.

Micro (evaluator CLI), macro (README, paper) and macro with error rows as zeros
(statistics.py) per run and level, EditLoc per run, and per-instance METRICS for the
leaderboard's intervals and tests (arbwb-defined).
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from arbwb import schemas
from arbwb.contextbench.instance import LEVELS, f1, ratio
from arbwb.contextbench.score import rows_frame

AGGREGATIONS = ("micro", "macro", "macro_errors_as_zero")


def _hm(c: float | None, p: float | None) -> float | None:
    return None if c is None or p is None else f1(c, p)


def aggregate(results: pl.DataFrame) -> pl.DataFrame:
    """Per (run, level, aggregation): coverage, precision, both F1s, AUC, redundancy, counts.

    - ``micro``: the evaluator CLI summary (errors excluded): ΣI/ΣG and ΣI/ΣP (1.0 on empty
      sums); AUC and redundancy are macro means. ``f1_harmonic`` of those is arbwb-defined.
    - ``macro``: mean over valid instances (README tables, paper); ``f1_mean`` = mean of
      per-instance F1 (statistics.py), ``f1_harmonic`` = harmonic mean of the macro coverage
      and precision (README F1 columns).
    - ``macro_errors_as_zero``: statistics.py, error rows (missing_gold excluded) as zeros.
    ``n_valid``/``n_error`` count instances; missing_gold rows count only in ``n_missing_gold``.
    """
    valid = results.filter(pl.col("error").is_null())
    errors = results.filter(pl.col("error").is_not_null())
    rows = []
    for run in results["run"].unique(maintain_order=True).to_list():
        mine = valid.filter(pl.col("run") == run)
        err = errors.filter(pl.col("run") == run)
        n_error = err.filter(pl.col("error") != "missing_gold").height
        n_missing = err.filter(pl.col("error") == "missing_gold").height
        for level in [lv for lv in LEVELS if lv in mine["level"].to_list()]:
            part = mine.filter(pl.col("level") == level)
            n = part.height
            sums = part.select(pl.col("intersection", "gold_size", "pred_size").sum()).row(0)
            micro_c, micro_p = ratio(sums[0], sums[1]), ratio(sums[0], sums[2])
            means = part.select(
                pl.col("coverage", "precision", "f1", "auc_coverage", "redundancy").mean()
            ).row(0)
            common = {
                "run": run,
                "level": level,
                "n_valid": n,
                "n_error": n_error,
                "n_missing_gold": n_missing,
            }
            rows.append(
                {
                    **common,
                    "aggregation": "micro",
                    "coverage": micro_c,
                    "precision": micro_p,
                    "f1_mean": None,
                    "f1_harmonic": _hm(micro_c, micro_p),
                    "auc_coverage": means[3],
                    "redundancy": means[4],
                }
            )
            rows.append(
                {
                    **common,
                    "aggregation": "macro",
                    "coverage": means[0],
                    "precision": means[1],
                    "f1_mean": means[2],
                    "f1_harmonic": _hm(means[0], means[1]),
                    "auc_coverage": means[3],
                    "redundancy": means[4],
                }
            )
            total = n + n_error
            zero = [
                float(part[c].sum()) / total
                for c in ("coverage", "precision", "f1", "auc_coverage", "redundancy")
            ]
            rows.append(
                {
                    **common,
                    "aggregation": "macro_errors_as_zero",
                    "coverage": zero[0],
                    "precision": zero[1],
                    "f1_mean": zero[2],
                    "f1_harmonic": _hm(zero[0], zero[1]),
                    "auc_coverage": zero[3],
                    "redundancy": zero[4],
                }
            )
    return rows_frame(rows, AGGREGATE)


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


def aggregate_editloc(editloc_rows: pl.DataFrame) -> pl.DataFrame:
    """EditLoc per run: micro (evaluator: Σhits/Σgold lines, Σhits/Σpred lines) and macro
    (editloc_stats.py: mean recall, mean precision, mean per-instance F1).
    """
    rows = []
    for run in editloc_rows["run"].unique(maintain_order=True).to_list():
        part = editloc_rows.filter(pl.col("run") == run)
        hits, gold, pred = part.select(pl.col("intersection", "gold_size", "pred_size").sum()).row(
            0
        )
        rows.append(
            {
                "run": run,
                "aggregation": "micro",
                "recall": ratio(hits, gold),
                "precision": ratio(hits, pred),
                "f1_mean": None,
                "n": part.height,
            }
        )
        f1s = [f1(r, p) for r, p in part.select("recall", "precision").iter_rows()]
        rows.append(
            {
                "run": run,
                "aggregation": "macro",
                "recall": sum(part["recall"]) / part.height,
                "precision": sum(part["precision"]) / part.height,
                "f1_mean": sum(f1s) / len(f1s),
                "n": part.height,
            }
        )
    schema = {
        "run": pl.String,
        "aggregation": pl.String,
        "recall": pl.Float64,
        "precision": pl.Float64,
        "f1_mean": pl.Float64,
        "n": pl.Int64,
    }
    return rows_frame(rows, schema)


def metrics_frame(
    results: pl.DataFrame,
    editloc_rows: pl.DataFrame | None = None,
    *,
    errors: Literal["zero", "drop"] = "zero",
) -> pl.DataFrame:
    """Canonical METRICS (run, sample_id, metric, value) for leaderboard statistics.

    Metrics ``<level>.coverage|precision|f1``, ``auc.<level>``, ``redundancy.<level>`` and
    ``editloc.recall|precision``. Error rows (not missing_gold) are zeros for every level the
    run scores (statistics.py convention, §13.7) or dropped with ``errors="drop"``.
    """
    valid = results.filter(pl.col("error").is_null())
    long = pl.concat(
        [
            valid.select(
                "run", "sample_id", metric=pl.col("level") + "." + name, value=pl.col(name)
            )
            for name in ("coverage", "precision", "f1")
        ]
        + [
            valid.select(
                "run", "sample_id", metric=pl.lit(prefix) + pl.col("level"), value=pl.col(col)
            )
            for prefix, col in (("auc.", "auc_coverage"), ("redundancy.", "redundancy"))
        ]
    )
    if errors == "zero":
        names = long.select("run", "metric").unique()
        failed = results.filter(pl.col("error").is_not_null(), pl.col("sample_id").is_not_null())
        long = pl.concat(
            [
                long,
                failed.select("run", "sample_id")
                .join(names, on="run")
                .with_columns(value=pl.lit(0.0)),
            ]
        )
    if editloc_rows is not None and editloc_rows.height:
        long = pl.concat(
            [long]
            + [
                editloc_rows.select(
                    "run", "sample_id", metric=pl.lit(f"editloc.{c}"), value=pl.col(c)
                )
                for c in ("recall", "precision")
            ]
        )
    return schemas.validate(
        long.sort("run", "sample_id", "metric"), schemas.METRICS, name="metrics"
    )
