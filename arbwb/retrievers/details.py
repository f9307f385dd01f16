"""ARB details rows and summary JSON from a chunk ranking (spec §4.2, §4.5-4.8, §5.1-5.8): rank
metrics from the full file ranking, packing, line and block metrics from the chunks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from arbwb.io.lazycols import ints
from arbwb.metrics import chunks as cm
from arbwb.metrics.rank import CUTOFFS, rank_of, row_metrics
from arbwb.retrievers.common import ChunkRanking

#: Keys of §4.8 averaged in every summary group (a row lacking one counts as 0).
ALWAYS_KEYS = ("Recall@5", "Recall@10", "Recall@20", "MRR", "gold_coverage@8k")
OPTIONAL_KEYS = (
    *(f"Precision@{k}" for k in CUTOFFS),
    *(f"F0.5@{k}" for k in CUTOFFS),
    *(f"irrelevant_files@{k}" for k in CUTOFFS),
    *(f"hard_negative_hits@{k}" for k in CUTOFFS),
    "context_pollution_tokens@8k",
    "gold_token_ratio@8k",
    "coverage_auc@20",
    "redundancy@8k",
    "context_efficiency@8k",
)


@dataclass(frozen=True)
class SampleTarget:
    """What a details row needs from a sample (spec §2.5-2.8, §4.2, §4.7)."""

    sample_id: str
    task: str
    repo: str
    base_commit: str
    gold: list[str]
    hard_negatives: list[str]
    spans: list[cm.Block]
    blocks: list[cm.Block]
    provenance: str | None
    no_gold_reason: str | None
    no_gold: bool


def selective_fields(ranking: ChunkRanking | None) -> dict[str, float]:
    """Spec §4.7: best and second-best **chunk** scores (0.0 when absent), confidence, margin."""
    scores = [] if ranking is None else ranking.scores[:2].tolist()
    top, second = [float(s) for s in [*scores, 0.0, 0.0][:2]]
    return {
        "confidence": top,
        "top_score": top,
        "second_score": second,
        "score_margin": top - second,
    }


def _span_rows(blocks: Sequence[cm.Block], *, with_kind: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for b in blocks:
        row: dict[str, Any] = {"path": b.path, "start_line": b.start_line, "end_line": b.end_line}
        if with_kind:
            row |= {"kind": b.kind or "block", "symbol": b.symbol}
            if b.chunk_id:
                row["chunk_id"] = b.chunk_id
        rows.append(row)
    return rows


def details_row(
    target: SampleTarget,
    ranking: ChunkRanking | None,
    table: cm.ChunkTable | None,
    *,
    candidate_filter: str,
    ranker: str,
    selective: bool,
    error: str | None = None,
) -> dict[str, Any]:
    """One ARB details row (spec §4.2; §4.7 fields when ``selective``); ``ranking`` None with
    ``error`` gives the arbwb-defined failure row (empty ranking, zero metrics)."""
    files = [] if ranking is None else ranking.files
    row: dict[str, Any] = {
        "sample_id": target.sample_id,
        "task_type": target.task,
        "repo": target.repo,
        "base_commit": target.base_commit,
        "candidate_filter": candidate_filter,
        "ranker": ranker,
        "gold_files": target.gold,
        "hard_negative_files": target.hard_negatives,
        "query_provenance": target.provenance,
        "top_files": files[:20],
    }
    if error is not None:
        row |= {"status": "error", "error": error}
    if ranking is not None:
        row["top_file_scores"] = [
            {"path": p, "score": s}
            for p, s in zip(ranking.files[:20], ranking.file_scores[:20], strict=True)
        ]
        row |= ranking.details
    if selective:
        row |= {"label": "no_gold" if target.no_gold else "positive"}
        row |= {"no_gold_reason": target.no_gold_reason} | selective_fields(ranking)
    if target.no_gold:
        return row
    row["gold_ranks"] = rank_of(files, target.gold)
    row["hard_negative_ranks"] = rank_of(files, target.hard_negatives)
    table = cm.EMPTY_TABLE if ranking is None else ranking.table or table or cm.EMPTY_TABLE
    if ranking is not None and ranking.n_chars is not None:
        table = replace(table, n_chars=ranking.n_chars)
    # the packing reads a short prefix of the order: rows become ints only when read
    taken = [] if ranking is None else cm.taken_chunks(ints(ranking.order), table.n_chars)
    metrics = row_metrics(files, target.gold, target.hard_negatives)
    row["metrics"] = metrics | cm.packing_metrics(taken, table, target.gold)
    predicted = cm.taken_blocks(taken, table)
    if target.spans:
        row["gold_spans"] = _span_rows(target.spans, with_kind=False)
        lines = cm.line_metrics(predicted, target.spans)
        row["line_metrics"] = lines
        row["span_metrics"] = cm.span_metrics(lines)
    if target.blocks:
        row["gold_blocks"] = _span_rows(target.blocks, with_kind=True)
        row["block_metrics"] = cm.block_metrics(predicted, target.blocks)
    return row


def _mean(values: Sequence[float]) -> float:
    """Left-to-right Python sum divided by the count (spec §0 means)."""
    return sum(values) / len(values) if values else 0.0


def group_means(
    rows: Sequence[Mapping[str, Any]], metric_keys: Sequence[str] | None = None
) -> dict[str, float]:
    """One summary group (spec §4.8): ``samples``, then the means of the always-averaged keys
    and of every optional key some row has, or of ``metric_keys`` (a missing key counts 0)."""
    metric_rows = [r.get("metrics") or {} for r in rows]
    if metric_keys is None:
        optional = [k for k in OPTIONAL_KEYS if any(k in m for m in metric_rows)]
        metric_keys = [*ALWAYS_KEYS, *optional]
    out: dict[str, float] = {"samples": len(rows)}
    out |= {key: _mean([float(m.get(key, 0.0)) for m in metric_rows]) for key in metric_keys}
    for field, keys_ in (("line_metrics", cm.LINE_KEYS), ("block_metrics", cm.BLOCK_KEYS)):
        having = [r[field] for r in rows if field in r]
        for key in keys_ if having else ():
            out[key] = _mean([float(h.get(key, 0.0)) for h in having])
    return out


def summarize(
    rows: Sequence[Mapping[str, Any]],
    *,
    mode: str,
    ranker: str,
    model: str | None,
    candidate_filter: str,
    skipped: Mapping[str, int],
    runtime: Mapping[str, Any],
    extras: Mapping[str, Any] | None = None,
    metric_keys: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Summary JSON of spec §4.8 over the scored rows; ``errors`` counts failure rows by reason."""
    scored = [r for r in rows if r.get("label", "positive") == "positive"]
    groups: dict[str, list[Mapping[str, Any]]] = {"overall": list(scored)}
    for r in scored:
        groups.setdefault(str(r["task_type"]), []).append(r)
    errors = dict(Counter(str(r["error"]) for r in rows if r.get("status") == "error"))
    summary: dict[str, Any] = {
        "mode": mode,
        "ranker": ranker,
        "model": model,
        "candidate_filter": candidate_filter,
        "keep_list": None,
        "evaluated": len(rows),
        "skipped": dict(skipped),
        "errors": errors,
        "metrics": {name: group_means(g, metric_keys) for name, g in sorted(groups.items())},
        "runtime": dict(runtime),
    }
    if any("label" in r for r in rows):
        summary["positive_evaluated"] = len(scored)
        summary["no_gold_evaluated"] = len(rows) - len(scored)
    return summary | dict(extras or {})


def summary_path(out: Path) -> Path:
    """``<out stem minus _details>_summary.json`` beside the details file (spec §1.5, §4.8)."""
    stem = out.name.removesuffix(".jsonl").removesuffix("_details").removesuffix(".details")
    return out.with_name(f"{stem}_summary.json")


def runtime_stats(seconds: Sequence[float]) -> dict[str, float]:
    """Per-sample wall time: total, p50, p95 (linear interpolation) and max, in seconds."""
    if not seconds:
        return {"samples": 0, "total_s": 0.0, "p50_s": 0.0, "p95_s": 0.0, "max_s": 0.0}
    values = np.asarray(seconds, dtype=np.float64)
    return {
        "samples": len(seconds),
        "total_s": float(values.sum()),
        "p50_s": float(np.percentile(values, 50)),
        "p95_s": float(np.percentile(values, 95)),
        "max_s": float(values.max()),
    }


def sample_targets(
    samples: pl.DataFrame, labels: pl.DataFrame, spans: pl.DataFrame
) -> list[SampleTarget]:
    """One :class:`SampleTarget` per SAMPLES row, in input order (spans of kind ``span`` are gold
    spans, the others gold blocks, matched by lines)."""
    grouped = labels.group_by("sample_id", "role", maintain_order=True).agg("path")
    by_role = {(sid, role): paths for sid, role, paths in grouped.iter_rows()}
    span_map: dict[tuple[str, bool], list[cm.Block]] = {}
    for sid, path, start, end, kind, symbol in spans.select(
        "sample_id", "path", "start_line", "end_line", "kind", "symbol"
    ).iter_rows():
        block = cm.Block(path, start, end, kind, symbol or "")
        span_map.setdefault((sid, kind == "span"), []).append(block)
    columns = ("sample_id", "task", "repo", "base_commit", "query_provenance", "no_gold_reason")
    return [
        SampleTarget(
            sample_id=sid,
            task=task,
            repo=repo,
            base_commit=commit,
            gold=by_role.get((sid, "gold"), []),
            hard_negatives=by_role.get((sid, "hard_negative"), []),
            spans=span_map.get((sid, True), []),
            blocks=span_map.get((sid, False), []),
            provenance=provenance,
            no_gold_reason=reason,
            no_gold=stratum != "positive",
        )
        for sid, task, repo, commit, provenance, reason, stratum in samples.select(
            *columns, "stratum"
        ).iter_rows()
    ]
