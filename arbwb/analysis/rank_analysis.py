"""First-gold depth per run and task, and cross-run coverage (spec §5.5, §13.3), all from one
per-sample frame (:func:`per_sample`; docs/depth.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from arbwb import schemas
from arbwb.metrics import evaluate

DEPTHS: tuple[int, ...] = (1, 2, 3, 5, 10, 20, 50, 100, 200)
COVERAGE_K = 20
GOLD_COVERAGE = "gold_coverage@8k"  # upstream's legacy packing metric, read from stored runs
MODE_ORDER: tuple[str, ...] = ("embedding", "repomap", "corpus", "lexical")  # then "other"
TASK_ORDER: tuple[str, ...] = ("code2test", "comment2context", "trace2code", "testlog2code")
TRAP_TASK = "comment2context"

PER_SAMPLE: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "task": pl.String,
    "repo": pl.String,
    "first_gold_rank": pl.Int64,  # null when no gold file is ranked at all
    "mrr": pl.Float64,
    **{f"gold_recall@{k}": pl.Float64 for k in DEPTHS},
    GOLD_COVERAGE: pl.Float64,  # stored upstream value; null when the run stores none
    "answered": pl.Boolean,  # the run ranked (or answered) this sample; else scored as a miss
}


def nearest_rank_expr(column: str, q: float) -> pl.Expr:
    """Nearest-rank quantile (spec §5.5) of a column's non-null values as an aggregation:
    sorted[clamp(ceil(q·n) - 1, 0, n - 1)] with the float product q·n as upstream; null if
    empty."""
    values = pl.col(column).drop_nulls().sort()
    n = values.len()
    index = ((pl.lit(q) * n).ceil() - 1).clip(0, (n - 1).clip(0)).cast(pl.Int64)
    return pl.when(n > 0).then(values.get(index, null_on_oob=True)).otherwise(None)


def per_sample(
    rankings: pl.DataFrame,
    gold: pl.DataFrame,
    samples: pl.DataFrame,
    *,
    stored: pl.DataFrame | None = None,
    runs: Sequence[str] | None = None,
    submitted: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """PER_SAMPLE rows for every run and sample with gold; ``stored`` supplies MRR where the
    details lack ``gold_ranks``, ``submitted`` marks empty answers (docs/depth.md)."""
    names = ["first_gold_rank", "mrr", *(f"recall@{k}" for k in DEPTHS)]
    long = evaluate(rankings, gold, metrics=names, samples=samples, stored=stored, runs=runs)
    wide = long.pivot("metric", index=["run", "sample_id"], values="value")
    attrs = samples.select("sample_id", "task", "repo").unique("sample_id", keep="first")
    frame = wide.join(attrs, on="sample_id", how="left").with_columns(
        first_gold_rank=pl.col("first_gold_rank").cast(pl.Int64),
        **{f"gold_recall@{k}": pl.col(f"recall@{k}") for k in DEPTHS},
    )
    stores = pl.col(GOLD_COVERAGE).is_not_null().any().over("run")
    frame = frame.join(_gold_coverage(stored), on=["run", "sample_id"], how="left")
    frame = frame.with_columns(pl.when(stores).then(pl.col(GOLD_COVERAGE).fill_null(0.0)))
    answered = rankings.select("run", "sample_id")
    if submitted is not None:
        answered = pl.concat([answered, submitted.select("run", "sample_id")])
    answered = answered.unique().with_columns(answered=pl.lit(True))
    frame = frame.join(answered, on=["run", "sample_id"], how="left").with_columns(
        pl.col("answered").fill_null(False)
    )
    frame = frame.select(list(PER_SAMPLE)).sort("run", "sample_id")
    return schemas.validate(frame, PER_SAMPLE, name="depth per sample")


def _gold_coverage(stored: pl.DataFrame | None) -> pl.DataFrame:
    """Stored ``gold_coverage@8k`` per (run, sample); a run that stores none is absent."""
    schema = {"run": pl.String, "sample_id": pl.String, GOLD_COVERAGE: pl.Float64}
    if stored is None:
        return pl.DataFrame(schema=schema)
    return stored.filter(pl.col("metric") == GOLD_COVERAGE).select(
        "run", "sample_id", pl.col("value").alias(GOLD_COVERAGE)
    )


def with_overall(per: pl.DataFrame) -> pl.DataFrame:
    """The rows once per task and once more under task ``overall``."""
    return pl.concat([per.with_columns(task=pl.lit("overall")), per])


def task_rank(column: str = "task") -> pl.Expr:
    """Sort key of spec §13.1's task order: overall, the core tasks, then others by name."""
    known = {"overall": 0, **{t: i + 1 for i, t in enumerate(TASK_ORDER)}}
    return pl.col(column).replace_strict(known, default=len(known), return_dtype=pl.Int64)


def mode_rank(column: str = "mode") -> pl.Expr:
    """Sort key of spec §13.3's run order: embedding, repomap, corpus/lexical, other."""
    known = {m: min(i, 2) for i, m in enumerate(MODE_ORDER)}
    return pl.col(column).replace_strict(known, default=3, return_dtype=pl.Int64)


def depth_rows(per: pl.DataFrame, info: pl.DataFrame | None = None) -> pl.DataFrame:
    """First-gold depth per run and task (``overall`` first, spec §13.3), runs ordered by
    mode then name; unanswered samples count as misses (arbwb-defined)."""
    rank = pl.col("first_gold_rank")
    aggs = [
        pl.len().alias("samples"),
        (~pl.col("answered")).sum().alias("unanswered"),
        rank.is_null().sum().alias("missing_first_gold_rank"),
        nearest_rank_expr("first_gold_rank", 0.5).alias("median_first_gold_rank_hit_only"),
        nearest_rank_expr("first_gold_rank", 0.9).alias("p90_first_gold_rank_hit_only"),
        pl.col("mrr").mean().alias("mean_mrr"),
        pl.col(GOLD_COVERAGE).mean().alias(f"mean_{GOLD_COVERAGE}"),
        *((rank.is_not_null() & (rank <= k)).mean().alias(f"any_gold@{k}") for k in DEPTHS),
        *(pl.col(f"gold_recall@{k}").mean() for k in DEPTHS),
    ]
    rows = with_overall(per).group_by("run", "task").agg(aggs)
    rows = rows.with_columns(
        pl.col("samples", "unanswered", "missing_first_gold_rank").cast(pl.Int64)
    )
    if info is None:
        info = per.select("run").unique().with_columns(mode=pl.lit(None, pl.String))
    rows = rows.join(info, on="run", how="left")
    first = ["run", *(c for c in info.columns if c != "run"), "task"]
    rows = rows.sort(mode_rank(), "run", task_rank(), "task")
    return rows.select(*first, pl.exclude(first))


def hit_counts(per: pl.DataFrame) -> pl.DataFrame:
    """Per sample: task, repo and how many runs have first-gold rank <= 20 (Recall@20 > 0)."""
    hit = pl.col("first_gold_rank").is_not_null() & (pl.col("first_gold_rank") <= COVERAGE_K)
    return (
        per.group_by("sample_id")
        .agg(
            pl.col("task").first(),
            pl.col("repo").first(),
            hit_models=hit.sum().cast(pl.Int64),
            runs=pl.len().cast(pl.Int64),
            best_first_gold_rank=pl.col("first_gold_rank").min(),
        )
        .sort("sample_id")
    )


def cross_run_coverage(per: pl.DataFrame) -> pl.DataFrame:
    """Per task (and overall): samples, runs, samples all runs miss / some run hits at 20."""
    counts = with_overall(hit_counts(per))
    k = COVERAGE_K
    rows = counts.group_by("task").agg(
        samples=pl.len().cast(pl.Int64),
        runs=pl.col("runs").max(),
        **{
            f"all_models_miss@{k}": (pl.col("hit_models") == 0).sum().cast(pl.Int64),
            f"any_model_hit@{k}": (pl.col("hit_models") > 0).sum().cast(pl.Int64),
        },
    )
    return rows.sort(task_rank(), "task")


def coverage_distribution(per: pl.DataFrame) -> pl.DataFrame:
    """Per task (and overall): samples hit at 20 by exactly h runs, for every h in 0..runs."""
    counts = with_overall(hit_counts(per))
    n_runs = per["run"].n_unique()
    grid = (
        counts.select("task")
        .unique()
        .join(
            pl.DataFrame({"hit_models": range(n_runs + 1)}, schema={"hit_models": pl.Int64}),
            how="cross",
        )
    )
    observed = counts.group_by("task", "hit_models").agg(samples=pl.len().cast(pl.Int64))
    full = grid.join(observed, on=["task", "hit_models"], how="left")
    return full.with_columns(pl.col("samples").fill_null(0)).sort(task_rank(), "task", "hit_models")


def all_miss_samples(per: pl.DataFrame) -> pl.DataFrame:
    """Samples no run hits at 20, with the best first-gold rank any run reached (or null)."""
    counts = hit_counts(per).filter(pl.col("hit_models") == 0)
    return counts.sort(task_rank(), "task", "sample_id").drop("hit_models")


def given_at_top(per: pl.DataFrame, rankings: pl.DataFrame, labels: pl.DataFrame) -> pl.DataFrame:
    """comment2context (run, sample) pairs whose rank-1 file is a given file (spec §2.7,
    §13.3); ``trap`` marks upstream's trap, the other rows are arbwb's wider view."""
    given = labels.filter(pl.col("role") == "given").select("sample_id", "path").unique()
    top1 = rankings.filter(pl.col("rank") == 1).select("run", "sample_id", top1_path="path")
    rows = (
        per.filter(pl.col("task") == TRAP_TASK)
        .join(top1, on=["run", "sample_id"])
        .join(given, left_on=["sample_id", "top1_path"], right_on=["sample_id", "path"], how="semi")
        .with_columns(trap=pl.col(f"gold_recall@{COVERAGE_K}") == 0.0)
    )
    return rows.select("run", "sample_id", "repo", "top1_path", "first_gold_rank", "trap").sort(
        "run", "sample_id"
    )
