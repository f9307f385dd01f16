"""Packed strings and their look-ups for the warm lexical/BM25 path, without a dict per snapshot.

:class:`StringTable` holds strings as UTF-8 bytes plus offsets (a cache entry's arrays);
:class:`SortedVocab` finds query terms in a sorted vocabulary by binary search (UTF-8 byte
order is code point order, Python's ``str`` order); :class:`Needles` answers ``needle in text``
for many needles at once with one Aho-Corasick automaton (``pyahocorasick``), exactly.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, overload

import ahocorasick
import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, eq=False)
class StringTable(Sequence[str]):
    """Strings stored as UTF-8 bytes end to end with offsets; an item is decoded when read."""

    data: npt.NDArray[np.uint8]
    offsets: npt.NDArray[np.int64]

    @classmethod
    def of(cls, strings: Sequence[str]) -> StringTable:
        """Pack strings (any characters, newlines included)."""
        encoded = [s.encode("utf-8") for s in strings]
        offsets = np.zeros(len(strings) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        return self.data[lo:hi].tobytes().decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_list())

    def to_list(self) -> list[str]:
        """Every string, decoded at once."""
        raw = self.data.tobytes()
        return [raw[a:b].decode("utf-8") for a, b in pairwise(self.offsets.tolist())]


@dataclass(frozen=True, eq=False)
class SortedVocab(Mapping[str, int]):
    """Term -> column of a vocabulary whose terms are sorted (column = position)."""

    terms: StringTable

    def columns(self, terms: Sequence[str]) -> list[int | None]:
        """Each term's column, or None when it is not in the vocabulary."""
        out: list[int | None] = []
        for term in terms:
            at = bisect_left(self.terms, term)
            out.append(at if at < len(self.terms) and self.terms[at] == term else None)
        return out

    def get(self, term: str, default: Any = None) -> Any:
        found = self.columns([term])[0]
        return default if found is None else found

    def __getitem__(self, term: str) -> int:
        found = self.columns([term])[0]
        if found is None:
            raise KeyError(term)
        return found

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self.columns([term])[0] is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.terms)

    def __len__(self) -> int:
        return len(self.terms)


@dataclass(frozen=True, eq=False)
class Needles:
    """Strings to test for ``needle in text`` (Python ``in`` on ``str``), many at a time.

    ``empty`` lists the needles of length 0 (always contained); the others are the words of
    ``automaton``, each word's value the needles equal to it.
    """

    size: int
    empty: npt.NDArray[np.int64]
    automaton: ahocorasick.Automaton

    @classmethod
    def of(cls, strings: Sequence[str]) -> Needles:
        """Needles of ``strings`` (needle i is ``strings[i]``)."""
        owners: dict[str, list[int]] = {}
        for i, text in enumerate(strings):
            owners.setdefault(text, []).append(i)
        empty = np.array(owners.pop("", []), dtype=np.int64)
        automaton = ahocorasick.Automaton()
        for text, ids in owners.items():
            automaton.add_word(text, ids)
        if owners:
            automaton.make_automaton()
        return cls(len(strings), empty, automaton)

    def contained(self, text: str) -> npt.NDArray[np.bool_]:
        """``needle in text`` for every needle."""
        hit = np.zeros(self.size, dtype=bool)
        hit[self.empty] = True
        if len(self.automaton):
            for _, ids in self.automaton.iter(text):
                hit[ids] = True
        return hit
