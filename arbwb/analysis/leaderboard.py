"""Notebook 01: which runs and methods retrieve the gold files best, and which differences are
real (spec §12, §13.1). Runs are compared within their group, methods within method groups;
the boards come from :mod:`.board` and :mod:`.method_leaderboard`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import polars as pl

from arbwb import schemas
from arbwb.analysis import method_leaderboard as mb
from arbwb.analysis.board import BCY_HEADLINE, leaderboard_metrics, summary_table
from arbwb.analysis.method_leaderboard import Comparison, Methods
from arbwb.analysis.result import Resampling, Table
from arbwb.io.release import Release, check_missing
from arbwb.metrics import evaluate


def release_metrics(release: Release, *, metrics: Sequence[str] | None = None) -> pl.DataFrame:
    """Per-sample METRICS of every run over its own universe (its group's gold samples;
    absent = zeros, the ``zero`` rule: :meth:`Release.units`)."""
    names = leaderboard_metrics(release) if metrics is None else tuple(metrics)
    frames = [
        evaluate(
            run.rankings,
            release.gold_of(name),
            metrics=names,
            samples=release.run_universe(name),
            stored=run.stored_for(release.gold_of(name)),
            corpus=release.corpus,
            runs=[name],
        )
        for name, run in release.runs.items()
    ]
    return pl.concat(frames) if frames else schemas.empty(schemas.METRICS)


@dataclass(frozen=True)
class LeaderboardOptions:
    """Options of :func:`run`: the method table (``arbwb.io.method_table.read_methods``; None
    makes every run its own method), the missing rule and the resampling of intervals/tests."""

    methods: pl.DataFrame | None = None
    missing: str = "zero"
    resampling: Resampling = field(default_factory=Resampling)


@dataclass(frozen=True)
class LeaderboardResult:
    """Notebook 01's numbers: per-sample metrics, the run and method comparisons, and the
    tables shown per group (``summaries`` per run group; ``v2``, ``layered``, ``layered_bcy``
    per method group; ``subset_tables`` the per-task and per-split ones, by table name)."""

    notes: list[str]
    runs: list[str]
    missing: str
    bcy: bool
    skipped: str | None
    metrics: pl.DataFrame  # METRICS of every run over its own universe, every board metric
    methods: Methods
    run_level: Comparison
    method_level: Comparison
    summaries: dict[str, pl.DataFrame]
    v2: dict[str, pl.DataFrame]
    layered: dict[str, pl.DataFrame]
    layered_bcy: dict[str, pl.DataFrame]
    subset_tables: dict[str, pl.DataFrame]

    def tables(self) -> list[Table]:
        """Methods, run board/tests/ranks, group summaries, then the method tables."""
        runs, methods = self.run_level, self.method_level
        out = [Table("methods", self.methods.runs), Table("scores", runs.board)]
        out += [Table("significance", runs.tests), Table("ranks", runs.ranks)]
        out += [Table(f"{g}__overall", frame) for g, frame in self.summaries.items()]
        out += [Table("method_scores", methods.board), Table("method_significance", methods.tests)]
        out.append(Table("method_ranks", methods.ranks))
        out += [Table(f"v2__{g}", frame) for g, frame in self.v2.items()]
        out += [Table(f"layered__{g}", frame) for g, frame in self.layered.items()]
        out += [Table(f"layered_bcy__{g}", f) for g, f in self.layered_bcy.items() if f.height]
        out += [Table(name, frame) for name, frame in self.subset_tables.items()]
        return out

    def records(self) -> dict[str, Any]:
        """The key numbers of notebook 01 (``skipped`` only when there are no runs)."""
        board = self.run_level.board.filter(pl.col("scope") == "overall")
        method_board = self.method_level.board.filter(pl.col("scope") == "overall")
        mrr_ranks = self.run_level.ranks.filter(pl.col("metric") == "mrr")
        ties = mrr_ranks.select("group", "run", "tie_group").iter_rows()
        n_max = board.group_by("group", maintain_order=True).agg(pl.col("n").max())
        labels = self.methods.runs.select("run", "group", "method", "family").iter_rows()
        mrr_tests = self.run_level.tests.filter(pl.col("metric") == "mrr")
        skipped = {"skipped": self.skipped} if self.skipped else {}
        return {
            "notes": self.notes,
            "runs": self.runs,
            "missing_rule": self.missing,
            **skipped,
            "overall": _values(board),
            "n_samples": {g: int(n) for g, n in n_max.iter_rows()},
            "counts": _counts(board),
            "tie_groups_mrr": {f"{g}/{r}": t for g, r, t in ties},
            "significant_pairs_mrr": int(mrr_tests["significant"].sum()),
            "bcy": self.bcy,
            "methods": {r: {"method": m, "family": f, "group": g} for r, g, m, f in labels},
            "method_overall": _values(method_board),
            "method_counts": _counts(method_board),
        }


def _values(board: pl.DataFrame) -> dict[str, float]:
    """``group/run/aggregation/metric`` -> value of a board's rows."""
    keys = board.select("group", "run", "aggregation", "metric", "value").iter_rows()
    return {f"{g}/{r}/{a}/{m}": v for g, r, a, m, v in keys}


def _counts(board: pl.DataFrame) -> dict[str, dict[str, int]]:
    """``group/run`` -> n, n_evaluated, n_missing of a board's rows."""
    rows = board.select("group", "run", "n", "n_evaluated", "n_missing").unique(maintain_order=True)
    return {
        f"{g}/{r}": {"n": n, "n_evaluated": e, "n_missing": m} for g, r, n, e, m in rows.iter_rows()
    }


def _subset_tables(runs: Comparison, methods: Comparison) -> dict[str, pl.DataFrame]:
    """Per-task and per-split run summaries, per-task v2 method tables, by table name."""
    out = {
        f"{group}__{subset}": summary_table(runs.board, group=group, scope=scope, subset=subset)
        for group in runs.groups
        for scope in ("task", "split")
        for subset in runs.subsets(group, scope)
    }
    for group in methods.groups:
        for task in methods.subsets(group, "task"):
            out[f"v2__{group}__{task}"] = mb.task_table(methods.board, group=group, task=task)
    return out


def run(release: Release, options: LeaderboardOptions) -> LeaderboardResult:
    """Notebook 01: each run scored over its own universe and compared within its group;
    methods joined across groups by the method table, compared within method groups."""
    missing = check_missing(options.missing)
    headline = leaderboard_metrics(release)
    methods = mb.resolve_methods(release, options.methods)
    metrics = release_metrics(release, metrics=mb.board_metrics(release))
    done = release.answered()
    compare = partial(mb.compare, headline=headline, missing=missing, resampling=options.resampling)
    run_level = compare(
        metrics.filter(pl.col("metric").is_in(list(headline))),
        release.samples,
        done,
        groups=release.run_group,
    )
    method_level = compare(
        mb.method_metrics(metrics, methods.runs),
        release.samples,
        mb.method_answered(done, methods.runs),
        groups=methods.groups,
    )
    board, families = method_level.board, methods.families
    return LeaderboardResult(
        notes=list(release.notes),
        runs=sorted(release.runs),
        missing=missing,
        bcy=BCY_HEADLINE in headline,
        skipped=None
        if release.runs
        else f"no runs found under {release.root} ({release.runs_glob})",
        metrics=metrics,
        methods=methods,
        run_level=run_level,
        method_level=method_level,
        summaries={g: summary_table(run_level.board, group=g) for g in run_level.groups},
        v2={g: mb.v2_table(board, families, group=g) for g in method_level.groups},
        layered={g: mb.layered_table(board, families, group=g) for g in method_level.groups},
        layered_bcy={g: mb.bcy_table(board, families, group=g) for g in method_level.groups},
        subset_tables=_subset_tables(run_level, method_level),
    )
