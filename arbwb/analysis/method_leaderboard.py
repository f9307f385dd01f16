"""Leaderboards over methods (spec §12, §13.1): runs pooled over the eval folders the method
table joins, scored under the release's missing rule (docs/leaderboard.md), with the v2 and
layered tables of spec §13.1. Intervals come from :func:`arbwb.analysis.board.scores`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from arbwb.analysis import board as boards
from arbwb.analysis.result import Resampling
from arbwb.errors import InputError
from arbwb.io import method_table as mt
from arbwb.io.release import Release, apply_missing

BCY_BUDGETS = (4000, 8000, 16000, 32000)
BCY_METRICS = tuple(f"bcy@{b}" for b in BCY_BUDGETS)
_COUNTS = ("n", "n_evaluated", "n_missing")
_AGGREGATE = (
    ("weighted", "recall@5", "R@5"),
    ("weighted", "recall@10", "R@10"),
    ("weighted", "recall@20", "R@20"),
    ("weighted", "mrr", "MRR"),
    ("weighted", "bcy@8000", "BCY@8k"),
    ("task_macro", "recall@20", "Macro R@20"),
    ("task_macro", "mrr", "Macro MRR"),
    ("repo_macro", "recall@20", "Repo R@20"),
    ("repo_macro", "mrr", "Repo MRR"),
    ("task_macro", "bcy@8000", "Macro BCY@8k"),
)
_PER_TASK = _AGGREGATE[:5]
_LAYERED = _AGGREGATE[2:5]  # R@20, MRR, BCY@8k
_COLUMNS = list(boards.SCORES_SCHEMA.items())
_AFTER_N = [name for name, _ in _COLUMNS].index("n") + 1
#: :func:`arbwb.analysis.board.scores` columns with ``n_evaluated`` and ``n_missing`` after
#: ``n``.
BOARD = dict(
    [*_COLUMNS[:_AFTER_N], ("n_evaluated", pl.Int64), ("n_missing", pl.Int64), *_COLUMNS[_AFTER_N:]]
)
_BCY = tuple(("weighted", m, boards.metric_label(m)) for m in BCY_METRICS)


def board_metrics(release: Release) -> tuple[str, ...]:
    """Leaderboard metrics plus BCY at 4k/8k/16k/32k when the release has a corpus."""
    base = boards.leaderboard_metrics(release)
    return (*base, *[m for m in BCY_METRICS if m not in base]) if release.corpus else base


@dataclass(frozen=True)
class Methods:
    """A release's runs resolved to methods once: RUN_METHODS rows, each method's comparison
    group (its runs' eval folders joined by ``+``) and family."""

    runs: pl.DataFrame
    groups: dict[str, str]
    families: dict[str, str]


def resolve_methods(release: Release, table: pl.DataFrame | None = None) -> Methods:
    """The :class:`Methods` of ``release`` under a method table (None: every run its stem)."""
    runs = mt.run_methods(release, table)
    return Methods(runs, mt.method_groups(runs), mt.families(runs))


def method_metrics(metrics: pl.DataFrame, methods: pl.DataFrame) -> pl.DataFrame:
    """METRICS rows with ``run`` replaced by the run's method; two runs of one method scoring
    the same sample is an error naming both."""
    joined = metrics.join(methods.select("run", "method"), on="run", how="inner")
    clash = (
        joined.group_by("method", "sample_id", "metric")
        .agg(pl.col("run").unique().sort())
        .filter(pl.col("run").list.len() > 1)
    )
    if clash.height:
        first = clash.row(0, named=True)
        msg = (
            f"runs {first['run']} are both method {first['method']!r} and both score sample "
            f"{first['sample_id']!r}; give them different methods in the method table"
        )
        raise InputError(msg, field="method")
    return joined.drop("run").rename({"method": "run"}).select(metrics.columns)


def method_answered(done: pl.DataFrame, methods: pl.DataFrame) -> pl.DataFrame:
    """:meth:`Release.answered` rows with ``run`` replaced by the run's method."""
    joined = done.join(methods.select("run", "method"), on="run", how="inner")
    return joined.select(pl.col("method").alias("run"), "sample_id").unique(maintain_order=True)


def counts(metrics: pl.DataFrame, done: pl.DataFrame, samples: pl.DataFrame) -> pl.DataFrame:
    """``run, scope, subset, n, n_evaluated, n_missing`` for overall, each task and split."""
    flagged = (
        metrics.select("run", "sample_id")
        .unique()
        .join(
            done.select("run", "sample_id").with_columns(evaluated=pl.lit(True)),
            on=["run", "sample_id"],
            how="left",
        )
        .with_columns(pl.col("evaluated").fill_null(False))
        .join(samples.select("sample_id", "task", "split"), on="sample_id", how="left")
    )
    parts = []
    for scope, column in (("overall", None), ("task", "task"), ("split", "split")):
        subset = pl.lit("all") if column is None else pl.col(column).cast(pl.String)
        keyed = flagged.with_columns(scope=pl.lit(scope), subset=subset)
        if column is not None:
            keyed = keyed.filter(pl.col(column).is_not_null())
        parts.append(
            keyed.group_by("run", "scope", "subset").agg(
                n=pl.len().cast(pl.Int64), n_evaluated=pl.col("evaluated").sum().cast(pl.Int64)
            )
        )
    return pl.concat(parts).with_columns(n_missing=pl.col("n") - pl.col("n_evaluated"))


def scores(
    metrics: pl.DataFrame,
    samples: pl.DataFrame,
    done: pl.DataFrame,
    *,
    groups: Mapping[str, str],
    missing: str = "zero",
    n_boot: int = 2000,
    seed: int = 0,
    cluster: str | None = None,
) -> pl.DataFrame:
    """:func:`arbwb.analysis.board.scores` of each run (or method) on its own rows under the
    ``missing`` rule, with ``n``, ``n_evaluated`` and ``n_missing`` of its universe."""
    kept = apply_missing(metrics, done, missing)
    frames = []
    for run in metrics["run"].unique(maintain_order=True).to_list():
        own = kept.filter(pl.col("run") == run)
        if own.height:
            group = {run: groups.get(run, "all")}
            frames.append(
                boards.scores(
                    own, samples, run_group=group, n_boot=n_boot, seed=seed, cluster=cluster
                )
            )
    if not frames:
        return pl.DataFrame(schema=BOARD)
    board = pl.concat(frames).drop("n")
    board = board.join(counts(metrics, done, samples), on=["run", "scope", "subset"], how="left")
    return board.select(list(BOARD))


def _wide(
    board: pl.DataFrame,
    columns: Sequence[tuple[str, str, str]],
    *,
    group: str,
    family: Mapping[str, str] | None = None,
    scope: str = "overall",
    subset: str = "all",
) -> tuple[pl.DataFrame, list[str]]:
    """One row per run of ``group``: its ``family`` (when given), the counts and one value
    column per (aggregation, metric, label) the board has; and the labels present."""
    part = board.filter(
        pl.col("group") == group, pl.col("scope") == scope, pl.col("subset") == subset
    )
    rows = part.select("run", *_COUNTS).unique("run", keep="first", maintain_order=True)
    if family is not None:
        named = pl.col("run").replace_strict(dict(family), default=None, return_dtype=pl.String)
        rows = rows.with_columns(family=named)
    labels = []
    for aggregation, metric, label in columns:
        values = part.filter(pl.col("aggregation") == aggregation, pl.col("metric") == metric)
        if values.height:
            rows = rows.join(
                values.select("run", pl.col("value").alias(label)), on="run", how="left"
            )
            labels.append(label)
    return rows, labels


def v2_table(board: pl.DataFrame, family: Mapping[str, str], *, group: str) -> pl.DataFrame:
    """Spec §13.1 v2 aggregate (Model, Family, counts, R@5/10/20, MRR, BCY@8k, macros), by
    weighted MRR, R@20, model; BCY columns only with a corpus."""
    wide, labels = _wide(board, _AGGREGATE, group=group, family=family)
    wide = wide.sort(["MRR", "R@20", "run"], descending=[True, True, False], nulls_last=True)
    return wide.select(
        pl.col("run").alias("Model"), pl.col("family").alias("Family"), *_COUNTS, *labels
    )


def task_table(board: pl.DataFrame, *, group: str, task: str) -> pl.DataFrame:
    """Spec §13.1 v2 per task: Model, counts, R@5/10/20, MRR, BCY@8k; MRR desc, then model."""
    wide, labels = _wide(board, _PER_TASK, group=group, scope="task", subset=task)
    wide = wide.sort(["MRR", "run"], descending=[True, False], nulls_last=True)
    return wide.select(pl.col("run").alias("Model"), *_COUNTS, *labels)


def _ranked(wide: pl.DataFrame, labels: Sequence[str], keys: Sequence[str]) -> pl.DataFrame:
    """Rank, Method, Type, counts and ``labels``, sorted by ``keys`` then method, all
    descending, missing values last."""
    ordered = wide.sort([*keys, "run"], descending=[True] * (len(keys) + 1), nulls_last=True)
    ranked = ordered.with_row_index("Rank", offset=1).with_columns(pl.col("Rank").cast(pl.Int64))
    return ranked.select(
        "Rank", pl.col("run").alias("Method"), pl.col("family").alias("Type"), *_COUNTS, *labels
    )


def layered_table(board: pl.DataFrame, family: Mapping[str, str], *, group: str) -> pl.DataFrame:
    """Spec §13.1 layered main table: Rank, Method, Type, counts, R@20, MRR, BCY@8k, sorted
    by (MRR, R@20, method) descending (ContextSelect-F1@3 is not computed)."""
    wide, labels = _wide(board, _LAYERED, group=group, family=family)
    return _ranked(wide, labels, [k for k in ("MRR", "R@20") if k in labels])


def bcy_table(board: pl.DataFrame, family: Mapping[str, str], *, group: str) -> pl.DataFrame:
    """Spec §13.1 layered BCY table (Rank, Method, Type, counts, BCY@4k-32k) by BCY@8k, method;
    empty when the board has no BCY."""
    wide, labels = _wide(board, _BCY, group=group, family=family)
    return _ranked(wide, labels, ["BCY@8k"]) if "BCY@8k" in labels else pl.DataFrame()


@dataclass(frozen=True)
class Comparison:
    """One level (runs or methods): the board with counts, paired tests and rank table."""

    board: pl.DataFrame
    tests: pl.DataFrame
    ranks: pl.DataFrame

    @property
    def groups(self) -> list[str]:
        """Comparison groups in board order."""
        return self.board["group"].unique(maintain_order=True).to_list()

    def subsets(self, group: str, scope: str) -> list[str]:
        """Tasks (``scope="task"``) or splits of ``group`` on the board, sorted."""
        part = self.board.filter(pl.col("group") == group, pl.col("scope") == scope)
        return part["subset"].unique().sort().to_list()

    def order(self, group: str, metric: str = "mrr") -> list[str]:
        """Runs of ``group`` by rank on ``metric``; empty when the group has no paired test."""
        if not self.tests.filter(pl.col("group") == group).height:
            return []
        part = self.ranks.filter(pl.col("group") == group, pl.col("metric") == metric)
        return part["run"].to_list()

    def has_metric(self, group: str, metric: str) -> bool:
        """Whether the board scores ``metric`` for ``group`` (e.g. BCY needs a corpus)."""
        part = self.board.filter(pl.col("group") == group, pl.col("metric") == metric)
        return part.height > 0


def compare(
    metrics: pl.DataFrame,
    samples: pl.DataFrame,
    done: pl.DataFrame,
    *,
    groups: Mapping[str, str],
    headline: Sequence[str],
    missing: str,
    resampling: Resampling,
) -> Comparison:
    """:func:`scores` of every metric under ``missing``; paired tests and rank table of the
    ``headline`` metrics under the same rule, within ``groups``."""
    n_boot, seed, cluster = resampling.n_boot, resampling.seed, resampling.cluster or None
    board = scores(
        metrics,
        samples,
        done,
        groups=groups,
        missing=missing,
        n_boot=n_boot,
        seed=seed,
        cluster=cluster,
    )
    kept = apply_missing(metrics.filter(pl.col("metric").is_in(list(headline))), done, missing)
    tests = boards.pairwise_tests(
        kept, samples, run_group=groups, n_perm=resampling.n_perm, seed=seed, cluster=cluster
    )
    ranks = boards.rank_table(
        kept, samples, tests, run_group=groups, n_boot=n_boot, seed=seed, cluster=cluster
    )
    return Comparison(board, tests, ranks)
