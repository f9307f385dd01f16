"""Reciprocal-rank fusion of stored runs' top-20 file lists (spec §8, TV8), plus weighted RRF."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from arbwb.errors import InputError
from arbwb.io.rankings import RunData, load_rankings
from arbwb.io.samples import SampleSet
from arbwb.jsonio import sha256_file, write_json, write_jsonl
from arbwb.metrics.rank import fusion_row_metrics
from arbwb.retrievers.details import SampleTarget, sample_targets, summarize, summary_path

RRF_K = 60
DEPTH = 20
CUTOFFS = (5, 10, 20)
FUSION_KEYS = (
    *(f"Recall@{k}" for k in CUTOFFS),
    *(f"Precision@{k}" for k in CUTOFFS),
    *(f"F0.5@{k}" for k in CUTOFFS),
    *(f"Any@{k}" for k in CUTOFFS),
    "MRR",
    "nDCG@20",
    "coverage_auc@20",
)


def rrf(
    lists: Sequence[Sequence[str]],
    *,
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
    depth: int = DEPTH,
) -> list[tuple[str, float]]:
    """Fused ``(path, score)`` list, ``score(p) = Σ_c w_c / (k + r_c(p))`` over each list's
    first ``depth`` distinct non-empty paths, sorted by (score desc, path), top ``depth``."""
    weights = [1.0] * len(lists) if weights is None else check_weights(weights, len(lists))
    scores: dict[str, float] = {}
    for paths, weight in zip(lists, weights, strict=True):
        distinct = list(dict.fromkeys(p for p in paths if p))[:depth]
        for rank, path in enumerate(distinct, start=1):
            scores[path] = scores.get(path, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:depth]


def check_weights(weights: Sequence[float], n_runs: int, *, field: str = "weights") -> list[float]:
    """RRF weights: one per run, finite, none negative, some positive (InputError otherwise)."""
    if len(weights) != n_runs:
        msg = f"need one weight per run ({n_runs}), got {len(weights)}"
        raise InputError(msg, field=field)
    bad = next((w for w in weights if not math.isfinite(w) or w < 0), None)
    if bad is not None:
        msg = f"weights must be finite and not negative, got {bad!r}"
        raise InputError(msg, field=field)
    if not any(w > 0 for w in weights):
        raise InputError("at least one weight must be positive", field=field)
    return [float(w) for w in weights]


def top_lists(rankings: pl.DataFrame) -> dict[str, list[str]]:
    """Each sample's first ``DEPTH`` paths of a RANKINGS frame (rank order)."""
    top = rankings.filter(pl.col("rank") <= DEPTH).sort("sample_id", "rank")
    grouped = top.group_by("sample_id", maintain_order=True).agg(pl.col("path"))
    return dict(zip(grouped["sample_id"].to_list(), grouped["path"].to_list(), strict=True))


def fusion_row(
    base: Mapping[str, Any],
    lists: Sequence[Sequence[str]],
    *,
    labels: Sequence[str],
    weights: Sequence[float] | None = None,
    k: int = RRF_K,
) -> dict[str, Any]:
    """One rank-fusion details row (spec §4.6), ``base`` holding the sample's fields."""
    fused = rrf(lists, k=k, weights=weights)
    files = [p for p, _ in fused]
    gold = list(base["gold_files"])
    position = {p: i for i, p in enumerate(files, start=1)}
    name = "rrf_" + "_".join(labels)
    return {
        **base,
        "mode": "rank_fusion",
        "model": name if weights is None else f"w{name}",
        "fusion_name": name,
        "components": list(labels),
        "component_labels": list(labels),
        "component_weights": None if weights is None else list(weights),
        "rrf_k": k,
        "gold_ranks": {p: position.get(p) for p in gold},
        "top_files": files,
        "top_file_scores": [{"path": p, "score": s} for p, s in fused],
        "metrics": fusion_row_metrics(files, gold),
    }


def details_targets(runs: Sequence[RunData]) -> dict[str, SampleTarget]:
    """Sample targets from the runs' ARB details rows (first run first), when no samples."""
    targets: dict[str, SampleTarget] = {}
    for run in runs:
        if run.details is None or run.labels is None:
            continue
        gold = run.labels.filter(pl.col("role") == "gold").group_by("sample_id").agg("path")
        paths = dict(zip(gold["sample_id"].to_list(), gold["path"].to_list(), strict=True))
        rows = run.details.select("sample_id", "task", "repo", "base_commit").iter_rows()
        for sid, task, repo, commit in rows:
            files = paths.get(sid, [])
            target = SampleTarget(sid, task, repo, commit, files, [], [], [], None, None, not files)
            targets.setdefault(sid, target)
    return targets


def run_fusion(
    run_files: Sequence[Path],
    sample_set: SampleSet | None,
    out: Path,
    *,
    weights: Sequence[float] | None = None,
    candidate_filter: str | None = None,
    k: int = RRF_K,
    tasks: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Fuse stored runs per spec §8 over the samples with gold every run answered; write
    details and summary, return the summary (gold from ``sample_set``, else the runs' rows)."""
    if len(run_files) < 2:
        msg = f"rrf needs at least two runs (--runs A B ...), got {len(run_files)}"
        raise InputError(msg, field="--runs")
    runs = [load_rankings(path) for path in run_files]
    lists = [top_lists(run.rankings) for run in runs]
    answered = [
        set(run.submitted["sample_id"].to_list()) | set(top)
        for run, top in zip(runs, lists, strict=True)
    ]
    if sample_set is None:
        targets = details_targets(runs)
        if not targets:
            msg = "no ARB details among the runs to take gold from; pass --data with samples"
            raise InputError(msg, field="--runs")
    else:
        found = sample_targets(sample_set.samples, sample_set.labels, sample_set.spans)
        targets = {t.sample_id: t for t in found}
    with_gold = {sid for sid, t in targets.items() if t.gold and (tasks is None or t.task in tasks)}
    common = sorted(with_gold.intersection(*answered))
    first = runs[0].details
    if candidate_filter is None:
        filters = [] if first is None else first["candidate_filter"].drop_nulls().unique().to_list()
        candidate_filter = filters[0] if len(filters) == 1 else "all_files"
    labels = [run.run for run in runs]
    rows = []
    for sid in common:
        t = targets[sid]
        base = {
            "sample_id": sid,
            "task_type": t.task,
            "repo": t.repo,
            "base_commit": t.base_commit,
            "candidate_filter": candidate_filter,
            "gold_files": t.gold,
        }
        component = [top.get(sid, []) for top in lists]
        rows.append(fusion_row(base, component, labels=labels, weights=weights, k=k))
    name = "rrf_" + "_".join(labels)
    missing = len(with_gold) - len(common)
    summary = summarize(
        rows,
        mode="rank_fusion",
        ranker="rrf",
        model=name,
        candidate_filter=candidate_filter,
        skipped={"not_in_every_run": missing} if missing else {},
        runtime={},
        metric_keys=FUSION_KEYS,
        extras={
            "rrf_k": k,
            "components": labels,
            "component_weights": None if weights is None else list(weights),
            "inputs": [{"path": str(p), "sha256": sha256_file(p)} for p in run_files],
        },
    )
    write_jsonl(out, rows)
    write_json(summary_path(out), summary)
    return summary
