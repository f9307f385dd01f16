"""Spec §9.3-9.5 and §9.7 on :data:`~arbwb.analysis.selective_rows.ROWS` frames: abstain rule,
set metrics, threshold sweeps, operating points, transfer and the summary fields. Rates come
from integer counts and means are left-to-right sums, so they equal upstream's bit for bit.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.analysis.selective_rows import check_both_classes
from arbwb.metrics.aggregate import percentile

NEG_INF = float("-inf")
COUNTS = ("no_gold_abstained", "no_gold_returned", "positive_returned", "positive_abstained")
_SA, _BA, _SS = "selective_accuracy", "balanced_accuracy", "selective_success@20"
#: Operating points (spec §9.4): (sweep-row filter, lexicographic selection key).
POINTS: dict[str, tuple[tuple[str, float] | None, tuple[str, str, str]]] = {
    "best_selective_accuracy": (None, (_SA, _BA, _SS)),
    "best_balanced_accuracy": (None, (_BA, _SA, _SS)),
    "best_selective_success@20": (None, (_SS, _BA, _SA)),
    "target_no_gold_abstain_80": (("no_gold_abstain_rate", 0.80), ("positive_pass_rate", _BA, _SA)),
    "target_positive_pass_90": (("positive_pass_rate", 0.90), ("no_gold_abstain_rate", _BA, _SA)),
}
SELECTION = "best_balanced_accuracy"
#: The §13.6 report columns, in the paper's order.
TABLE_METRICS = (
    "positive_pass_rate", "no_gold_abstain_rate", "balanced_accuracy", "selective_accuracy",
    "selective_success@20", "coverage",
)  # fmt: skip


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
    """The sweep row of an operating point (spec §9.4), lowest threshold first on ties; None
    when a target point has no qualifying row."""
    if point not in POINTS:
        msg = f"unknown operating point {point!r}; use one of {list(POINTS)}"
        raise ValueError(msg)
    condition, keys = POINTS[point]
    if condition is not None:
        sweep_rows = sweep_rows.filter(pl.col(condition[0]) >= condition[1])
    if sweep_rows.is_empty():
        return None
    # a stable sort keeps the first (lowest-threshold) row of a tie on top
    return sweep_rows.sort(list(keys), descending=True, maintain_order=True).row(0, named=True)


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
        "coverage", "positive_pass_rate", "no_gold_abstain_rate", "abstain_precision", "abstain_f1",
        "selective_accuracy", "balanced_accuracy", "selective_success@20",
        "accepted_positive_recall@20", "accepted_positive_hit@20",
    )  # fmt: skip
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
            "p10": percentile(values, 0.10),
            "median": statistics.median(values),
            "p90": percentile(values, 0.90),
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
