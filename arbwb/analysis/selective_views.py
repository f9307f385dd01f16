"""Calibration views upstream lacks (all arbwb-defined) on the §9 protocol: risk-coverage,
AUROC/AUPRC per no-gold stratum, confidence distributions, threshold transfer, Wilson
intervals, other confidence signals and the paper's selective tables (docs/selective.md).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.analysis import selective_metrics as sm
from arbwb.analysis.selective_folds import Calibration, cross_validate
from arbwb.errors import InputError

FloatArray = npt.NDArray[np.float64]
STRATA = ("natural", "counterfactual", "all")
SIGNALS = ("confidence", "top_score", "file_margin", "top1_minus_mean_topk", "repo_z")
#: The measured columns of :func:`separability`.
SEPARABILITY = (
    *("auroc", "auroc_low", "auroc_high", "auprc_no_gold", "auprc_low", "auprc_high"),
    "no_gold_prevalence",
)


def _interval(replicates: FloatArray, level: float) -> tuple[FloatArray, FloatArray]:
    """Percentile interval per column of (n_boot, m) replicates, ignoring NaN resamples."""
    alpha = 1.0 - level
    with warnings.catch_warnings():  # a column with no defined resample stays NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        low = np.nanquantile(replicates, alpha / 2, axis=0)
        high = np.nanquantile(replicates, 1 - alpha / 2, axis=0)
    return low, high


def _runs(rows: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    return [(str(k[0]), g) for k, g in rows.group_by("run", maintain_order=True)]


# ------------------------------------------------------------------ risk-coverage


def risk_coverage(
    rows: pl.DataFrame,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    cluster: str | None = None,
) -> pl.DataFrame:
    """Per run and §9.4 threshold: coverage, selective success@20 and accepted-positive hit
    rate from the sweep, with arbwb-defined bootstrap bands (over ``cluster`` if given)."""
    from arbwb.metrics.stats import bootstrap_weights

    parts = []
    for run, part in _runs(rows):
        conf = part["confidence"].to_numpy().astype(np.float64)
        is_pos = (part["label"] == "positive").to_numpy()
        hit = part["recall@20"].to_numpy() > 0
        thresholds = np.array(sm.candidate_thresholds(conf))
        returned = conf[None, :] >= thresholds[:, None]  # (K, n): not abstained
        success = (returned & is_pos & hit) | (~returned & ~is_pos)
        accepted_pos = returned & is_pos
        clusters = part[cluster].to_list() if cluster else None
        weights = bootstrap_weights(part.height, n_boot=n_boot, seed=seed, clusters=clusters)
        totals = weights.sum(axis=1)[:, None]
        succ_b = (weights @ success.T) / totals
        cov_b = (weights @ returned.T) / totals
        denom = weights @ accepted_pos.T
        with np.errstate(invalid="ignore", divide="ignore"):
            hit_b = np.where(denom > 0, (weights @ (accepted_pos & hit).T) / denom, np.nan)
        bands = {"coverage": cov_b, "success": succ_b, "hit": hit_b}
        ends = {
            f"{name}_{end}": bounds
            for name, reps in bands.items()
            for end, bounds in zip(("low", "high"), _interval(reps, level), strict=True)
        }
        observed = sm.sweep(part).select(
            "threshold_index",
            "threshold",
            "coverage",
            "selective_success@20",
            "accepted_positive_hit@20",
            "positive_returned",
        )
        parts.append(observed.with_columns(run=pl.lit(run), **ends))
    return pl.concat(parts).select("run", pl.exclude("run"))


# --------------------------------------------------------------------- AUROC / AUPRC


def _auroc_matrix(pos: FloatArray, neg: FloatArray) -> FloatArray:
    """Pairwise Mann-Whitney kernel: 1 if pos > neg, 0.5 on ties, else 0 (P, N)."""
    out: FloatArray = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    return out


def _average_precision(
    score: FloatArray, target: npt.NDArray[np.bool_], weights: FloatArray
) -> FloatArray:
    """Weighted average precision per weight row, Σ (ΔR)·P over distinct scores best first
    (ties share one point, as scikit-learn's ``average_precision_score``)."""
    order = np.argsort(-score, kind="stable")
    ordered = score[order]
    ends = np.r_[np.flatnonzero(np.diff(ordered) != 0), ordered.size - 1]
    w = weights[:, order]
    tp = np.cumsum(w * target[order], axis=1)[:, ends]
    fp = np.cumsum(w * ~target[order], axis=1)[:, ends]
    total = tp[:, -1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = tp / (tp + fp)
        recall = tp / total
    step = np.diff(np.c_[np.zeros((recall.shape[0], 1)), recall], axis=1)
    out: FloatArray = np.where(total[:, 0] > 0, np.nansum(step * precision, axis=1), np.nan)
    return out


def separability(
    rows: pl.DataFrame, *, n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> pl.DataFrame:
    """AUROC of confidence and AUPRC of no-gold detection per run and no-gold stratum, with
    stratified percentile-bootstrap intervals (arbwb-defined)."""
    from arbwb.metrics.stats import bootstrap_weights

    out = []
    for run, part in _runs(rows):
        pos = part.filter(pl.col("label") == "positive")["confidence"].to_numpy()
        for stratum in STRATA:
            keep = pl.col("label") == "no_gold"
            if stratum != "all":
                keep &= pl.col("stratum") == stratum
            neg = part.filter(keep)["confidence"].to_numpy()
            row: dict[str, Any] = {"run": run, "stratum": stratum}
            row |= {"positive": pos.size, "no_gold": neg.size}
            if pos.size == 0 or neg.size == 0:
                out.append(row)
                continue
            kernel = _auroc_matrix(pos.astype(np.float64), neg.astype(np.float64))
            w_pos = bootstrap_weights(pos.size, n_boot=n_boot, seed=seed)
            w_neg = bootstrap_weights(neg.size, n_boot=n_boot, seed=seed + 1)
            auroc_b = ((w_pos @ kernel) * w_neg).sum(axis=1) / (pos.size * neg.size)
            score = -np.r_[pos, neg].astype(np.float64)  # low confidence flags no-gold
            target = np.r_[np.zeros(pos.size, bool), np.ones(neg.size, bool)]
            ap = _average_precision(score, target, np.ones((1, score.size)))[0]
            ap_b = _average_precision(score, target, np.c_[w_pos, w_neg])
            low, high = _interval(np.c_[auroc_b, ap_b], level)
            values = (kernel.mean(), low[0], high[0], ap, low[1], high[1])
            prevalence = neg.size / (pos.size + neg.size)
            out.append(
                row | dict(zip(SEPARABILITY, [*map(float, values), prevalence], strict=True))
            )
    schema: dict[str, type[pl.DataType]] = dict.fromkeys(("run", "stratum"), pl.String)
    schema |= dict.fromkeys(("positive", "no_gold"), pl.Int64)
    schema |= dict.fromkeys(SEPARABILITY, pl.Float64)
    return pl.DataFrame(out, schema=schema)


# ------------------------------------------------------------------ distributions


def confidence_distribution(
    rows: pl.DataFrame, by: Sequence[str] = ("run", "stratum")
) -> pl.DataFrame:
    """Count, min, p10, median, mean, p90, max of confidence per group (linear quantiles)."""
    conf = pl.col("confidence")
    return (
        rows.group_by(list(by))
        .agg(
            n=pl.len().cast(pl.Int64),
            min=conf.min(),
            p10=conf.quantile(0.10, interpolation="linear"),
            median=conf.median(),
            mean=conf.mean(),
            p90=conf.quantile(0.90, interpolation="linear"),
            max=conf.max(),
        )
        .sort(list(by))
    )


# ------------------------------------------------------------------ rates & tables


def rate_intervals(metrics: Mapping[str, Any]) -> pl.DataFrame:
    """Wilson intervals for every rate of a §9.3 metrics dict (k recovered from its counts)."""
    from arbwb.metrics.stats import wilson_interval

    pr, pa = metrics["positive_returned"], metrics["positive_abstained"]
    nr, na = metrics["no_gold_returned"], metrics["no_gold_abstained"]
    total = pr + pa + nr + na
    hits = round(metrics["accepted_positive_hit@20"] * pr)
    counts = {
        "positive_pass_rate": (pr, pr + pa),
        "no_gold_abstain_rate": (na, nr + na),
        "selective_accuracy": (pr + na, total),
        "selective_success@20": (na + hits, total),
        "coverage": (pr + nr, total),
        "accepted_positive_hit@20": (hits, pr),
    }
    rows = [
        (name, k, n, metrics[name], *(wilson_interval(k, n) if n else (None, None)))
        for name, (k, n) in counts.items()
    ]
    schema = {"metric": pl.String} | dict.fromkeys(("k", "n"), pl.Int64)
    return pl.DataFrame(
        rows, schema | dict.fromkeys(("value", "low", "high"), pl.Float64), orient="row"
    )


def selective_table(calibrations: Sequence[Calibration]) -> pl.DataFrame:
    """The paper's selective table: per run and protocol, no-abstain vs out-of-fold rows."""
    out = []
    for cal in calibrations:
        for run, cv in cal.runs.items():
            for point, metrics in (("no abstain", cv.no_abstain), ("out-of-fold", cv.out_of_fold)):
                row = {"run": run, "protocol": cal.protocol, "folds": cal.folds, "point": point}
                row |= {m: metrics[m] for m in sm.TABLE_METRICS}
                low, high = _wilson(metrics)
                out.append(row | {"success_low": low, "success_high": high})
    return pl.DataFrame(out)


def _wilson(metrics: Mapping[str, Any]) -> tuple[float, float]:
    table = rate_intervals(metrics).filter(pl.col("metric") == "selective_success@20")
    return float(table["low"][0]), float(table["high"][0])


def fold_table(calibrations: Sequence[Calibration]) -> pl.DataFrame:
    """Per run, protocol and fold: threshold, test size and test metrics (spec §13.6)."""
    out = []
    for cal in calibrations:
        for run, cv in cal.runs.items():
            for fold in cv.folds:
                row = {"run": run, "protocol": cal.protocol, "fold": fold["fold"]}
                row["threshold"] = _finite(fold["threshold"])
                row |= {k: fold[k] for k in ("test_samples", "test_positive", "test_no_gold")}
                out.append(row | {m: fold["test_metrics"][m] for m in sm.TABLE_METRICS})
    return pl.DataFrame(out, schema_overrides={"threshold": pl.Float64})


def _finite(threshold: float) -> float | None:
    """A threshold for a table: null for -inf (never abstain)."""
    return None if threshold == sm.NEG_INF else threshold


def threshold_transfer(calibration: Calibration) -> pl.DataFrame:
    """How far each fold's calibrated threshold is from the held-out repos' own best one, and
    what the held-out repos lose by it (balanced accuracy, success@20; arbwb-defined view).
    """
    out = []
    for run, cv in calibration.runs.items():
        rows = calibration.rows[run]
        fold_of = pl.col("repo").replace_strict(calibration.repo_folds, return_dtype=pl.Int64)
        for fold in cv.folds:
            test = rows.filter(fold_of == fold["fold"])
            oracle = sm.calibrated_row(test)
            transferred = fold["threshold"]
            at_transfer = sm.metrics_at(test, transferred)
            at_oracle = sm.metrics_at(test, oracle["threshold"])
            finite = transferred != sm.NEG_INF and oracle["threshold"] != sm.NEG_INF
            row = {"run": run, "protocol": calibration.protocol, "fold": fold["fold"]}
            row |= {
                "threshold": _finite(transferred),
                "oracle_threshold": _finite(oracle["threshold"]),
                "shift": transferred - oracle["threshold"] if finite else None,
            }
            for metric, name, loss in (
                ("balanced_accuracy", "balanced_accuracy", "balanced_loss"),
                ("selective_success@20", "success@20", "success_loss"),
            ):
                got, best = at_transfer[metric], at_oracle[metric]
                row |= {name: got, f"oracle_{name}": best, loss: best - got}
            out.append(row)
    return pl.DataFrame(
        out, schema_overrides={c: pl.Float64 for c in ("threshold", "oracle_threshold", "shift")}
    )


# ------------------------------------------------------------------ other signals


def confidence_signals(rows: pl.DataFrame, rankings: pl.DataFrame, *, k: int = 5) -> pl.DataFrame:
    """Rows plus alternative confidences from the run's file scores (``top_score``,
    ``file_margin``, ``top1_minus_mean_topk``, ``repo_z``; docs/selective.md)."""
    top = rankings.filter(pl.col("rank") <= k).sort("sample_id", "rank")
    per = top.group_by("sample_id").agg(
        s1=pl.col("score").first(),
        s2=pl.col("score").get(1, null_on_oob=True).fill_null(0.0),
        mean_k=pl.col("score").mean(),
    )
    repo = pl.col("confidence")
    std = repo.std(ddof=0).over("run", "repo")
    return (
        rows.join(per, on="sample_id", how="left")
        .with_columns(
            top_score=pl.col("s1"),
            file_margin=pl.col("s1") - pl.col("s2"),
            top1_minus_mean_topk=pl.col("s1") - pl.col("mean_k"),
            repo_z=pl.when(std > 0)
            .then((repo - repo.mean().over("run", "repo")) / std)
            .otherwise(0.0),
        )
        .drop("s1", "s2", "mean_k")
    )


def compare_signals(
    signals: pl.DataFrame, calibration: Calibration, names: Sequence[str] = SIGNALS
) -> pl.DataFrame:
    """Out-of-fold §9.6 metrics of each signal as the confidence, on the calibration's own
    folds; a signal with nulls is reported with ``available = False``."""
    out = []
    for run, rows in calibration.rows.items():
        part = signals.filter(pl.col("run") == run).join(
            rows.select("sample_id"), on="sample_id", how="semi"
        )
        if part.height != rows.height:
            msg = f"signals of run {run!r} cover {part.height} of {rows.height} protocol rows"
            raise InputError(msg, field="sample_id")
        for name in names:
            row: dict[str, Any] = {"run": run, "protocol": calibration.protocol, "signal": name}
            values = part[name]
            if values.null_count() or values.is_nan().any():
                out.append(row | {"available": False})
                continue
            cv = cross_validate(part.with_columns(confidence=values), calibration.repo_folds)
            row |= {"available": True} | {m: cv.out_of_fold[m] for m in sm.TABLE_METRICS}
            row["no_abstain_success@20"] = cv.no_abstain["selective_success@20"]
            out.append(row)
    return pl.DataFrame(out, infer_schema_length=None)
