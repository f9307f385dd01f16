"""What a notebook leaves behind: figures, tables and key numbers under one output folder.

Notebooks create one :class:`Recorder` and hand it every figure, table and
headline number, so file names are stable and tests can read the numbers back
after a papermill run.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
import polars as pl
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from arbwb.jsonio import atomic_open, write_json, write_text_atomic
from arbwb.tables import to_latex, to_markdown

if TYPE_CHECKING:
    from arbwb.analysis.result import Result

DPI = 150  # saved figures' resolution; the inline copy is the PNG shown at the figure's size


@dataclass(frozen=True)
class Recorder:
    """Saves a notebook's outputs as ``<out_dir>/{figures,tables,records}/<stem>__<name>.*``."""

    out_dir: Path
    stem: str  # the notebook's file stem, e.g. "05-budget-curves"

    @classmethod
    def create(cls, out_dir: str | Path, stem: str) -> Recorder:
        """A recorder writing below ``out_dir`` for the notebook ``stem``."""
        return cls(Path(out_dir), stem)

    @property
    def record_path(self) -> Path:
        """JSON file holding this notebook's recorded key numbers."""
        return self.out_dir / "records" / f"{self.stem}.json"

    def figure(self, fig: Figure, name: str) -> None:
        """Save ``fig`` as PNG and SVG as ``figures/<stem>__<name>.{png,svg}``.

        Inside a Jupyter kernel (JupyterLab, papermill) the saved PNG is also shown inline (at
        the figure's own size, so it is not drawn a third time) and the figure closed, so it
        appears once in the notebook and in its HTML rendering. Nothing is returned, so a
        notebook cell ending in this call shows the figure, not file paths.
        """
        png = b""
        box = _tight_box(fig)  # laid out once for both files ("tight" lays out per file)
        for ext in ("png", "svg"):
            buffer = io.BytesIO()
            with mpl.rc_context({"svg.hashsalt": self.stem}):
                fig.savefig(buffer, format=ext, dpi=DPI, bbox_inches=box, metadata=_fig_meta(ext))
            png = png or buffer.getvalue()
            with atomic_open(self.out_dir / "figures" / f"{self.stem}__{name}.{ext}", "wb") as f:
                f.write(buffer.getvalue())
        if _in_kernel():
            _show_and_close(fig, png)

    def table(
        self, frame: pl.DataFrame, name: str, *, decimals: int = 4, latex: bool = True
    ) -> None:
        """Save ``frame`` as ``tables/<stem>__<name>.{csv,md,tex}``: CSV at full precision,
        Markdown and LaTeX with ``decimals`` places; ``latex=False`` leaves out the TeX."""
        base = self.out_dir / "tables" / f"{self.stem}__{name}"
        write_text_atomic(base.with_suffix(".csv"), frame.write_csv())
        write_text_atomic(base.with_suffix(".md"), to_markdown(frame, decimals=decimals))
        if latex:
            write_text_atomic(base.with_suffix(".tex"), to_latex(frame, decimals=decimals))

    def record(self, key: str, value: Any) -> None:
        """Store one JSON-serialisable key number, merged into the notebook's record file."""
        self._merge_records({key: value})

    def record_all(self, result: Result) -> None:
        """Write every table of an analysis result, then its key numbers in one record update."""
        for table in result.tables():
            self.table(table.frame, table.name, latex=table.latex)
        self._merge_records(result.records())

    def _merge_records(self, values: Mapping[str, Any]) -> None:
        """Read the record file (if any), update it with ``values``, write it back atomically."""
        path = self.record_path
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        data.update(values)
        write_json(path, data)


def _in_kernel() -> bool:
    """True inside a Jupyter kernel; a terminal IPython or plain Python shows nothing."""
    if "IPython" not in sys.modules:  # never import IPython just to find out
        return False
    from IPython import get_ipython

    return hasattr(get_ipython(), "kernel")


def _tight_box(fig: Figure) -> Bbox | str:
    """What ``bbox_inches="tight"`` crops a figure saved at :data:`DPI` to (inches, padded);
    "tight" itself for a figure with a layout engine, which lays it out again on every save."""
    if fig.get_layout_engine() is not None:
        return "tight"
    shown_dpi = fig.dpi
    fig.set_dpi(DPI)
    try:
        fig.draw_without_rendering()
        return fig.get_tightbbox().padded(mpl.rcParams["savefig.pad_inches"])
    finally:
        fig.set_dpi(shown_dpi)


def _show_and_close(fig: Figure, png: bytes) -> None:
    """Display ``png`` (``fig`` saved at :data:`DPI`) as a cell output at the size the inline
    backend would give ``fig``, then close ``fig`` so the backend does not show it again."""
    import matplotlib.pyplot as plt
    from IPython.display import Image, display

    width = int.from_bytes(png[16:20], "big")  # the PNG header's width in pixels
    size = round(width * fig.dpi / DPI)
    shown = Image(data=png, format="png", width=size)  # type: ignore[no-untyped-call]
    display(shown)  # type: ignore[no-untyped-call]
    plt.close(fig)


def _fig_meta(ext: str) -> dict[str, Any]:
    """Metadata that keeps figure files deterministic (no creation dates)."""
    if ext == "svg":
        return {"Date": None}
    return {"Software": None}
