"""``arbwb report``: run every notebook with papermill in a temporary folder, then move it in.

The report holds executed notebooks, figures, tables, records (each notebook's
key numbers and ``skipped`` reasons), ``manifest.json`` (inputs with SHA-256,
package versions, parameters, seeds) and a static ``index.html`` linking it all.
A failed notebook stops the run, names the notebook and the failing cell's error,
and leaves no report folder behind.
"""

from __future__ import annotations

import ast
import csv
import glob
import html
import io
import json
import platform
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import nbformat

from arbwb.errors import InputError
from arbwb.inputs import DEFAULT_RUNS_GLOB
from arbwb.jsonio import sha256_file, write_json, write_text_atomic
from arbwb.paths import DEMO_DIR, NOTEBOOKS_DIR

PACKAGES = ("arbwb", "polars", "numpy", "scipy", "pandas", "matplotlib", "seaborn", "papermill")
_INLINE_ROWS = 30


class ReportError(RuntimeError):
    """A notebook failed while the report ran; the message names it and the cell's error."""


@dataclass(frozen=True)
class ReportConfig:
    """What a report run needs; paths are resolved to absolute before notebooks see them."""

    data_dir: Path
    out_dir: Path
    runs_glob: str | None = None
    notebooks_dir: Path = NOTEBOOKS_DIR
    seed: int = 0
    kernel_name: str = "python3"
    progress: bool = True


def notebook_paths(folder: Path) -> list[Path]:
    """Notebooks to run: ``NN-name.ipynb`` files sorted by name."""
    found = sorted(p for p in folder.glob("[0-9][0-9]-*.ipynb") if p.is_file())
    if not found:
        raise InputError("no NN-name.ipynb notebooks here", path=folder)
    return found


def run_report(config: ReportConfig) -> Path:
    """Execute every notebook and write the report to ``config.out_dir`` atomically."""
    data_dir = config.data_dir.resolve()
    out_dir = config.out_dir.resolve()
    if not data_dir.is_dir():
        raise InputError("data folder not found; pass an ARB release root", path=data_dir)
    if out_dir.exists() and any(out_dir.iterdir()) and not (out_dir / "manifest.json").is_file():
        msg = "exists and is not an arbwb report (no manifest.json); choose an empty or new folder"
        raise InputError(msg, path=out_dir)
    notebooks = notebook_paths(config.notebooks_dir.resolve())
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.partial-", dir=out_dir.parent))
    try:
        parameters = _parameters(config, data_dir, work)
        for notebook in _progress(notebooks, enabled=config.progress):
            _execute(notebook, work, parameters, config)
        write_json(work / "manifest.json", _manifest(config, data_dir, notebooks, parameters))
        write_text_atomic(work / "index.html", render_index(work, notebooks))
        _swap_into_place(work, out_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out_dir


def _parameters(config: ReportConfig, data_dir: Path, work: Path) -> dict[str, Any]:
    """Notebook parameters; ``out_dir`` points at the temporary folder while running."""
    runs = config.runs_glob or ""
    if runs and not Path(runs).is_absolute():
        runs = str(data_dir / runs)
    return {
        "data_dir": str(data_dir),
        "runs_glob": runs,
        "out_dir": str(work),
        "seed": config.seed,
        "demo": data_dir == DEMO_DIR.resolve(),
    }


def _progress(items: Sequence[Path], *, enabled: bool) -> Iterable[Path]:
    if not enabled:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc="arbwb report", unit="notebook")


def _execute(notebook: Path, work: Path, parameters: dict[str, Any], config: ReportConfig) -> None:
    """Run one notebook with the parameters it declares; a failure raises ReportError."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    declared = declared_parameters(notebook)
    given = {k: v for k, v in parameters.items() if k in declared}
    target = work / "notebooks" / notebook.name
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(
            str(notebook),
            str(target),
            parameters=given,
            cwd=str(notebook.parent),
            kernel_name=config.kernel_name,
            language="python",
            progress_bar=False,
        )
    except PapermillExecutionError as exc:
        msg = f"notebook {notebook.name} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}"
        raise ReportError(msg) from None


def declared_parameters(notebook: Path) -> set[str]:
    """Names assigned in the notebook's cell tagged ``parameters`` (only those are passed)."""
    cells = nbformat.read(notebook, as_version=4).cells  # type: ignore[no-untyped-call]
    names: set[str] = set()
    for cell in cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            for node in ast.parse(cell.source).body:
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else [node.target]
                    if isinstance(node, ast.AnnAssign)
                    else []
                )
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _inputs(data_dir: Path, runs_glob: str | None) -> list[dict[str, str]]:
    """Every sample, run and corpus file the notebooks can read, with its SHA-256."""
    patterns = ["benchmark/**/*", "corpus/**/*", runs_glob or DEFAULT_RUNS_GLOB]
    files: set[Path] = set()
    for pattern in patterns:
        full = pattern if Path(pattern).is_absolute() else str(data_dir / pattern)
        files.update(Path(p) for p in glob.glob(full, recursive=True) if Path(p).is_file())
    return [{"path": str(p), "sha256": sha256_file(p)} for p in sorted(files)]


def _manifest(
    config: ReportConfig, data_dir: Path, notebooks: list[Path], parameters: dict[str, Any]
) -> dict[str, Any]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "generated_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "data_dir": str(data_dir),
        "runs_glob": config.runs_glob or DEFAULT_RUNS_GLOB,
        "inputs": _inputs(data_dir, parameters["runs_glob"] or None),
        "notebooks": [p.name for p in notebooks],
        "parameters": {k: v for k, v in parameters.items() if k != "out_dir"},
        "seeds": {"seed": config.seed},
        "kernel": config.kernel_name,
        "python": platform.python_version(),
        "packages": versions,
    }


def _swap_into_place(work: Path, out_dir: Path) -> None:
    """Replace ``out_dir`` (an older report or nothing) by the finished ``work`` folder."""
    if out_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
        out_dir.rename(old / "report")
        work.rename(out_dir)
        shutil.rmtree(old, ignore_errors=True)
    else:
        work.rename(out_dir)


def _question(notebook: Path) -> str:
    """First non-heading line of the notebook's first markdown cell (its question)."""
    cells = nbformat.read(notebook, as_version=4).cells  # type: ignore[no-untyped-call]
    text = cells[0].source if cells and cells[0].cell_type == "markdown" else ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    body = [line for line in lines if not line.startswith("#")]
    return (body or lines or [""])[0].replace("**", "")


def _csv_html(path: Path) -> str:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    if not rows or len(rows) > _INLINE_ROWS + 1:
        return ""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows[1:]
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _records_html(record: dict[str, Any]) -> str:
    items = []
    for key, value in record.items():
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
        if len(text) > 400:
            text = text[:400] + " …"
        items.append(
            f"<tr><th>{html.escape(key)}</th><td><code>{html.escape(text)}</code></td></tr>"
        )
    return "<table>" + "".join(items) + "</table>"


def render_index(report: Path, notebooks: Sequence[Path]) -> str:
    """Static HTML index: each notebook's question, link, skips, records, figures and tables."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>arbwb report</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
        "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}"
        "img{max-width:100%}.skipped{color:#a40}</style></head><body>",
        "<h1>arbwb report</h1><p><a href='manifest.json'>manifest.json</a> "
        "(inputs with SHA-256, package versions, parameters, seeds)</p>",
    ]
    for notebook in notebooks:
        stem = notebook.stem
        record_path = report / "records" / f"{stem}.json"
        record = (
            json.loads(record_path.read_text(encoding="utf-8")) if record_path.is_file() else {}
        )
        parts.append(f"<h2>{html.escape(stem)}</h2><p>{html.escape(_question(notebook))}</p>")
        parts.append(
            f"<p><a href='notebooks/{html.escape(notebook.name)}'>executed notebook</a></p>"
        )
        if "skipped" in record:
            parts.append(f"<p class='skipped'>Skipped: {html.escape(str(record['skipped']))}</p>")
        parts.extend(
            f"<p class='skipped'>Note: {html.escape(str(note))}</p>"
            for note in record.get("notes", [])
        )
        if record:
            parts.append("<h3>Recorded numbers</h3>" + _records_html(record))
        for png in sorted((report / "figures").glob(f"{stem}__*.png")):
            svg, name = html.escape(png.with_suffix(".svg").name), html.escape(png.name)
            caption = html.escape(png.stem)
            parts.append(
                f"<figure><a href='figures/{svg}'><img src='figures/{name}' alt='{caption}'></a>"
                f"<figcaption>{caption}</figcaption></figure>"
            )
        for table in sorted((report / "tables").glob(f"{stem}__*.csv")):
            links = " ".join(
                f"<a href='tables/{html.escape(f.name)}'>{f.suffix[1:]}</a>"
                for f in sorted(table.parent.glob(f"{table.stem}.*"))
            )
            parts.append(f"<h4>{html.escape(table.stem)} ({links})</h4>{_csv_html(table)}")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
