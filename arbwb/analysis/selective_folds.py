"""Spec §9.6 repository-grouped cross-validation of runs sharing the reference run's folds,
and the arbwb-defined fold-count fallback.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from arbwb.analysis import selective_rows as sr
from arbwb.analysis.selective_metrics import NEG_INF, calibrated_row, metrics_at, set_metrics
from arbwb.errors import InputError


def _fold_error(rows: pl.DataFrame, fold_of: Mapping[str, int], folds: int) -> None:
    for fold in range(folds):
        repos = sorted(r for r, f in fold_of.items() if f == fold)
        members = rows.filter(pl.col("repo").is_in(repos))
        for label in ("positive", "no_gold"):
            if not (members["label"] == label).any():
                ids = members["sample_id"].to_list()
                msg = (
                    f"fold {fold} of {folds} has no {label} sample (repos {sr.named(repos)}; "
                    f"samples {sr.named(ids) or 'none'}); use fewer folds or add {label} samples "
                    "in more repositories"
                )
                raise InputError(msg, field="repo")


def assign_folds(rows: pl.DataFrame, folds: int = 5) -> dict[str, int]:
    """Deterministic repo -> fold assignment of spec §9.6, transcribed literally (greedy,
    balanced by class counts)."""
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
            f"({sr.named(repos)}); use --folds {max(2, len(repos))} or add repositories"
        )
        raise InputError(msg, field="folds")
    big_p, big_n = sum(pos.values()), sum(neg.values())
    tp, tn, tt, tg = big_p / folds, big_n / folds, (big_p + big_n) / folds, len(repos) / folds
    order = sorted(
        repos, key=lambda r: (-max(pos[r] / max(tp, 1), neg[r] / max(tn, 1)), -(pos[r] + neg[r]), r)
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
        msg = f"repos without a fold (not in the reference run): {sr.named(missing)}"
        raise InputError(msg, field="repo")
    folds = max(fold_of.values()) + 1
    fold_col = pl.col("repo").replace_strict(dict(fold_of), return_dtype=pl.Int64)
    frame = rows.with_columns(fold=fold_col)
    fold_rows: list[dict[str, Any]] = []
    for fold in range(folds):
        train, test = frame.filter(pl.col("fold") != fold), frame.filter(pl.col("fold") == fold)
        sr.check_both_classes(train, f"the training repos of fold {fold} (run {rows['run'][0]!r})")
        chosen = calibrated_row(train)
        threshold = float(chosen["threshold"])
        row: dict[str, Any] = {"fold": fold, "threshold": threshold}
        for name, part in (("train", train), ("test", test)):
            row[f"{name}_samples"] = part.height
            for label in ("positive", "no_gold"):
                row[f"{name}_{label}"] = int((part["label"] == label).sum())
        row |= {"test_repos": sorted(set(test["repo"])), "calibration_metrics": chosen}
        fold_rows.append(row | {"test_metrics": metrics_at(test, threshold)})
    thresholds = pl.DataFrame(
        {"fold": range(folds), "threshold": [f["threshold"] for f in fold_rows]},
        schema={"fold": pl.Int64, "threshold": pl.Float64},
    )
    decided = frame.join(thresholds, on="fold", maintain_order="left").with_columns(
        abstained=pl.col("confidence") < pl.col("threshold")
    )
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

    protocol: sr.Protocol
    folds: int
    repo_folds: dict[str, int]
    composition: pl.DataFrame
    runs: dict[str, CrossValidation]
    rows: dict[str, pl.DataFrame]


def calibrate(
    rows_by_run: Mapping[str, pl.DataFrame], *, protocol: sr.Protocol = "mixed", folds: int = 5
) -> Calibration:
    """Spec §9.6 for several runs: shared sample map, folds from the first (reference) run."""
    sr.check_shared_map(rows_by_run)
    subsets = {name: sr.protocol_rows(rows, protocol) for name, rows in rows_by_run.items()}
    for name, rows in subsets.items():
        sr.check_both_classes(rows, f"run {name!r} under the {protocol} protocol")
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
    rows: pl.DataFrame, folds: int, protocols: Sequence[sr.Protocol] = sr.PROTOCOLS
) -> tuple[int, list[str]]:
    """The largest k <= ``folds`` (>= 2) whose §9.6 assignment works under every protocol, and
    why larger k failed (arbwb-defined fallback for small releases)."""
    reasons: list[str] = []
    for k in range(folds, 1, -1):
        try:
            for protocol in protocols:
                assign_folds(sr.protocol_rows(rows, protocol), k)
        except InputError as exc:
            reasons.append(f"{k} folds ({protocol}): {exc.reason}")
            continue
        return k, reasons
    raise InputError("no fold count >= 2 works: " + "; ".join(reasons), field="folds")
