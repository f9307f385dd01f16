"""One visual grammar: every figure of the report, drawn from the demo's analysis results, gives a
run the same colour (``style.color``) and lists tasks in the paper's order."""

from __future__ import annotations

import re
from collections.abc import Iterator

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import Collection, LineCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from arbwb.analysis import (
    budget,
    contextbench,
    depth,
    granularity,
    leaderboard,
    overview,
    selective,
    taxonomy,
)
from arbwb.analysis.result import Resampling
from arbwb.io import method_table as mt
from arbwb.io.release import load_release
from arbwb.paths import DEMO_DIR
from arbwb.plots import budget as budget_plots
from arbwb.plots import contextbench as cb_plots
from arbwb.plots import depth as depth_plots
from arbwb.plots import granularity as gran_plots
from arbwb.plots import leaderboard as lb_plots
from arbwb.plots import methods as method_plots
from arbwb.plots import overview as overview_plots
from arbwb.plots import selective as sel_plots
from arbwb.plots import taxonomy as tax_plots
from arbwb.plots.style import TASK_ORDER, color, method_key, task_order

#: Few resamples: colours and orders do not depend on them, and the test stays quick.
FAST = Resampling(n_boot=20, n_perm=50, seed=0)
TASKS = {"overall", *TASK_ORDER}


def _figures() -> Iterator[tuple[str, Figure]]:
    """Every figure the report's notebooks draw from the demo release."""
    release = load_release(DEMO_DIR)
    data_dir = str(DEMO_DIR)
    result = overview.run(release, overview.OverviewOptions())
    yield "composition", overview_plots.composition_bars(result.repos, demo=True).figure
    board = leaderboard.run(
        release, leaderboard.LeaderboardOptions(methods=mt.read_methods(None), resampling=FAST)
    )
    runs = board.run_level
    for group in runs.groups:
        yield "task_bars", lb_plots.task_bars(runs.board, group=group, demo=True).figure
        heat = lb_plots.run_task_heatmap(runs.board, group=group, metric="recall@5", demo=True)
        yield "heatmap", heat.figure
        order = runs.order(group, "mrr")
        sig = lb_plots.significance_matrix(runs.tests, group=group, order=order, demo=True)
        yield "significance", sig.figure
    methods, family = board.method_level.board, board.methods.families
    for group in board.method_level.groups:
        yield "methods_mrr", method_plots.method_bars(methods, family, group=group).figure
        if board.method_level.has_metric(group, "bcy@8000"):
            yield "methods_bcy", method_plots.bcy_by_budget(methods, family, group=group).figure
    tax = taxonomy.run(release, taxonomy.TaxonomyOptions(resampling=FAST, data_dir=data_dir))
    yield "label_distribution", tax_plots.label_distribution(tax.labelled, demo=True).figure
    yield "confidence_mix", tax_plots.confidence_mix(tax.labelled, demo=True).figure
    if tax.slices:
        for group in tax.slices.groups:
            views = tax_plots.slice_interval_views(tax.slices.scores, group=group)
            yield "slice_intervals", views[0].figure
    gran = granularity.run(
        release, granularity.GranularityOptions(resampling=FAST, data_dir=data_dir)
    )
    sizes, density = gran.analysis.sizes, gran.analysis.density
    both = gran_plots.sizes_and_density(sizes, density, tasks=gran.tasks)
    yield "sizes_and_density", both[0].figure
    rows, intervals = gran.report["method_sensitivity"], gran.report["arbwb"]["intervals"]
    yield "file_vs_line", gran_plots.plot_file_vs_line(rows, intervals=intervals).figure
    yield "span_yield", gran_plots.plot_span_yield(gran.line_packing).figure
    sel_release = load_release(DEMO_DIR, selective.RUNS_GLOB)
    sel = selective.run(sel_release, selective.SelectiveOptions(resampling=FAST))
    yield "confidence_by_stratum", sel_plots.plot_confidence_panels(sel.rows)[0].figure
    yield "risk_coverage", sel_plots.plot_risk_coverage_panels(sel.risk_coverage)[0].figure
    yield "fold_thresholds", sel_plots.plot_fold_threshold_panels(sel.fold_thresholds)[0].figure
    yield "protocol_contrast", sel_plots.plot_protocol_contrast(sel.selective_table).figure
    yield "auroc", sel_plots.plot_auroc(sel.separability).figure
    curves = budget.run(release, budget.BudgetOptions(resampling=FAST)).curves
    yield "bcy_by_task", budget_plots.plot_bcy_grid(curves, demo=True)[0].figure
    cb = contextbench.run(release, contextbench.ContextBenchOptions(data_dir, resampling=FAST))
    if cb.composition is not None:
        yield "cb_composition", cb_plots.composition(cb.composition.rows.instances).figure
    if cb.agents is not None:
        yield "cb_granularity", cb_plots.granularity_bars(cb.agents.board)[0].figure
        for level in ("file", "line"):
            curve = None if cb.ranked is None else cb.ranked.curve(level)
            pr = cb_plots.recall_precision(cb.agents.macro, level=level, ranked=curve)
            yield "recall_precision", pr.figure
        if cb.agents.multi_step.height:
            steps = cb_plots.coverage_by_step(cb.agents.multi_step, level="line")
            yield "coverage_by_step", steps.figure
    if cb.side is not None:
        yield "arb_beside_contextbench", cb_plots.file_level_bars(cb.side.scores).figure
    ranks = depth.run(release, depth.DepthOptions())
    for group, part in ranks.groups.items():
        tasks = part.report.coverage["task"].to_list()
        per = part.report.per
        cdf = depth_plots.plot_first_gold_cdf_grid(per, tasks=tasks, title=group)
        yield "first_gold_cdf", cdf[0].figure
        dist = part.report.distribution
        yield "coverage", depth_plots.plot_coverage_distribution(dist).figure


def _handle_colour(handle: object) -> tuple[float, float, float] | None:
    """The colour a legend handle shows (line, error bar, patch face or marker face)."""
    if isinstance(handle, LineCollection) and len(handle.get_edgecolor()):
        return to_rgb(tuple(handle.get_edgecolor()[0]))
    if isinstance(handle, Line2D):
        return to_rgb(handle.get_color())
    if isinstance(handle, Patch):
        return to_rgb(handle.get_facecolor())
    if isinstance(handle, Collection) and len(handle.get_facecolor()):
        return to_rgb(tuple(handle.get_facecolor()[0]))
    return None


def _legends(fig: Figure) -> Iterator[Legend]:
    yield from fig.legends
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None:
            yield legend


def _base(label: str) -> str:
    """A label without its annotations: ``grep (files)`` -> ``grep``, ``x\\n(n=3)`` -> ``x``."""
    return re.split(r"\s*\(|\n", label, maxsplit=1)[0].strip()


def _run_colours(fig: Figure, runs: set[str]) -> Iterator[tuple[str, tuple[float, ...]]]:
    """(run, colour) for every legend entry naming a run, and for bars labelled by run ticks."""
    for legend in _legends(fig):
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            name, shade = _base(text.get_text()), _handle_colour(handle)
            if name in runs and shade is not None:
                yield name, shade
    for ax in fig.axes:
        yield from _bar_colours(ax, runs)


def _bar_colours(ax: Axes, runs: set[str]) -> Iterator[tuple[str, tuple[float, ...]]]:
    """A horizontal bar chart with one bar per run tick (method bars): each bar's colour."""
    ticks = [_base(t.get_text()) for t in ax.get_yticklabels()]
    bars = [p for p in ax.patches if isinstance(p, Patch)]
    if ticks and len(bars) == len(ticks) and all(t in runs for t in ticks):
        for tick, bar in zip(ticks, bars, strict=True):
            yield tick, to_rgb(bar.get_facecolor())


def _task_lists(fig: Figure) -> Iterator[list[str]]:
    """Each list of tasks a figure shows: tick labels, legend entries, panel titles."""
    for ax in fig.axes:
        yield [_base(t.get_text()) for t in ax.get_xticklabels()]
        yield [_base(t.get_text()) for t in ax.get_yticklabels()]
    for legend in _legends(fig):
        yield [_base(t.get_text()) for t in legend.get_texts()]
    yield [_base(ax.get_title()) for ax in fig.axes if ax.get_visible()]


@pytest.fixture(scope="module")
def figures() -> Iterator[list[tuple[str, Figure]]]:
    yield list(_figures())
    plt.close("all")


def test_a_run_has_one_colour_in_every_figure(figures: list[tuple[str, Figure]]) -> None:
    release = load_release(DEMO_DIR)
    runs = set(release.runs) | set(load_release(DEMO_DIR, selective.RUNS_GLOB).runs)
    seen: dict[str, set[tuple[float, ...]]] = {}
    checked: set[str] = set()
    for name, fig in figures:
        for run, shade in _run_colours(fig, runs):
            want = tuple(round(v, 3) for v in color(run))
            got = tuple(round(v, 3) for v in shade)
            assert got == want, f"{name}: {run} drawn {got}, style.color gives {want}"
            seen.setdefault(method_key(run), set()).add(got)
            checked.add(name)
    assert all(len(shades) == 1 for shades in seen.values()), seen
    expected = {"task_bars", "methods_mrr", "methods_bcy", "span_yield", "bcy_by_task"}
    expected |= {"first_gold_cdf", "risk_coverage", "file_vs_line"}
    assert expected <= checked, f"figures without a run legend: {expected - checked}"


def test_every_task_list_is_in_the_paper_order(figures: list[tuple[str, Figure]]) -> None:
    for name, fig in figures:
        for labels in _task_lists(fig):
            tasks = [t for t in labels if t in TASKS]
            assert tasks == task_order(tasks), f"{name}: tasks listed as {tasks}"
