"""Load a run's rankings (ARB details, predictions, TREC, Parquet/CSV) into a :class:`RunData`:
the one entry point, picking :mod:`arbwb.io.details_reader` or :mod:`arbwb.io.ranked_lists`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from arbwb.errors import InputError
from arbwb.io.details_reader import read_details
from arbwb.io.ranked_lists import Collected, read_predictions, read_table, read_trec
from arbwb.io.run_frames import RunData, error_frame, normalise, submitted_frame
from arbwb.jsonio import iter_jsonl

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
        return read_details(path, run or default_run_name(path))
    readers: dict[str, Callable[[Path], Collected]] = {
        "predictions": read_predictions,
        "trec": read_trec,
        "table": read_table,
    }
    got = readers[fmt](path)
    name = run or got.name or default_run_name(path)
    return RunData(
        run=name,
        rankings=normalise(got.frame(), name),
        details=None,
        labels=None,
        stored=None,
        errors=error_frame(got.errors, name),
        submitted=submitted_frame(got.submitted, name),
        path=str(path),
    )
