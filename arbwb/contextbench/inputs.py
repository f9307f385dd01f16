"""What the scorer reads: one instance's gold (from the rows) and one run's predictions (from
the RECORDS and CONTEXT frames)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from arbwb import schemas
from arbwb.contextbench.intervals import IntervalMap
from arbwb.errors import InputError
from arbwb.io.contextbench import CONTEXT, RECORDS, ContextBenchRows


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
    columns = ("sample_id", "original_inst_id", "repo", "base_commit", "patch")
    for sid, original, repo, commit, patch in rows.instances.select(columns).iter_rows():
        gold = Gold(sid, original, repo, commit, tuple(spans.get(sid, [])), patch)
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
        if kind not in ("file", "span", "symbol"):
            raise InputError(f"unknown context kind {kind!r}", field="kind")
        bucket = steps.setdefault((run, inst, step), {"file": [], "span": [], "symbol": []})
        bucket[kind].append(
            {"file": path, "span": (path, start, end), "symbol": (path, symbol)}[kind]
        )

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
