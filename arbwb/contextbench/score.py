"""Whole runs scored (contextbench-spec §3.3) and their per-instance records as frames."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from arbwb import schemas
from arbwb.contextbench.inputs import Gold, Prediction, gold_from_rows, predictions_from_frames
from arbwb.contextbench.instance import evaluate_instance, f1
from arbwb.contextbench.symbols import SymbolFinder
from arbwb.io.checkout import CheckoutSource
from arbwb.io.contextbench import ContextBenchRows, Predictions

Resolution = Literal["checkout", "lexical"]


@dataclass(frozen=True)
class Scored:
    """Per-instance §3.3 records of one run plus what was excluded, counted."""

    run: str
    records: list[dict[str, Any]]  # each has "sample_id" (None for missing_gold) and "record"
    n_unpredicted: int  # gold instances the run has no prediction for (not scored upstream)
    resolution: Resolution
    levels: tuple[str, ...]


def score_run(
    run: str,
    predictions: Mapping[str, Prediction],
    gold: Mapping[str, Gold],
    *,
    source: CheckoutSource | None = None,
    symbol_finder: SymbolFinder | None = None,
) -> Scored:
    """Evaluate every prediction of a run; unknown instances become ``missing_gold`` rows."""
    results: list[dict[str, Any]] = []
    answered: set[str] = set()
    any_bytes = False
    for instance, pred in predictions.items():
        target = gold.get(instance)
        if target is None:
            results.append(
                {"sample_id": None, "record": {"instance_id": instance, "error": "missing_gold"}}
            )
            continue
        answered.add(target.sample_id)
        checkout = None if source is None else source(target.repo, pred.commit or target.commit)
        record: dict[str, Any]
        if source is not None and checkout is None:
            record = {"instance_id": instance, "error": "checkout_failed"}
        else:
            any_bytes |= checkout is not None and checkout.has_bytes
            record = evaluate_instance(target, pred, checkout, symbol_finder=symbol_finder)
        results.append({"sample_id": target.sample_id, "record": record})
    unpredicted = len({g.sample_id for g in gold.values()} - answered)
    levels = ("file", "line", *(("span",) if any_bytes else ()))
    if any_bytes and symbol_finder is not None:
        levels = ("file", "symbol", "span", "line")
    return Scored(run, results, unpredicted, "lexical" if source is None else "checkout", levels)


RESULTS: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,  # canonical instance_id (null for missing_gold)
    "instance_id": pl.String,  # as the prediction gave it
    "error": pl.String,  # null | missing_gold | no_context_extracted | checkout_failed
    "level": pl.String,  # file | symbol | span | line (null on error rows)
    "coverage": pl.Float64,
    "precision": pl.Float64,
    "f1": pl.Float64,
    "intersection": pl.Int64,
    "gold_size": pl.Int64,
    "pred_size": pl.Int64,
    "auc_coverage": pl.Float64,
    "redundancy": pl.Float64,
    "num_steps": pl.Int64,
}

EDITLOC: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "recall": pl.Float64,
    "precision": pl.Float64,
    "intersection": pl.Int64,
    "gold_size": pl.Int64,
    "pred_size": pl.Int64,
}

STEP_COVERAGE: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "step": pl.Int64,
    "num_steps": pl.Int64,
    "level": pl.String,
    "coverage": pl.Float64,
}


def results_frame(scored: Sequence[Scored]) -> pl.DataFrame:
    """RESULTS: one row per (run, instance, level); error rows once with null level."""
    rows = []
    for run in scored:
        for item in run.records:
            record = item["record"]
            base = {
                "run": run.run,
                "sample_id": item["sample_id"],
                "instance_id": record["instance_id"],
            }
            if "error" in record:
                rows.append({**base, "error": record["error"]})
                continue
            traj = record["trajectory"]
            for level, m in record["final"].items():
                extra = {k: traj[k][level] for k in ("auc_coverage", "redundancy")}
                extra |= {"level": level, "f1": f1(m["coverage"], m["precision"])}
                rows.append(base | m | extra | {"num_steps": record["num_steps"]})
    return schemas.rows_frame(rows, RESULTS)


def editloc_frame(scored: Sequence[Scored]) -> pl.DataFrame:
    """EDITLOC: one row per valid instance that has a patch (model or gold, QUIRK Q11)."""
    rows = [
        {"run": run.run, "sample_id": item["sample_id"], **item["record"]["editloc"]}
        for run in scored
        for item in run.records
        if "editloc" in item["record"]
    ]
    return schemas.rows_frame(rows, EDITLOC)


def step_coverage_frame(scored: Sequence[Scored]) -> pl.DataFrame:
    """STEP_COVERAGE: cumulative coverage by step (§6) of every valid instance."""
    rows = [
        (run.run, item["sample_id"], step["step"], item["record"]["num_steps"], level, value)
        for run in scored
        for item in run.records
        if "trajectory" in item["record"]
        for step in item["record"]["trajectory"]["steps"]
        for level, value in step["coverage"].items()
    ]
    return pl.DataFrame(rows, schema=dict(STEP_COVERAGE), orient="row")


def score_predictions(
    runs: Sequence[Predictions],
    rows: ContextBenchRows,
    *,
    source: CheckoutSource | None = None,
    symbol_finder: SymbolFinder | None = None,
) -> list[Scored]:
    """Score loaded :class:`~arbwb.io.contextbench.Predictions` runs against ``rows``."""
    gold = gold_from_rows(rows)
    out = []
    for run in runs:
        preds = predictions_from_frames(run.records, run.context).get(run.run, {})
        out.append(score_run(run.run, preds, gold, source=source, symbol_finder=symbol_finder))
    return out
