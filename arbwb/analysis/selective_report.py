"""The ``arbwb selective`` report of a calibration (spec §13.6): JSON-safe dicts and the
Markdown tables (4 decimals; a null threshold is -inf, i.e. never abstain).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from arbwb.analysis.selective_folds import Calibration
from arbwb.analysis.selective_metrics import NEG_INF, TABLE_METRICS
from arbwb.analysis.selective_rows import Protocol
from arbwb.tables import rows_to_markdown


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


def _threshold(value: float | None) -> float | str:
    """A report threshold for display: null (JSON for -inf) is shown as ``-inf`` (spec §9.4)."""
    return "-inf" if value is None else value


def calibration_markdown(report: dict[str, Any]) -> str:
    """The repo-grouped CV report tables of spec §13.6 (4 decimals; -inf for null thresholds)."""
    protocol = report["protocol"]
    header = ["Ranker", "Pos. pass", "No-gold abstain", "Balanced acc.", "Selective acc."]
    header += ["Success@20", "Coverage", "No-abstain Success@20"]
    out_of_fold = [
        [
            r["run"],
            *(r["out_of_fold"][k] for k in TABLE_METRICS),
            r["no_abstain"]["selective_success@20"],
        ]
        for r in report["runs"]
    ]
    counts = ("fold", "test_samples", "test_positive", "test_no_gold")
    composition = [
        [*(f[c] for c in counts), ", ".join(f["test_repos"])] for f in report["runs"][0]["folds"]
    ]
    sections = [
        f"## Out-of-fold ({protocol['protocol']}, {protocol['folds']} folds)",
        rows_to_markdown(header, out_of_fold),
        "## Fold composition",
        rows_to_markdown(["Fold", "Samples", "Positive", "No-gold", "Repositories"], composition),
    ]
    fold_header = ["Fold", "Threshold", "Test n", "Pos. pass", "No-gold abstain"]
    fold_header += ["Balanced acc.", "Success@20"]
    shown = [TABLE_METRICS[i] for i in (0, 1, 2, 4)]
    for r in report["runs"]:
        per = [
            [
                f["fold"],
                _threshold(f["threshold"]),
                f["test_samples"],
                *(f["test_metrics"][k] for k in shown),
            ]
            for f in r["folds"]
        ]
        sections += [f"## {r['run']}", rows_to_markdown(fold_header, per)]
    return "\n\n".join(s.rstrip("\n") for s in sections) + "\n"
