"""Shared figure style: a run keeps its colour whatever subset or order a panel shows."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # tests draw off-screen; notebooks keep the inline backend

import itertools

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest

from arbwb.plots.selective import NOTHING, plot_risk_coverage_panels
from arbwb.plots.style import (
    KNOWN_METHODS,
    color,
    demo_title,
    method_key,
    new_axes,
    new_panels,
    run_colors,
    task_order,
)


def test_run_colors_depend_on_names_not_order() -> None:
    everything = run_colors(["lexical", "bm25", "grep", "repomap"])
    assert run_colors(["repomap", "bm25", "grep", "lexical"]) == everything
    assert len(set(everything.values())) == 4
    assert everything["bm25"] == run_colors(["grep", "bm25", "lexical", "repomap"])["bm25"]


def test_demo_title_and_new_axes() -> None:
    assert demo_title("MRR by task", demo=True) == "MRR by task — demo data"
    assert demo_title("MRR by task", demo=False) == "MRR by task"
    assert demo_title("MRR by task — demo", demo=True) == "MRR by task — demo data"
    ax = new_axes(None, (3.0, 2.0))
    assert new_axes(ax, (9.0, 9.0)) is ax
    assert tuple(ax.figure.get_size_inches()) == (3.0, 2.0)


def test_a_method_has_one_colour_whatever_the_figure_or_spelling() -> None:
    assert color("lexical") == color("v1_1/lexical") == color("demo_all_files_selective_lexical")
    assert color("lexical_all_files") == color("Lexical") == color("lexical")
    assert method_key("demo_all_files_selective_bm25-arb") == "bm25-arb"
    known = {color(name) for name in KNOWN_METHODS}
    assert len(known) == len(KNOWN_METHODS)  # no two known methods share a colour
    assert color("my_new_method") == color("my_new_method")  # unknown: stable, not in order
    assert color("my_new_method") not in known


def _lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    """sRGB (0-1) to CIELAB under D65."""
    linear = np.array([c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb])
    to_xyz = np.array(
        [[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]
    )
    xyz = to_xyz @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def _delta_e2000(one: tuple[float, float, float], two: tuple[float, float, float]) -> float:
    """CIEDE2000 colour difference of two CIELAB colours (Sharma, Wu & Dalal 2005)."""
    (l1, a1, b1), (l2, a2, b2) = one, two
    c_bar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar**7 / (c_bar**7 + 25**7)))
    c1, c2 = np.hypot((1 + g) * a1, b1), np.hypot((1 + g) * a2, b2)
    h1 = np.degrees(np.arctan2(b1, (1 + g) * a1)) % 360
    h2 = np.degrees(np.arctan2(b2, (1 + g) * a2)) % 360
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    big_dh = 2 * np.sqrt(c1 * c2) * np.sin(np.radians(dh / 2))
    wrap = 0 if abs(h1 - h2) <= 180 else (360 if h1 + h2 < 360 else -360)
    h_bar = h1 + h2 if c1 * c2 == 0 else (h1 + h2 + wrap) / 2
    t = (
        1
        - 0.17 * np.cos(np.radians(h_bar - 30))
        + 0.24 * np.cos(np.radians(2 * h_bar))
        + 0.32 * np.cos(np.radians(3 * h_bar + 6))
        - 0.20 * np.cos(np.radians(4 * h_bar - 63))
    )
    l_bar, c_mean = (l1 + l2) / 2, (c1 + c2) / 2
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / np.sqrt(20 + (l_bar - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_mean, 1 + 0.015 * c_mean * t
    r_t = (
        -np.sin(np.radians(60 * np.exp(-(((h_bar - 275) / 25) ** 2))))
        * 2
        * np.sqrt(c_mean**7 / (c_mean**7 + 25**7))
    )
    dl, dc, dhh = (l2 - l1) / s_l, (c2 - c1) / s_c, big_dh / s_h
    return float(np.sqrt(dl**2 + dc**2 + dhh**2 + r_t * dc * dhh))


def test_delta_e2000_matches_the_published_test_pairs() -> None:
    """Pairs 1, 7 and 17 of Sharma, Wu & Dalal's CIEDE2000 test data."""
    assert _delta_e2000((50, 2.6772, -79.7751), (50, 0, -82.7485)) == pytest.approx(2.0425, 1e-4)
    assert _delta_e2000((50, 0, 0), (50, -1, 2)) == pytest.approx(2.3669, 1e-4)
    assert _delta_e2000((50, 2.5, 0), (73, 25, -18)) == pytest.approx(27.1492, 1e-4)


def test_no_two_fixed_method_colours_are_hard_to_tell_apart() -> None:
    """Every pair of fixed method colours differs by at least 20 CIEDE2000 units (grep and
    repomap were two close pinks at 14.6)."""
    labs = {name: _lab(color(name)) for name in KNOWN_METHODS}
    closest = min(
        (_delta_e2000(labs[a], labs[b]), a, b) for a, b in itertools.combinations(labs, 2)
    )
    assert closest[0] >= 20, closest


def test_panels_are_the_given_axes_or_a_new_grid() -> None:
    fig, given = plt.subplots(2, 1)
    assert new_panels(given, 2, size=(1.0, 1.0)) == list(given)
    with pytest.raises(ValueError, match="draws 3 panel"):
        new_panels(given, 3, size=(1.0, 1.0))
    made = new_panels(None, 5, size=(2.0, 1.5), ncols=3)
    grid = made[0].figure
    assert len(made) == 5 and tuple(grid.get_size_inches()) == (6.0, 3.0)
    assert [ax.get_visible() for ax in grid.axes] == [True] * 5 + [False]
    panels = plot_risk_coverage_panels(pl.DataFrame(), axes=given)  # draws into the given axes
    assert panels == list(given) and len(fig.axes) == 2
    assert all(NOTHING in [t.get_text() for t in ax.texts] for ax in given)
    plt.close("all")


def test_tasks_in_the_papers_order() -> None:
    tasks = ["edit2ripple", "zeta", "code2test", "overall", "abstention", "trace2code"]
    assert task_order(tasks) == [
        "overall", "code2test", "trace2code", "edit2ripple", "abstention", "zeta"
    ]  # fmt: skip
