"""The canonical frames of arbwb, declared once (every loader returns them, every analysis
consumes them), and a validator that names what is wrong."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

Schema = Mapping[str, pl.DataType | type[pl.DataType]]

SAMPLES: Schema = {
    "sample_id": pl.String,
    "task": pl.String,  # code2test | comment2context | trace2code | edit2ripple | abstention
    "repo": pl.String,  # owner/name
    "base_commit": pl.String,
    "snapshot_id": pl.String,  # owner/name@commit
    "stratum": pl.String,  # positive | natural | counterfactual
    "split": pl.String,  # dev | heldout (arbwb-defined: first byte of sha256(sample_id) even)
    "query_text": pl.String,  # evaluation text, spec §2.9, byte-exact
    "query": pl.String,  # raw query object as JSON
    "query_provenance": pl.String,  # spec §2.8 (nullable)
    "no_gold_reason": pl.String,  # gold.reason for no-gold samples (nullable)
    "fix_commit": pl.String,  # gold.fix_commit or metadata.fix_commit (nullable)
    "gold": pl.String,  # raw gold object as JSON
    "metadata": pl.String,  # raw metadata object as JSON
    "source": pl.String,  # file the sample was read from
    "line": pl.Int64,  # 1-based line in that file
}

LABELS: Schema = {
    "sample_id": pl.String,
    "path": pl.String,
    # gold (spec §2.6 target), given (§2.7), hard_negative, root_cause,
    # related_test, supporting, negative (negative_distractors)
    "role": pl.String,
}

SPANS: Schema = {
    "sample_id": pl.String,
    "path": pl.String,
    "start_line": pl.Int64,
    "end_line": pl.Int64,
    "kind": pl.String,  # "span" (gold_spans) or the block kind (symbol|span_fallback|block)
    "symbol": pl.String,
}

FILES: Schema = {
    "snapshot_id": pl.String,
    "path": pl.String,
    "n_tokens": pl.Int64,  # regex_code_tokenizer_v1 of the file row text (truncated corpus text)
    "n_lines": pl.Int64,  # end_line of the file row (full file)
    "n_bytes": pl.Int64,  # UTF-8 bytes of the file row text
}

CHUNKS: Schema = {
    "snapshot_id": pl.String,
    "chunk_id": pl.String,
    "path": pl.String,
    "kind": pl.String,
    "symbol": pl.String,
    "start_line": pl.Int64,
    "end_line": pl.Int64,
    "text": pl.String,
}

RANKINGS: Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "rank": pl.Int64,  # 1-based, distinct paths per (run, sample); gaps only past the stored prefix
    "path": pl.String,
    "score": pl.Float64,  # nullable
}

METRICS: Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "metric": pl.String,  # canonical name, e.g. recall@20, mrr, bcy@8000
    "value": pl.Float64,
}

ALL: dict[str, Schema] = {
    "samples": SAMPLES,
    "labels": LABELS,
    "spans": SPANS,
    "files": FILES,
    "chunks": CHUNKS,
    "rankings": RANKINGS,
    "metrics": METRICS,
}


def empty(schema: Schema) -> pl.DataFrame:
    """An empty frame with exactly the schema's columns and dtypes."""
    return pl.DataFrame(schema=dict(schema))


def rows_frame(rows: Sequence[Mapping[str, Any]], schema: Schema) -> pl.DataFrame:
    """Row dicts as a frame of exactly ``schema`` (missing keys null; empty when no rows)."""
    if not rows:
        return empty(schema)
    return pl.DataFrame([{c: row.get(c) for c in schema} for row in rows], schema=dict(schema))


def conform(frame: pl.DataFrame, schema: Schema) -> pl.DataFrame:
    """``frame``'s columns cast to ``schema``'s, in its order; those it lacks as typed nulls."""
    return frame.select(
        pl.col(c).cast(t) if c in frame.columns else pl.lit(None, t).alias(c)
        for c, t in schema.items()
    )


def validate(frame: pl.DataFrame, schema: Schema, *, name: str = "frame") -> pl.DataFrame:
    """``frame`` in schema order; ``ValueError`` naming missing, extra and mistyped columns."""
    problems: list[str] = []
    missing = [c for c in schema if c not in frame.columns]
    extra = [c for c in frame.columns if c not in schema]
    if missing:
        problems.append(f"missing columns {missing}")
    if extra:
        problems.append(f"unexpected columns {extra}")
    for column, dtype in schema.items():
        if column in frame.columns and frame.schema[column] != dtype:
            problems.append(f"column {column!r} has dtype {frame.schema[column]}, expected {dtype}")
    if problems:
        msg = f"{name} does not match its schema: " + "; ".join(problems)
        raise ValueError(msg)
    return frame.select(list(schema))
