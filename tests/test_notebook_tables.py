"""Every frame a notebook shows is an HTML table: none hidden in an if, none printed as text."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import polars as pl
import pytest

from arbwb.paths import NOTEBOOKS_DIR
from arbwb.tables import show

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]-*.ipynb"))

SHOWS = re.compile(r"(?<![\w.])show\(")


@pytest.fixture(scope="module")
def executed(demo_report: Path) -> list[Path]:
    """Every notebook executed once by ``arbwb report`` on the full demo."""
    return sorted((demo_report / "notebooks").glob("*.ipynb"))


def _html(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)


def _hidden(source: str) -> list[str]:
    """Bare expressions Jupyter never displays: any but a call, except a cell's last line."""
    tree = ast.parse(source)
    last = tree.body[-1] if tree.body else None
    return [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and node is not last
        and not isinstance(node.value, ast.Call | ast.Constant)
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_frame_is_a_silent_expression(path: Path) -> None:
    """A frame left as the last line inside ``if``/``for`` is never shown; call show() instead."""
    nb = nbformat.read(path, as_version=4)
    hidden = [e for c in nb.cells if c.cell_type == "code" for e in _hidden(c.source)]
    assert not hidden, hidden


@pytest.mark.slow
def test_every_cell_that_shows_a_frame_has_an_html_table(executed: list[Path]) -> None:
    assert len(executed) == len(NOTEBOOKS)
    missing = [
        f"{path.stem}: {cell.source.splitlines()[0]}"
        for path in executed
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "code" and SHOWS.search(cell.source) and "<table" not in _html(cell)
    ]
    assert not missing, missing


@pytest.mark.slow
def test_no_output_is_a_polars_text_repr(executed: list[Path]) -> None:
    texts = [
        (path.stem, o.get("text", "") + o.get("data", {}).get("text/plain", ""))
        for path in executed
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "code"
        for o in cell.outputs
        if "text/html" not in o.get("data", {})
    ]
    printed = [
        stem for stem, text in texts if any(x.startswith("shape: (") for x in text.splitlines())
    ]
    assert not printed, printed


def test_show_rounds_floats_and_keeps_every_column(capsys: pytest.CaptureFixture[str]) -> None:
    from IPython.core.formatters import DisplayFormatter
    from IPython.core.interactiveshell import InteractiveShell

    shown: list[dict[str, str]] = []
    shell = InteractiveShell.instance()
    shell.display_pub.publish = lambda data, **_: shown.append(data)  # type: ignore[method-assign]
    assert isinstance(shell.display_formatter, DisplayFormatter)
    wide = pl.DataFrame({f"column_{i}": [1 / 3] for i in range(40)})
    show(wide, decimals=2)
    html = shown[-1]["text/html"]
    assert all(f"column_{i}<" in html for i in range(40)) and "…" not in html
    assert "0.33<" in html and "0.333" not in html
    assert pl.Config.state(if_set=True).get("POLARS_FMT_MAX_COLS") is None


@pytest.mark.slow
def test_no_output_names_the_temporary_report_folder(executed: list[Path]) -> None:
    leaked = [
        path.stem
        for path in executed
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "code"
        for o in cell.outputs
        if ".partial-" in o.get("text", "") + o.get("data", {}).get("text/plain", "")
    ]
    assert not leaked, leaked
