"""ARB details rows and summary JSON from a chunk ranking (spec §4.2, §4.5-4.8, §5.1-5.8).

Every rank metric is computed on the **full** file ranking (MRR and ``gold_ranks`` beyond 20,
spec §5.1); the legacy char-packing, line and block metrics walk the chunk-level ranking.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from arbwb.metrics import coverage_auc, f_beta, precision_at_k, recall_at_k, reciprocal_rank
from arbwb.retrievers.common import ChunkRanking

CUTOFFS = (5, 10, 20)
CHAR_BUDGET = 8000
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
LINE_KEYS = (
    "line_samples",
    "line_recall@8k",
    "line_precision@8k",
    "line_f1@8k",
    "line_f0.5@8k",
    "line_gold_count",
    "line_predicted_count",
    "line_overlap_count",
)
BLOCK_KEYS = (
    "block_samples",
    "block_recall@8k",
    "block_precision@8k",
    "block_f1@8k",
    "block_f0.5@8k",
    "gold_blocks",
    "predicted_blocks",
    "matched_blocks",
)


@dataclass(frozen=True)
class Block:
    """A gold span/block or a ranked chunk's line range (1-based, inclusive)."""

    path: str
    start_line: int
    end_line: int
    kind: str = ""
    symbol: str = ""
    chunk_id: str | None = None


@dataclass(frozen=True)
class SampleTarget:
    """What a details row needs from a sample (spec §2.5-2.8, §4.2, §4.7)."""

    sample_id: str
    task: str
    repo: str
    base_commit: str
    gold: list[str]
    hard_negatives: list[str]
    spans: list[Block]
    blocks: list[Block]
    provenance: str | None
    no_gold_reason: str | None
    no_gold: bool


@dataclass(frozen=True)
class ChunkTable:
    """Per-chunk columns of one snapshot's candidate chunks, for the chunk-level walks."""

    paths: list[str]
    kinds: list[str]
    symbols: list[str]
    starts: list[int]
    ends: list[int]
    chunk_ids: list[str]
    n_chars: list[int]


EMPTY_TABLE = ChunkTable([], [], [], [], [], [], [])


def chunk_table(chunks: pl.DataFrame) -> ChunkTable:
    """Lists of the chunk columns (text length in code points, Python ``len``), built once."""
    return ChunkTable(
        paths=chunks["path"].to_list(),
        kinds=chunks["kind"].to_list(),
        symbols=chunks["symbol"].to_list(),
        starts=chunks["start_line"].to_list(),
        ends=chunks["end_line"].to_list(),
        chunk_ids=chunks["chunk_id"].to_list(),
        n_chars=chunks["text"].str.len_chars().to_list(),
    )


def rank_of(ranked: Sequence[str], paths: Iterable[str]) -> dict[str, int | None]:
    """``{path: 1-based rank in the full ranking or None}`` (``gold_ranks``, spec §4.2)."""
    position = {p: i for i, p in enumerate(ranked, start=1)}
    return {p: position.get(p) for p in paths}


def rank_metrics(
    ranked: Sequence[str], gold: Sequence[str], hard_negatives: Sequence[str]
) -> dict[str, float]:
    """Single-run per-sample metrics of spec §5.2-5.6 on the full file ranking R (§4.8 keys).

    Recall@k, Precision@k (denominator min(k, |R|), QUIRK), F0.5@k, ``irrelevant_files@k =
    |R[:k] \\ G|``, ``hard_negative_hits@k = |R[:k] ∩ H|``, MRR and coverage_auc@20, all from
    :mod:`arbwb.metrics`.
    """
    gold_set = frozenset(gold)
    negatives = frozenset(hard_negatives)
    out: dict[str, float] = {}
    for k in CUTOFFS:
        recall = recall_at_k(ranked, gold_set, k)
        precision = precision_at_k(ranked, gold_set, k)
        out[f"Recall@{k}"] = recall
        out[f"Precision@{k}"] = precision
        out[f"F0.5@{k}"] = f_beta(precision, recall, 0.5)
        out[f"irrelevant_files@{k}"] = float(sum(1 for p in ranked[:k] if p not in gold_set))
        out[f"hard_negative_hits@{k}"] = float(sum(1 for p in ranked[:k] if p in negatives))
    out["MRR"] = reciprocal_rank(ranked, gold_set)
    out["coverage_auc@20"] = coverage_auc(ranked, gold_set, 20)
    return out


def taken_chunks(
    order: Sequence[int], n_chars: Sequence[int], budget: int = CHAR_BUDGET
) -> list[int]:
    """Chunks within the char budget (spec §5.8): take while ``used + L ≤ B`` or ``used = 0``."""
    taken: list[int] = []
    used = 0
    for row in order:
        length = n_chars[row]
        if used + length > budget and used != 0:
            break
        taken.append(row)
        used += length
    return taken


def packing_metrics(
    taken: Sequence[int], table: ChunkTable, gold: Sequence[str]
) -> dict[str, float]:
    """Legacy 8k-char packing metrics (spec §5.8) of the taken chunks."""
    gold_set = set(gold)
    paths = [table.paths[r] for r in taken]
    used = sum(table.n_chars[r] for r in taken)
    gold_chars = sum(table.n_chars[r] for r in taken if table.paths[r] in gold_set)
    ratio = gold_chars / used if used else 0.0
    distinct = set(paths)
    return {
        "gold_coverage@8k": len(gold_set & distinct) / len(gold_set) if gold_set else 0.0,
        "context_pollution_tokens@8k": float(used - gold_chars),
        "gold_token_ratio@8k": ratio,
        "context_efficiency@8k": ratio,
        "redundancy@8k": (len(paths) - len(distinct)) / len(paths) if paths else 0.0,
    }


def merge_intervals(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sort and merge inclusive intervals; adjacent ones merge (next start ≤ end + 1)."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _by_path(blocks: Iterable[Block]) -> dict[str, list[tuple[int, int]]]:
    grouped: dict[str, list[tuple[int, int]]] = {}
    for b in blocks:
        if b.path and b.start_line >= 1 and b.end_line >= b.start_line:
            grouped.setdefault(b.path, []).append((b.start_line, b.end_line))
    return {p: merge_intervals(v) for p, v in grouped.items()}


def _taken_blocks(taken: Sequence[int], table: ChunkTable) -> list[Block]:
    return [
        Block(
            table.paths[r],
            table.starts[r],
            table.ends[r],
            table.kinds[r],
            table.symbols[r],
            table.chunk_ids[r],
        )
        for r in taken
    ]


def line_metrics(predicted: Sequence[Block], spans: Sequence[Block]) -> dict[str, float]:
    """Overlap of merged gold span lines and merged taken-chunk lines (spec §5.8)."""
    gold = _by_path(spans)
    if not gold:
        return dict.fromkeys(LINE_KEYS, 0.0) | {"line_samples": 0}
    pred = _by_path(predicted)
    n_gold = sum(e - s + 1 for v in gold.values() for s, e in v)
    n_pred = sum(e - s + 1 for v in pred.values() for s, e in v)
    overlap = sum(
        max(0, min(ge, pe) - max(gs, ps) + 1)
        for path, intervals in gold.items()
        for gs, ge in intervals
        for ps, pe in pred.get(path, [])
    )
    recall = overlap / n_gold if n_gold else 0.0
    precision = overlap / n_pred if n_pred else 0.0
    return {
        "line_samples": 1,
        "line_recall@8k": recall,
        "line_precision@8k": precision,
        "line_f1@8k": f_beta(precision, recall, 1.0),
        "line_f0.5@8k": f_beta(precision, recall, 0.5),
        "line_gold_count": n_gold,
        "line_predicted_count": n_pred,
        "line_overlap_count": overlap,
    }


def span_metrics(lines: Mapping[str, float]) -> dict[str, float]:
    """``span_metrics``: the line metrics under upstream's span names (spec §5.8)."""
    return {
        "span_samples": lines["line_samples"],
        "span_recall@8k": lines["line_recall@8k"],
        "span_precision@8k": lines["line_precision@8k"],
        "span_f0.5@8k": lines["line_f0.5@8k"],
        "line_overlap_f0.5": lines["line_f0.5@8k"],
        "gold_lines": lines["line_gold_count"],
        "predicted_lines": lines["line_predicted_count"],
        "overlap_lines": lines["line_overlap_count"],
    }


def _blocks_match(gold: Block, pred: Block) -> bool:
    if gold.path != pred.path:
        return False
    if gold.chunk_id and pred.chunk_id and gold.chunk_id == pred.chunk_id:
        return True
    return gold.start_line <= pred.end_line and pred.start_line <= gold.end_line


def block_metrics(predicted: Sequence[Block], blocks: Sequence[Block]) -> dict[str, float]:
    """Block recall/precision (spec §5.8): taken non-file chunks vs gold blocks.

    Predicted blocks are deduplicated by (path, start, end, kind, symbol, chunk_id); a pair
    matches on equal paths and (equal chunk ids or intersecting line ranges).
    """
    gold = [b for b in blocks if b.start_line >= 1 and b.end_line >= b.start_line]
    preds = list(
        dict.fromkeys(
            b
            for b in predicted
            if b.kind != "file" and b.path and b.start_line >= 1 and b.end_line >= b.start_line
        )
    )
    if not gold:
        return dict.fromkeys(BLOCK_KEYS, 0.0) | {"block_samples": 0}
    matched_gold = sum(1 for g in gold if any(_blocks_match(g, p) for p in preds))
    matched_pred = sum(1 for p in preds if any(_blocks_match(g, p) for g in gold))
    recall = matched_gold / len(gold)
    precision = matched_pred / len(preds) if preds else 0.0
    return {
        "block_samples": 1,
        "block_recall@8k": recall,
        "block_precision@8k": precision,
        "block_f1@8k": f_beta(precision, recall, 1.0),
        "block_f0.5@8k": f_beta(precision, recall, 0.5),
        "gold_blocks": len(gold),
        "predicted_blocks": len(preds),
        "matched_blocks": matched_gold,
    }


def selective_fields(ranking: ChunkRanking | None) -> dict[str, float]:
    """Spec §4.7: best and second-best **chunk** scores (0.0 when absent), confidence, margin."""
    scores = [] if ranking is None else ranking.scores[:2].tolist()
    top = float(scores[0]) if scores else 0.0
    second = float(scores[1]) if len(scores) > 1 else 0.0
    return {
        "confidence": top,
        "top_score": top,
        "second_score": second,
        "score_margin": top - second,
    }


def _span_rows(blocks: Sequence[Block], *, with_kind: bool) -> list[dict[str, Any]]:
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
    table: ChunkTable | None,
    *,
    candidate_filter: str,
    ranker: str,
    selective: bool,
    error: str | None = None,
) -> dict[str, Any]:
    """One ARB details row (spec §4.2; §4.7 fields when ``selective``).

    ``top_file_scores`` holds the top-20 ``{path, score}`` (arbwb addition for lexical/BM25/
    dense; grep's own rows of §4.5 replace it via ``ranking.details``).

    ``ranking`` None with ``error`` set gives an arbwb-defined failure row: ``status: "error"``,
    empty ``top_files``, all gold ranks null and every metric 0 (counted in the denominator).
    """
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
    table = table if ranking is not None and table is not None else EMPTY_TABLE
    if ranking is not None and ranking.n_chars is not None:
        table = replace(table, n_chars=list(ranking.n_chars))
    taken = [] if ranking is None else taken_chunks(ranking.order.tolist(), table.n_chars)
    metrics = rank_metrics(files, target.gold, target.hard_negatives)
    row["metrics"] = metrics | packing_metrics(taken, table, target.gold)
    predicted = _taken_blocks(taken, table)
    if target.spans:
        row["gold_spans"] = _span_rows(target.spans, with_kind=False)
        lines = line_metrics(predicted, target.spans)
        row["line_metrics"] = lines
        row["span_metrics"] = span_metrics(lines)
    if target.blocks:
        row["gold_blocks"] = _span_rows(target.blocks, with_kind=True)
        row["block_metrics"] = block_metrics(predicted, target.blocks)
    return row


def _mean(values: Sequence[float]) -> float:
    """Left-to-right Python sum divided by the count (spec §0 means)."""
    return sum(values) / len(values) if values else 0.0


def group_means(
    rows: Sequence[Mapping[str, Any]], metric_keys: Sequence[str] | None = None
) -> dict[str, float]:
    """One summary group (spec §4.8): ``samples`` then means of the metric keys.

    Default keys: the always-averaged ones plus every optional key some row has (a row lacking
    a key counts as 0); ``metric_keys`` replaces them (rank fusion's metric set).
    """
    metric_rows = [r.get("metrics") or {} for r in rows]
    keys = list(metric_keys) if metric_keys is not None else list(ALWAYS_KEYS)
    if metric_keys is None:
        keys += [k for k in OPTIONAL_KEYS if any(k in m for m in metric_rows)]
    out: dict[str, float] = {"samples": len(rows)}
    for key in keys:
        out[key] = _mean([float(m.get(key, 0.0)) for m in metric_rows])
    for field, keys_ in (("line_metrics", LINE_KEYS), ("block_metrics", BLOCK_KEYS)):
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
    """Summary JSON of spec §4.8 over the scored rows (no-gold selective rows excluded).

    ``errors`` (arbwb-defined) counts failure rows by reason; they are in every mean as zeros.
    """
    scored = [r for r in rows if r.get("label", "positive") == "positive"]
    groups: dict[str, list[Mapping[str, Any]]] = {"overall": list(scored)}
    for r in scored:
        groups.setdefault(str(r["task_type"]), []).append(r)
    errors: dict[str, int] = {}
    for r in rows:
        if r.get("status") == "error":
            errors[str(r["error"])] = errors.get(str(r["error"]), 0) + 1
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
    """One :class:`SampleTarget` per SAMPLES row, in input order, from the SampleSet frames.

    Gold and hard negatives keep label order; spans of kind ``span`` are gold spans, the
    other kinds gold blocks (the frames carry no block ``chunk_id``, so blocks match by lines).
    """
    by_role: dict[tuple[str, str], list[str]] = {}
    for sample_id, path, role in labels.select("sample_id", "path", "role").iter_rows():
        by_role.setdefault((sample_id, role), []).append(path)
    span_map: dict[tuple[str, bool], list[Block]] = {}
    for sid, path, start, end, kind, symbol in spans.select(
        "sample_id", "path", "start_line", "end_line", "kind", "symbol"
    ).iter_rows():
        block = Block(path, start, end, kind, symbol or "")
        span_map.setdefault((sid, kind == "span"), []).append(block)
    columns = ("sample_id", "task", "repo", "base_commit", "query_provenance", "no_gold_reason")
    targets = []
    for sid, task, repo, commit, provenance, reason, stratum in samples.select(
        *columns, "stratum"
    ).iter_rows():
        targets.append(
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
        )
    return targets
