"""Closed-interval arithmetic of contextbench-spec §0 (sizes, intersections, unions), literally:
reversed intervals keep a negative size (QUIRK Q5), so it loops over small lists on purpose."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from arbwb.metrics.intervals import merge_intervals

Interval = tuple[int, int]
IntervalMap = dict[str, list[Interval]]


def size(intervals: Iterable[Interval]) -> int:
    """Σ(end - start + 1); negative for reversed intervals (QUIRK Q5)."""
    return sum(end - start + 1 for start, end in intervals)


def intersect(a: Iterable[Interval], b: Iterable[Interval]) -> list[Interval]:
    """Pairwise overlaps ``(max starts, min ends)`` of the merged forms of ``a`` and ``b``."""
    right = merge_intervals(b)
    out = []
    for s1, e1 in merge_intervals(a):
        for s2, e2 in right:
            low, high = max(s1, s2), min(e1, e2)
            if low <= high:
                out.append((low, high))
    return out


def map_size(intervals: Mapping[str, Sequence[Interval]]) -> int:
    """Total size of a per-file interval map (each file merged)."""
    return sum(size(merge_intervals(ivs)) for ivs in intervals.values())


def map_intersection(
    a: Mapping[str, Sequence[Interval]], b: Mapping[str, Sequence[Interval]]
) -> int:
    """Σ over files present in both (identical keys) of the intersection size."""
    return sum(size(intersect(ivs, b[path])) for path, ivs in a.items() if path in b)


def union_into(target: IntervalMap, extra: Mapping[str, Sequence[Interval]]) -> None:
    """Add ``extra``'s intervals to ``target`` and re-merge the touched files."""
    for path, ivs in extra.items():
        target[path] = merge_intervals([*target.get(path, []), *ivs])
