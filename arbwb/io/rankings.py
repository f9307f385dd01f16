"""Load a run's rankings (ARB details, predictions, TREC, Parquet/CSV) into a :class:`RunData`:
the one entry point (details through :mod:`arbwb.io.details_reader`), plus the readers of plain
ranked lists, whose raw rows :func:`load_rankings` normalises."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl

from arbwb.cache import file_key
from arbwb.errors import InputError
from arbwb.io import run_frames as rf
from arbwb.io.details_reader import read_details
from arbwb.io.run_frames import RunData
from arbwb.jsonio import iter_jsonl, read_json

__all__ = ["FORMATS", "RunData", "default_run_name", "detect_format", "load_rankings"]

FORMATS = ("details", "predictions", "trec", "table")


def default_run_name(path: str | Path) -> str:
    """The file stem with a trailing ``_details`` removed (``lexical_code_only``)."""
    return Path(path).stem.removesuffix("_details")


def detect_format(path: Path) -> str:
    """Format by extension; ``.jsonl`` by its first record (``top_files`` means details)."""
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".csv", ".tsv"):
        return "table"
    if suffix == ".json":
        return "predictions"
    if suffix != ".jsonl":
        return "trec"
    _, first = next(iter_jsonl(path))
    if "top_files" in first:
        return "details"
    if "ranked_files" in first or "status" in first:
        return "predictions"
    msg = "cannot tell the format: expected `top_files` (details) or `ranked_files` (predictions)"
    raise InputError(msg, path=path, line=1)


def load_rankings(path: str | Path, *, run: str | None = None, fmt: str | None = None) -> RunData:
    """Read one run file; ``fmt`` in :data:`FORMATS` overrides detection by extension/content."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        msg = f"unknown rankings format {fmt!r}; use one of {FORMATS}"
        raise ValueError(msg)
    if fmt == "details":
        return _details(path, run or default_run_name(path), file_key(path, "details"))
    got = {"predictions": read_predictions, "trec": read_trec, "table": read_table}[fmt](path)
    name = run or got.name or default_run_name(path)
    return RunData(
        run=name,
        rankings=rf.normalise(got.raw, name),
        details=None,
        labels=None,
        stored=None,
        errors=rf.run_frame(got.errors, rf.ERRORS, name),
        submitted=rf.run_frame(got.submitted, rf.SUBMITTED, name),
        path=str(path),
    )


@lru_cache(maxsize=64)
def _details(path: Path, run: str, key: str) -> RunData:
    """:func:`read_details`, kept for as long as the file's :func:`~arbwb.cache.file_key` stays
    the same: the notebooks a report runs in one kernel read the same runs (arbwb-defined). At
    most 64 runs (the paper's release has 51), so a long session does not hold every run it
    ever read."""
    return read_details(path, run)


@dataclass(frozen=True)
class Collected:
    """What a plain ranked-list reader found, for :func:`load_rankings`."""

    raw: pl.DataFrame  # RAW_SCORED rows (seq, sample_id, path, order, score)
    submitted: list[dict[str, Any]]  # {sample_id, line, status}
    errors: list[dict[str, Any]] = field(default_factory=list)  # {sample_id, error}
    name: str | None = None  # the run name the file states (a TREC run's tag)


def read_predictions(path: Path) -> Collected:
    """Records ``{sample_id, status, ranked_files}`` (``status`` defaults to ``ok``; an empty
    list is an answered, zero-score sample); an ``error`` record needs an ``error`` message."""
    raw: list[dict[str, Any]] = []
    submitted: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for seq, (line, where, obj) in enumerate(_prediction_records(path)):
        sample_id = obj.get("sample_id")
        if not isinstance(sample_id, str) or not sample_id:
            msg = f"expected a non-empty string, got {sample_id!r}"
            raise InputError(msg, path=path, line=line, field=f"{where}sample_id")
        rf.claim(seen, sample_id, path, line if line is not None else seq + 1)
        status = obj.get("status", "ok")
        if status == "error":
            message = obj.get("error")
            if not isinstance(message, str):
                msg = f"an error record needs an `error` message string, got {message!r}"
                raise InputError(msg, path=path, line=line, field=f"{where}error")
            errors.append({"sample_id": sample_id, "error": message})
        elif status == "ok":
            ranked = obj.get("ranked_files")
            if not isinstance(ranked, list):
                msg = f"expected a list (possibly empty), got {ranked!r}"
                raise InputError(msg, path=path, line=line, field=f"{where}ranked_files")
            for order, item in enumerate(ranked):
                p, score = _ranked_entry(item, path, line, f"{where}ranked_files[{order}]")
                raw.append(
                    {"seq": seq, "sample_id": sample_id, "path": p, "order": order, "score": score}
                )
        else:
            msg = f"expected status 'ok' or 'error', got {status!r}"
            raise InputError(msg, path=path, line=line, field=f"{where}status")
        submitted.append({"sample_id": sample_id, "line": line or seq + 1, "status": status})
    return Collected(pl.DataFrame(raw, schema=rf.RAW_SCORED), submitted, errors)


def _prediction_records(path: Path) -> Iterable[tuple[int | None, str, dict[str, Any]]]:
    """(line, location prefix, record) from a JSONL file, a JSON array of predictions or a
    ``{sample_id: [paths]}`` object."""
    if path.suffix.lower() != ".json":
        for line, obj in iter_jsonl(path):
            yield line, "", obj
        return
    records = read_json(path)
    if isinstance(records, dict) and records:  # {sample_id: [paths]}: one ok record per key
        for key, ranked in records.items():
            yield None, f"{key}.", {"sample_id": key, "ranked_files": ranked}
        return
    if not isinstance(records, list):
        msg = (
            "expected a JSON array of prediction records or a {sample_id: [paths]} object, "
            f"got {type(records).__name__}"
        )
        raise InputError(msg, path=path)
    if not records:
        raise InputError("file has no records (empty array)", path=path)
    for index, obj in enumerate(records):
        if not isinstance(obj, dict):
            msg = f"expected a JSON object, got {obj!r}"
            raise InputError(msg, path=path, field=f"[{index}]")
        yield None, f"[{index}].", obj


def _ranked_entry(item: Any, path: Path, line: int | None, field: str) -> tuple[str, float | None]:
    """A ``ranked_files`` element: a path string or a ``{path, score}`` object."""
    if isinstance(item, str):
        return item, None
    if isinstance(item, dict) and isinstance(item.get("path"), str):
        score = item.get("score")
        if score is None or rf.is_number(score):
            return item["path"], None if score is None else float(score)
    msg = f"expected a path string or {{path, score}} object, got {item!r}"
    raise InputError(msg, path=path, line=line, field=field)


def read_trec(path: Path) -> Collected:
    """TREC run lines ``qid Q0 docno rank score tag``, ordered by the rank column (stable; gaps
    renumbered); the run is named after its tag when every line has the same one."""
    raw: list[dict[str, Any]] = []
    submitted: list[dict[str, Any]] = []
    tags: set[str] = set()
    first_line: dict[str, int] = {}
    with path.open("rb") as handle:
        for line, raw_line in enumerate(handle, start=1):
            try:
                fields = raw_line.decode("utf-8").split()
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 ({exc.reason})", path=path, line=line) from None
            if not fields:
                continue
            if len(fields) != 6:
                msg = f"expected 6 columns `qid Q0 docno rank score tag`, got {len(fields)}"
                raise InputError(msg, path=path, line=line)
            qid, _, doc, rank_text, score_text, tag = fields
            tags.add(tag)
            rank = _parse(int, rank_text, path, line, "rank")
            if abs(rank) >= 2**63:
                msg = f"rank out of range, got {rank}"
                raise InputError(msg, path=path, line=line, field="rank")
            score = _parse(float, score_text, path, line, "score")
            seq = first_line.setdefault(qid, len(first_line))
            if seq == len(submitted):
                submitted.append({"sample_id": qid, "line": line, "status": "ok"})
            order = float(rank)
            raw.append(dict(seq=seq, sample_id=qid, path=doc, order=order, score=score, line=line))
    if not raw:
        raise InputError("file has no records (empty file)", path=path)
    frame = pl.DataFrame(raw, schema={**rf.RAW_SCORED, "line": pl.Int64})
    _check_ranked(frame, path)
    return Collected(frame.drop("line"), submitted, name=tags.pop() if len(tags) == 1 else None)


def _check_ranked(rows: pl.DataFrame, path: Path) -> None:
    """Explicit ranks (TREC, tables; rows with their ``line``) are whole numbers from 1 and
    scores finite (a rank 0 would sort first and move MRR); repeats are upstream's dedupe."""
    rank, score = pl.col("order"), pl.col("score")
    bad_rank = rank.is_nan() | (rank < 1) | (rank != rank.floor())
    bad = rows.filter(bad_rank | (score.is_nan() | score.is_infinite()).fill_null(False))
    if bad.is_empty():
        return
    row = bad.row(0, named=True)
    if not (row["order"] >= 1 and row["order"].is_integer()):
        msg, field = f"ranks start at 1 and are whole numbers, got {row['order']:g}", "rank"
    else:
        msg, field = f"expected a finite number, got {row['score']!r}", "score"
    raise InputError(msg, path=path, line=row["line"], field=field)


def _parse(kind: Callable[[str], Any], text: str, path: Path, line: int, field: str) -> Any:
    try:
        return kind(text)
    except ValueError:
        msg = f"expected {'an integer' if kind is int else 'a number'}, got {text!r}"
        raise InputError(msg, path=path, line=line, field=field) from None


def read_table(path: Path) -> Collected:
    """Parquet/CSV/TSV with columns ``sample_id, path, rank[, score]`` (TREC's rules)."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            table, offset = pl.read_parquet(path), 1
        else:
            separator = "\t" if suffix == ".tsv" else ","
            overrides = {"sample_id": pl.String, "path": pl.String}
            table = pl.read_csv(path, separator=separator, schema_overrides=overrides)
            offset = 2  # header line, then 1-based data lines
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"cannot read table: {exc}", path=path) from None
    if table.height == 0:
        raise InputError("file has no records (empty table)", path=path)
    for column in ("sample_id", "path", "rank"):
        if column not in table.columns:
            msg = f"required column is missing (have {table.columns})"
            raise InputError(msg, path=path, field=column)
    if "score" not in table.columns:
        table = table.with_columns(score=pl.lit(None, pl.Float64))
    kinds = {"sample_id": pl.String, "path": pl.String, "rank": pl.Float64, "score": pl.Float64}
    for column, dtype in kinds.items():
        _check_column(table[column], dtype, path, offset, column, nullable=column == "score")
    seq = table["sample_id"].unique(maintain_order=True)
    raw = table.select(
        seq=pl.col("sample_id").replace_strict(seq, range(len(seq)), return_dtype=pl.Int64),
        sample_id="sample_id",
        path="path",
        order=pl.col("rank").cast(pl.Float64),
        score=pl.col("score").cast(pl.Float64),
        line=pl.int_range(pl.len(), dtype=pl.Int64) + offset,
    )
    _check_ranked(raw, path)
    first = raw.group_by("sample_id", maintain_order=True).agg(pl.col("line").first())
    return Collected(raw.drop("line"), first.with_columns(status=pl.lit("ok")).to_dicts())


def _check_column(
    column: pl.Series,
    dtype: type[pl.DataType],
    path: Path,
    offset: int,
    name: str,
    *,
    nullable: bool,
) -> None:
    """Every value must cast to ``dtype`` (and be non-null unless ``nullable``)."""
    cast = column.cast(dtype, strict=False)
    bad = cast.is_null() if not nullable else cast.is_null() & column.is_not_null()
    if bad.any():
        row = int(bad.arg_true()[0])
        msg = f"expected a {'number' if dtype is pl.Float64 else 'string'}, got {column[row]!r}"
        raise InputError(msg, path=path, line=row + offset, field=name)
