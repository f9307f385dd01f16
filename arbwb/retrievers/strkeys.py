"""64-bit polynomial keys of strings, so warm lexical/BM25 runs find strings with numpy.

``key(s) = Σ_j cp(s[j])·P^j + len(s)·K (mod 2^64)``; a present key is only a candidate,
confirmed by comparing the strings, so every answer is exact. :class:`Needles` serves
lexical's substring bonuses (measured: an Aho-Corasick automaton cost 2.5 s per 95 MiB chunk
file's 68k needles, these cached keys 2 ms).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, overload

import numpy as np
import numpy.typing as npt

U64 = npt.NDArray[np.uint64]
P = 0x100000001B3  # odd, so invertible mod 2^64
K = 0x9E3779B97F4A7C15
_P_INV = pow(P, -1, 2**64)


def _powers(n: int) -> tuple[U64, U64]:
    """``P^j`` and ``P^-j`` (mod 2^64: uint64 products wrap) for j < n (microseconds for the
    few thousand a query needs)."""
    pows = np.full(max(n, 1), P, dtype=np.uint64)
    inv = np.full(max(n, 1), _P_INV, dtype=np.uint64)
    pows[0] = inv[0] = 1
    return np.cumprod(pows), np.cumprod(inv)


def codepoints(text: str) -> npt.NDArray[np.uint32]:
    """The code points of ``text`` (UTF-32), one per Python ``str`` index."""
    return np.frombuffer(text.encode("utf-32-le"), dtype="<u4")


def keys_of(strings: Sequence[str]) -> U64:
    """The key of every string (vectorised over their concatenated code points)."""
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    points = codepoints("".join(strings))
    keys = lengths.astype(np.uint64) * np.uint64(K)
    filled = np.flatnonzero(lengths > 0)
    if not len(filled):
        return keys
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    pows, _ = _powers(int(lengths.max()))
    offset = np.arange(len(points), dtype=np.int64) - np.repeat(starts, lengths)
    weighted = points.astype(np.uint64) * pows[offset]
    keys[filled] += np.add.reduceat(weighted, starts[filled])
    return keys


def substring_keys(points: npt.NDArray[Any], lengths: npt.NDArray[np.int64]) -> U64:
    """Keys of every substring of the text ``points`` with a length in ``lengths`` (>= 1)."""
    n = len(points)
    lengths = lengths[(lengths >= 1) & (lengths <= n)]
    if not len(lengths):
        return np.zeros(0, dtype=np.uint64)
    pows, inv = _powers(n + 1)
    prefix = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(points.astype(np.uint64) * pows[:n], out=prefix[1:])
    counts = n + 1 - lengths  # windows of each length
    size = np.repeat(lengths, counts)
    start = np.arange(int(counts.sum()), dtype=np.int64)
    start -= np.repeat(np.cumsum(counts) - counts, counts)
    keys: U64 = prefix[start + size] - prefix[start]
    keys *= inv[start]  # shift each window to start at power 0
    keys += size.astype(np.uint64) * np.uint64(K)
    return keys


def candidates(sorted_keys: U64, owners: npt.NDArray[Any], wanted: U64) -> npt.NDArray[np.int64]:
    """Distinct owners (``owners[i]`` has key ``sorted_keys[i]``) of any of the ``wanted`` keys
    (sorted first: several times faster than scattered look-ups)."""
    size = len(sorted_keys)
    if not size or not len(wanted):
        return np.zeros(0, dtype=np.int64)
    wanted = np.sort(wanted)
    lo = np.minimum(np.searchsorted(sorted_keys, wanted, side="left"), size - 1)
    found = wanted[sorted_keys[lo] == wanted]
    if not len(found):
        return np.zeros(0, dtype=np.int64)
    lo = np.searchsorted(sorted_keys, found, side="left")
    spans = np.searchsorted(sorted_keys, found, side="right") - lo  # > 1: needles share a key
    at = np.repeat(lo - np.cumsum(spans) + spans, spans) + np.arange(int(spans.sum()))
    return np.unique(owners[at].astype(np.int64))


@dataclass(frozen=True, eq=False)
class StringTable(Sequence[str]):
    """Strings stored as UTF-8 bytes end to end with offsets; an item is decoded when read."""

    data: npt.NDArray[np.uint8]
    offsets: npt.NDArray[np.int64]

    @classmethod
    def of(cls, strings: Sequence[str]) -> StringTable:
        """Pack strings (any characters, newlines included)."""
        lengths = np.fromiter(map(len, strings), np.int64, len(strings))
        data = "".join(strings).encode("utf-8")
        if len(data) != int(lengths.sum()):  # not all ASCII: count bytes string by string
            lengths = np.fromiter((len(s.encode("utf-8")) for s in strings), np.int64, len(strings))
        offsets = np.zeros(len(strings) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return cls(np.frombuffer(data, dtype=np.uint8), offsets)

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
        bounds = self.offsets.tolist()
        return [raw[a:b].decode("utf-8") for a, b in pairwise(bounds)]


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
    """Strings to test for ``needle in text`` (Python ``in``), many at a time: their keys
    sorted, with each key's needle (``owners``); ``lengths``: the distinct lengths >= 1,
    ``empty``: the empty needles, ``text_of(i)``: needle i."""

    size: int
    keys: U64
    owners: npt.NDArray[np.int32]
    lengths: npt.NDArray[np.int64]
    empty: npt.NDArray[np.int64]
    text_of: Callable[[int], str]

    @classmethod
    def of(cls, strings: Sequence[str]) -> Needles:
        """Needles of ``strings`` held in memory."""
        lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
        keys = keys_of(strings)
        order = np.argsort(keys, kind="stable")
        return cls(
            size=len(lengths),
            keys=keys[order],
            owners=order.astype(np.int32),
            lengths=np.unique(lengths[lengths > 0]),
            empty=np.flatnonzero(lengths == 0),
            text_of=strings.__getitem__,
        )

    def contained(self, text: str) -> npt.NDArray[np.bool_]:
        """``needle in text`` for every needle."""
        hit = np.zeros(self.size, dtype=bool)
        hit[self.empty] = True
        wanted = substring_keys(codepoints(text), self.lengths)
        for i in candidates(self.keys, self.owners, wanted).tolist():
            hit[i] = self.text_of(i) in text
        return hit
