"""Line overlap of runs: the stored file-vs-line diagnostic (spec §11) and the span yield of
arbwb's re-ranked baselines under three packings (docs/granularity.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from arbwb.errors import InputError
from arbwb.io.corpus import Corpus
from arbwb.io.pathclass import CandidateFilter
from arbwb.io.rankings import RunData
from arbwb.jsonio import read_json
from arbwb.metrics import chunks as cm
from arbwb.metrics.aggregate import pooled_mean
from arbwb.metrics.budget import DEFAULT_BUDGETS, header_tokens_expr, normalise_budgets
from arbwb.metrics.stats import bootstrap_ci
from arbwb.retrievers import details as det
from arbwb.retrievers.common import ChunkRanking, RetrievalMethod, candidate_chunks
from arbwb.tokenize import count_code_tokens, count_tokens_expr

FILE_PREFIX = 20  # canonical packing sees the stored top-20 files (spec §5.1, §5.7)
TRUNCATION_MARK = "\n...[truncated]"  # spec §3.4
#: Methods whose summary ``method`` arbwb can re-run (dense only with the demo encoder).
RERUNNABLE = ("lexical", "bm25-arb", "bm25", "grep", "grep-expanded")

PACKING: dict[str, type[pl.DataType]] = {
    "run": pl.String,
    "sample_id": pl.String,
    "task": pl.String,
    "packing": pl.String,  # legacy_chars | files | chunks
    "budget": pl.Int64,  # characters for legacy_chars, tokens otherwise
    "gold_lines": pl.Int64,
    "predicted_lines": pl.Int64,
    "overlap_lines": pl.Int64,
    "line_recall": pl.Float64,
    "line_precision": pl.Float64,
    "line_f1": pl.Float64,
    "used": pl.Int64,  # characters or tokens spent
}
MEAN_COLUMNS = ("line_recall", "line_precision", "line_f1", "overlap_lines", "predicted_lines")


@dataclass(frozen=True)
class Rerank:
    """How to re-rank one run: its method and candidate filter, or why it cannot be."""

    run: str
    method: RetrievalMethod | None
    candidate_filter: CandidateFilter
    status: str  # "reranked" or the reason it is not


@dataclass
class Checks:
    """Per-run counts of the re-ranking: samples packed, and what did not match or was missing."""

    samples: int = 0
    missing_snapshot: int = 0
    empty_corpus: int = 0
    top_files_mismatch: int = 0
    stored_line_mismatch: int = 0
    missing_query: int = 0


def rerank_plan(run: RunData) -> Rerank:
    """The method that made ``run`` (from its summary) when arbwb can re-run it: its own
    baselines, ``dense`` only with the demo's hashing encoder."""
    summary_file = det.summary_path(Path(run.path))
    if not summary_file.is_file():
        return Rerank(run.run, None, "all_files", f"no summary {summary_file.name}")
    summary = read_json(summary_file)
    name = summary.get("method") if isinstance(summary, dict) else None
    candidate = summary.get("candidate_filter") if isinstance(summary, dict) else None
    cf: CandidateFilter = (
        candidate if candidate in ("all_files", "code_only", "tests_only") else "all_files"
    )
    if not isinstance(summary, dict) or "fingerprint" not in summary or not isinstance(name, str):
        return Rerank(run.run, None, cf, "not an arbwb baseline run: no chunk-level ranking")
    if name in RERUNNABLE:
        from arbwb.retrievers.registry import get_method

        return Rerank(run.run, get_method(name), cf, "reranked")
    if name == "dense" and summary.get("model") == "dense_hash":
        from arbwb.retrievers import dense

        method = dense.method("dense_hash", encoder=dense.hash_encoder)
        return Rerank(run.run, method, cf, "reranked")
    return Rerank(run.run, None, cf, f"method {name!r} (model {summary.get('model')!r}) not re-run")


@dataclass(frozen=True)
class Pieces:
    """One snapshot's candidate chunks with what token packing needs, built once per index."""

    table: cm.ChunkTable
    texts: list[str]
    tokens: list[int]
    headers: list[int]
    file_row: dict[str, int]  # last kind=file row per path (spec §5.7)

    @classmethod
    def of(cls, chunks: pl.DataFrame) -> Pieces:
        """Pieces of a CHUNKS frame (token counts with the §5.7 tokenizer, in Polars)."""
        costs = chunks.select(t=count_tokens_expr("text"), h=header_tokens_expr())
        kinds, paths = chunks["kind"].to_list(), chunks["path"].to_list()
        file_row = {p: i for i, (p, k) in enumerate(zip(paths, kinds, strict=True)) if k == "file"}
        return cls(
            cm.chunk_table(chunks),
            chunks["text"].to_list(),
            costs["t"].to_list(),
            costs["h"].to_list(),
            file_row,
        )


def visible_lines(text: str, included: int, total: int) -> int:
    """Lines of ``text`` shown when its first ``included`` of ``total`` tokens are packed."""
    lines = text.splitlines()
    if text.endswith(TRUNCATION_MARK):
        lines = lines[:-1]
    if included >= total:
        return len(lines)
    count, seen = 0, 0
    for line in lines:
        if seen >= included:
            break
        count += 1
        seen += count_code_tokens(line)
    return count


def token_pack(
    rows: Iterable[int | None], pieces: Pieces, budget: int
) -> tuple[list[cm.Block], int]:
    """Visible line blocks and tokens used when packing ``rows`` (None = missing, free) into
    B tokens under the §5.7 rule (docs/metrics.md)."""
    used, blocks = 0, []
    table = pieces.table
    for row in rows:
        if row is None:
            continue
        if budget - used <= 0:
            break
        h, c = pieces.headers[row], pieces.tokens[row]
        total = h + c + (1 if pieces.texts[row] else 0)
        if total <= budget - used:
            used, included = used + total, c
        else:
            included, used = min(c, max(0, budget - used - h)), budget
        shown = visible_lines(pieces.texts[row], included, c)
        start = table.starts[row]
        if shown and start >= 1:
            end = min(table.ends[row], start + shown - 1)
            blocks.append(cm.Block(table.paths[row], start, end))
        if used >= budget:
            break
    return blocks, used


def legacy_pack(ranking: ChunkRanking, pieces: Pieces) -> tuple[list[cm.Block], int]:
    """Taken chunks of the 8,000-char walk (spec §5.8, :func:`cm.taken_chunks`) as blocks."""
    table = pieces.table
    taken = cm.taken_chunks(ranking.order.tolist(), table.n_chars)
    blocks = [cm.Block(table.paths[r], table.starts[r], table.ends[r]) for r in taken]
    return blocks, sum(table.n_chars[r] for r in taken)


def _row(
    run: str,
    target: det.SampleTarget,
    packing: str,
    budget: int,
    packed: tuple[list[cm.Block], int],
) -> dict[str, Any]:
    lines = cm.line_metrics(packed[0], target.spans)
    return {
        "run": run,
        "sample_id": target.sample_id,
        "task": target.task,
        "packing": packing,
        "budget": budget,
        "gold_lines": int(lines["line_gold_count"]),
        "predicted_lines": int(lines["line_predicted_count"]),
        "overlap_lines": int(lines["line_overlap_count"]),
        "line_recall": lines["line_recall@8k"],
        "line_precision": lines["line_precision@8k"],
        "line_f1": lines["line_f1@8k"],
        "used": packed[1],
    }


def sample_rows(
    run: str,
    target: det.SampleTarget,
    ranking: ChunkRanking,
    pieces: Pieces,
    budgets: Sequence[int],
) -> list[dict[str, Any]]:
    """PACKING rows of one ranked sample: legacy chars, then files and chunks per budget."""
    rows = [_row(run, target, "legacy_chars", cm.CHAR_BUDGET, legacy_pack(ranking, pieces))]
    files = [pieces.file_row.get(p) for p in ranking.files[:FILE_PREFIX]]
    for budget in budgets:
        rows.append(_row(run, target, "files", budget, token_pack(files, pieces, budget)))
        chunks = (int(r) for r in ranking.order)
        rows.append(_row(run, target, "chunks", budget, token_pack(chunks, pieces, budget)))
    return rows


def _has_valid_span(target: det.SampleTarget) -> bool:
    return any(b.start_line >= 1 and b.end_line >= b.start_line for b in target.spans)


def _stored_lines(run: RunData) -> dict[str, tuple[int, int, int]]:
    """Stored (gold, predicted, overlap) line counts per sample, for the parity check."""
    if run.nested is None:
        return {}
    wide = run.nested.pivot(on="field", index="sample_id", values="value")
    keys = [f"line_metrics.line_{k}_count" for k in ("gold", "predicted", "overlap")]
    if any(k not in wide.columns for k in keys):
        return {}
    return {
        sid: (int(g), int(p), int(o))
        for sid, g, p, o in wide.select("sample_id", *keys).drop_nulls().iter_rows()
    }


def _stored_top(run: RunData) -> dict[str, list[str]]:
    top = run.rankings.filter(pl.col("rank") <= FILE_PREFIX).sort("sample_id", "rank")
    return {
        str(sid): list(paths)
        for sid, paths in top.group_by("sample_id").agg(pl.col("path")).iter_rows()
    }


def packing_table(
    runs: Sequence[tuple[RunData, Rerank]],
    samples: pl.DataFrame,
    labels: pl.DataFrame,
    spans: pl.DataFrame,
    corpus: Corpus,
    *,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
) -> tuple[pl.DataFrame, dict[str, Checks]]:
    """PACKING rows of every re-rankable run's samples with valid gold spans, one snapshot at
    a time; samples that cannot be packed are counted in their run's :class:`Checks`."""
    budget_list = normalise_budgets(budgets)
    targets = {t.sample_id: t for t in det.sample_targets(samples, labels, spans)}
    queries = dict(samples.select("sample_id", "query_text").iter_rows())
    plans = {run.run: (run, plan) for run, plan in runs if plan.method is not None}
    checks = {name: Checks() for name in plans}
    todo: dict[str, dict[str, list[det.SampleTarget]]] = {}  # snapshot -> run -> samples
    for name, (run, _) in plans.items():
        for sid in [] if run.details is None else run.details["sample_id"].to_list():
            target = targets.get(sid)
            if target is None or not _has_valid_span(target):
                continue
            if queries.get(sid) is None:
                checks[name].missing_query += 1
                continue
            by_run = todo.setdefault(f"{target.repo}@{target.base_commit}", {})
            by_run.setdefault(name, []).append(target)
    stored_lines = {name: _stored_lines(run) for name, (run, _) in plans.items()}
    stored_top = {name: _stored_top(run) for name, (run, _) in plans.items()}
    rows: list[dict[str, Any]] = []
    for snapshot in sorted(todo):
        if not corpus.has(snapshot):
            for name, mine in todo[snapshot].items():
                checks[name].missing_snapshot += len(mine)
            continue
        chunks = corpus.chunks(snapshot)
        for name, mine in todo[snapshot].items():
            plan, check = plans[name][1], checks[name]
            method = plan.method
            assert method is not None
            candidates = candidate_chunks(chunks, plan.candidate_filter)
            if candidates.height == 0:
                check.empty_corpus += len(mine)
                continue
            index = method.build_index(candidates)
            pieces = Pieces.of(candidates)
            for target in mine:
                ranking = method.rank_sample(index, queries[target.sample_id])
                got = sample_rows(name, target, ranking, pieces, budget_list)
                check.samples += 1
                legacy = (got[0]["gold_lines"], got[0]["predicted_lines"], got[0]["overlap_lines"])
                stored = stored_lines[name].get(target.sample_id)
                check.stored_line_mismatch += stored is not None and stored != legacy
                top = stored_top[name].get(target.sample_id, [])
                check.top_files_mismatch += ranking.files[: len(top)] != top
                rows += got
    return pl.DataFrame(rows, schema=PACKING), checks


def mean_interval(
    values: Sequence[float], *, n_boot: int = 2000, seed: int = 0
) -> list[float] | None:
    """[low, high] percentile-bootstrap interval of a mean (arbwb-defined); None if empty."""
    if not values:
        return None
    array = np.asarray(values, dtype=np.float64)
    low, high = bootstrap_ci(array, n_boot=n_boot, seed=seed)
    return [low, high]


def packing_summary(
    table: pl.DataFrame,
    *,
    by: Sequence[str] = ("run", "packing", "budget"),
    n_boot: int = 2000,
    seed: int = 0,
) -> pl.DataFrame:
    """Mean line recall/precision/F1, yielded and predicted lines per group, each with a
    percentile-bootstrap interval over samples (arbwb-defined), plus the sample count."""
    out = []
    groups = table.partition_by(list(by), as_dict=True, maintain_order=True)
    for key, group in groups.items():
        row: dict[str, Any] = dict(zip(by, key, strict=True)) | {"samples": group.height}
        for column in MEAN_COLUMNS:
            values = [float(v) for v in group[column].to_list()]
            interval = mean_interval(values, n_boot=n_boot, seed=seed)
            low, high = (None, None) if interval is None else interval
            row |= {column: pooled_mean(values), f"{column}_low": low, f"{column}_high": high}
        out.append(row)
    if not out:
        return pl.DataFrame(schema={c: PACKING[c] for c in by})
    return pl.DataFrame(out).sort(list(by))


def diagnostic_values(run: RunData) -> dict[str, list[float]]:
    """Per-row values of one run's file-vs-line diagnostic (spec §11) over its details rows
    with gold; missing file metrics count as 0 (spec §4.8), line values as absent."""
    if run.details is None or run.stored is None:
        msg = "the file-vs-line diagnostic needs an ARB details file (stored metrics)"
        raise InputError(msg, path=run.path)
    gold = run.labels if run.labels is not None else pl.DataFrame(schema={"sample_id": pl.String})
    rows = run.details.select("sample_id").join(
        gold.select("sample_id").unique(), on="sample_id", how="semi", maintain_order="left"
    )
    stored = run.stored.pivot(on="metric", index="sample_id", values="value")
    nested = run.nested if run.nested is not None else pl.DataFrame(schema={"field": pl.String})
    lines = nested.filter(pl.col("field").str.starts_with("line_metrics.")).pivot(
        on="field", index="sample_id", values="value"
    )
    wide = rows.join(stored, on="sample_id", how="left", maintain_order="left")
    wide = wide.join(lines, on="sample_id", how="left", maintain_order="left")
    out: dict[str, list[float]] = {}
    for name, column, fill in (
        ("file_recall@20", "recall@20", True),
        ("file_exposure@8k_chars", "gold_coverage@8k", True),
        ("predicted_lines", "line_metrics.line_predicted_count", False),
        ("line_recall@8k_chars", "line_metrics.line_recall@8k", False),
        ("line_precision@8k_chars", "line_metrics.line_precision@8k", False),
        ("line_f1@8k_chars", "line_metrics.line_f1@8k", False),
    ):
        values = wide[column] if column in wide.columns else pl.Series([None] * wide.height)
        values = values.fill_null(0.0) if fill else values.drop_nulls()
        out[name] = [float(v) for v in values.to_list()]
    out["samples"] = [1.0] * wide.height
    return out


def file_vs_line(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """``method_sensitivity`` rows of spec §11 from stored metrics, sorted by line F1."""
    rows = []
    for run in runs:
        values = diagnostic_values(run)
        predicted = pooled_mean(values["predicted_lines"])
        capable = predicted is not None and predicted > 0
        rows.append(
            {
                "method": run.run,
                "samples": len(values["samples"]),
                "file_recall@20": pooled_mean(values["file_recall@20"]),
                "file_exposure@8k_chars": pooled_mean(values["file_exposure@8k_chars"]),
                "mean_predicted_lines": predicted,
                "span_capable": capable,
                **{
                    key: pooled_mean(values[key]) if capable else None
                    for key in (
                        "line_recall@8k_chars",
                        "line_precision@8k_chars",
                        "line_f1@8k_chars",
                    )
                },
            }
        )
    return sorted(
        rows,
        key=lambda r: (r["line_f1@8k_chars"] is not None, r["line_f1@8k_chars"] or -1.0),
        reverse=True,
    )


def diagnostic_intervals(
    runs: Sequence[RunData], *, n_boot: int = 2000, seed: int = 0
) -> dict[str, dict[str, list[float] | None]]:
    """arbwb-defined percentile-bootstrap intervals of every diagnostic mean, per run."""
    out: dict[str, dict[str, list[float] | None]] = {}
    for run in runs:
        values = diagnostic_values(run)
        out[run.run] = {
            key: mean_interval(values[key], n_boot=n_boot, seed=seed)
            for key in values
            if key != "samples"
        }
    return out
