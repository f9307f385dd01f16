"""Line spans as byte intervals on a file's bytes (contextbench-spec §4), for the span level."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from arbwb.contextbench.intervals import Interval, IntervalMap
from arbwb.io.checkout import Checkout
from arbwb.metrics.intervals import merge_intervals


def line_starts(data: bytes) -> list[int]:
    """Byte offsets where lines start: 0 and every position after a ``\\n``."""
    return [0] + [m.end() for m in re.finditer(rb"\n", data)]


def lines_to_bytes(
    data: bytes, start: int, end: int, starts: list[int] | None = None
) -> Interval | None:
    """Inclusive byte interval of lines ``start..end`` (§4; V20): start clamped to 1, end to
    start, None past the last line start, empty file (0, 0) (QUIRK Q6), phantom line N+1."""
    if not data:
        return (0, 0)
    starts = line_starts(data) if starts is None else starts
    start = max(1, start)
    end = max(start, end)
    if start > len(starts):
        return None
    start_byte = starts[start - 1]
    end_byte = starts[end] - 1 if end < len(starts) else len(data) - 1
    return (start_byte, max(start_byte, end_byte))


def byte_map(lines: Mapping[str, Sequence[Interval]], checkout: Checkout) -> IntervalMap:
    """Each line interval converted on the file's bytes, then merged per file; files without
    bytes at the commit are dropped (QUIRK Q2 for gold)."""
    out: IntervalMap = {}
    for path, ivs in lines.items():
        data = checkout.read(path)
        if data is None or not ivs:
            continue
        starts = line_starts(data)
        converted = [b for s, e in ivs if (b := lines_to_bytes(data, s, e, starts)) is not None]
        if converted:
            out[path] = merge_intervals(converted)
    return out
