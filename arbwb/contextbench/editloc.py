"""EditLoc (contextbench-spec §7): a patch's deleted lines against the gold lines."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from arbwb.contextbench.intervals import Interval, IntervalMap, size
from arbwb.metrics.intervals import merge_intervals

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def patch_lines(diff: str, *, side: Literal["old", "new"] = "old") -> IntervalMap:
    """Deleted (``old``) or added (``new``) lines per ``+++ b/<path>`` file, merged (§7), with
    upstream's parsing bugs (B4, docs/contextbench.md)."""
    out: dict[str, list[Interval]] = {}
    current: str | None = None
    lines = diff.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("+++ b/"):
            current = line[len("+++ b/") :]
            continue
        match = _HUNK.match(line)
        if not match or current is None:
            continue
        old, new = int(match.group(1)), int(match.group(2))
        while i < len(lines) and not lines[i].startswith(("@@", "diff ", "---")):
            body = lines[i]
            i += 1
            if body.startswith("-"):
                if side == "old":
                    out.setdefault(current, []).append((old, old))
                old += 1
            elif body.startswith("+"):
                if side == "new":
                    out.setdefault(current, []).append((new, new))
                new += 1
            elif body.startswith(" "):
                old, new = old + 1, new + 1
    return {path: merge_intervals(ivs) for path, ivs in out.items()}


def editloc(
    patch: str | None, gold_lines: Mapping[str, Sequence[Interval]]
) -> dict[str, Any] | None:
    """EditLoc of a patch against merged gold lines (§7; BUG B5: recall == precision ==
    hits / #deleted lines, 0.0 without any); None without a patch."""
    if not patch:
        return None
    predicted = patch_lines(patch)
    pred_size = sum(size(ivs) for ivs in predicted.values())
    hits = sum(
        1
        for path, ivs in predicted.items()
        for start, end in ivs
        for line in range(start, end + 1)
        if any(s <= line <= e for s, e in gold_lines.get(path, ()))
    )
    value = hits / pred_size if pred_size else 0.0
    gold_size = sum(size(merge_intervals(ivs)) for ivs in gold_lines.values())
    return {
        "recall": value,
        "precision": value,
        "intersection": hits,
        "gold_size": gold_size,
        "pred_size": pred_size,
    }
