"""``selective.run`` on the demo release: the run set, records against its own calibrations, the
two skip paths, and the panels drawn for a skipped result (no papermill)."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pytest

from arbwb.analysis import selective
from arbwb.analysis.result import Resampling
from arbwb.io.release import Release, load_release
from arbwb.plots import selective as plots

matplotlib.use("Agg")

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
FAST = selective.SelectiveOptions(resampling=Resampling(n_boot=50), source="the demo")
TABLES = [
    "selective_table",
    "fold_thresholds",
    "confidence_by_repo",
    "risk_coverage",
    "threshold_transfer",
    "separability",
    "signals",
]


@pytest.fixture(scope="module")
def demo() -> Release:
    if not any(DEMO.glob(selective.RUNS_GLOB)):
        pytest.skip("data/demo has no selective runs")
    return load_release(DEMO, selective.RUNS_GLOB)


def test_run_records_its_calibrations(demo: Release) -> None:
    result = selective.run(demo, FAST)
    assert result.skipped is None and result.left_out == ()
    assert list(result.runs) == list(demo.runs) and result.folds_used == 5
    assert [t.name for t in result.tables()] == TABLES
    records = result.records()
    assert records["runs"] == list(demo.runs) and "folds_fallback" not in records
    assert (
        sum(records["strata"].values())
        == result.rows.filter(result.rows["run"] == result.runs[0]).height
    )
    assert [c.protocol for c in result.calibrations] == ["mixed", "natural"]
    for cal in result.calibrations:
        assert records[f"repo_folds/{cal.protocol}"] == cal.repo_folds
        for name, cv in cal.runs.items():
            key = f"{cal.protocol}/{name}"
            assert (
                records[f"{key}/out_of_fold/balanced_accuracy"]
                == (cv.out_of_fold["balanced_accuracy"])
            )
    assert set(result.composition["protocol"]) == {"mixed", "natural"}


def test_run_one_protocol_and_a_bad_one(demo: Release) -> None:
    options = selective.SelectiveOptions(protocol="natural", resampling=Resampling(n_boot=20))
    result = selective.run(demo, options)
    assert [c.protocol for c in result.calibrations] == ["natural"]
    assert set(result.selective_table["protocol"]) == {"natural"}
    with pytest.raises(ValueError, match="protocol must be one of"):
        selective.protocols_of("balanced")


def test_positive_only_runs_are_left_out_and_named(demo: Release) -> None:
    release = load_release(DEMO, "eval/*/*_details.jsonl")
    result = selective.run(release, FAST)
    assert list(result.runs) == list(demo.runs)
    assert set(result.left_out) == set(release.runs) - set(demo.runs) and result.left_out
    assert any(n.startswith("left out (they rank no no-gold samples): ") for n in result.notes)


def test_no_fold_count_works_is_a_skip_with_the_run_set(demo: Release) -> None:
    result = selective.run(demo, selective.SelectiveOptions(folds=1))
    assert result.skipped is not None
    assert result.skipped.startswith("no repo-grouped fold assignment works: ")
    assert set(result.records()) == {"runs", "strata", "repositories", "skipped"}
    assert result.tables() == ()


def test_no_selective_runs_is_a_skip_and_the_panels_say_so(tmp_path: Path) -> None:
    release = load_release(DEMO, "eval/demo/*_details.jsonl")
    result = selective.run(release, FAST)
    reason = "no selective runs (ranking positives and no-gold samples) under the demo"
    assert result.records() == {"skipped": reason} and result.tables() == ()
    figures = [
        plots.plot_confidence_panels(result.rows)[0].figure,
        plots.plot_risk_coverage_panels(result.risk_coverage)[0].figure,
        plots.plot_fold_threshold_panels(result.fold_thresholds)[0].figure,
        plots.plot_protocol_contrast(result.selective_table).figure,
        plots.plot_auroc(result.separability).figure,
    ]
    for fig in figures:
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
        assert plots.NOTHING in texts
