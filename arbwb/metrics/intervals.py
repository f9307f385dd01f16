"""Inclusive line intervals: the one merge rule every span metric uses (spec §5.8, and
ContextBench's evaluator, contextbench-spec §5)."""

from __future__ import annotations

from collections.abc import Iterable


def merge_intervals(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sort and merge inclusive intervals; adjacent ones merge (next start <= end + 1)."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
