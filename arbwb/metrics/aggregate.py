"""Aggregation levels of per-sample metrics (spec §12): sample-weighted, task-macro, repo-macro,
from one weight-matrix formula (:func:`level_means`; docs/metrics.md).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from functools import reduce
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:  # numpy loads only where a weight matrix is used (macros, the leaderboard)
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]

POSITIVE_TASKS: tuple[str, ...] = ("code2test", "comment2context", "trace2code", "edit2ripple")
GROUPINGS = ("task", "repo", "split", "stratum")


def level_means(
    weights: FloatArray, values: FloatArray, codes: npt.NDArray[np.int64] | None = None
) -> FloatArray:
    """Means per weight row and column ((B, n) weights, (n, m) values -> (B, m)) over non-NaN
    values; with ``codes`` the unweighted mean of the groups' weighted means."""
    import numpy as np

    valid = ~np.isnan(values)
    filled = np.where(valid, values, 0.0)
    if codes is None:
        with np.errstate(invalid="ignore", divide="ignore"):
            out: FloatArray = (weights @ filled) / (weights @ valid)
        return out
    means = []
    order = np.argsort(codes, kind="stable")  # each group's samples, in their order
    for members in np.split(order, np.flatnonzero(np.diff(codes[order])) + 1) if codes.size else []:
        drawn = weights[:, members]
        counts = drawn @ valid[members].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            means.append(np.where(counts > 0, (drawn @ filled[members]) / counts, np.nan))
    if not means:
        return np.full((weights.shape[0], values.shape[1]), np.nan)
    stacked = np.stack(means)
    present = (~np.isnan(stacked)).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        macro: FloatArray = np.nansum(stacked, axis=0) / present
    return np.where(present > 0, macro, np.nan)


def group_codes(column: pl.Series) -> npt.NDArray[np.int64]:
    """Dense 0-based integer codes of a column's values (nulls form their own group)."""
    codes: npt.NDArray[np.int64] = (  # to_numpy loads numpy
        column.cast(pl.String).fill_null("").rank("dense").cast(pl.Int64).to_numpy() - 1
    )
    return codes


def _with_group(metrics: pl.DataFrame, samples: pl.DataFrame, by: str) -> pl.DataFrame:
    """Attach ``by`` from ``samples`` to each metric row; every sample must be known."""
    if by not in GROUPINGS:
        msg = f"cannot group by {by!r}; use one of {GROUPINGS}"
        raise ValueError(msg)
    if by not in samples.columns:
        msg = f"samples frame has no column {by!r}; pass the SAMPLES frame from load_samples"
        raise ValueError(msg)
    keys = samples.select("sample_id", by).unique("sample_id", keep="first")
    joined = metrics.join(keys, on="sample_id", how="left")
    unknown = joined.filter(pl.col(by).is_null())["sample_id"].unique()
    if unknown.len():
        msg = f"{unknown.len()} sample ids have no {by!r} in samples, e.g. {unknown[0]!r}"
        raise ValueError(msg)
    return joined


def pooled_mean(values: Sequence[float | None]) -> float | None:
    """Mean of the non-null, non-NaN values, summed left to right as upstream sums means
    (spec §0); None when there is none. :func:`level_means` with a row of ones, up to the
    summation order."""
    kept = [v for v in values if v is not None and v == v]  # NaN != NaN
    return reduce(operator.add, kept, 0.0) / len(kept) if kept else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The one percentile every summary uses (upstream's granularity and confidence
    summaries, spec §9.7 and §11): sort, position q·(n-1), linear interpolation; None when
    there are no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _levels(metrics: pl.DataFrame, by: str | None, within: str | None = None) -> pl.DataFrame:
    """Per (run, [within], metric): n, value (the :func:`pooled_mean`, or :func:`level_means`
    macro over ``by`` groups) and n_groups, from one gathering query."""
    keys = ["run", *([within] if within else []), "metric"]
    gathered = [pl.col("value").cast(pl.Float64)]
    if by is not None:
        dense = pl.col(by).cast(pl.String).fill_null("").rank("dense").over(keys)
        metrics = metrics.with_columns(_codes=dense.cast(pl.Int64) - 1)
        gathered += [pl.col("_codes"), pl.col(by).alias("_labels")]
    groups = metrics.group_by(keys, maintain_order=True).agg(gathered)
    width = len(keys)
    rows: list[dict[str, object]] = []
    for record in groups.iter_rows():
        key, values, coded = record[:width], record[width], record[width + 1 :]
        row: dict[str, object] = {**dict(zip(keys, key, strict=True)), "n": len(values)}
        if by is None:
            row |= {"value": pooled_mean(values), "n_groups": None, "groups": None}
        else:
            import numpy as np

            codes = np.asarray(coded[0], dtype=np.int64)
            part = np.asarray(values, dtype=np.float64).reshape(-1, 1)  # None -> NaN
            value = float(level_means(np.ones((1, part.shape[0])), part, codes)[0, 0])
            row |= {
                "value": None if np.isnan(value) else value,
                "n_groups": int(codes.max()) + 1,
                "groups": ",".join(sorted(set(coded[1]))),
            }
        rows.append(row)
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "run": pl.String,
        **({within: metrics.schema[within]} if within else {}),
        "metric": pl.String,
        "n": pl.Int64,
        "value": pl.Float64,
        "n_groups": pl.Int64,
        "groups": pl.String,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def aggregate(
    metrics: pl.DataFrame, samples: pl.DataFrame | None = None, *, by: str | None = None
) -> pl.DataFrame:
    """Sample-weighted mean per (run, [by], metric): columns run, [by], metric, n, value."""
    if by is None:
        return _levels(metrics, None).select("run", "metric", "n", "value")
    if samples is None:
        msg = f"grouping by {by!r} needs the samples frame"
        raise ValueError(msg)
    joined = _with_group(metrics, samples, by)
    means = _levels(joined, None, within=by).select("run", by, "metric", "n", "value")
    return means.sort("run", by, maintain_order=True)


def task_macro(
    metrics: pl.DataFrame, samples: pl.DataFrame, *, require_all: bool = False
) -> pl.DataFrame:
    """Unweighted mean of the per-task means of the tasks present (spec §12); upstream's
    all-four-tasks rule with ``require_all=True``, else labelled with ``tasks``."""
    out = _levels(_with_group(metrics, samples, "task"), "task").select(
        "run", "metric", "value", n_tasks="n_groups", tasks="groups"
    )
    if require_all:
        partial = out.filter(
            ~pl.col("tasks")
            .str.split(",")
            .list.set_intersection(list(POSITIVE_TASKS))
            .list.len()
            .eq(len(POSITIVE_TASKS))
        )
        if partial.height:
            row = partial.row(0, named=True)
            msg = (
                f"task-macro needs all of {POSITIVE_TASKS}; run {row['run']!r} has only "
                f"{row['tasks']!r}; pass require_all=False for a labelled partial macro"
            )
            raise ValueError(msg)
    return out


def repo_macro(metrics: pl.DataFrame, samples: pl.DataFrame) -> pl.DataFrame:
    """Unweighted mean over repositories of each repository's mean (spec §12)."""
    return _levels(_with_group(metrics, samples, "repo"), "repo").select(
        "run", "metric", "value", n_repos="n_groups"
    )
