"""One prediction scored against its gold (contextbench-spec §5-§7): the §3.3 output record; span
and symbol levels need a checkout with bytes (and a symbol finder)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arbwb.contextbench.bytemap import byte_map
from arbwb.contextbench.editloc import editloc
from arbwb.contextbench.inputs import Gold, Prediction, Step
from arbwb.contextbench.intervals import IntervalMap, map_intersection, map_size, union_into
from arbwb.contextbench.resolution import resolve_path
from arbwb.contextbench.symbols import DefinitionIndex, Symbol, SymbolFinder
from arbwb.io.checkout import Checkout
from arbwb.metrics.intervals import merge_intervals

LEVELS = ("file", "symbol", "span", "line")


@dataclass
class _Resolved:
    """One step's predictions on resolved paths: files, raw line spans, symbol names."""

    files: set[str] = field(default_factory=set)
    raw: IntervalMap = field(default_factory=dict)  # every span, for bytes (start 0 clamped)
    names: dict[str, list[str]] = field(default_factory=dict)

    @property
    def lines(self) -> IntervalMap:
        """Line level: intervals with start > 0 and end > 0, merged, not clipped (Q4, Q5)."""
        out = {
            p: merge_intervals((s, e) for s, e in ivs if s > 0 and e > 0)
            for p, ivs in self.raw.items()
        }
        return {p: ivs for p, ivs in out.items() if ivs}


def _resolve(step: Step, checkout: Checkout | None, gold: Gold) -> _Resolved:
    """Every predicted path resolved (§2.2); entries whose path resolves to nothing dropped."""
    out = _Resolved()
    for raw in step.files:
        if (path := resolve_path(raw, checkout, gold.files)) is not None:
            out.files.add(path)
    for raw, start, end in step.spans:
        if (path := resolve_path(raw, checkout, gold.files)) is not None:
            out.raw.setdefault(path, []).append((start, end))
    for raw, name in step.symbols:
        if (path := resolve_path(raw, checkout, gold.files)) is not None:
            out.names.setdefault(path, []).append(name)
    return out


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


@dataclass
class _Sets:
    """One context's sets per level (absent levels omitted)."""

    files: set[str]
    lines: IntervalMap
    bytes: IntervalMap | None
    symbols: set[Symbol] | None

    def sizes(self) -> dict[str, int]:
        out = {"file": len(self.files), "line": map_size(self.lines)}
        if self.bytes is not None:
            out["span"] = map_size(self.bytes)
        if self.symbols is not None:
            out["symbol"] = len(self.symbols)
        return out


def _sets(res: _Resolved, checkout: Checkout | None, symbols: DefinitionIndex | None) -> _Sets:
    bytes_map = byte_map(res.raw, checkout) if checkout is not None and checkout.has_bytes else None
    syms = None
    if symbols is not None and bytes_map is not None:
        syms = symbols.named(res.names) if res.names else symbols.overlapping(bytes_map)
    return _Sets(res.files, res.lines, bytes_map, syms)


def _intersections(pred: _Sets, gold: _Sets) -> dict[str, int]:
    out = {"file": len(pred.files & gold.files), "line": map_intersection(pred.lines, gold.lines)}
    if pred.bytes is not None and gold.bytes is not None:
        out["span"] = map_intersection(pred.bytes, gold.bytes)
    if pred.symbols is not None and gold.symbols is not None:
        out["symbol"] = len(pred.symbols & gold.symbols)
    return out


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
    gold_res = _Resolved(set(gold.files), gold.lines, {})
    gold_lines = {p: merge_intervals(ivs) for p, ivs in gold.lines.items()}
    gold_bytes = (
        byte_map(gold.lines, checkout) if checkout is not None and checkout.has_bytes else None
    )
    gold_sets = _Sets(gold_res.files, gold_lines, gold_bytes, None)
    if symbols is not None and gold_bytes is not None:
        gold_sets.symbols = symbols.overlapping(gold_bytes)
    gold_sizes = gold_sets.sizes()
    final = _sets(final_res, checkout, symbols)
    inter = _intersections(final, gold_sets)
    pred_sizes = final.sizes()
    record: dict[str, Any] = {
        "instance_id": pred.instance_id,
        "num_steps": len(pred.steps) or 1,
        "final": {
            level: level_metric(inter[level], gold_sizes[level], pred_sizes[level])
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
    gold_sets: _Sets,
    symbols: DefinitionIndex | None,
) -> dict[str, Any]:
    """§6: cumulative coverage per step, AUC = mean of it, redundancy = 1 - |U_T| / Σ|C_t|."""
    steps = pred.steps or (pred.final,)
    gold_sizes = gold_sets.sizes()
    union = _Sets(
        set(),
        {},
        None if gold_sets.bytes is None else {},
        None if gold_sets.symbols is None else set(),
    )
    totals = dict.fromkeys(gold_sizes, 0)
    rows: list[dict[str, Any]] = []
    for number, step in enumerate(steps, start=1):
        own = _sets(_resolve(step, checkout, gold), checkout, symbols)
        for level, value in own.sizes().items():
            totals[level] += value
        union.files |= own.files
        union_into(union.lines, own.lines)
        if union.bytes is not None and own.bytes is not None:
            union_into(union.bytes, own.bytes)
        if union.symbols is not None and own.symbols is not None:
            union.symbols |= own.symbols
        inter = _intersections(union, gold_sets)
        coverage: dict[str, float] = {}
        for level in LEVELS:
            if level not in inter:
                continue
            if gold_sizes[level] > 0:
                coverage[level] = inter[level] / gold_sizes[level]
            else:  # QUIRK Q10: an empty gold line map gives step line coverage 0.0
                coverage[level] = 0.0 if level == "line" and not gold_sets.lines else 1.0
        rows.append({"step": number, "coverage": coverage})
    final_sizes = union.sizes()
    levels = [level for level in LEVELS if level in rows[0]["coverage"]]
    return {
        "steps": rows,
        "auc_coverage": {
            level: sum(r["coverage"][level] for r in rows) / len(rows) for level in levels
        },
        "redundancy": {
            level: 1 - final_sizes[level] / totals[level] if totals[level] else 0.0
            for level in levels
        },
    }
