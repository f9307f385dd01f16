"""Canonical BCY@B (Budgeted Context Yield, spec §5.7) vectorised with Polars; every packed file
costs >= 3 tokens, so "packed while used < B" is upstream's sequential loop.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from arbwb.errors import InputError
from arbwb.io.corpus import Corpus
from arbwb.metrics.spec import MetricSpec
from arbwb.schemas import METRICS, validate
from arbwb.tokenize import count_tokens_expr

if TYPE_CHECKING:
    import numpy.typing as npt

DEFAULT_BUDGETS: tuple[int, ...] = (4000, 8000, 16000, 32000)
DEFAULT_THRESHOLDS: tuple[int, ...] = (1, 16, 32, 64, 128)
STORED_PREFIX = 20  # BCY uses the stored top-20 files only (spec §5.1)
#: Engine of the lazy queries here: their frames are small (samples x 20 ranked files), where
#: the in-memory engine starts faster than the streaming one (Polars' default).
ENGINE: Literal["in-memory"] = "in-memory"

BCY_TABLE_SCHEMA: dict[str, type[pl.DataType]] = {
    "run": pl.String,
    "sample_id": pl.String,
    "snapshot_id": pl.String,
    "budget": pl.Int64,
    "tau": pl.Int64,
    "bcy": pl.Float64,
    "covered_gold_count": pl.Int64,
    "gold_count": pl.Int64,
    "used_tokens": pl.Int64,
    "packed_files": pl.Int64,
    "partial_files": pl.Int64,
    "missing_ranked_files": pl.Int64,
    "lower_bound": pl.Boolean,
    "missing_snapshot": pl.Boolean,
}


class MissingSnapshotWarning(UserWarning):
    """Some rankings point at snapshots the corpus lacks; their BCY counts as 0."""


def normalise_budgets(budgets: Iterable[int]) -> list[int]:
    """Budgets sorted and deduplicated; each must be a positive integer (spec §5.7)."""
    values = sorted(set(budgets))
    if not values or values[0] <= 0:
        msg = f"budgets must be positive token counts, e.g. 4000, 8000, got {values!r}"
        raise ValueError(msg)
    return values


def normalise_thresholds(thresholds: Iterable[int]) -> list[int]:
    """Coverage thresholds τ sorted and deduplicated, with τ = 1 always present (spec §5.7)."""
    values = sorted(set(thresholds) | {1})
    if values[0] <= 0:
        msg = f"coverage thresholds must be positive token counts, got {values!r}"
        raise ValueError(msg)
    return values


def header_tokens_expr(path_column: str = "path") -> pl.Expr:
    """Tokens of the file header ``"### " + path + "\\n"`` (spec §5.7 renderer)."""
    return count_tokens_expr(pl.format("### {}\n", pl.col(path_column)))


def pack(
    ranked: pl.DataFrame,
    gold: pl.DataFrame,
    *,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    thresholds: Sequence[int] = DEFAULT_THRESHOLDS,
) -> pl.DataFrame:
    """Per (run, sample_id, budget, tau) BCY and packing counts from ranked files with costs
    (top 20, deduplicated; null n_tokens = missing); unranked gold samples get zeros."""
    query = _pack(ranked.lazy(), gold.lazy(), budgets=budgets, thresholds=thresholds)
    return query.collect(engine=ENGINE)


def _pack(
    ranked: pl.LazyFrame, gold: pl.LazyFrame, *, budgets: Sequence[int], thresholds: Sequence[int]
) -> pl.LazyFrame:
    """:func:`pack` as one lazy query (a dozen eager steps cost more than the packing)."""
    budget_list, tau_list = normalise_budgets(budgets), normalise_thresholds(thresholds)
    budget_frame = pl.LazyFrame({"budget": budget_list}, schema={"budget": pl.Int64})
    keys = ["run", "sample_id"]
    costed = (
        ranked.join(gold.with_columns(is_gold=pl.lit(True)), on=["sample_id", "path"], how="left")
        .with_columns(
            missing=pl.col("n_tokens").is_null(),
            is_gold=pl.col("is_gold").fill_null(False),
            c=pl.col("n_tokens").fill_null(0),
            h=header_tokens_expr(),
        )
        .with_columns(
            total=pl.when("missing")
            .then(0)
            .otherwise(pl.col("h") + pl.col("c") + (pl.col("n_bytes") > 0).cast(pl.Int64))
        )
        .with_columns(
            before=pl.col("total").cum_sum().over(keys, order_by="rank") - pl.col("total"),
            all_total=pl.col("total").sum().over(keys),
            n_ranked=pl.len().over(keys),
        )
    )
    budget = pl.col("budget")
    active = pl.col("before") < budget
    packed = active & ~pl.col("missing")
    whole = packed & (pl.col("before") + pl.col("total") <= budget)
    content = (
        pl.when(whole)
        .then(pl.col("c"))
        .otherwise(pl.min_horizontal("c", pl.max_horizontal(0, budget - pl.col("before") - "h")))
    )
    per_file = costed.join(budget_frame, how="cross").with_columns(
        packed=packed,
        partial=packed & ~whole,
        missing_counted=active & pl.col("missing"),
        m=content,
    )
    eligible = pl.col("packed") & pl.col("is_gold") & (pl.col("c") > 0)
    per_sample = per_file.group_by([*keys, "budget"]).agg(
        used_tokens=pl.min_horizontal(pl.col("all_total").first(), budget.first()),
        packed_files=pl.col("packed").sum(),
        partial_files=pl.col("partial").sum(),
        missing_ranked_files=pl.col("missing_counted").sum(),
        n_ranked=pl.col("n_ranked").first(),
        **{
            f"cov{t}": (eligible & (pl.col("m") >= pl.min_horizontal(t, "c"))).sum()
            for t in tau_list
        },
    )
    gold_count = gold.group_by("sample_id").agg(gold_count=pl.len().cast(pl.Int64))
    grid = (
        ranked.select("run").unique().join(gold_count, how="cross").join(budget_frame, how="cross")
    )
    zero = ["used_tokens", "packed_files", "partial_files", "missing_ranked_files", "n_ranked"]
    wide = grid.join(per_sample, on=[*keys, "budget"], how="left").with_columns(
        pl.col([*zero, *(f"cov{t}" for t in tau_list)]).fill_null(0).cast(pl.Int64)
    )
    long = wide.unpivot(
        on=[f"cov{t}" for t in tau_list],
        index=[*keys, "budget", "gold_count", *zero],
        variable_name="tau",
        value_name="covered_gold_count",
    ).with_columns(pl.col("tau").str.strip_prefix("cov").cast(pl.Int64))
    return long.with_columns(
        bcy=pl.col("covered_gold_count") / pl.col("gold_count"),
        lower_bound=(pl.col("used_tokens") < budget) & (pl.col("n_ranked") >= STORED_PREFIX),
    ).drop("n_ranked")


def bcy_table(
    rankings: pl.DataFrame,
    labels: pl.DataFrame,
    corpus: Corpus,
    *,
    snapshots: pl.DataFrame,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    thresholds: Sequence[int] = DEFAULT_THRESHOLDS,
) -> pl.DataFrame:
    """BCY per (run, gold sample, budget, τ) with packing diagnostics (BCY_TABLE_SCHEMA);
    a missing snapshot scores 0 with ``missing_snapshot`` (docs/budget.md)."""
    table = _bcy_lazy(
        rankings, labels, corpus, snapshots=snapshots, budgets=budgets, thresholds=thresholds
    ).collect(engine=ENGINE)
    _warn_failed(table)
    return table


def _bcy_lazy(
    rankings: pl.DataFrame,
    labels: pl.DataFrame,
    corpus: Corpus,
    *,
    snapshots: pl.DataFrame,
    budgets: Sequence[int],
    thresholds: Sequence[int],
) -> pl.LazyFrame:
    """:func:`bcy_table`'s table (sorted) as a lazy query: only the snapshot map and the
    paths to cost are collected on the way."""
    gold_query = (
        labels.lazy()
        .filter(pl.col("role") == "gold")
        .select("sample_id", "path")
        .unique()
        .filter(pl.col("path") != "")
    )
    gold, mapping = _snapshot_map(snapshots, gold_query, keep_gold=True)
    known = pl.col("snapshot_id").is_in(pl.Series(corpus.snapshot_ids(), dtype=pl.String).implode())
    present = mapping.lazy().filter(known).select("sample_id")
    top_query = (
        rankings.lazy()
        .filter((pl.col("rank") <= STORED_PREFIX) & (pl.col("path") != ""))
        .sort("run", "sample_id", "rank")
        .unique(subset=["run", "sample_id", "path"], keep="first", maintain_order=True)
        .join(gold.lazy().select("sample_id").unique(), on="sample_id", how="semi")
        .join(mapping.lazy(), on="sample_id", how="left")
        .select("run", "sample_id", "rank", "path", "snapshot_id")
        .join(present, on="sample_id", how="semi")
    )
    top, present_ids = pl.collect_all([top_query, present], engine=ENGINE)
    costs = _file_costs(top.select("snapshot_id", "path").unique(), corpus)
    ranked = top.lazy().join(costs.lazy(), on=["snapshot_id", "path"], how="left")
    failed = ~pl.col("sample_id").is_in(present_ids["sample_id"].implode())
    return (
        _pack(ranked, gold.lazy(), budgets=budgets, thresholds=thresholds)
        .join(mapping.lazy(), on="sample_id", how="left")
        .with_columns(
            missing_snapshot=failed,
            bcy=pl.when(failed).then(0.0).otherwise("bcy"),
            lower_bound=pl.col("lower_bound") & ~failed,
        )
        .select(list(BCY_TABLE_SCHEMA))
        .sort("run", "sample_id", "budget", "tau")
    )


def _warn_failed(table: pl.DataFrame) -> None:
    """Warn (for the caller of the public function) when some pairs lack their snapshot."""
    failed = table.filter("missing_snapshot").select("run", "sample_id").unique()
    if failed.height:
        n_samples = failed["sample_id"].n_unique()
        msg = (
            f"{n_samples} samples with gold ({failed.height} (run, sample) pairs) rank a "
            "snapshot the corpus lacks; their BCY counts as 0 (missing_snapshot); build the "
            "snapshots or pass the right corpus"
        )
        warnings.warn(msg, MissingSnapshotWarning, stacklevel=3)


def missing_snapshots(
    labels: pl.DataFrame, corpus: Corpus, *, snapshots: pl.DataFrame
) -> pl.DataFrame:
    """Gold samples (sample_id, snapshot_id) whose snapshot the corpus lacks: each is a BCY
    failure with value 0, so callers report how many there are."""
    gold = labels.lazy().filter((pl.col("role") == "gold") & (pl.col("path") != ""))
    gold_ids = gold.select("sample_id").unique()
    _, mapping = _snapshot_map(snapshots, gold_ids)
    ids = pl.Series(corpus.snapshot_ids(), dtype=pl.String)
    known = pl.col("snapshot_id").is_in(ids.implode())
    missing = mapping.lazy().filter(~known).join(gold_ids, on="sample_id", how="semi")
    return missing.sort("sample_id").collect(engine=ENGINE)


def bcy_metrics(
    rankings: pl.DataFrame,
    labels: pl.DataFrame,
    corpus: Corpus,
    specs: Sequence[MetricSpec],
    *,
    snapshots: pl.DataFrame,
) -> pl.DataFrame:
    """METRICS rows ``bcy@B`` / ``bcy_tauT@B`` for each spec (family "bcy"), via bcy_table."""
    table = (
        _bcy_lazy(
            rankings,
            labels,
            corpus,
            snapshots=snapshots,
            budgets=[_required(s.budget, s.name) for s in specs],
            thresholds=[_required(s.tau, s.name) for s in specs],
        )
        .select("run", "sample_id", "budget", "tau", "bcy", "missing_snapshot")
        .collect(engine=ENGINE)
    )
    _warn_failed(table)
    wanted = pl.DataFrame(
        [(s.budget, s.tau, s.name) for s in specs],
        schema={"budget": pl.Int64, "tau": pl.Int64, "metric": pl.String},
        orient="row",
    )
    frame = (
        table.lazy()
        .join(wanted.lazy(), on=["budget", "tau"])
        .sort("run", "sample_id", "budget", "tau")
        .select("run", "sample_id", "metric", value="bcy")
        .collect(engine=ENGINE)
    )
    return validate(frame, METRICS, name="bcy metrics")


def bcy_curves(
    table: pl.DataFrame, tasks: pl.DataFrame, *, n_boot: int = 2000, seed: int = 0
) -> pl.DataFrame:
    """Mean BCY per (run, task, budget, τ) (plus task "overall") with bootstrap intervals,
    n, the lower-bound share and missing-snapshot failures."""
    import numpy as np  # only curves need numpy: BCY scores load without it

    with_task = table.join(tasks.select("sample_id", "task").unique(), on="sample_id", how="left")
    unknown = with_task.filter(pl.col("task").is_null())["sample_id"].unique().to_list()
    if unknown:
        msg = f"no task for sample ids {unknown[:5]!r}; pass a samples frame covering them"
        raise InputError(msg, field="sample_id")
    both = pl.concat([with_task, with_task.with_columns(task=pl.lit("overall"))])
    rows = []
    # one (run, task) pair at a time: a frame per (run, task, budget, τ) cost 0.3 GB at scale
    for (run, task), pair in both.partition_by(["run", "task"], as_dict=True).items():
        cells = pair.sort("budget", "tau", maintain_order=True)  # rows keep their order
        bounds = (
            cells.with_row_index("at")
            .group_by("budget", "tau", maintain_order=True)
            .agg(pl.col("at").first().alias("a"), (pl.col("at").last() + 1).alias("b"))
        )
        keys = bounds.select("budget", "tau").rows()
        spans = bounds.select("a", "b").rows()
        columns = {c: cells[c].to_numpy() for c in ("bcy", "lower_bound", "used_tokens")}
        samples = cells["sample_id"].to_numpy()
        missing = cells["missing_snapshot"].to_numpy()
        intervals = _shared_intervals(
            [columns["bcy"][a:b] for a, b in spans],
            [samples[a:b] for a, b in spans],
            n_boot=n_boot,
            seed=seed,
        )
        for (budget, tau), (a, b), (low, high) in zip(keys, spans, intervals, strict=True):
            rows.append(
                {
                    "run": run,
                    "task": task,
                    "budget": budget,
                    "tau": tau,
                    "n": b - a,
                    "bcy": float(np.mean(columns["bcy"][a:b])),
                    "ci_low": low,
                    "ci_high": high,
                    "lower_bound_share": float(np.mean(columns["lower_bound"][a:b])),
                    "missing_snapshots": int(missing[a:b].sum()),
                    "used_tokens": float(np.mean(columns["used_tokens"][a:b])),
                }
            )
    return pl.DataFrame(rows).sort("run", "task", "budget", "tau")


def _shared_intervals(
    values: list[npt.NDArray[Any]], samples: list[npt.NDArray[Any]], *, n_boot: int, seed: int
) -> list[tuple[float, float]]:
    """Bootstrap interval of each (budget, τ) cell's mean BCY of one (run, task), drawing one
    weight matrix when the cells share samples (same draws as one call each)."""
    import numpy as np

    from arbwb.metrics.stats import bootstrap_ci, bootstrap_means, percentile_interval

    if all(np.array_equal(ids, samples[0]) for ids in samples[1:]):
        reps = bootstrap_means(np.column_stack(values), n_boot=n_boot, seed=seed)
        return [percentile_interval(reps[:, j]) for j in range(len(values))]
    return [bootstrap_ci(cell, n_boot=n_boot, seed=seed) for cell in values]


def _required(value: int | None, name: str) -> int:
    if value is None:
        msg = f"metric {name!r} has no budget/threshold; use names like bcy@8000"
        raise ValueError(msg)
    return value


def _snapshot_map(
    snapshots: pl.DataFrame, gold: pl.LazyFrame, *, keep_gold: bool = False
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(``gold`` collected if ``keep_gold``, else empty; sample_id -> snapshot_id, one per
    sample), in one collection; every gold sample must have a snapshot."""
    mapping = snapshots.lazy().select("sample_id", "snapshot_id").unique()
    doubled = mapping.filter(pl.col("sample_id").is_duplicated()).select("sample_id").unique()
    lacking = gold.join(mapping, on="sample_id", how="anti").select("sample_id").unique()
    queries = [gold if keep_gold else gold.clear(), mapping, doubled, lacking]
    found = pl.collect_all(queries, engine=ENGINE)
    kept, frame, doubled_ids, lacking_ids = found
    if doubled_ids.height:
        msg = f"samples with several snapshots: {doubled_ids['sample_id'].to_list()[:5]!r}"
        raise InputError(msg, field="snapshot_id")
    if lacking_ids.height:
        first = lacking_ids["sample_id"].to_list()[:5]
        msg = f"no snapshot (repo, base_commit) for samples {first!r}"
        raise InputError(msg, field="snapshot_id")
    return kept, frame


def _file_costs(pairs: pl.DataFrame, corpus: Corpus) -> pl.DataFrame:
    """Token counts of just the ranked (snapshot_id, path) pairs (one batched corpus lookup)."""
    wanted = pairs.group_by("snapshot_id", maintain_order=True).agg("path").iter_rows()
    return corpus.file_costs(dict(wanted)).select("snapshot_id", "path", "n_tokens", "n_bytes")
