"""ContextBench evidence drop (contextbench-spec §9): gold lines seen while exploring against
those kept in the final context, in each upstream script variant (docs/contextbench.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

Lines = set[tuple[str, int]]
_PREFIXES = ("/testbed/", "/home/", "/workspace/")
_PAIR = re.compile(r"File:\s*(\S+)\s*\n\s*Lines:\s*(\d+)\s*-\s*(\d+)")


def drop_key(path: str) -> str:
    """Path key of the drop scripts: a ``/testbed/``, ``/home/`` or ``/workspace/`` prefix cut
    (so Multi-SWE keys never match, BUG B10)."""
    return next((path.removeprefix(p) for p in _PREFIXES if path.startswith(p)), path)


def _pairs(text: str) -> Lines:
    return {(drop_key(p), n) for p, a, b in _PAIR.findall(text) for n in range(int(a), int(b) + 1)}


def _blocks(text: str, tag: str) -> list[str]:
    return re.findall(rf"<{tag}>([\s\S]*?)</{tag}>", text)


def gold_line_set(spans: Sequence[tuple[str, int, int]]) -> Lines:
    """(key, line) pairs of raw gold spans (keys otherwise raw, as the scripts use them)."""
    return {(drop_key(p), n) for p, s, e in spans for n in range(s, e + 1)}


def evidence_drop(messages: Sequence[Mapping[str, Any]], gold: Lines) -> dict[str, float]:
    """Canonical drop (``..._laststep_to_final.py``) and the ``_v2`` variant of one trajectory:
    explored lines against ``<PATCH_CONTEXT>`` lines (upper-case tags only, BUG B7)."""
    assistant = [str(m.get("content") or "") for m in messages if m.get("role") == "assistant"]
    explored = [
        set().union(*map(_pairs, blocks))
        for text in assistant
        if (blocks := _blocks(text, "EXPLORE_CONTEXT"))
    ]
    final: Lines = set().union(*(_pairs(b) for t in assistant for b in _blocks(t, "PATCH_CONTEXT")))
    seen_union = set().union(*explored) & gold
    seen_last = (explored[-1] if explored else set()) & gold
    kept = final & gold

    def drop(seen: Lines) -> float:
        return 1.0 - min(1.0, len(kept & seen) / len(seen)) if seen else 1.0

    v2 = 1.0 - len(kept) / len(seen_union) if seen_union else 1.0
    return {
        "seen_union": float(len(seen_union)),
        "seen_last": float(len(seen_last)),
        "final_gold": float(len(kept)),
        "kept_union": float(len(kept & seen_union)),
        "kept_last": float(len(kept & seen_last)),
        "drop_union": drop(seen_union),
        "drop_last": drop(seen_last),
        "drop_v2": v2,
    }


def evidence_drop_v1(trajectory: Any, gold: Lines) -> dict[str, float]:
    """The broken v1 script (BUG B6): it searches ``json.dumps`` text, where newlines are
    escaped, so no File/Lines pair is ever found and the drop is 1.0."""
    text = json.dumps(trajectory)
    seen = _pairs(text) & gold
    kept = seen & gold
    return {
        "seen": float(len(seen)),
        "kept": float(len(kept)),
        "drop": 1.0 - len(kept) / len(seen) if seen else 1.0,
    }


def drop_from_result(
    gold_size: int, final_intersection: int, last_step_coverage: float, final_coverage: float
) -> dict[str, float]:
    """Result-row variant: seen = last-step coverage * gold size, kept = min(final I, seen),
    drop = 1 - kept/seen (1.0 when seen <= 0), recall_drop = max(0, last - final coverage)."""
    seen = last_step_coverage * gold_size
    kept = min(final_intersection, seen)
    return {
        "seen": seen,
        "kept": kept,
        "drop": 1.0 - kept / seen if seen > 0 else 1.0,
        "recall_drop": max(0.0, last_step_coverage - final_coverage),
    }
