"""ContextBench metrics (contextbench-spec §4-§8, §13), reproducing the upstream evaluator.

Per instance: final-context coverage (recall) and precision at file, line, byte ("span") and
block ("symbol") level (§5), trajectory AUC-Cov and redundancy (§6), EditLoc (§7); then the
upstream aggregations (§8) and the scoring of a ranked file list as whole-file context (§13).
Interval arithmetic follows the spec literally (closed intervals, merge of overlapping or
adjacent intervals, pairwise intersections, reversed predicted intervals kept, QUIRKs Q4-Q11),
so these functions loop over small per-instance lists in plain Python on purpose; frames come
in and go out at the edges. Levels that need file bytes (span) or tree-sitter (symbol) are
computed only when a checkout with bytes (and a symbol finder) is given.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

from arbwb import schemas
from arbwb.errors import InputError
from arbwb.io.checkout import Checkout, CheckoutSource
from arbwb.io.contextbench import CONTEXT, RECORDS, ContextBenchRows
from arbwb.metrics.intervals import merge_intervals

Interval = tuple[int, int]
IntervalMap = dict[str, list[Interval]]
Symbol = tuple[str, str, int, int]  # (file, node_type, start_byte, end_byte)
LEVELS = ("file", "symbol", "span", "line")
Resolution = Literal["checkout", "lexical"]


@dataclass(frozen=True)
class Definition:
    """A definition node of a file: tree-sitter type, byte range (end exclusive), name."""

    node_type: str
    start_byte: int
    end_byte: int
    name: str | None


#: Definitions of a file from its path and bytes (see :mod:`arbwb.contextbench.symbols`).
SymbolFinder = Callable[[str, bytes], Sequence[Definition]]


# --------------------------------------------------------------------------- intervals (§0)


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


# --------------------------------------------------------------------------- bytes (§4)


def line_starts(data: bytes) -> list[int]:
    """Byte offsets where lines start: 0 and every position after a ``\\n``."""
    return [0] + [m.end() for m in re.finditer(rb"\n", data)]


def lines_to_bytes(
    data: bytes, start: int, end: int, starts: list[int] | None = None
) -> Interval | None:
    """Inclusive byte interval of lines ``start..end`` (§4; V20): start clamped to 1, end to
    start, None past the last line start, empty file (0, 0) (QUIRK Q6), phantom line N+1.
    """
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
    bytes at the commit are dropped (QUIRK Q2 for gold).
    """
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


# --------------------------------------------------------------------------- paths (§2.2)


def path_candidates(raw: str) -> list[str]:
    """Candidates of a predicted path (§2.2): whole cleaned path, then minus 1, 2, ... parts."""
    path = raw.strip().strip("'\"").replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    parts = [p for p in path.lstrip("/").split("/") if p]
    return ["/".join(parts[i:]) for i in range(len(parts))]


def resolve_path(raw: str, checkout: Checkout | None, gold_files: Iterable[str] = ()) -> str | None:
    """First candidate that is a regular file at the commit (QUIRK Q3); None drops the entry.

    Without a checkout (arbwb-defined "lexical" mode) the first candidate equal to a gold
    path wins, else the whole cleaned path is kept (nothing is dropped).
    """
    candidates = path_candidates(raw)
    if checkout is not None:
        return next((c for c in candidates if checkout.is_file(c)), None)
    gold = set(gold_files)
    return next((c for c in candidates if c in gold), candidates[0] if candidates else None)


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Gold:
    """One instance's gold: §2.1 paths (empty ones left out), raw line spans, gold patch."""

    sample_id: str
    original_inst_id: str
    repo: str
    commit: str
    spans: tuple[tuple[str, int, int], ...]
    patch: str | None = None

    @property
    def files(self) -> frozenset[str]:
        """Distinct gold paths."""
        return frozenset(path for path, _, _ in self.spans)

    @property
    def lines(self) -> IntervalMap:
        """Raw gold line intervals per file (no filtering, no clipping)."""
        out: IntervalMap = {}
        for path, start, end in self.spans:
            out.setdefault(path, []).append((start, end))
        return out


@dataclass(frozen=True)
class Step:
    """One step (or the final context): predicted files, line spans, symbol names (raw paths)."""

    files: tuple[str, ...] = ()
    spans: tuple[tuple[str, int, int], ...] = ()
    symbols: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Prediction:
    """One instance's prediction: steps (may be empty), final context, model patch, commit."""

    instance_id: str
    steps: tuple[Step, ...]
    final: Step
    model_patch: str | None = None
    commit: str | None = None


def gold_from_rows(rows: ContextBenchRows) -> dict[str, Gold]:
    """Gold per instance id, reachable under both ``instance_id`` and ``original_inst_id``."""
    spans: dict[str, list[tuple[str, int, int]]] = {}
    for sid, path, start, end in (
        rows.gold.filter(pl.col("path") != "")
        .select("sample_id", "path", "start_line", "end_line")
        .iter_rows()
    ):
        spans.setdefault(sid, []).append((path, start, end))
    out: dict[str, Gold] = {}
    for inst in rows.instances.iter_rows(named=True):
        gold = Gold(
            inst["sample_id"],
            inst["original_inst_id"],
            inst["repo"],
            inst["base_commit"],
            tuple(spans.get(inst["sample_id"], [])),
            inst["patch"],
        )
        out[gold.sample_id] = gold
        out.setdefault(gold.original_inst_id, gold)
    return out


def predictions_from_frames(
    records: pl.DataFrame, context: pl.DataFrame
) -> dict[str, dict[str, Prediction]]:
    """Per run, per instance :class:`Prediction` objects from RECORDS and CONTEXT frames."""
    schemas.validate(records, RECORDS, name="records")
    schemas.validate(context, CONTEXT, name="context")
    steps: dict[tuple[str, str, int], dict[str, list[Any]]] = {}
    for run, inst, step, kind, path, start, end, symbol in context.iter_rows():
        bucket = steps.setdefault((run, inst, step), {"file": [], "span": [], "symbol": []})
        if kind == "file":
            bucket["file"].append(path)
        elif kind == "span":
            bucket["span"].append((path, start, end))
        elif kind == "symbol":
            bucket["symbol"].append((path, symbol))
        else:
            raise InputError(f"unknown context kind {kind!r}", field="kind")

    def make(run: str, inst: str, number: int) -> Step:
        got = steps.get((run, inst, number), {"file": [], "span": [], "symbol": []})
        return Step(tuple(got["file"]), tuple(got["span"]), tuple(got["symbol"]))

    out: dict[str, dict[str, Prediction]] = {}
    for row in records.iter_rows(named=True):
        run, inst = row["run"], row["instance_id"]
        out.setdefault(run, {})[inst] = Prediction(
            inst,
            tuple(make(run, inst, t) for t in range(1, row["n_steps"] + 1)),
            make(run, inst, 0),
            row["model_patch"],
            row["commit"],
        )
    return out


# --------------------------------------------------------------------------- one instance


@dataclass
class _Resolved:
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


def _ratio(inter: int, total: int) -> float:
    return inter / total if total > 0 else 1.0


def level_metric(intersection: int, gold_size: int, pred_size: int) -> dict[str, Any]:
    """§5: coverage = I/G (1.0 if G = 0), precision = I/P (1.0 if P <= 0, QUIRK Q9)."""
    return {
        "coverage": _ratio(intersection, gold_size),
        "precision": _ratio(intersection, pred_size),
        "intersection": intersection,
        "gold_size": gold_size,
        "pred_size": pred_size,
    }


def f1(coverage: float, precision: float) -> float:
    """Per-instance F1 ``2cp/(c+p)``, 0 when both are 0 (paper, statistics.py)."""
    return 2 * coverage * precision / (coverage + precision) if coverage + precision else 0.0


class _Symbols:
    """Definitions of the files of one checkout, parsed once each."""

    def __init__(self, checkout: Checkout, finder: SymbolFinder) -> None:
        self.checkout = checkout
        self.finder = finder
        self.cache: dict[str, Sequence[Definition]] = {}

    def defs(self, path: str) -> Sequence[Definition]:
        if path not in self.cache:
            data = self.checkout.read(path)
            self.cache[path] = () if data is None else self.finder(path, data)
        return self.cache[path]

    def overlapping(self, bytes_map: Mapping[str, Sequence[Interval]]) -> set[Symbol]:
        """Definitions with ``start <= iv.end`` and ``end >= iv.start`` (1-byte leniency, Q7)."""
        return {
            (path, d.node_type, d.start_byte, d.end_byte)
            for path, ivs in bytes_map.items()
            for d in self.defs(path)
            if any(d.start_byte <= e and d.end_byte >= s for s, e in ivs)
        }

    def named(self, names: Mapping[str, Sequence[str]]) -> set[Symbol]:
        """Definitions matching predicted names exactly, else by their last dotted part."""
        out: set[Symbol] = set()
        for path, wanted in names.items():
            defs = self.defs(path)
            for name in wanted:
                hits = [d for d in defs if d.name == name]
                if not hits and "." in name:
                    hits = [d for d in defs if d.name == name.rsplit(".", 1)[1]]
                out.update((path, d.node_type, d.start_byte, d.end_byte) for d in hits)
        return out


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


def _sets(res: _Resolved, checkout: Checkout | None, symbols: _Symbols | None) -> _Sets:
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
    """The §3.3 output record of one prediction (error record when nothing was extracted).

    ``checkout`` None scores file and line levels with lexical path resolution
    (arbwb-defined); a checkout without bytes also skips span and symbol levels.
    """
    symbols = None
    if symbol_finder is not None and checkout is not None and checkout.has_bytes:
        symbols = _Symbols(checkout, symbol_finder)
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
    symbols: _Symbols | None,
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


# --------------------------------------------------------------------------- EditLoc (§7)

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def patch_lines(diff: str, *, side: Literal["old", "new"] = "old") -> IntervalMap:
    """Deleted (``old``) or added (``new``) lines per ``+++ b/<path>`` file, merged (§7).

    Reproduces BUG B4: ``+++ /dev/null`` keeps the previous file, a hunk ends at a line
    starting with ``@@``, ``diff `` or ``---`` (so a deleted ``-- x`` line ends it), and a
    blank line lacking its context space does not advance the counters.
    """
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
    """EditLoc of a patch against merged gold lines (§7; BUG B5: recall == precision).

    ``hits`` = deleted lines inside a gold interval of the same file; recall = precision =
    hits / #deleted (0.0 without deleted lines); gold_size = all gold lines. None: no patch.
    """
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


# --------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class Scored:
    """Per-instance §3.3 records of one run plus what was excluded, counted."""

    run: str
    records: list[dict[str, Any]]  # each has "sample_id" (None for missing_gold) and "record"
    n_unpredicted: int  # gold instances the run has no prediction for (not scored upstream)
    resolution: Resolution
    levels: tuple[str, ...]


def score_run(
    run: str,
    predictions: Mapping[str, Prediction],
    gold: Mapping[str, Gold],
    *,
    source: CheckoutSource | None = None,
    symbol_finder: SymbolFinder | None = None,
) -> Scored:
    """Evaluate every prediction of a run; unknown instances become ``missing_gold`` rows."""
    results: list[dict[str, Any]] = []
    answered: set[str] = set()
    any_bytes = False
    for instance, pred in predictions.items():
        target = gold.get(instance)
        if target is None:
            results.append(
                {"sample_id": None, "record": {"instance_id": instance, "error": "missing_gold"}}
            )
            continue
        answered.add(target.sample_id)
        checkout = None if source is None else source(target.repo, pred.commit or target.commit)
        record: dict[str, Any]
        if source is not None and checkout is None:
            record = {"instance_id": instance, "error": "checkout_failed"}
        else:
            any_bytes |= checkout is not None and checkout.has_bytes
            record = evaluate_instance(target, pred, checkout, symbol_finder=symbol_finder)
        results.append({"sample_id": target.sample_id, "record": record})
    instances = {g.sample_id for g in gold.values()}
    levels = ("file", "line", *(("span",) if any_bytes else ()))
    if any_bytes and symbol_finder is not None:
        levels = ("file", "symbol", "span", "line")
    return Scored(
        run,
        results,
        len(instances - answered),
        "lexical" if source is None else "checkout",
        levels,
    )


RESULTS: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,  # canonical instance_id (null for missing_gold)
    "instance_id": pl.String,  # as the prediction gave it
    "error": pl.String,  # null | missing_gold | no_context_extracted | checkout_failed
    "level": pl.String,  # file | symbol | span | line (null on error rows)
    "coverage": pl.Float64,
    "precision": pl.Float64,
    "f1": pl.Float64,
    "intersection": pl.Int64,
    "gold_size": pl.Int64,
    "pred_size": pl.Int64,
    "auc_coverage": pl.Float64,
    "redundancy": pl.Float64,
    "num_steps": pl.Int64,
}

EDITLOC: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "recall": pl.Float64,
    "precision": pl.Float64,
    "intersection": pl.Int64,
    "gold_size": pl.Int64,
    "pred_size": pl.Int64,
}

STEP_COVERAGE: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "step": pl.Int64,
    "num_steps": pl.Int64,
    "level": pl.String,
    "coverage": pl.Float64,
}


def results_frame(scored: Sequence[Scored]) -> pl.DataFrame:
    """RESULTS: one row per (run, instance, level); error rows once with null level."""
    rows = []
    for run in scored:
        for item in run.records:
            record = item["record"]
            base = {
                "run": run.run,
                "sample_id": item["sample_id"],
                "instance_id": record["instance_id"],
            }
            if "error" in record:
                rows.append({**base, "error": record["error"]})
                continue
            traj = record["trajectory"]
            for level, m in record["final"].items():
                rows.append(
                    {
                        **base,
                        "level": level,
                        **m,
                        "f1": f1(m["coverage"], m["precision"]),
                        "auc_coverage": traj["auc_coverage"][level],
                        "redundancy": traj["redundancy"][level],
                        "num_steps": record["num_steps"],
                    }
                )
    return _frame(rows, RESULTS)


def editloc_frame(scored: Sequence[Scored]) -> pl.DataFrame:
    """EDITLOC: one row per valid instance that has a patch (model or gold, QUIRK Q11)."""
    rows = [
        {"run": run.run, "sample_id": item["sample_id"], **item["record"]["editloc"]}
        for run in scored
        for item in run.records
        if "editloc" in item["record"]
    ]
    return _frame(rows, EDITLOC)


def step_coverage_frame(scored: Sequence[Scored]) -> pl.DataFrame:
    """STEP_COVERAGE: cumulative coverage by step (§6) of every valid instance."""
    rows = [
        {
            "run": run.run,
            "sample_id": item["sample_id"],
            "step": step["step"],
            "num_steps": item["record"]["num_steps"],
            "level": level,
            "coverage": value,
        }
        for run in scored
        for item in run.records
        if "trajectory" in item["record"]
        for step in item["record"]["trajectory"]["steps"]
        for level, value in step["coverage"].items()
    ]
    return _frame(rows, STEP_COVERAGE)


def _frame(rows: Sequence[Mapping[str, Any]], schema: schemas.Schema) -> pl.DataFrame:
    if not rows:
        return schemas.empty(schema)
    full = [{c: row.get(c) for c in schema} for row in rows]
    return pl.DataFrame(full, schema=dict(schema), orient="row")


# --------------------------------------------------------------------------- aggregation (§8)

AGGREGATIONS = ("micro", "macro", "macro_errors_as_zero")


def _hm(c: float | None, p: float | None) -> float | None:
    return None if c is None or p is None else f1(c, p)


def aggregate(results: pl.DataFrame) -> pl.DataFrame:
    """Per (run, level, aggregation): coverage, precision, both F1s, AUC, redundancy, counts.

    - ``micro``: the evaluator CLI summary (errors excluded): ΣI/ΣG and ΣI/ΣP (1.0 on empty
      sums); AUC and redundancy are macro means. ``f1_harmonic`` of those is arbwb-defined.
    - ``macro``: mean over valid instances (README tables, paper); ``f1_mean`` = mean of
      per-instance F1 (statistics.py), ``f1_harmonic`` = harmonic mean of the macro coverage
      and precision (README F1 columns).
    - ``macro_errors_as_zero``: statistics.py, error rows (missing_gold excluded) as zeros.
    ``n_valid``/``n_error`` count instances; missing_gold rows count only in ``n_missing_gold``.
    """
    valid = results.filter(pl.col("error").is_null())
    errors = results.filter(pl.col("error").is_not_null())
    rows = []
    for run in results["run"].unique(maintain_order=True).to_list():
        mine = valid.filter(pl.col("run") == run)
        err = errors.filter(pl.col("run") == run)
        n_error = err.filter(pl.col("error") != "missing_gold").height
        n_missing = err.filter(pl.col("error") == "missing_gold").height
        for level in [lv for lv in LEVELS if lv in mine["level"].to_list()]:
            part = mine.filter(pl.col("level") == level)
            n = part.height
            sums = part.select(pl.col("intersection", "gold_size", "pred_size").sum()).row(0)
            micro_c, micro_p = _ratio(sums[0], sums[1]), _ratio(sums[0], sums[2])
            means = part.select(
                pl.col("coverage", "precision", "f1", "auc_coverage", "redundancy").mean()
            ).row(0)
            common = {
                "run": run,
                "level": level,
                "n_valid": n,
                "n_error": n_error,
                "n_missing_gold": n_missing,
            }
            rows.append(
                {
                    **common,
                    "aggregation": "micro",
                    "coverage": micro_c,
                    "precision": micro_p,
                    "f1_mean": None,
                    "f1_harmonic": _hm(micro_c, micro_p),
                    "auc_coverage": means[3],
                    "redundancy": means[4],
                }
            )
            rows.append(
                {
                    **common,
                    "aggregation": "macro",
                    "coverage": means[0],
                    "precision": means[1],
                    "f1_mean": means[2],
                    "f1_harmonic": _hm(means[0], means[1]),
                    "auc_coverage": means[3],
                    "redundancy": means[4],
                }
            )
            total = n + n_error
            zero = [
                float(part[c].sum()) / total
                for c in ("coverage", "precision", "f1", "auc_coverage", "redundancy")
            ]
            rows.append(
                {
                    **common,
                    "aggregation": "macro_errors_as_zero",
                    "coverage": zero[0],
                    "precision": zero[1],
                    "f1_mean": zero[2],
                    "f1_harmonic": _hm(zero[0], zero[1]),
                    "auc_coverage": zero[3],
                    "redundancy": zero[4],
                }
            )
    return _frame(rows, AGGREGATE)


AGGREGATE: schemas.Schema = {
    "run": pl.String,
    "level": pl.String,
    "aggregation": pl.String,
    "coverage": pl.Float64,
    "precision": pl.Float64,
    "f1_mean": pl.Float64,  # mean of per-instance F1 (statistics.py); null for micro
    "f1_harmonic": pl.Float64,  # harmonic mean of the aggregated coverage and precision
    "auc_coverage": pl.Float64,
    "redundancy": pl.Float64,
    "n_valid": pl.Int64,
    "n_error": pl.Int64,
    "n_missing_gold": pl.Int64,
}


def aggregate_editloc(editloc_rows: pl.DataFrame) -> pl.DataFrame:
    """EditLoc per run: micro (evaluator: Σhits/Σgold lines, Σhits/Σpred lines) and macro
    (editloc_stats.py: mean recall, mean precision, mean per-instance F1).
    """
    rows = []
    for run in editloc_rows["run"].unique(maintain_order=True).to_list():
        part = editloc_rows.filter(pl.col("run") == run)
        hits, gold, pred = part.select(pl.col("intersection", "gold_size", "pred_size").sum()).row(
            0
        )
        rows.append(
            {
                "run": run,
                "aggregation": "micro",
                "recall": _ratio(hits, gold),
                "precision": _ratio(hits, pred),
                "f1_mean": None,
                "n": part.height,
            }
        )
        f1s = [f1(r, p) for r, p in part.select("recall", "precision").iter_rows()]
        rows.append(
            {
                "run": run,
                "aggregation": "macro",
                "recall": sum(part["recall"]) / part.height,
                "precision": sum(part["precision"]) / part.height,
                "f1_mean": sum(f1s) / len(f1s),
                "n": part.height,
            }
        )
    schema = {
        "run": pl.String,
        "aggregation": pl.String,
        "recall": pl.Float64,
        "precision": pl.Float64,
        "f1_mean": pl.Float64,
        "n": pl.Int64,
    }
    return _frame(rows, schema)


def metrics_frame(
    results: pl.DataFrame,
    editloc_rows: pl.DataFrame | None = None,
    *,
    errors: Literal["zero", "drop"] = "zero",
) -> pl.DataFrame:
    """Canonical METRICS (run, sample_id, metric, value) for leaderboard statistics.

    Metrics ``<level>.coverage|precision|f1``, ``auc.<level>``, ``redundancy.<level>`` and
    ``editloc.recall|precision``. Error rows (not missing_gold) are zeros for every level the
    run scores (statistics.py convention, §13.7) or dropped with ``errors="drop"``.
    """
    valid = results.filter(pl.col("error").is_null())
    long = pl.concat(
        [
            valid.select(
                "run", "sample_id", metric=pl.col("level") + "." + name, value=pl.col(name)
            )
            for name in ("coverage", "precision", "f1")
        ]
        + [
            valid.select(
                "run", "sample_id", metric=pl.lit(prefix) + pl.col("level"), value=pl.col(col)
            )
            for prefix, col in (("auc.", "auc_coverage"), ("redundancy.", "redundancy"))
        ]
    )
    if errors == "zero":
        names = long.select("run", "metric").unique()
        failed = results.filter(pl.col("error").is_not_null(), pl.col("sample_id").is_not_null())
        long = pl.concat(
            [
                long,
                failed.select("run", "sample_id")
                .join(names, on="run")
                .with_columns(value=pl.lit(0.0)),
            ]
        )
    if editloc_rows is not None and editloc_rows.height:
        long = pl.concat(
            [long]
            + [
                editloc_rows.select(
                    "run", "sample_id", metric=pl.lit(f"editloc.{c}"), value=pl.col(c)
                )
                for c in ("recall", "precision")
            ]
        )
    return schemas.validate(
        long.sort("run", "sample_id", "metric"), schemas.METRICS, name="metrics"
    )


# --------------------------------------------------------------------------- ranked lists (§13)


def ranked_context(
    rankings: pl.DataFrame,
    gold: Mapping[str, Gold],
    k: int,
    *,
    source: CheckoutSource | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """RECORDS and CONTEXT of the top-``k`` existing ranked files of each (run, sample), each
    predicted whole (``1..N(f)``), for scoring at every level with :func:`score_run` (§13.2).

    Paths that are not files at ``base_commit`` are dropped before taking k (exact existence);
    without a checkout every path is kept and no spans are made (file level only).
    """
    records, context = [], []
    for (run, sid), part in rankings.sort("rank").group_by(
        ["run", "sample_id"], maintain_order=True
    ):
        target = gold.get(str(sid))
        if target is None:
            raise InputError(
                f"ranked sample {sid!r} is not a ContextBench instance", field="sample_id"
            )
        checkout = None if source is None else source(target.repo, target.commit)
        kept: list[str] = []
        for path in part["path"].to_list():
            if path not in kept and (checkout is None or checkout.is_file(path)):
                kept.append(path)
            if len(kept) == k:
                break
        base = {"run": str(run), "instance_id": target.sample_id, "step": 0, "symbol": None}
        for path in kept:
            context.append(
                {**base, "kind": "file", "path": path, "start_line": None, "end_line": None}
            )
            n = None if checkout is None else checkout.n_lines(path)
            if n:
                context.append(
                    {**base, "kind": "span", "path": path, "start_line": 1, "end_line": n}
                )
        records.append(
            {
                "run": str(run),
                "instance_id": target.sample_id,
                "line": 0,
                "n_steps": 0,
                "model_patch": None,
                "commit": None,
                "source": "rankings",
            }
        )
    return _frame(records, RECORDS), _frame(context, CONTEXT)


RANKED: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "k": pl.Int64,
    "n_dropped": pl.Int64,  # ranked paths that are not files at base_commit (not penalised)
    "error": pl.String,  # no_context_extracted when no ranked path exists
    "file_intersection": pl.Int64,
    "file_gold": pl.Int64,
    "file_pred": pl.Int64,
    "file_coverage": pl.Float64,
    "file_precision": pl.Float64,
    "line_intersection": pl.Int64,
    "line_gold": pl.Int64,
    "line_pred": pl.Int64,  # null when line counts are absent
    "line_coverage": pl.Float64,  # an upper bound for span selections inside P_k (§13)
    "line_precision": pl.Float64,  # a lower bound; null when line counts are absent
    "line_counts": pl.String,  # checkout | absent (coverage then assumes gold lines in range)
}


def score_ranked(
    rankings: pl.DataFrame,
    gold: Mapping[str, Gold],
    ks: Sequence[int],
    *,
    source: CheckoutSource | None = None,
) -> pl.DataFrame:
    """§13 file and line level of the top-k ranked files as whole-file context, every k.

    File level is exact upstream arithmetic. Line level predicts ``[1, N(f)]`` per file:
    coverage is an upper bound, precision a lower bound for span selections in those files.
    Without line counts (no checkout/corpus) N is unknown: paths are not checked, the line
    coverage assumes every gold line lies in its file (marked ``line_counts="absent"``) and
    line precision is null.
    """
    rows = []
    ranked = rankings.sort("run", "sample_id", "rank")
    for (run, sid), part in ranked.group_by(["run", "sample_id"], maintain_order=True):
        target = gold.get(str(sid))
        if target is None:
            raise InputError(
                f"ranked sample {sid!r} is not a ContextBench instance", field="sample_id"
            )
        checkout = None if source is None else source(target.repo, target.commit)
        kept, dropped = [], 0
        for path in dict.fromkeys(part["path"].to_list()):
            if checkout is None or checkout.is_file(path):
                kept.append(path)
            else:
                dropped += 1
        gold_lines = {p: merge_intervals(ivs) for p, ivs in target.lines.items()}
        line_gold = map_size(gold_lines)
        for k in ks:
            rows.append(
                _ranked_row(str(run), target, kept[:k], k, dropped, gold_lines, line_gold, checkout)
            )
    return _frame(rows, RANKED)


def _ranked_row(
    run: str,
    target: Gold,
    top: list[str],
    k: int,
    dropped: int,
    gold_lines: IntervalMap,
    line_gold: int,
    checkout: Checkout | None,
) -> dict[str, Any]:
    base = {"run": run, "sample_id": target.sample_id, "k": k, "n_dropped": dropped}
    counts = "absent" if checkout is None else "checkout"
    if not top:
        return {**base, "error": "no_context_extracted", "line_counts": counts}
    hits = [p for p in top if p in target.files]
    if checkout is None:
        line_inter = sum(size(gold_lines[p]) for p in hits)
        line_pred = None
    else:
        sizes = {p: checkout.n_lines(p) or 0 for p in top}
        line_pred = sum(sizes.values())
        line_inter = sum(size(intersect(gold_lines[p], [(1, sizes[p])])) for p in hits if sizes[p])
    return {
        **base,
        "error": None,
        "file_intersection": len(hits),
        "file_gold": len(target.files),
        "file_pred": len(top),
        "file_coverage": _ratio(len(hits), len(target.files)),
        "file_precision": _ratio(len(hits), len(top)),
        "line_intersection": line_inter,
        "line_gold": line_gold,
        "line_pred": line_pred,
        "line_coverage": _ratio(line_inter, line_gold),
        "line_precision": None if line_pred is None else _ratio(line_inter, line_pred),
        "line_counts": counts,
    }


CEILINGS: schemas.Schema = {
    "sample_id": pl.String,
    "n_gold_files": pl.Int64,
    "n_gold_files_missing": pl.Int64,  # gold files that are not files at base_commit (B2/B3)
    "max_file_cov": pl.Float64,
    "max_line_cov": pl.Float64,
    "perfect_line_precision": pl.Float64,  # |L_G| in range / Σ N(f) over existing gold files
}


def ceilings(gold: Mapping[str, Gold], source: CheckoutSource) -> pl.DataFrame:
    """§13.1 per instance: the file and line coverage reachable at all, and the line
    precision of a perfect whole-file ranking (P_k = existing gold files).
    """
    rows = []
    for target in {g.sample_id: g for g in gold.values()}.values():
        checkout = source(target.repo, target.commit)
        if checkout is None:
            continue
        lines = {p: merge_intervals(ivs) for p, ivs in target.lines.items()}
        present = [p for p in sorted(target.files) if checkout.is_file(p)]
        n = {p: checkout.n_lines(p) or 0 for p in present}
        reach = sum(size(intersect(lines[p], [(1, n[p])])) for p in present if n[p])
        total_n = sum(n.values())
        rows.append(
            {
                "sample_id": target.sample_id,
                "n_gold_files": len(target.files),
                "n_gold_files_missing": len(target.files) - len(present),
                "max_file_cov": _ratio(len(present), len(target.files)),
                "max_line_cov": _ratio(reach, map_size(lines)),
                "perfect_line_precision": _ratio(reach, total_n),
            }
        )
    return _frame(rows, CEILINGS)


def score_predictions(
    runs: Sequence[Any],
    rows: ContextBenchRows,
    *,
    source: CheckoutSource | None = None,
    symbol_finder: SymbolFinder | None = None,
) -> list[Scored]:
    """Score loaded :class:`~arbwb.io.contextbench.Predictions` runs against ``rows``."""
    gold = gold_from_rows(rows)
    out = []
    for run in runs:
        preds = predictions_from_frames(run.records, run.context).get(run.run, {})
        out.append(score_run(run.run, preds, gold, source=source, symbol_finder=symbol_finder))
    return out
