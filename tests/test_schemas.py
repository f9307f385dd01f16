"""Canonical frames are declared once and validated with precise messages."""

from __future__ import annotations

import polars as pl
import pytest

from arbwb import schemas


def test_validate_reorders_and_accepts_exact_schema() -> None:
    frame = pl.DataFrame(
        {"value": [0.5], "metric": ["mrr"], "sample_id": ["s"], "run": ["r"]},
        schema={"value": pl.Float64, "metric": pl.String, "sample_id": pl.String, "run": pl.String},
    )
    out = schemas.validate(frame, schemas.METRICS, name="metrics")
    assert out.columns == ["run", "sample_id", "metric", "value"]


def test_validate_names_missing_extra_and_dtype() -> None:
    frame = pl.DataFrame(
        {"run": ["r"], "sample_id": ["s"], "metric": ["mrr"], "value": [1], "x": [0]}
    )
    with pytest.raises(ValueError) as info:
        schemas.validate(frame, schemas.METRICS, name="metrics")
    text = str(info.value)
    assert "unexpected columns ['x']" in text
    assert "column 'value' has dtype Int64, expected Float64" in text
    with pytest.raises(ValueError, match=r"missing columns \['value'\]"):
        schemas.validate(frame.drop("value", "x"), schemas.METRICS, name="metrics")


def test_empty_frames_have_every_schema() -> None:
    for name, schema in schemas.ALL.items():
        frame = schemas.empty(schema)
        assert frame.height == 0
        assert schemas.validate(frame, schema, name=name).schema == pl.Schema(dict(schema))
