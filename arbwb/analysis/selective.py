"""Selective retrieval (abstention) exactly as upstream: decision, sweep, transfer, grouped CV.

Spec §9 is the contract. A *rows* frame (:data:`ROWS`: one row per sample of one run with its
repo, label, no-gold reason, stratum, confidence and Recall@20) goes in; sweeps, operating
points, fold assignments and out-of-fold predictions come out. Counts and rates are computed
from integer counts with Python float division, so they equal upstream's bit for bit; means
(accepted-positive Recall@20, threshold mean) are left-to-right sums (spec §0).
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb import schemas
from arbwb.errors import InputError
from arbwb.io.rankings import RunData
from arbwb.io.samples import COUNTERFACTUAL_REASON
from arbwb.tables import rows_to_markdown

Protocol = Literal["mixed", "natural"]
PROTOCOLS: tuple[Protocol, ...] = ("mixed", "natural")
NEG_INF = float("-inf")
ROWS: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "repo": pl.String,
    "label": pl.String,  # positive | no_gold
    "no_gold_reason": pl.String,  # null for positives
    "stratum": pl.String,  # positive | natural | counterfactual (spec §9.6)
    "confidence": pl.Float64,
    "recall@20": pl.Float64,  # 0.0 for no-gold rows
}
COUNTS = ("no_gold_abstained", "no_gold_returned", "positive_returned", "positive_abstained")
SET_METRICS = (
    *COUNTS,
    "positive_pass_rate",
    "no_gold_abstain_rate",
    "selective_accuracy",
    "balanced_accuracy",
    "selective_success@20",
    "coverage",
    "accepted_positive_recall@20",
    "accepted_positive_hit@20",
)
#: Operating points (spec §9.4): (sweep-row filter, lexicographic selection key).
POINTS: dict[str, tuple[tuple[str, float] | None, tuple[str, str, str]]] = {
    "best_selective_accuracy": (
        None,
        ("selective_accuracy", "balanced_accuracy", "selective_success@20"),
    ),
    "best_balanced_accuracy": (
        None,
        ("balanced_accuracy", "selective_accuracy", "selective_success@20"),
    ),
    "best_selective_success@20": (
        None,
        ("selective_success@20", "balanced_accuracy", "selective_accuracy"),
    ),
    "target_no_gold_abstain_80": (
        ("no_gold_abstain_rate", 0.80),
        ("positive_pass_rate", "balanced_accuracy", "selective_accuracy"),
    ),
    "target_positive_pass_90": (
        ("positive_pass_rate", 0.90),
        ("no_gold_abstain_rate", "balanced_accuracy", "selective_accuracy"),
    ),
}
SELECTION = "best_balanced_accuracy"
#: The §13.6 report columns, in the paper's order.
TABLE_METRICS = (
    "positive_pass_rate",
    "no_gold_abstain_rate",
    "balanced_accuracy",
    "selective_accuracy",
    "selective_success@20",
    "coverage",
)
_LIST_LIMIT = 8


def _named(ids: Sequence[str]) -> str:
    """A readable list of sample ids/repos for error messages (first few, then a count)."""
    shown = ", ".join(repr(i) for i in ids[:_LIST_LIMIT])
    more = len(ids) - _LIST_LIMIT
    return f"{shown} and {more} more" if more > 0 else shown


# --------------------------------------------------------------------------- rows


def rankings_confidence(rankings: pl.DataFrame) -> pl.DataFrame:
    """``sample_id, confidence``: the score of each sample's rank-1 file (imported runs).

    For lexical/BM25 details the best file score is the best chunk score, i.e. upstream's
    confidence (spec §9.2); for other runs it is arbwb's reading of "top score".
    """
    return (
        rankings.filter(pl.col("rank") == pl.col("rank").min().over("sample_id"))
        .unique("sample_id", keep="first", maintain_order=True)
        .select("sample_id", confidence="score")
    )


def _recall_at_20(run: RunData, gold: pl.DataFrame) -> pl.DataFrame:
    """``sample_id, recall@20``: the stored upstream value when present, else |G ∩ R[:20]|/|G|."""
    top = run.rankings.filter(pl.col("rank") <= 20).select("sample_id", "path")
    computed = (
        gold.join(top.with_columns(hit=pl.lit(1)), on=["sample_id", "path"], how="left")
        .group_by("sample_id")
        .agg(computed=pl.col("hit").fill_null(0).sum() / pl.len())
    )
    stored = (
        run.stored.filter(pl.col("metric") == "recall@20").select("sample_id", stored="value")
        if run.stored is not None
        else pl.DataFrame(schema={"sample_id": pl.String, "stored": pl.Float64})
    )
    return computed.join(stored, on="sample_id", how="left").select(
        "sample_id", pl.coalesce("stored", "computed").cast(pl.Float64).alias("recall@20")
    )


def selective_rows(
    run: RunData,
    samples: pl.DataFrame,
    labels: pl.DataFrame,
    *,
    source: Literal["auto", "details", "rankings"] = "auto",
    missing: Literal["error", "zero"] = "error",
) -> pl.DataFrame:
    """The :data:`ROWS` frame of one run: every sample it answers, with label and confidence.

    Repo, stratum and reason come from ``samples`` (SAMPLES frame); a selective details file's
    own ``repo``/``label``/``no_gold_reason`` must agree. ``source="auto"`` takes the details
    ``confidence`` when the run has one, else the rank-1 score of its rankings. Missing or NaN
    confidences are an error naming the samples; ``missing="zero"`` reads them as 0.0 as
    upstream does (spec §9.2).
    """
    answered = run.submitted.filter(pl.col("status") == "ok").select("sample_id")
    known = samples.select("sample_id", "repo", "stratum", "no_gold_reason")
    unknown = answered.join(known, on="sample_id", how="anti")["sample_id"].to_list()
    if unknown:
        msg = f"{len(unknown)} samples of run {run.run!r} are not in the samples: {_named(unknown)}"
        raise InputError(msg, path=run.path, field="sample_id")
    frame = answered.join(known, on="sample_id", how="left").with_columns(
        label=pl.when(pl.col("stratum") == "positive")
        .then(pl.lit("positive"))
        .otherwise(pl.lit("no_gold"))
    )
    if frame["stratum"].is_null().any():
        bad = frame.filter(pl.col("stratum").is_null())["sample_id"].to_list()
        msg = f"samples without a stratum (no sample record with gold): {_named(bad)}"
        raise InputError(msg, path=run.path, field="stratum")
    _check_details_agree(run, frame)
    use_details = run.selective is not None and source in ("auto", "details")
    if source == "details" and run.selective is None:
        msg = "the run carries no selective `confidence` fields; use the rankings' top score"
        raise InputError(msg, path=run.path, field="confidence")
    conf = (
        run.selective.select("sample_id", "confidence")
        if use_details and run.selective is not None
        else rankings_confidence(run.rankings)
    )
    frame = frame.join(conf, on="sample_id", how="left")
    bad_conf = frame.filter(pl.col("confidence").is_null() | pl.col("confidence").is_nan())
    if bad_conf.height and missing == "error":
        ids = bad_conf["sample_id"].to_list()
        where = "details `confidence`" if use_details else "rank-1 score"
        msg = (
            f"{len(ids)} samples of run {run.run!r} have a missing or NaN {where}: {_named(ids)}; "
            "fix the run, or read them as 0.0 like upstream (missing='zero', spec §9.2)"
        )
        raise InputError(msg, path=run.path, field="confidence")
    frame = frame.with_columns(
        confidence=pl.when(pl.col("confidence").is_nan())
        .then(None)
        .otherwise(pl.col("confidence"))
        .fill_null(0.0)
    )
    gold = labels.filter(pl.col("role") == "gold").select("sample_id", "path").unique()
    recall = _recall_at_20(run, gold)
    frame = frame.join(recall, on="sample_id", how="left")
    unlabeled = frame.filter((pl.col("label") == "positive") & pl.col("recall@20").is_null())
    if unlabeled.height:
        ids = unlabeled["sample_id"].to_list()
        msg = f"positive samples without gold files (upstream skips them): {_named(ids)}"
        raise InputError(msg, path=run.path, field="gold_files")
    out = frame.with_columns(
        run=pl.lit(run.run, pl.String), **{"recall@20": pl.col("recall@20").fill_null(0.0)}
    )
    return schemas.validate(out, ROWS, name="selective rows")


def _check_details_agree(run: RunData, frame: pl.DataFrame) -> None:
    """A details file's repo, label and reason must equal the samples' (else error, named)."""
    if run.details is not None:
        repos = run.details.select("sample_id", details_repo="repo")
        bad = frame.join(repos, on="sample_id").filter(pl.col("repo") != pl.col("details_repo"))
        if bad.height:
            ids = bad["sample_id"].to_list()
            msg = f"details repo differs from the samples' repo for {_named(ids)}"
            raise InputError(msg, path=run.path, field="repo")
    if run.selective is None:
        return
    own = run.selective.select("sample_id", own_label="label", own_reason="no_gold_reason")
    joined = frame.join(own, on="sample_id")
    for field, mine, theirs in (
        ("label", "own_label", "label"),
        ("no_gold_reason", "own_reason", "no_gold_reason"),
    ):
        bad = joined.filter(pl.col(mine).ne_missing(pl.col(theirs)))
        if field == "label":
            bad = bad.filter(pl.col(mine).is_not_null())
        if bad.height:
            ids = bad["sample_id"].to_list()
            msg = f"details {field} disagrees with the samples for {_named(ids)}"
            raise InputError(msg, path=run.path, field=field)


def protocol_rows(rows: pl.DataFrame, protocol: Protocol) -> pl.DataFrame:
    """Rows of a protocol (spec §9.6): mixed = all; natural = positives + non-counterfactual."""
    if protocol == "mixed":
        return rows
    if protocol == "natural":
        return rows.filter(pl.col("no_gold_reason").ne_missing(pl.lit(COUNTERFACTUAL_REASON)))
    msg = f"protocol must be one of {PROTOCOLS}, got {protocol!r}"
    raise ValueError(msg)


def check_shared_map(rows_by_run: Mapping[str, pl.DataFrame]) -> None:
    """Every run must have the reference run's (sample_id -> repo, label, reason) map (§9.6)."""
    names = list(rows_by_run)
    if not names:
        raise InputError("no runs given; pass at least one selective run")
    key = ["sample_id", "repo", "label", "no_gold_reason"]
    reference = rows_by_run[names[0]].select(key)
    for name in names[1:]:
        other = rows_by_run[name].select(key)
        only_ref = reference.join(other, on=key, how="anti", nulls_equal=True)
        only_other = other.join(reference, on=key, how="anti", nulls_equal=True)
        ids = sorted(set(only_ref["sample_id"]) | set(only_other["sample_id"]))
        if ids:
            msg = (
                f"runs {names[0]!r} (reference) and {name!r} disagree on the sample -> (repo, "
                f"label, no_gold_reason) map for {len(ids)} samples: {_named(ids)}"
            )
            raise InputError(msg, field="sample_id")


def check_both_classes(rows: pl.DataFrame, what: str) -> None:
    """A calibration set needs positives and no-gold samples (else the protocol changes)."""
    for label in ("positive", "no_gold"):
        if not (rows["label"] == label).any():
            ids = rows["sample_id"].to_list()
            msg = (
                f"{what} has no {label} samples among its {rows.height} samples "
                f"({_named(ids) or 'none'}); selective calibration needs both classes"
            )
            raise InputError(msg, field="label")


# ------------------------------------------------------------------ decision & metrics


def _arrays(
    rows: pl.DataFrame,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float64], list[float]]:
    is_pos = (rows["label"] == "positive").to_numpy()
    return is_pos, rows["confidence"].to_numpy().astype(np.float64), rows["recall@20"].to_list()


def abstains(confidence: npt.ArrayLike, threshold: float) -> npt.NDArray[np.bool_]:
    """The decision rule (spec §9.3): abstain iff ``confidence < threshold`` (strict)."""
    out: npt.NDArray[np.bool_] = np.asarray(confidence, dtype=np.float64) < threshold
    return out


def _metrics(
    is_pos: npt.NDArray[np.bool_], abstained: npt.NDArray[np.bool_], recall: Sequence[float]
) -> dict[str, Any]:
    pr = int((is_pos & ~abstained).sum())
    pa = int((is_pos & abstained).sum())
    nr = int((~is_pos & ~abstained).sum())
    na = int((~is_pos & abstained).sum())
    p, n = pr + pa, nr + na
    total = p + n
    returned = [r for r, keep in zip(recall, is_pos & ~abstained, strict=True) if keep]
    recall_sum = 0.0
    for value in returned:  # left-to-right, as upstream (spec §0)
        recall_sum += value
    hits = sum(1 for value in returned if value > 0)
    pass_rate = pr / p if p else 0.0
    abstain_rate = na / n if n else 0.0
    accuracy = (pr + na) / total if total else 0.0
    return {
        "no_gold_abstained": na,
        "no_gold_returned": nr,
        "positive_returned": pr,
        "positive_abstained": pa,
        "positive_pass_rate": pass_rate,
        "no_gold_abstain_rate": abstain_rate,
        "selective_accuracy": accuracy,
        "balanced_accuracy": (pass_rate + abstain_rate) / 2 if p and n else accuracy,
        "selective_success@20": (na + hits) / total if total else 0.0,
        "coverage": (pr + nr) / total if total else 0.0,
        "accepted_positive_recall@20": recall_sum / pr if pr else 0.0,
        "accepted_positive_hit@20": hits / pr if pr else 0.0,
    }


def set_metrics(rows: pl.DataFrame, abstained: npt.ArrayLike) -> dict[str, Any]:
    """The per-set metrics of spec §9.3 for ``rows`` with a per-row abstain decision."""
    is_pos, _, recall = _arrays(rows)
    decided = np.asarray(abstained, dtype=np.bool_)
    if decided.shape != is_pos.shape:
        msg = f"need one abstain decision per row ({is_pos.size}), got {decided.size}"
        raise ValueError(msg)
    return _metrics(is_pos, decided, recall)


def metrics_at(rows: pl.DataFrame, threshold: float) -> dict[str, Any]:
    """Spec §9.3 metrics when every row is decided with one ``threshold``."""
    return set_metrics(rows, abstains(rows["confidence"].to_numpy(), threshold))


def _sweep_extras(row: dict[str, Any]) -> dict[str, Any]:
    """The sweep-only fields of spec §9.3 (accepted/abstained, false rates, abstain P/F1)."""
    p = row["positive_returned"] + row["positive_abstained"]
    n = row["no_gold_returned"] + row["no_gold_abstained"]
    abstained = row["no_gold_abstained"] + row["positive_abstained"]
    precision = row["no_gold_abstained"] / abstained if abstained else 0.0
    recall = row["no_gold_abstain_rate"]
    return {
        "accepted": row["positive_returned"] + row["no_gold_returned"],
        "abstained": abstained,
        "positive_false_abstain_rate": 1 - row["positive_pass_rate"] if p else 0.0,
        "no_gold_false_return_rate": 1 - row["no_gold_abstain_rate"] if n else 0.0,
        "abstain_precision": precision,
        "abstain_f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
    }


def candidate_thresholds(confidence: Sequence[float] | npt.ArrayLike) -> list[float]:
    """Spec §9.4: -inf, midpoints of the sorted distinct confidences, then just above the max."""
    values = sorted({float(c) for c in np.asarray(confidence, dtype=np.float64).ravel()})
    out = [NEG_INF] + [(a + b) / 2 for a, b in itertools.pairwise(values)]
    if values:
        top = values[-1]
        out.append(top + max(1e-9, abs(top) * 1e-9))
    return out


def sweep(rows: pl.DataFrame) -> pl.DataFrame:
    """One full row per candidate threshold (spec §9.3-9.4), ascending, with threshold_index."""
    is_pos, conf, recall = _arrays(rows)
    out = []
    for index, threshold in enumerate(candidate_thresholds(conf)):
        row = _metrics(is_pos, conf < threshold, recall)
        out.append({"threshold_index": index, "threshold": threshold, **row} | _sweep_extras(row))
    return pl.DataFrame(out, schema_overrides={"threshold": pl.Float64})


def select(sweep_rows: pl.DataFrame, point: str = SELECTION) -> dict[str, Any] | None:
    """The sweep row of an operating point (spec §9.4); first (lowest threshold) wins ties.

    None when a target point has no qualifying row.
    """
    if point not in POINTS:
        msg = f"unknown operating point {point!r}; use one of {list(POINTS)}"
        raise ValueError(msg)
    condition, keys = POINTS[point]
    best: dict[str, Any] | None = None
    best_key: tuple[float, ...] = ()
    for row in sweep_rows.iter_rows(named=True):
        if condition is not None and not row[condition[0]] >= condition[1]:
            continue
        key = tuple(row[k] for k in keys)
        if best is None or key > best_key:
            best, best_key = row, key
    return best


def calibrated_row(rows: pl.DataFrame) -> dict[str, Any]:
    """The sweep row upstream calibrates with: best balanced accuracy (spec §9.4)."""
    row = select(sweep(rows), SELECTION)
    if row is None:  # unreachable: the selection has no filter and the sweep has >= 1 row
        raise ValueError("empty sweep")
    return row


def compact(row: Mapping[str, Any]) -> dict[str, Any]:
    """A compact operating-point row of spec §9.7 (threshold_display is "-inf" or the number)."""
    threshold = row["threshold"]
    fields = (
        "coverage",
        "positive_pass_rate",
        "no_gold_abstain_rate",
        "abstain_precision",
        "abstain_f1",
        "selective_accuracy",
        "balanced_accuracy",
        "selective_success@20",
        "accepted_positive_recall@20",
        "accepted_positive_hit@20",
    )
    return {
        "threshold": threshold,
        "threshold_display": "-inf" if threshold == NEG_INF else threshold,
        "threshold_index": row["threshold_index"],
        **{f: row[f] for f in fields},
        "confusion": {c: row[c] for c in COUNTS},
    }


def operating_points(sweep_rows: pl.DataFrame) -> dict[str, dict[str, Any] | None]:
    """Spec §9.7 ``operating_points``: the full no-abstain row, then each §9.4 point compacted."""
    points: dict[str, dict[str, Any] | None] = {"no_abstain": sweep_rows.row(0, named=True)}
    for name in POINTS:
        row = select(sweep_rows, name)
        points[name] = None if row is None else compact(row)
    return points


def transfer(balanced: pl.DataFrame, natural: pl.DataFrame) -> dict[str, Any]:
    """Spec §9.5: select on the balanced split (best balanced accuracy), apply to natural."""
    check_both_classes(balanced, "the balanced split")
    chosen = calibrated_row(balanced)
    threshold = float(chosen["threshold"])
    return {
        "threshold": threshold,
        "calibration_metrics": chosen,
        "no_abstain": metrics_at(natural, NEG_INF),
        "calibrated": metrics_at(natural, threshold),
    }


# -------------------------------------------------------------------------- §9.7 summary


def _percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (position q*(n-1)), as upstream's confidence summary."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def confidence_summary(rows: pl.DataFrame) -> dict[str, dict[str, Any]]:
    """Spec §9.7 ``confidence_summary``: count, min, p10, median, p90, max per label."""
    out: dict[str, dict[str, Any]] = {}
    for label in ("positive", "no_gold"):
        values = rows.filter(pl.col("label") == label)["confidence"].to_list()
        if not values:
            out[label] = {"count": 0}
            continue
        out[label] = {
            "count": len(values),
            "min": min(values),
            "p10": _percentile(values, 0.10),
            "median": statistics.median(values),
            "p90": _percentile(values, 0.90),
            "max": max(values),
        }
    return out


def positive_retrieval_metrics(rows: pl.DataFrame, stored: pl.DataFrame) -> dict[str, float]:
    """Spec §9.7: means over positive rows of every stored metric key (missing -> 0), samples."""
    positives = rows.filter(pl.col("label") == "positive")["sample_id"].to_list()
    out: dict[str, float] = {"samples": float(len(positives))}
    if not positives:
        return out
    values = stored.filter(pl.col("sample_id").is_in(positives))
    for metric in sorted(values["metric"].unique().to_list()):
        per = dict(values.filter(pl.col("metric") == metric).select("sample_id", "value").rows())
        total = 0.0
        for sample_id in positives:  # details order, left to right
            total += per.get(sample_id, 0.0)
        out[metric] = total / len(positives)
    return out


def summary_fields(rows: pl.DataFrame, stored: pl.DataFrame | None = None) -> dict[str, Any]:
    """The analysis fields of a spec §9.7 selective summary for one run's rows."""
    sweep_rows = sweep(rows)
    positives = int((rows["label"] == "positive").sum())
    summary: dict[str, Any] = {
        "evaluated": rows.height,
        "positive_evaluated": positives,
        "no_gold_evaluated": rows.height - positives,
        "confidence_summary": confidence_summary(rows),
        "operating_points": operating_points(sweep_rows),
        "threshold_sweep_count": sweep_rows.height,
    }
    if stored is not None:
        summary["positive_retrieval_metrics"] = positive_retrieval_metrics(rows, stored)
    return summary


# ------------------------------------------------------------------- repo-grouped folds


def _fold_error(rows: pl.DataFrame, fold_of: Mapping[str, int], folds: int) -> None:
    for fold in range(folds):
        repos = sorted(r for r, f in fold_of.items() if f == fold)
        members = rows.filter(pl.col("repo").is_in(repos))
        for label in ("positive", "no_gold"):
            if not (members["label"] == label).any():
                ids = members["sample_id"].to_list()
                msg = (
                    f"fold {fold} of {folds} has no {label} sample (repos {_named(repos)}; "
                    f"samples {_named(ids) or 'none'}); use fewer folds or add {label} samples "
                    "in more repositories"
                )
                raise InputError(msg, field="repo")


def assign_folds(rows: pl.DataFrame, folds: int = 5) -> dict[str, int]:
    """Deterministic repo -> fold assignment of spec §9.6 (greedy, balanced by class counts).

    Literal transcription: repos visited by (-max share, -size, name); each goes to the fold
    minimising (projected cost, current fold size, fold index).
    """
    if folds < 2:
        raise InputError(f"need at least 2 folds, got {folds}", field="folds")
    counts = rows.group_by("repo").agg(
        p=(pl.col("label") == "positive").sum(), n=(pl.col("label") == "no_gold").sum()
    )
    pos = {r: int(v) for r, v in zip(counts["repo"], counts["p"], strict=True)}
    neg = {r: int(v) for r, v in zip(counts["repo"], counts["n"], strict=True)}
    repos = sorted(pos)
    if len(repos) < folds:
        msg = (
            f"{folds} repo-grouped folds need at least {folds} repositories, got {len(repos)} "
            f"({_named(repos)}); use --folds {max(2, len(repos))} or add repositories"
        )
        raise InputError(msg, field="folds")
    big_p, big_n = sum(pos.values()), sum(neg.values())
    tp, tn, tt, tg = big_p / folds, big_n / folds, (big_p + big_n) / folds, len(repos) / folds
    order = sorted(
        repos,
        key=lambda r: (-max(pos[r] / max(tp, 1), neg[r] / max(tn, 1)), -(pos[r] + neg[r]), r),
    )
    fold_p, fold_n, fold_g = [0] * folds, [0] * folds, [0] * folds
    fold_of: dict[str, int] = {}
    for repo in order:
        best: tuple[float, int, int] | None = None
        for f in range(folds):
            cost = 0.0
            for g in range(folds):
                add = g == f
                pg = fold_p[g] + (pos[repo] if add else 0)
                ng = fold_n[g] + (neg[repo] if add else 0)
                gg = fold_g[g] + (1 if add else 0)
                cost += (
                    ((pg - tp) / max(tp, 1)) ** 2
                    + ((ng - tn) / max(tn, 1)) ** 2
                    + 0.25 * ((pg + ng - tt) / max(tt, 1)) ** 2
                    + 0.01 * ((gg - tg) / max(tg, 1)) ** 2
                )
            key = (cost, fold_p[f] + fold_n[f], f)
            if best is None or key < best:
                best = key
        chosen = best[2] if best is not None else 0
        fold_of[repo] = chosen
        fold_p[chosen] += pos[repo]
        fold_n[chosen] += neg[repo]
        fold_g[chosen] += 1
    _fold_error(rows, fold_of, folds)
    return dict(sorted(fold_of.items()))


def fold_composition(rows: pl.DataFrame, fold_of: Mapping[str, int]) -> pl.DataFrame:
    """``fold, samples, positive, no_gold, repositories`` (spec §13.6 fold composition)."""
    folds = pl.DataFrame(
        {"repo": list(fold_of), "fold": list(fold_of.values())},
        schema={"repo": pl.String, "fold": pl.Int64},
    )
    return (
        rows.join(folds, on="repo")
        .group_by("fold")
        .agg(
            samples=pl.len().cast(pl.Int64),
            positive=(pl.col("label") == "positive").sum().cast(pl.Int64),
            no_gold=(pl.col("label") == "no_gold").sum().cast(pl.Int64),
            repositories=pl.col("repo").unique().sort(),
        )
        .sort("fold")
    )


@dataclass(frozen=True)
class CrossValidation:
    """One run's out-of-fold calibration (spec §9.6): per-sample decisions and per-fold results."""

    run: str
    predictions: pl.DataFrame  # sample_id, repo, label, fold, confidence, threshold, abstained
    folds: list[dict[str, Any]]
    out_of_fold: dict[str, Any]
    no_abstain: dict[str, Any]
    threshold_summary: dict[str, Any]


def threshold_summary(thresholds: Sequence[float]) -> dict[str, Any]:
    """Mean, population std, min, max over finite thresholds (null if none), and the list."""
    finite = [t for t in thresholds if math.isfinite(t)]
    total = 0.0
    for t in finite:
        total += t
    return {
        "mean": total / len(finite) if finite else None,
        "std": statistics.pstdev(finite) if len(finite) > 1 else (0.0 if finite else None),
        "min": min(finite) if finite else None,
        "max": max(finite) if finite else None,
        "thresholds": list(thresholds),
    }


def cross_validate(rows: pl.DataFrame, fold_of: Mapping[str, int]) -> CrossValidation:
    """Per fold: select on train repos, decide test repos; aggregate out-of-fold (spec §9.6)."""
    missing = sorted(set(rows["repo"]) - set(fold_of))
    if missing:
        msg = f"repos without a fold (not in the reference run): {_named(missing)}"
        raise InputError(msg, field="repo")
    folds = max(fold_of.values()) + 1
    fold_col = pl.col("repo").replace_strict(dict(fold_of), return_dtype=pl.Int64)
    frame = rows.with_columns(fold=fold_col)
    threshold_col = np.full(frame.height, np.nan)
    fold_rows: list[dict[str, Any]] = []
    fold_ids = frame["fold"].to_numpy()
    for fold in range(folds):
        test_mask = fold_ids == fold
        train = frame.filter(~pl.Series(test_mask))
        test = frame.filter(pl.Series(test_mask))
        check_both_classes(train, f"the training repos of fold {fold} (run {rows['run'][0]!r})")
        chosen = calibrated_row(train)
        threshold = float(chosen["threshold"])
        threshold_col[test_mask] = threshold
        fold_rows.append(
            {
                "fold": fold,
                "threshold": threshold,
                "train_samples": train.height,
                "train_positive": int((train["label"] == "positive").sum()),
                "train_no_gold": int((train["label"] == "no_gold").sum()),
                "test_samples": test.height,
                "test_positive": int((test["label"] == "positive").sum()),
                "test_no_gold": int((test["label"] == "no_gold").sum()),
                "test_repos": sorted(set(test["repo"])),
                "calibration_metrics": chosen,
                "test_metrics": metrics_at(test, threshold),
            }
        )
    decided = frame.with_columns(
        threshold=pl.Series(threshold_col),
    ).with_columns(abstained=pl.col("confidence") < pl.col("threshold"))
    predictions = decided.select(
        "sample_id", "repo", "label", "fold", "confidence", "threshold", "abstained"
    ).sort("sample_id")
    return CrossValidation(
        run=str(rows["run"][0]) if rows.height else "",
        predictions=predictions,
        folds=fold_rows,
        out_of_fold=set_metrics(decided, decided["abstained"].to_numpy()),
        no_abstain=metrics_at(rows, NEG_INF),
        threshold_summary=threshold_summary([f["threshold"] for f in fold_rows]),
    )


@dataclass(frozen=True)
class Calibration:
    """Every run's cross-validation under one protocol, with the reference fold assignment."""

    protocol: Protocol
    folds: int
    repo_folds: dict[str, int]
    composition: pl.DataFrame
    runs: dict[str, CrossValidation]
    rows: dict[str, pl.DataFrame]


def calibrate(
    rows_by_run: Mapping[str, pl.DataFrame], *, protocol: Protocol = "mixed", folds: int = 5
) -> Calibration:
    """Spec §9.6 for several runs: shared sample map, folds from the first (reference) run."""
    check_shared_map(rows_by_run)
    subsets = {name: protocol_rows(rows, protocol) for name, rows in rows_by_run.items()}
    for name, rows in subsets.items():
        check_both_classes(rows, f"run {name!r} under the {protocol} protocol")
    reference = next(iter(subsets.values()))
    fold_of = assign_folds(reference, folds)
    return Calibration(
        protocol=protocol,
        folds=folds,
        repo_folds=fold_of,
        composition=fold_composition(reference, fold_of),
        runs={name: cross_validate(rows, fold_of) for name, rows in subsets.items()},
        rows=subsets,
    )


def feasible_folds(
    rows: pl.DataFrame, folds: int, protocols: Sequence[Protocol] = PROTOCOLS
) -> tuple[int, list[str]]:
    """The largest k <= ``folds`` (>= 2) whose §9.6 assignment succeeds under every protocol.

    arbwb-defined fallback for small releases; returns (k, reasons the larger k failed).
    """
    reasons: list[str] = []
    for k in range(folds, 1, -1):
        try:
            for protocol in protocols:
                assign_folds(protocol_rows(rows, protocol), k)
        except InputError as exc:
            reasons.append(f"{k} folds ({protocol}): {exc.reason}")
            continue
        return k, reasons
    raise InputError("no fold count >= 2 works: " + "; ".join(reasons), field="folds")


def protocol_json(rows: pl.DataFrame, protocol: Protocol, folds: int) -> dict[str, Any]:
    """The ``protocol`` object of the repo-grouped CV report (spec §13.6)."""
    reasons = rows.filter(pl.col("label") == "no_gold")["no_gold_reason"].value_counts()
    return {
        "name": "repo_grouped_out_of_fold_threshold_calibration",
        "evidence": "all no-gold" if protocol == "mixed" else "natural no-gold only",
        "protocol": protocol,
        "folds": folds,
        "group_key": "repo",
        "selection_objective": "balanced_accuracy",
        "tie_breakers": ["selective_accuracy", "selective_success@20", "lowest_threshold"],
        "abstain_rule": "confidence < threshold",
        "samples": rows.height,
        "repositories": rows["repo"].n_unique(),
        "positive": int((rows["label"] == "positive").sum()),
        "no_gold": int((rows["label"] == "no_gold").sum()),
        "no_gold_reason_counts": dict(sorted((str(r), int(c)) for r, c in reasons.iter_rows())),
    }


def json_safe(value: Any) -> Any:
    """``-inf`` thresholds as null (JSON has no infinities); dicts/lists converted recursively."""
    if isinstance(value, float) and value == NEG_INF:
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def calibration_json(calibration: Calibration) -> dict[str, Any]:
    """The ``arbwb selective`` JSON: runs (out_of_fold, no_abstain, folds, threshold_summary,
    predictions), protocol and repo_folds; a null threshold means -inf (never abstain).
    """
    reference = next(iter(calibration.rows.values()))
    runs = [
        {
            "run": name,
            "out_of_fold": cv.out_of_fold,
            "no_abstain": cv.no_abstain,
            "folds": cv.folds,
            "threshold_summary": cv.threshold_summary,
            "predictions": cv.predictions.to_dicts(),
        }
        for name, cv in calibration.runs.items()
    ]
    protocol = protocol_json(reference, calibration.protocol, calibration.folds)
    protocol["reference_run"] = next(iter(calibration.runs))
    protocol["null_threshold"] = "-inf (no abstention)"
    out: dict[str, Any] = json_safe(
        {"runs": runs, "protocol": protocol, "repo_folds": calibration.repo_folds}
    )
    return out


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """Rows as Markdown lines; a null value is a -inf threshold (spec §9.4)."""
    text = rows_to_markdown(header, [["-inf" if v is None else v for v in row] for row in rows])
    return text.rstrip("\n").split("\n")


def calibration_markdown(report: dict[str, Any]) -> str:
    """The repo-grouped CV report tables of spec §13.6 (4 decimals; -inf for null thresholds)."""
    protocol = report["protocol"]
    keys = TABLE_METRICS
    lines = [f"## Out-of-fold ({protocol['protocol']}, {protocol['folds']} folds)", ""]
    header = ["Ranker", "Pos. pass", "No-gold abstain", "Balanced acc.", "Selective acc."]
    header += ["Success@20", "Coverage", "No-abstain Success@20"]
    rows = [
        [r["run"], *(r["out_of_fold"][k] for k in keys), r["no_abstain"]["selective_success@20"]]
        for r in report["runs"]
    ]
    lines += _table(header, rows)
    lines += ["", "## Fold composition", ""]
    composition = []
    first = report["runs"][0]
    for fold in first["folds"]:
        samples = fold["test_samples"]
        repos = ", ".join(fold["test_repos"])
        composition.append([fold["fold"], samples, fold["test_positive"], fold["test_no_gold"]])
        composition[-1].append(repos)
    lines += _table(["Fold", "Samples", "Positive", "No-gold", "Repositories"], composition)
    for r in report["runs"]:
        lines += ["", f"## {r['run']}", ""]
        per = [
            [
                f["fold"],
                f["threshold"],
                f["test_samples"],
                *(f["test_metrics"][k] for k in (keys[0], keys[1], keys[2], keys[4])),
            ]
            for f in r["folds"]
        ]
        header = ["Fold", "Threshold", "Test n", "Pos. pass", "No-gold abstain"]
        lines += _table([*header, "Balanced acc.", "Success@20"], per)
    return "\n".join(lines) + "\n"
