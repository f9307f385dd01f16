"""Aggregation levels of per-sample metrics (spec §12): sample-weighted, task-macro, repo-macro.

One formula serves every caller (``arbwb score``, the leaderboard and its bootstrap, the tests):
:func:`level_means` takes a weight matrix, so a point value is the row of ones and a bootstrap
replicate is a row of resampling counts. A null value (``first_gold_rank`` without a hit) is
left out of its mean while ``n`` still counts every sample; a macro averages the groups (tasks
or repositories) that have at least one value.

``samples`` may be the SAMPLES frame of :func:`arbwb.io.samples.load_samples` or the
``details`` frame of :class:`arbwb.io.rankings.RunData`: both carry ``sample_id``, ``task``,
``repo`` and ``split`` (``stratum`` only the SAMPLES frame).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

POSITIVE_TASKS: tuple[str, ...] = ("code2test", "comment2context", "trace2code", "edit2ripple")
GROUPINGS = ("task", "repo", "split", "stratum")
FloatArray = npt.NDArray[np.float64]


def level_means(
    weights: FloatArray, values: FloatArray, codes: npt.NDArray[np.int64] | None = None
) -> FloatArray:
    """Means per weight row and column: (B, n) weights, (n, m) values -> (B, m).

    Weighted: ``Σ w·v / Σ w`` over non-NaN values. Macro (``codes`` gives each sample's group
    0..G-1): the unweighted mean over groups of each group's weighted mean, over the groups
    with positive weight on non-NaN values. NaN where nothing is left.
    """
    valid = ~np.isnan(values)
    filled = np.where(valid, values, 0.0)
    if codes is None:
        with np.errstate(invalid="ignore", divide="ignore"):
            out: FloatArray = (weights @ filled) / (weights @ valid)
        return out
    means = []
    for group in range(int(codes.max()) + 1 if codes.size else 0):
        mask = codes == group
        counts = weights[:, mask] @ valid[mask]
        with np.errstate(invalid="ignore", divide="ignore"):
            means.append(np.where(counts > 0, (weights[:, mask] @ filled[mask]) / counts, np.nan))
    if not means:
        return np.full((weights.shape[0], values.shape[1]), np.nan)
    stacked = np.stack(means)
    present = (~np.isnan(stacked)).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        macro: FloatArray = np.nansum(stacked, axis=0) / present
    return np.where(present > 0, macro, np.nan)


def group_codes(column: pl.Series) -> npt.NDArray[np.int64]:
    """Dense 0-based integer codes of a column's values (nulls form their own group)."""
    codes: npt.NDArray[np.int64] = (
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


def _levels(metrics: pl.DataFrame, by: str | None, within: str | None = None) -> pl.DataFrame:
    """Per (run, [within], metric): n, value (weighted, or macro over ``by`` groups), n_groups.

    One query finds every group's rows (in frame order) and ``by`` codes; each mean is then
    :func:`level_means` of that group's values alone, so it equals a call per group.
    """
    keys = ["run", *([within] if within else []), "metric"]
    codes_expr = []
    if by is not None:
        dense = pl.col(by).cast(pl.String).fill_null("").rank("dense").over(keys)
        codes_expr = [(dense.cast(pl.Int64) - 1).alias("_code")]
    indexed = metrics.with_row_index("_row").with_columns(codes_expr)
    groups = indexed.group_by(keys, maintain_order=True).agg(_rows=pl.col("_row"))
    values = metrics["value"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    codes_all = None if by is None else indexed["_code"].to_numpy()
    labels = None if by is None else metrics[by].to_list()
    rows: list[dict[str, object]] = []
    for *key, members in groups.iter_rows():
        where = np.asarray(members, dtype=np.int64)
        part = values[where].reshape(-1, 1)
        codes = None if codes_all is None else codes_all[where]
        value = float(level_means(np.ones((1, part.shape[0])), part, codes)[0, 0])
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "n": part.shape[0],
                "value": None if np.isnan(value) else value,
                "n_groups": None if codes is None else int(codes.max()) + 1,
                "groups": None
                if labels is None
                else ",".join(sorted({labels[i] for i in members})),
            }
        )
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
    """Unweighted mean of the per-task means of the tasks present (spec §12).

    Only samples with gold are scored, so the tasks present are positive tasks. Upstream
    divides by 4 and requires all four positive tasks: ``require_all=True`` enforces that.
    By default (arbwb-defined) a partial macro is returned and labelled with the tasks it
    used (``tasks``, ``n_tasks``).
    """
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
