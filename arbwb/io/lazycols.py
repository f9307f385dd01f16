"""Per-chunk columns whose values become Python objects only when read: a details row reads
a handful of a snapshot's chunks, so only those are converted."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:  # annotations only: a warm score loads no numpy
    import numpy as np
    import numpy.typing as npt
    import polars as pl


class Lazy(Sequence[Any]):
    """``n`` rows, row ``i`` read as ``read(i)`` when asked."""

    def __init__(self, n: int, read: Callable[[int], Any]) -> None:
        self.n, self.read = n, read

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self.read(k) for k in range(*i.indices(self.n))]
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return self.read(int(i) % self.n)


def ints(values: npt.NDArray[np.integer[Any]]) -> Lazy:
    """An integer column as Python ints."""
    return Lazy(len(values), lambda i: int(values[i]))


def coded(codes: npt.NDArray[np.integer[Any]], names: Sequence[Any]) -> Lazy:
    """A column of ``names[codes[i]]`` (distinct values stored once)."""
    return Lazy(len(codes), lambda i: names[int(codes[i])])


def picked(values: Sequence[Any], rows: npt.NDArray[np.int64]) -> Lazy:
    """The rows ``rows`` of another column, in that order."""
    return Lazy(len(rows), lambda i: values[int(rows[i])])


def series_rows(values: pl.Series) -> Lazy:
    """A Polars column (integers read through numpy)."""
    if values.dtype.is_integer():
        return ints(values.to_numpy())
    return Lazy(len(values), values.__getitem__)
