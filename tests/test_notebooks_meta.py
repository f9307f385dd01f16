"""Every notebook: one question first, a typed `parameters` cell, no def/class, no outputs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
PARAM_LINE = re.compile(r"^[a-z_][a-z0-9_]*: [A-Za-z_][\w\[\], |]* = .+  # \S.*$")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_conventions(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and "?" in first.source, "first cell must ask a question"
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged `parameters`"
    lines = [line for line in tagged[0].source.splitlines() if line.strip()]
    bad = [line for line in lines if not PARAM_LINE.match(line)]
    assert not bad, f"parameters need `name: type = default  # comment`, got {bad}"
    names = {line.split(":", 1)[0] for line in lines}
    assert {"data_dir", "out_dir"} <= names
    assert any(line.startswith('data_dir: str = "../data/demo"') for line in lines)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        assert cell.get("outputs") == [], f"{path.name}: committed with outputs"
        assert cell.get("execution_count") is None, f"{path.name}: has execution counts"
        tree = ast.parse(cell.source)
        defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)]
        assert not defs, f"{path.name}: notebooks hold no def/class"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_papermill_sees_every_parameter(path: Path) -> None:
    """papermill (so ``arbwb report``) can only pass parameters whose line it parses."""
    import papermill

    nb = nbformat.read(path, as_version=4)
    tagged = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assigned = {t.target.id for t in ast.parse(tagged.source).body if isinstance(t, ast.AnnAssign)}
    assert set(papermill.inspect_notebook(str(path))) == assigned


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS, "notebooks/ holds no notebooks"
