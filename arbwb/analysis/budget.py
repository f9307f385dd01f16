"""Budget curves (spec §5.7): BCY per run, task, budget and τ, each run over its own universe
(:meth:`Release.units`), so BCY@8000 at τ = 1 is the leaderboard's and upstream's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from arbwb.analysis.result import Resampling, Table
from arbwb.io.release import Release
from arbwb.metrics.budget import BCY_TABLE_SCHEMA, bcy_curves, bcy_table

CURVE_BUDGETS = (250, 500, 1000, 2000, 4000, 8000, 16000, 32000)
CURVE_TAUS = (1, 16, 32, 64, 128)
#: Columns of :func:`arbwb.metrics.budget.bcy_curves` (an empty frame of them when skipped).
CURVES_SCHEMA = {
    **dict.fromkeys(("run", "task"), pl.String),
    **dict.fromkeys(("budget", "tau", "n"), pl.Int64),
    **dict.fromkeys(("bcy", "ci_low", "ci_high", "lower_bound_share"), pl.Float64),
    "missing_snapshots": pl.Int64,
    "used_tokens": pl.Float64,
}


@dataclass(frozen=True)
class BudgetOptions:
    """Token budgets B, coverage thresholds τ (1 is canonical BCY), the missing rule and the
    bootstrap of the intervals."""

    budgets: Sequence[int] = CURVE_BUDGETS
    taus: Sequence[int] = CURVE_TAUS
    missing: str = "zero"
    resampling: Resampling = field(default_factory=Resampling)


@dataclass(frozen=True)
class BudgetResult:
    """Per-sample packing (``table``), the curves, and τ sensitivity at 8k; or why skipped."""

    skipped: str | None
    table: pl.DataFrame
    curves: pl.DataFrame

    @property
    def tau_sensitivity(self) -> pl.DataFrame:
        """BCY_τ@8000 per run (one column per τ), overall."""
        at_8k = self.curves.filter(pl.col("task") == "overall", pl.col("budget") == 8000)
        return at_8k.pivot(on="tau", index="run", values="bcy")

    @property
    def missing_snapshot_samples(self) -> int:
        """Samples whose snapshot the corpus lacks (each a counted failure, BCY 0)."""
        return self.table.filter(pl.col("missing_snapshot"))["sample_id"].n_unique()

    def tables(self) -> list[Table]:
        """The curves and the τ sensitivity at 8k (nothing when skipped)."""
        if self.skipped:
            return []
        return [Table("bcy_curves", self.curves), Table("tau_sensitivity_8k", self.tau_sensitivity)]

    def records(self) -> dict[str, Any]:
        """Overall BCY per (τ, budget, run), sample counts and the lower-bound share at 32k."""
        if self.skipped:
            return {"skipped": self.skipped}
        overall = self.curves.filter(pl.col("task") == "overall")
        out: dict[str, Any] = {
            f"bcy_tau{tau}@{budget}/{run}": bcy
            for run, tau, budget, bcy in overall.select("run", "tau", "budget", "bcy").iter_rows()
        }
        at_32k = self.table.filter(pl.col("budget") == 32000, pl.col("tau") == 1)
        return out | {
            "samples": self.table["sample_id"].n_unique(),
            "missing_snapshot_samples": self.missing_snapshot_samples,
            "lower_bound_share@32000": float(at_32k["lower_bound"].mean()),  # type: ignore[arg-type]
        }


def packing(release: Release, options: BudgetOptions) -> pl.DataFrame:
    """BCY_TABLE rows of every run over its own units: each group's runs packed against that
    group's gold and snapshots, restricted to the samples the ``missing`` rule scores."""
    if release.corpus is None:
        msg = "BCY needs a corpus: add corpus/<release>/corpus_manifest.jsonl to the data root"
        raise ValueError(msg)
    frames = []
    for group, runs in release.groups.items():
        rankings = pl.concat([release.runs[run].rankings for run in runs])
        snapshots = release.universe(group).select("sample_id", "snapshot_id")
        frames.append(
            bcy_table(
                rankings,
                release.gold[group],
                release.corpus,
                snapshots=snapshots,
                budgets=options.budgets,
                thresholds=options.taus,
            )
        )
    units = release.units(options.missing).select("run", "sample_id")
    table = pl.concat(frames) if frames else pl.DataFrame(schema=BCY_TABLE_SCHEMA)
    joined = table.join(units, on=["run", "sample_id"], how="semi")
    return joined.sort("run", "sample_id", "budget", "tau")


def run(release: Release, options: BudgetOptions) -> BudgetResult:
    """Notebook 05: skipped without a corpus or runs, else the packing and the curves."""
    skipped = None
    if release.corpus is None:
        skipped = f"no corpus in {release.root}: BCY needs corpus/<release>/corpus_manifest.jsonl"
    elif not release.runs:
        skipped = f"no runs in {release.root} matching {release.runs_glob}"
    if skipped:
        empty = pl.DataFrame(schema=BCY_TABLE_SCHEMA)
        return BudgetResult(skipped, empty, pl.DataFrame(schema=CURVES_SCHEMA))
    table = packing(release, options)
    tasks = release.samples.select("sample_id", "task")
    rs = options.resampling
    curves = bcy_curves(table, tasks, n_boot=rs.n_boot, seed=rs.seed)
    return BudgetResult(None, table, curves)
