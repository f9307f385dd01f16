"""One prediction scored against its gold (contextbench-spec §5-§7): the §3.3 output record; span
and symbol levels need a checkout with bytes (and a symbol finder)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arbwb.contextbench.bytemap import byte_map
from arbwb.contextbench.editloc import editloc
from arbwb.contextbench.inputs import Gold, Prediction, Step
from arbwb.contextbench.intervals import IntervalMap, map_intersection, map_size, union_into
from arbwb.contextbench.resolution import resolve_path
from arbwb.contextbench.symbols import DefinitionIndex, SymbolFinder
from arbwb.io.checkout import Checkout
from arbwb.metrics.intervals import merge_intervals

LEVELS = ("file", "symbol", "span", "line")


@dataclass(frozen=True)
class _Resolved:
    """A context on resolved paths: files, line level, every span (for bytes), symbol names."""

    files: set[str]
    lines: IntervalMap
    raw: IntervalMap
    names: dict[str, list[str]]


def _resolve(step: Step, checkout: Checkout | None, gold: Gold) -> _Resolved:
    """Every predicted path resolved (§2.2); entries whose path resolves to nothing dropped.
    Line level: intervals with start > 0 and end > 0, merged, not clipped (Q4, Q5); bytes use
    every span (start 0 clamped)."""
    files: set[str] = set()
    raw: IntervalMap = {}
    names: dict[str, list[str]] = {}
    for path in step.files:
        if (resolved := resolve_path(path, checkout, gold.files)) is not None:
            files.add(resolved)
    for path, start, end in step.spans:
        if (resolved := resolve_path(path, checkout, gold.files)) is not None:
            raw.setdefault(resolved, []).append((start, end))
    for path, name in step.symbols:
        if (resolved := resolve_path(path, checkout, gold.files)) is not None:
            names.setdefault(resolved, []).append(name)
    lines = {
        p: merge_intervals((s, e) for s, e in ivs if s > 0 and e > 0) for p, ivs in raw.items()
    }
    return _Resolved(files, {p: ivs for p, ivs in lines.items() if ivs}, raw, names)


def ratio(inter: int, total: int) -> float:
    """``inter / total``, 1.0 when ``total <= 0`` (§5; QUIRK Q9 for precision)."""
    return inter / total if total > 0 else 1.0


def level_metric(intersection: int, gold_size: int, pred_size: int) -> dict[str, Any]:
    """§5: coverage = I/G (1.0 if G = 0), precision = I/P (1.0 if P <= 0, QUIRK Q9)."""
    return {
        "coverage": ratio(intersection, gold_size),
        "precision": ratio(intersection, pred_size),
        "intersection": intersection,
        "gold_size": gold_size,
        "pred_size": pred_size,
    }


def f1(coverage: float, precision: float) -> float:
    """Per-instance F1 ``2cp/(c+p)``, 0 when both are 0 (paper, statistics.py)."""
    return 2 * coverage * precision / (coverage + precision) if coverage + precision else 0.0


#: One context's sets per level: files and symbols as sets, lines and bytes (span) as interval
#: maps; span and symbol only with a checkout with bytes (and a symbol finder).
Sets = dict[str, Any]


def _size(value: set[Any] | IntervalMap) -> int:
    return len(value) if isinstance(value, set) else map_size(value)


def _sets(res: _Resolved, checkout: Checkout | None, symbols: DefinitionIndex | None) -> Sets:
    out: Sets = {"file": res.files, "line": res.lines}
    if checkout is not None and checkout.has_bytes:
        out["span"] = byte_map(res.raw, checkout)
        if symbols is not None:
            out["symbol"] = (
                symbols.named(res.names) if res.names else symbols.overlapping(out["span"])
            )
    return out


def _intersections(pred: Sets, gold: Sets) -> dict[str, int]:
    return {
        level: len(mine & gold[level])
        if isinstance(mine, set)
        else map_intersection(mine, gold[level])
        for level, mine in pred.items()
    }


def evaluate_instance(
    gold: Gold,
    pred: Prediction,
    checkout: Checkout | None,
    *,
    symbol_finder: SymbolFinder | None = None,
) -> dict[str, Any]:
    """The §3.3 output record of one prediction (error record when nothing was extracted);
    without a checkout, paths resolve lexically (arbwb-defined)."""
    symbols = None
    if symbol_finder is not None and checkout is not None and checkout.has_bytes:
        symbols = DefinitionIndex(checkout, symbol_finder)
    final_res = _resolve(pred.final, checkout, gold)
    if not final_res.files and not final_res.raw:
        return {"instance_id": pred.instance_id, "error": "no_context_extracted"}
    gold_lines = {p: merge_intervals(ivs) for p, ivs in gold.lines.items()}
    gold_sets = _sets(_Resolved(set(gold.files), gold_lines, gold.lines, {}), checkout, symbols)
    gold_sizes = {level: _size(value) for level, value in gold_sets.items()}
    final = _sets(final_res, checkout, symbols)
    inter = _intersections(final, gold_sets)
    record: dict[str, Any] = {
        "instance_id": pred.instance_id,
        "num_steps": len(pred.steps) or 1,
        "final": {
            level: level_metric(inter[level], gold_sizes[level], _size(final[level]))
            for level in LEVELS
            if level in inter
        },
        "trajectory": _trajectory(pred, checkout, gold, gold_sets, symbols),
    }
    edit = editloc(pred.model_patch or gold.patch, gold_lines)
    if edit is not None:
        record["editloc"] = edit
    return record


def _trajectory(
    pred: Prediction,
    checkout: Checkout | None,
    gold: Gold,
    gold_sets: Sets,
    symbols: DefinitionIndex | None,
) -> dict[str, Any]:
    """§6: cumulative coverage per step, AUC = mean of it, redundancy = 1 - |U_T| / Σ|C_t|."""
    steps = pred.steps or (pred.final,)
    gold_sizes = {level: _size(value) for level, value in gold_sets.items()}
    union: Sets = {lv: set() if isinstance(v, set) else {} for lv, v in gold_sets.items()}
    totals = dict.fromkeys(gold_sizes, 0)
    rows: list[dict[str, Any]] = []
    for number, step in enumerate(steps, start=1):
        for level, value in _sets(_resolve(step, checkout, gold), checkout, symbols).items():
            totals[level] += _size(value)
            if isinstance(value, set):
                union[level] |= value
            else:
                union_into(union[level], value)
        inter = _intersections(union, gold_sets)
        coverage: dict[str, float] = {}
        for level in LEVELS:
            if level not in inter:
                continue
            if gold_sizes[level] > 0:
                coverage[level] = inter[level] / gold_sizes[level]
            else:  # QUIRK Q10: an empty gold line map gives step line coverage 0.0
                coverage[level] = 0.0 if level == "line" and not gold_sets["line"] else 1.0
        rows.append({"step": number, "coverage": coverage})
    levels = [level for level in LEVELS if level in rows[0]["coverage"]]
    return {
        "steps": rows,
        "auc_coverage": {
            level: sum(r["coverage"][level] for r in rows) / len(rows) for level in levels
        },
        "redundancy": {
            level: 1 - _size(union[level]) / totals[level] if totals[level] else 0.0
            for level in levels
        },
    }
