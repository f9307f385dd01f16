"""Ranked file lists read as whole-file ContextBench context (contextbench-spec §13): exact at file
level; at line level coverage is an upper bound and precision a lower bound for span selections."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import polars as pl

from arbwb import schemas
from arbwb.contextbench.inputs import Gold
from arbwb.contextbench.instance import ratio
from arbwb.contextbench.intervals import intersect, map_size, size
from arbwb.errors import InputError
from arbwb.io.checkout import Checkout, CheckoutSource
from arbwb.io.contextbench import CONTEXT, RECORDS
from arbwb.metrics.intervals import merge_intervals


def ranked_context(
    rankings: pl.DataFrame,
    gold: Mapping[str, Gold],
    k: int,
    *,
    source: CheckoutSource | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """RECORDS and CONTEXT of the top-``k`` existing ranked files of each (run, sample), each
    predicted whole (``1..N(f)``), for :func:`score_run` (§13.2); without a checkout every path
    is kept and no spans are made (file level only)."""
    records, context = [], []
    for run, target, checkout, kept, _ in _ranked(rankings.sort("rank"), gold, source):
        base = {"run": run, "instance_id": target.sample_id, "step": 0}
        for path in kept[:k]:
            context.append({**base, "kind": "file", "path": path})
            n = None if checkout is None else checkout.n_lines(path)
            if n:
                context.append(
                    {**base, "kind": "span", "path": path, "start_line": 1, "end_line": n}
                )
        records.append({**base, "line": 0, "n_steps": 0, "source": "rankings"})
    return schemas.rows_frame(records, RECORDS), schemas.rows_frame(context, CONTEXT)


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
    """§13 file and line level of the top-k ranked files, every k; without line counts, gold lines
    are assumed in range (``line_counts="absent"``) and line precision is null."""
    rows = []
    ranked = rankings.sort("run", "sample_id", "rank")
    for run, target, checkout, kept, dropped in _ranked(ranked, gold, source):
        base = {"run": run, "sample_id": target.sample_id, "n_dropped": dropped}
        rows += [{**base, "k": k, **_ranked_row(target, kept[:k], checkout)} for k in ks]
    return schemas.rows_frame(rows, RANKED)


def _ranked(
    rankings: pl.DataFrame, gold: Mapping[str, Gold], source: CheckoutSource | None
) -> Iterator[tuple[str, Gold, Checkout | None, list[str], int]]:
    """Per (run, sample) in frame order: run, gold, checkout, the distinct ranked paths that are
    files at the commit (every path without a checkout), and how many were not."""
    for (run, sid), part in rankings.group_by(["run", "sample_id"], maintain_order=True):
        target = gold.get(str(sid))
        if target is None:
            msg = f"ranked sample {sid!r} is not a ContextBench instance"
            raise InputError(msg, field="sample_id")
        checkout = None if source is None else source(target.repo, target.commit)
        paths = list(dict.fromkeys(part["path"].to_list()))
        kept = [p for p in paths if checkout is None or checkout.is_file(p)]
        yield str(run), target, checkout, kept, len(paths) - len(kept)


def _ranked_row(target: Gold, top: list[str], checkout: Checkout | None) -> dict[str, Any]:
    """RANKED's error, file and line columns of the top ranked files ``top``."""
    counts = "absent" if checkout is None else "checkout"
    if not top:
        return {"error": "no_context_extracted", "line_counts": counts}
    gold_lines = {p: merge_intervals(ivs) for p, ivs in target.lines.items()}
    line_gold = map_size(gold_lines)
    hits = [p for p in top if p in target.files]
    if checkout is None:
        line_inter = sum(size(gold_lines[p]) for p in hits)
        line_pred = None
    else:
        sizes = {p: checkout.n_lines(p) or 0 for p in top}
        line_pred = sum(sizes.values())
        line_inter = sum(size(intersect(gold_lines[p], [(1, sizes[p])])) for p in hits if sizes[p])
    return {
        "error": None,
        "file_intersection": len(hits),
        "file_gold": len(target.files),
        "file_pred": len(top),
        "file_coverage": ratio(len(hits), len(target.files)),
        "file_precision": ratio(len(hits), len(top)),
        "line_intersection": line_inter,
        "line_gold": line_gold,
        "line_pred": line_pred,
        "line_coverage": ratio(line_inter, line_gold),
        "line_precision": None if line_pred is None else ratio(line_inter, line_pred),
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
    precision of a perfect whole-file ranking (P_k = existing gold files)."""
    rows: list[tuple[object, ...]] = []
    for target in {g.sample_id: g for g in gold.values()}.values():
        checkout = source(target.repo, target.commit)
        if checkout is None:
            continue
        lines = {p: merge_intervals(ivs) for p, ivs in target.lines.items()}
        present = [p for p in sorted(target.files) if checkout.is_file(p)]
        n = {p: checkout.n_lines(p) or 0 for p in present}
        reach = sum(size(intersect(lines[p], [(1, n[p])])) for p in present if n[p])
        n_gold = len(target.files)
        file_cov = ratio(len(present), n_gold)
        covered = (file_cov, ratio(reach, map_size(lines)), ratio(reach, sum(n.values())))
        rows.append((target.sample_id, n_gold, n_gold - len(present), *covered))
    return pl.DataFrame(rows, schema=dict(CEILINGS), orient="row")


def ranked_means(ranked: pl.DataFrame) -> pl.DataFrame:
    """Per (run, k): instances, error rows, mean file coverage, file precision, line coverage
    (error rows as zeros) and line precision (nulls left out); ``line_bound_only`` when some
    instance had no line counts."""
    zeros = ("file_coverage", "file_precision", "line_coverage")
    return (
        ranked.group_by("run", "k")
        .agg(
            pl.len().alias("n"),
            pl.col("error").is_not_null().sum().alias("n_error"),
            *[pl.col(c).fill_null(0.0).mean() for c in zeros],
            pl.col("line_precision").mean(),
            (pl.col("line_counts") == "absent").any().alias("line_bound_only"),
        )
        .sort("run", "k")
    )
