"""Notebook 04: can a retriever's confidence tell when a query has no gold file, and does a
threshold calibrated on other repositories hold on held-out ones (spec §9, docs/selective.md)?
Also the ``arbwb selective`` report of a calibration (spec §13.6): JSON-safe dicts and the
Markdown tables (4 decimals; a null threshold is -inf, i.e. never abstain).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

from arbwb.analysis import selective_views as views
from arbwb.analysis.result import Resampling, Table
from arbwb.analysis.selective_folds import Calibration, calibrate, feasible_folds
from arbwb.analysis.selective_metrics import NEG_INF, TABLE_METRICS
from arbwb.analysis.selective_rows import PROTOCOLS, Protocol, selective_rows
from arbwb.errors import InputError
from arbwb.io.release import Release
from arbwb.tables import rows_to_markdown

#: Upstream's selective details files, relative to a release root (the notebook's default).
RUNS_GLOB = "eval/*/*_selective_*_details.jsonl"
ProtocolChoice = Literal["mixed", "natural", "both"]


@dataclass(frozen=True)
class SelectiveOptions:
    """Protocols to calibrate (``both`` = mixed and natural), the requested fold count (upstream
    5; fewer only when the data cannot fill them), resampling for bands and intervals, and
    ``source``: where the runs were looked for, named when there are none."""

    protocol: ProtocolChoice = "both"
    folds: int = 5
    resampling: Resampling = field(default_factory=Resampling)
    source: str = "the release"


@dataclass(frozen=True)
class SelectiveResult:
    """Everything notebook 04 records and shows; frames are empty when ``skipped`` says why."""

    runs: tuple[str, ...]
    left_out: tuple[str, ...]
    notes: tuple[str, ...]
    skipped: str | None = None
    strata: pl.DataFrame = field(default_factory=pl.DataFrame)
    repositories: int = 0
    folds_requested: int = 0
    folds_used: int = 0
    fold_failures: tuple[str, ...] = ()
    calibrations: tuple[Calibration, ...] = ()
    rows: pl.DataFrame = field(default_factory=pl.DataFrame)
    composition: pl.DataFrame = field(default_factory=pl.DataFrame)
    selective_table: pl.DataFrame = field(default_factory=pl.DataFrame)
    fold_thresholds: pl.DataFrame = field(default_factory=pl.DataFrame)
    confidence_by_stratum: pl.DataFrame = field(default_factory=pl.DataFrame)
    confidence_by_repo: pl.DataFrame = field(default_factory=pl.DataFrame)
    risk_coverage: pl.DataFrame = field(default_factory=pl.DataFrame)
    threshold_transfer: pl.DataFrame = field(default_factory=pl.DataFrame)
    separability: pl.DataFrame = field(default_factory=pl.DataFrame)
    signals: pl.DataFrame = field(default_factory=pl.DataFrame)

    def tables(self) -> Sequence[Table]:
        """The notebook's tables (none when skipped)."""
        if self.skipped is not None:
            return ()
        return (
            Table("selective_table", self.selective_table),
            Table("fold_thresholds", self.fold_thresholds),
            Table("confidence_by_repo", self.confidence_by_repo),
            Table("risk_coverage", self.risk_coverage),
            Table("threshold_transfer", self.threshold_transfer),
            Table("separability", self.separability),
            Table("signals", self.signals),
        )

    def records(self) -> Mapping[str, Any]:
        """Runs, strata, folds, per protocol and run the out-of-fold metrics, no-abstain
        success@20 and fold thresholds (null = -inf), AUROC per stratum; or ``skipped``."""
        out: dict[str, Any] = {}
        if self.runs:
            out |= {"runs": list(self.runs), "strata": dict(self.strata.rows())}
            out["repositories"] = self.repositories
        if self.skipped is not None:
            return out | {"skipped": self.skipped}
        out |= {"folds_requested": self.folds_requested, "folds_used": self.folds_used}
        if self.fold_failures:
            out["folds_fallback"] = list(self.fold_failures)
        for cal in self.calibrations:
            out[f"repo_folds/{cal.protocol}"] = cal.repo_folds
        for cal in self.calibrations:
            for name, cv in cal.runs.items():
                key = f"{cal.protocol}/{name}"
                for metric in TABLE_METRICS:
                    out[f"{key}/out_of_fold/{metric}"] = cv.out_of_fold[metric]
                no_abstain = cv.no_abstain["selective_success@20"]
                out[f"{key}/no_abstain/selective_success@20"] = no_abstain
                out[f"{key}/thresholds"] = json_safe(cv.threshold_summary["thresholds"])
        for row in self.separability.iter_rows(named=True):
            out[f"auroc/{row['run']}/{row['stratum']}"] = row["auroc"]
        return out


def protocols_of(choice: str) -> tuple[Protocol, ...]:
    """The protocols a ``protocol`` option names: ``both`` is mixed then natural."""
    chosen = tuple(p for p in PROTOCOLS if choice in (p, "both"))
    if chosen:
        return chosen
    msg = f"protocol must be one of {[*PROTOCOLS, 'both']}, got {choice!r}"
    raise ValueError(msg)


def selective_run_rows(release: Release) -> tuple[dict[str, pl.DataFrame], tuple[str, ...]]:
    """The ROWS frame of every run that ranks no-gold samples too, and the runs left out
    because they rank positives only (nothing to abstain on)."""
    rows: dict[str, pl.DataFrame] = {}
    left_out: list[str] = []
    for name, run in release.runs.items():
        answered = run.submitted.join(release.samples, on="sample_id", how="inner")
        if (answered["stratum"] == "positive").all():
            left_out.append(name)
        else:
            rows[name] = selective_rows(run, release.samples, release.labels)
    return rows, tuple(left_out)


def run(release: Release, options: SelectiveOptions) -> SelectiveResult:
    """Notebook 04's analysis of ``release``'s selective runs under ``options`` (spec §9)."""
    protocols = protocols_of(options.protocol)
    rows, left_out = selective_run_rows(release)
    notes = [f"note: {note}" for note in release.notes]
    if left_out:
        notes.append(f"left out (they rank no no-gold samples): {', '.join(left_out)}")
    if not rows:
        skipped = (
            f"no selective runs (ranking positives and no-gold samples) under {options.source}"
        )
        return SelectiveResult((), left_out, (*notes, f"SKIPPED: {skipped}"), skipped)
    reference = next(iter(rows.values()))
    head: dict[str, Any] = {
        "runs": tuple(rows),
        "left_out": left_out,
        "strata": reference.group_by("stratum").len().sort("stratum"),
        "repositories": reference["repo"].n_unique(),
    }
    try:
        folds_used, failures = feasible_folds(reference, options.folds, protocols)
    except InputError as exc:
        skipped = f"no repo-grouped fold assignment works: {exc.reason}"
        return SelectiveResult(notes=(*notes, f"SKIPPED: {skipped}"), skipped=skipped, **head)
    if folds_used < options.folds:
        notes.append(
            f"FALLBACK: {options.folds} folds are impossible here; using {folds_used} folds."
        )
        notes += [f"  - {reason}" for reason in failures]
    cals = tuple(calibrate(rows, protocol=p, folds=folds_used) for p in protocols)
    return SelectiveResult(
        notes=tuple(notes),
        folds_requested=options.folds,
        folds_used=folds_used,
        fold_failures=tuple(failures),
        calibrations=cals,
        **head,
        **_views(release, rows, cals, options.resampling),
    )


def _views(
    release: Release,
    rows: Mapping[str, pl.DataFrame],
    cals: Sequence[Calibration],
    resampling: Resampling,
) -> dict[str, Any]:
    """The result's frames: tables of the calibrations and the arbwb-defined views."""
    all_rows = pl.concat(list(rows.values()))
    boot = {"n_boot": resampling.n_boot, "seed": resampling.seed}
    signals = pl.concat(
        [views.confidence_signals(part, release.runs[name].rankings) for name, part in rows.items()]
    )
    composition = [
        c.composition.select(pl.lit(c.protocol).alias("protocol"), pl.all()) for c in cals
    ]
    return {
        "rows": all_rows,
        "composition": pl.concat(composition),
        "selective_table": views.selective_table(cals),
        "fold_thresholds": views.fold_table(cals),
        "confidence_by_stratum": views.confidence_distribution(all_rows),
        "confidence_by_repo": views.confidence_distribution(
            all_rows, by=("run", "repo", "stratum")
        ),
        "risk_coverage": views.risk_coverage(all_rows, cluster=resampling.cluster, **boot),
        "threshold_transfer": pl.concat([views.threshold_transfer(cal) for cal in cals]),
        "separability": views.separability(all_rows, **boot),
        "signals": pl.concat(
            [views.compare_signals(signals, cal) for cal in cals], how="diagonal_relaxed"
        ),
    }


def protocol_json(rows: pl.DataFrame, protocol: Protocol, folds: int) -> dict[str, Any]:
    """The ``protocol`` object of the repo-grouped CV report (spec §13.6)."""
    reasons = rows.filter(pl.col("label") == "no_gold")["no_gold_reason"].value_counts()
    return {
        "name": "repo_grouped_out_of_fold_threshold_calibration",
        "evidence": "all no-gold" if protocol == "mixed" else "natural no-gold only",
        "protocol": protocol,
        "folds": folds,
        "group_key": "repo",
        "selection_objective": "balanced_accuracy",
        "tie_breakers": ["selective_accuracy", "selective_success@20", "lowest_threshold"],
        "abstain_rule": "confidence < threshold",
        "samples": rows.height,
        "repositories": rows["repo"].n_unique(),
        "positive": int((rows["label"] == "positive").sum()),
        "no_gold": int((rows["label"] == "no_gold").sum()),
        "no_gold_reason_counts": dict(sorted((str(r), int(c)) for r, c in reasons.iter_rows())),
    }


def json_safe(value: Any) -> Any:
    """``-inf`` thresholds as null (JSON has no infinities); dicts/lists converted recursively."""
    if isinstance(value, float) and value == NEG_INF:
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def calibration_json(calibration: Calibration) -> dict[str, Any]:
    """The ``arbwb selective`` JSON: runs (out_of_fold, no_abstain, folds, threshold_summary,
    predictions), protocol and repo_folds; a null threshold means -inf (never abstain).
    """
    reference = next(iter(calibration.rows.values()))
    runs = [
        {
            "run": name,
            "out_of_fold": cv.out_of_fold,
            "no_abstain": cv.no_abstain,
            "folds": cv.folds,
            "threshold_summary": cv.threshold_summary,
            "predictions": cv.predictions.to_dicts(),
        }
        for name, cv in calibration.runs.items()
    ]
    protocol = protocol_json(reference, calibration.protocol, calibration.folds)
    protocol["reference_run"] = next(iter(calibration.runs))
    protocol["null_threshold"] = "-inf (no abstention)"
    out: dict[str, Any] = json_safe(
        {"runs": runs, "protocol": protocol, "repo_folds": calibration.repo_folds}
    )
    return out


def _threshold(value: float | None) -> float | str:
    """A report threshold for display: null (JSON for -inf) is shown as ``-inf`` (spec §9.4)."""
    return "-inf" if value is None else value


def calibration_markdown(report: dict[str, Any]) -> str:
    """The repo-grouped CV report tables of spec §13.6 (4 decimals; -inf for null thresholds)."""
    protocol = report["protocol"]
    header = ["Ranker", "Pos. pass", "No-gold abstain", "Balanced acc.", "Selective acc."]
    header += ["Success@20", "Coverage", "No-abstain Success@20"]
    out_of_fold = [
        [
            r["run"],
            *(r["out_of_fold"][k] for k in TABLE_METRICS),
            r["no_abstain"]["selective_success@20"],
        ]
        for r in report["runs"]
    ]
    counts = ("fold", "test_samples", "test_positive", "test_no_gold")
    composition = [
        [*(f[c] for c in counts), ", ".join(f["test_repos"])] for f in report["runs"][0]["folds"]
    ]
    sections = [
        f"## Out-of-fold ({protocol['protocol']}, {protocol['folds']} folds)",
        rows_to_markdown(header, out_of_fold),
        "## Fold composition",
        rows_to_markdown(["Fold", "Samples", "Positive", "No-gold", "Repositories"], composition),
    ]
    fold_header = ["Fold", "Threshold", "Test n", "Pos. pass", "No-gold abstain"]
    fold_header += ["Balanced acc.", "Success@20"]
    shown = [TABLE_METRICS[i] for i in (0, 1, 2, 4)]
    for r in report["runs"]:
        per = [
            [
                f["fold"],
                _threshold(f["threshold"]),
                f["test_samples"],
                *(f["test_metrics"][k] for k in shown),
            ]
            for f in r["folds"]
        ]
        sections += [f"## {r['run']}", rows_to_markdown(fold_header, per)]
    return "\n\n".join(s.rstrip("\n") for s in sections) + "\n"
