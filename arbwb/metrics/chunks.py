"""Chunk-level metrics (spec §5.8): legacy 8,000-character packing of a chunk ranking, and
line and block overlap of the taken chunks with the gold spans and blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from arbwb.io.lazycols import series_rows
from arbwb.metrics.intervals import merge_intervals
from arbwb.metrics.rank import f_beta

CHAR_BUDGET = 8000
LINE_KEYS = (
    "line_samples", "line_recall@8k", "line_precision@8k", "line_f1@8k", "line_f0.5@8k",
    "line_gold_count", "line_predicted_count", "line_overlap_count",
)  # fmt: skip
BLOCK_KEYS = (
    "block_samples", "block_recall@8k", "block_precision@8k", "block_f1@8k", "block_f0.5@8k",
    "gold_blocks", "predicted_blocks", "matched_blocks",
)  # fmt: skip


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
class ChunkTable:
    """Per-chunk columns of one snapshot's candidate chunks, for the chunk-level walks."""

    paths: Sequence[str]
    kinds: Sequence[str]
    symbols: Sequence[str]
    starts: Sequence[int]
    ends: Sequence[int]
    chunk_ids: Sequence[str]
    n_chars: Sequence[int]


EMPTY_TABLE = ChunkTable([], [], [], [], [], [], [])


def chunk_table(chunks: pl.DataFrame) -> ChunkTable:
    """Lazy columns of the chunk frame; text length in code points (Python ``len``), or the
    frame's ``n_chars`` when chunks were streamed without text."""
    has_n = "n_chars" in chunks.columns
    n_chars = chunks["n_chars"] if has_n else chunks["text"].str.len_chars()
    return ChunkTable(
        paths=series_rows(chunks["path"]),
        kinds=series_rows(chunks["kind"]),
        symbols=series_rows(chunks["symbol"]),
        starts=series_rows(chunks["start_line"]),
        ends=series_rows(chunks["end_line"]),
        chunk_ids=series_rows(chunks["chunk_id"]),
        n_chars=series_rows(n_chars),
    )


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


def _by_path(blocks: Iterable[Block]) -> dict[str, list[tuple[int, int]]]:
    grouped: dict[str, list[tuple[int, int]]] = {}
    for b in blocks:
        if b.path and b.start_line >= 1 and b.end_line >= b.start_line:
            grouped.setdefault(b.path, []).append((b.start_line, b.end_line))
    return {p: merge_intervals(v) for p, v in grouped.items()}


def taken_blocks(taken: Sequence[int], table: ChunkTable) -> list[Block]:
    """The taken chunks as blocks (path, lines, kind, symbol, chunk id)."""
    t = table
    return [
        Block(t.paths[r], t.starts[r], t.ends[r], t.kinds[r], t.symbols[r], t.chunk_ids[r])
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
    """Block recall/precision (spec §5.8) of the taken non-file chunks (deduplicated) against
    gold blocks: same path and same chunk id or intersecting lines."""
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
