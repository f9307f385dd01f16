"""Rank-fusion report (spec §13.7) and candidate-filter ablation (spec §13.8) from stored
runs; reference rows come from :func:`.rank_analysis.depth_rows` (full-depth MRR).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import polars as pl

from arbwb import schemas
from arbwb.analysis.rank_analysis import task_rank, with_overall
from arbwb.io.runmeta import FILTERS
from arbwb.metrics import evaluate
from arbwb.retrievers.fusion import DEPTH, rrf, top_lists

FUSION_METRICS: tuple[str, ...] = ("recall@5", "recall@10", "recall@20", "mrr", "hit@20", "ndcg@20")
BASE_FILTER = "all_files"


def fuse(rankings: pl.DataFrame, components: Sequence[str], *, name: str) -> pl.DataFrame:
    """RANKINGS of the RRF of stored runs (spec §8): top 20 of each component, on the samples
    every component ranks, in sorted id order."""
    lists = [top_lists(rankings.filter(pl.col("run") == c)) for c in components]
    if len(lists) < 2:
        msg = f"a fusion needs at least two runs, got {list(components)}"
        raise ValueError(msg)
    fused = fused_rankings(lists, sorted(set(lists[0]).intersection(*lists[1:])), name)
    return schemas.validate(fused, schemas.RANKINGS, name="fused rankings")


def fused_rankings(
    lists: Sequence[Mapping[str, list[str]]], sample_ids: Iterable[str], name: str
) -> pl.DataFrame:
    """RANKINGS of run ``name``: the RRF of each sample's top lists (a list without the
    sample adds nothing), samples in the order given."""
    rows = [
        {"run": name, "sample_id": sid, "rank": rank, "path": path, "score": score}
        for sid in sample_ids
        for rank, (path, score) in enumerate(rrf([top.get(sid, []) for top in lists]), start=1)
    ]
    return pl.DataFrame(rows, schema=dict(schemas.RANKINGS))


def fusion_table(
    rankings: pl.DataFrame,
    gold: pl.DataFrame,
    samples: pl.DataFrame,
    fusions: Mapping[str, Sequence[str]],
) -> pl.DataFrame:
    """Per fusion run and task (``overall`` first): samples and the §13.7 metrics on its
    top 20; ``fusions`` maps each fusion run to its component labels."""
    frames = []
    for name, components in fusions.items():
        ranked = rankings.filter(pl.col("run") == name, pl.col("rank") <= DEPTH)
        answered = samples.join(ranked.select("sample_id").unique(), on="sample_id", how="semi")
        long = evaluate(
            ranked, gold, metrics=FUSION_METRICS, samples=answered, fusion=True, runs=[name]
        )
        tasks = answered.select("sample_id", "task").unique("sample_id", keep="first")
        per = with_overall(long.join(tasks, on="sample_id", how="left"))
        table = per.group_by("task").agg(
            samples=pl.col("sample_id").n_unique().cast(pl.Int64),
            **{m: pl.col("value").filter(pl.col("metric") == m).mean() for m in FUSION_METRICS},
        )
        frames.append(
            table.with_columns(fusion=pl.lit(name), components=pl.lit(" + ".join(components)))
        )
    if not frames:
        schema = dict.fromkeys(("fusion", "components", "task"), pl.String)
        return pl.DataFrame(
            schema=schema | {"samples": pl.Int64} | dict.fromkeys(FUSION_METRICS, pl.Float64)
        )
    table = pl.concat(frames).rename({"hit@20": "any@20"})
    table = table.sort(
        task_rank(), "task", pl.col("mrr"), "fusion", descending=[False, False, True, False]
    )
    return table.select("fusion", "components", "task", "samples", pl.exclude(_KEYS))


_KEYS = ("fusion", "components", "task", "samples")


def reference_table(depth: pl.DataFrame, runs: Sequence[str]) -> pl.DataFrame:
    """Component reference rows (task, model, samples, R@20, MRR, source) from
    :func:`arbwb.analysis.rank_analysis.depth_rows` output."""
    source = pl.col("source") if "source" in depth.columns else pl.lit(None, pl.String)
    rows = depth.filter(pl.col("run").is_in(list(runs))).select(
        "task",
        model="run",
        samples="samples",
        recall_20="gold_recall@20",
        mrr="mean_mrr",
        source=source,
    )
    return rows.rename({"recall_20": "recall@20"}).sort(task_rank(), "task", "model")


def has_ablation(info: pl.DataFrame) -> bool:
    """Whether any run uses a candidate filter other than ``all_files`` (spec §6.2)."""
    return bool((info["candidate_filter"] != BASE_FILTER).any())


def methods_without_base(ablation: pl.DataFrame) -> list[str]:
    """Methods of an :func:`ablation_table` with no ``all_files`` run (their deltas are n/a);
    none for any other frame."""
    if "delta_mrr_vs_all_files" not in ablation.columns:
        return []
    bare = ablation.filter(pl.col("delta_mrr_vs_all_files").is_null())["method"]
    return bare.unique(maintain_order=True).to_list()


def ablation_table(depth: pl.DataFrame) -> pl.DataFrame:
    """Spec §13.8 per method, candidate filter and task, with MRR minus the method's
    all_files run (null when it has none for that task)."""
    renamed = {f"recall@{k}": f"gold_recall@{k}" for k in (5, 10, 20)} | {"mrr": "mean_mrr"}
    renamed["gold_coverage@8k"] = "mean_gold_coverage@8k"
    rows = depth.select("method", "candidate_filter", "task", "samples", **renamed)
    base = rows.filter(pl.col("candidate_filter") == BASE_FILTER).select(
        "method", "task", base_mrr="mrr"
    )
    order = {f: i for i, f in enumerate(FILTERS)}
    out = rows.join(base, on=["method", "task"], how="left").with_columns(
        delta_mrr_vs_all_files=pl.col("mrr") - pl.col("base_mrr")
    )
    out = out.sort(
        "method",
        task_rank(),
        "task",
        pl.col("candidate_filter").replace_strict(order, default=len(order), return_dtype=pl.Int64),
    )
    return out.select(pl.exclude("base_mrr", "gold_coverage@8k"), "gold_coverage@8k")
