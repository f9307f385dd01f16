"""What every figure shares: new axes when none is given, the demo-data label in titles, and
one colour per run name (so a run keeps its colour across the panels and figures of a report)."""

from __future__ import annotations

from collections.abc import Iterable

import matplotlib.pyplot as plt
import seaborn as sns
from matplotlib.axes import Axes

Color = tuple[float, float, float]


def new_axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    """``ax``, or the axes of a new figure of ``size`` inches."""
    if ax is not None:
        return ax
    _, new = plt.subplots(figsize=size)
    return new


def demo_title(text: str, *, demo: bool) -> str:
    """``text``, marked " — demo data" when the figure is fed by the embedded demo release."""
    return f"{text} — demo data" if demo else text


def run_colors(names: Iterable[str]) -> dict[str, Color]:
    """Colour-blind-safe colours keyed by name in sorted order, the same for any subset order."""
    ordered = sorted(set(names))
    return dict(zip(ordered, sns.color_palette("colorblind", len(ordered)), strict=True))
