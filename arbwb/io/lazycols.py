"""Per-chunk columns whose values become Python objects only when read: a details row reads
a handful of a snapshot's chunks, so only those are converted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:  # annotations only: a warm score loads no numpy
    import numpy as np
    import numpy.typing as npt
    import polars as pl


class _Rows(Sequence[Any]):
    """Base: a column of ``n`` rows whose ``row`` method reads one value."""

    def __len__(self) -> int:
        raise NotImplementedError

    def row(self, i: int) -> Any:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self.row(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        k = int(i)
        if not -n <= k < n:
            raise IndexError(i)
        return self.row(k % n)


class SeriesRows(_Rows):
    """A Polars column (integers read through numpy, slices in one conversion)."""

    def __init__(self, values: pl.Series) -> None:
        self._values = values
        self._numbers = values.to_numpy() if values.dtype.is_integer() else None

    def __len__(self) -> int:
        return len(self._values)

    def row(self, i: int) -> Any:
        if self._numbers is not None:
            return int(self._numbers[i])
        return self._values[i]

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return self._values[i].to_list()
        return super().__getitem__(i)


class Ints(_Rows):
    """An integer column as Python ints."""

    def __init__(self, values: npt.NDArray[np.integer[Any]]) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def row(self, i: int) -> int:
        return int(self.values[i])


class Coded(_Rows):
    """A column of ``names[codes[i]]`` (distinct values stored once)."""

    def __init__(self, codes: npt.NDArray[np.integer[Any]], names: Sequence[Any]) -> None:
        self.codes = codes
        self.names = names

    def __len__(self) -> int:
        return len(self.codes)

    def row(self, i: int) -> Any:
        return self.names[int(self.codes[i])]


class Picked(_Rows):
    """The rows ``rows`` of another column, in that order."""

    def __init__(self, values: Sequence[Any], rows: npt.NDArray[np.int64]) -> None:
        self.values = values
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, i: int) -> Any:
        return self.values[int(self.rows[i])]
