"""Spec §9 input rows (:data:`ROWS`): one row per answered sample of a selective run, with
label, stratum, confidence and Recall@20; inconsistent input is an error naming the samples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import polars as pl

from arbwb import schemas
from arbwb.errors import InputError
from arbwb.io.rankings import RunData
from arbwb.io.samples import COUNTERFACTUAL_REASON

Protocol = Literal["mixed", "natural"]
PROTOCOLS: tuple[Protocol, ...] = ("mixed", "natural")
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
_LIST_LIMIT = 8


def named(ids: Sequence[str]) -> str:
    """A readable list of sample ids/repos for error messages (first few, then a count)."""
    shown = ", ".join(repr(i) for i in ids[:_LIST_LIMIT])
    more = len(ids) - _LIST_LIMIT
    return f"{shown} and {more} more" if more > 0 else shown


def rankings_confidence(rankings: pl.DataFrame) -> pl.DataFrame:
    """``sample_id, confidence``: the score of each sample's rank-1 file (upstream's confidence
    for lexical/BM25 details, spec §9.2; arbwb's "top score" otherwise)."""
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
    """The :data:`ROWS` frame of one run: label, stratum and reason from ``samples``, the
    details ``confidence`` or rank-1 score; missing confidences are an error unless
    ``missing="zero"`` (upstream's 0.0, spec §9.2)."""
    answered = run.submitted.filter(pl.col("status") == "ok").select("sample_id")
    known = samples.select("sample_id", "repo", "stratum", "no_gold_reason")
    unknown = answered.join(known, on="sample_id", how="anti")["sample_id"].to_list()
    if unknown:
        msg = f"{len(unknown)} samples of run {run.run!r} are not in the samples: {named(unknown)}"
        raise InputError(msg, path=run.path, field="sample_id")
    positive = pl.col("stratum") == "positive"
    frame = answered.join(known, on="sample_id", how="left").with_columns(
        label=pl.when(positive).then(pl.lit("positive")).otherwise(pl.lit("no_gold"))
    )
    if frame["stratum"].is_null().any():
        bad = frame.filter(pl.col("stratum").is_null())["sample_id"].to_list()
        msg = f"samples without a stratum (no sample record with gold): {named(bad)}"
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
            f"{len(ids)} samples of run {run.run!r} have a missing or NaN {where}: {named(ids)}; "
            "fix the run, or read them as 0.0 like upstream (missing='zero', spec §9.2)"
        )
        raise InputError(msg, path=run.path, field="confidence")
    frame = frame.with_columns(pl.col("confidence").fill_nan(None).fill_null(0.0))
    gold = labels.filter(pl.col("role") == "gold").select("sample_id", "path").unique()
    recall = _recall_at_20(run, gold)
    frame = frame.join(recall, on="sample_id", how="left")
    unlabeled = frame.filter((pl.col("label") == "positive") & pl.col("recall@20").is_null())
    if unlabeled.height:
        ids = unlabeled["sample_id"].to_list()
        msg = f"positive samples without gold files (upstream skips them): {named(ids)}"
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
            msg = f"details repo differs from the samples' repo for {named(ids)}"
            raise InputError(msg, path=run.path, field="repo")
    if run.selective is None:
        return
    own = run.selective.select("sample_id", own_label="label", own_reason="no_gold_reason")
    joined = frame.join(own, on="sample_id")
    differs = {  # a details row without a label does not disagree; labels are never null here
        "label": pl.col("own_label") != pl.col("label"),
        "no_gold_reason": pl.col("own_reason").ne_missing(pl.col("no_gold_reason")),
    }
    for field, differ in differs.items():
        bad = joined.filter(differ)
        if bad.height:
            ids = bad["sample_id"].to_list()
            msg = f"details {field} disagrees with the samples for {named(ids)}"
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
                f"label, no_gold_reason) map for {len(ids)} samples: {named(ids)}"
            )
            raise InputError(msg, field="sample_id")


def check_both_classes(rows: pl.DataFrame, what: str) -> None:
    """A calibration set needs positives and no-gold samples (else the protocol changes)."""
    for label in ("positive", "no_gold"):
        if not (rows["label"] == label).any():
            ids = rows["sample_id"].to_list()
            msg = (
                f"{what} has no {label} samples among its {rows.height} samples "
                f"({named(ids) or 'none'}); selective calibration needs both classes"
            )
            raise InputError(msg, field="label")
