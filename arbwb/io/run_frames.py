"""A run's frames (:class:`RunData`) and what every rankings reader shares: the schemas, the
one normalisation (upstream's dedupe) and the per-record rules (one per sample id, finite)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from arbwb import schemas
from arbwb.errors import InputError

#: Raw rows of a reader before :func:`normalise` (``order`` = the given rank order).
_RAW = {"seq": pl.Int64, "sample_id": pl.String, "path": pl.String, "order": pl.Float64}
RAW_SCORED = {**_RAW, "score": pl.Float64}
DETAILS: schemas.Schema = {
    "sample_id": pl.String,
    "task": pl.String,
    "repo": pl.String,
    "base_commit": pl.String,
    "snapshot_id": pl.String,
    "candidate_filter": pl.String,
    "split": pl.String,
    "line": pl.Int64,
}
SUBMITTED: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "line": pl.Int64,
    "status": pl.String,
}
ERRORS: schemas.Schema = {"run": pl.String, "sample_id": pl.String, "error": pl.String}
SELECTIVE: schemas.Schema = {  # selective details fields (spec §4.7); nulls where a row lacks them
    "sample_id": pl.String,
    "label": pl.String,  # positive | no_gold
    "no_gold_reason": pl.String,
    "confidence": pl.Float64,  # null when missing (spec §9.2 reads it as 0.0; analyses decide)
    "top_score": pl.Float64,
}
#: Stored ``line_metrics``/``block_metrics`` values (spec §5.8), ``field`` = ``group.key``.
NESTED: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "field": pl.String,
    "value": pl.Float64,
}
NESTED_GROUPS = ("line_metrics", "block_metrics")


@dataclass(frozen=True)
class RunData:
    """One run's rankings plus what its file says about samples, gold and upstream metrics
    (``details``, ``labels``, ``stored``, ``nested``: ARB details files only)."""

    run: str
    rankings: pl.DataFrame
    details: pl.DataFrame | None
    labels: pl.DataFrame | None
    stored: pl.DataFrame | None
    errors: pl.DataFrame  # the messages of ``error`` records
    submitted: pl.DataFrame  # every sample answered (ok or error) with its line
    path: str
    selective: pl.DataFrame | None = None  # §4.7 fields of rows with label or confidence
    nested: pl.DataFrame | None = None  # line_metrics/block_metrics (§5.8) as NESTED rows

    def stored_for(self, labels: pl.DataFrame) -> pl.DataFrame | None:
        """``stored`` of the samples whose row gold equals the ``gold`` role of ``labels``
        (scored on other gold, a stored MRR would credit a file the run never ranked)."""
        if self.stored is None or self.labels is None:
            return self.stored
        same = (
            _gold_sets(self.labels)
            .join(_gold_sets(labels), on="sample_id", suffix="_wanted")
            .filter(pl.col("gold") == pl.col("gold_wanted"))
        )
        return self.stored.join(same.select("sample_id"), on="sample_id", how="semi")


def _gold_sets(labels: pl.DataFrame) -> pl.DataFrame:
    """``sample_id, gold``: each sample's gold paths as a sorted list."""
    gold = labels.filter(pl.col("role") == "gold")
    return gold.group_by("sample_id").agg(gold=pl.col("path").unique().sort())


def normalise(raw: pl.DataFrame, run: str) -> pl.DataFrame:
    """Order by (sample, given order), drop empty/duplicate paths, renumber ranks from 1."""
    ranked = (
        raw.lazy()
        .filter(pl.col("path").is_not_null() & (pl.col("path") != ""))
        .sort("seq", "order", maintain_order=True)
        .unique(["sample_id", "path"], keep="first", maintain_order=True)
    )
    return ranked.select(
        run=pl.lit(run, pl.String),
        sample_id="sample_id",
        rank=(pl.int_range(pl.len()).over("sample_id") + 1).cast(pl.Int64),
        path="path",
        score="score",
    ).collect(engine="in-memory")  # one small query: the in-memory engine starts fastest


def run_frame(rows: list[dict[str, Any]], schema: schemas.Schema, run: str) -> pl.DataFrame:
    """A run's ERRORS (``{sample_id, error}`` rows) or SUBMITTED (``{sample_id, line, status}``)
    frame: ``rows`` in ``schema`` with ``run`` filled in."""
    return pl.DataFrame(rows, schema=dict(schema)).with_columns(run=pl.lit(run, pl.String))


def claim(seen: dict[str, int], sample_id: str, path: Path, line: int | None) -> None:
    """Refuse a sample id seen before in the same run, naming both places."""
    if sample_id in seen:
        msg = f"duplicate sample id {sample_id!r} in one run (first at line {seen[sample_id]})"
        raise InputError(msg, path=path, line=line, field="sample_id")
    seen[sample_id] = line or 0


def is_number(value: Any) -> bool:
    """A JSON number that converts to a finite float (huge integers do not)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False
