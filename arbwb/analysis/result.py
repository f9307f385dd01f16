"""What every analysis returns and takes: recorded tables and numbers, resampling options."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import polars as pl


@dataclass(frozen=True)
class Table:
    """One frame the report writes (CSV and Markdown, TeX unless ``latex=False``) as ``name``."""

    name: str
    frame: pl.DataFrame
    latex: bool = True


class Result(Protocol):
    """An analysis result: the tables and key numbers ``Recorder.record_all`` writes."""

    def tables(self) -> Sequence[Table]: ...

    def records(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Resampling:
    """Bootstrap and permutation settings shared by every interval and paired test
    (arbwb-defined; upstream reports point values only). ``cluster="repo"`` resamples
    repositories instead of samples."""

    n_boot: int = 2000
    n_perm: int = 10000
    seed: int = 0
    cluster: str | None = None
