"""``arbwb report``: run every notebook with papermill in a temporary folder, then move it in.

The report holds executed notebooks (``.ipynb`` and ``.html``), figures, tables, records
(each notebook's key numbers and ``skipped`` reasons), ``manifest.json`` (inputs with SHA-256,
package versions, parameters, seeds, each notebook's status: ok, failed, or skipped when it
recorded a ``skipped`` reason) and a static ``index.html`` linking it all with relative
paths. A failing notebook costs only its own section: the others still run, the index names
the failing cell and its error, and the caller learns of it from :attr:`ReportResult.failed`.
Inputs that match nothing (an empty root, a runs glob without a match) fail before any runs.
"""

from __future__ import annotations

import os
import platform
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import TYPE_CHECKING, Any

from arbwb import cache
from arbwb.errors import InputError
from arbwb.io.release import DEFAULT_RUNS_GLOB, glob_files
from arbwb.jsonio import new_file_mode, read_json, write_json, write_text_atomic
from arbwb.paths import DEMO_DIR, DOCS_DIR, NOTEBOOKS_DIR
from arbwb.report.html import Section, render_docs, render_index, render_notebook
from arbwb.report.prepare import warm_cache

if TYPE_CHECKING:
    from arbwb.report.kernel import KeptKernel

#: The report's folder of runs ``arbwb report --method`` ranked (kept when the report is rebuilt).
RUNS_DIR = "runs"
SAMPLES_GLOB = "benchmark/*/*.jsonl"  # what load_release reads as sample files
CONTEXTBENCH_ROWS = "contextbench/rows.parquet"  # notebook 07's default rows
PACKAGES = (
    "arbwb", "polars", "numpy", "scipy", "pandas", "matplotlib", "seaborn", "papermill", "nbconvert"
)  # fmt: skip


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
    methods: Path | None = None  # method table CSV (notebook parameter methods_path)
    #: run files or globs (relative to data_dir) added to the run set (parameter extra_runs)
    extra_runs: tuple[str, ...] = ()
    jobs: int | None = None  # kernels running notebooks at once; None: the usable CPUs


@dataclass(frozen=True)
class ReportResult:
    """Where the report was written and how each notebook fared."""

    out_dir: Path
    sections: list[Section]

    @property
    def failed(self) -> list[Section]:
        """Sections whose notebook raised; the report holds everything they wrote before."""
        return [s for s in self.sections if s.status == "failed"]


def notebook_paths(folder: Path) -> list[Path]:
    """Notebooks to run: ``NN-name.ipynb`` files sorted by name."""
    found = sorted(p for p in folder.glob("[0-9][0-9]-*.ipynb") if p.is_file())
    if not found:
        raise InputError("no NN-name.ipynb notebooks here", path=folder)
    return found


def run_report(config: ReportConfig) -> ReportResult:
    """Execute every notebook and write the report to ``config.out_dir`` atomically.

    A notebook that raises is recorded as a failed section and the run goes on; the report
    folder is swapped into place either way.
    """
    data_dir = config.data_dir.resolve()
    out_dir = config.out_dir.resolve()
    if not data_dir.is_dir():
        raise InputError("data folder not found; pass an ARB release root", path=data_dir)
    _check_found(data_dir, config.runs_glob, config.extra_runs)
    check_report_folder(out_dir)
    notebooks = notebook_paths(config.notebooks_dir.resolve())
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.partial-", dir=out_dir.parent))
    try:
        work.chmod(new_file_mode(folder=True))  # mkdtemp makes it 0700; it becomes the report
        parameters = _parameters(config, data_dir, work)
        sections = _execute_all(notebooks, work, parameters, config)
        if DOCS_DIR.is_dir():  # the rules the notebooks link to, readable offline
            render_docs(DOCS_DIR, work / "docs")
        manifest = _manifest(config, data_dir, parameters, sections)
        write_json(work / "manifest.json", manifest)
        header = {"generated": manifest["generated_at"], "data": str(data_dir)}
        write_text_atomic(
            work / "index.html", render_index(work, notebooks, sections, header=header)
        )
        if (out_dir / RUNS_DIR).is_dir():  # runs ranked for this report stay with it
            shutil.copytree(out_dir / RUNS_DIR, work / RUNS_DIR)
        _swap_into_place(work, out_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ReportResult(out_dir, sections)


def check_report_folder(out_dir: Path) -> None:
    """Refuse to replace a folder that is not an arbwb report (only its ``runs/`` may exist)."""
    held = {p.name for p in out_dir.iterdir()} - {RUNS_DIR} if out_dir.exists() else set()
    if held and not (out_dir / "manifest.json").is_file():
        msg = "exists and is not an arbwb report (no manifest.json); choose an empty or new folder"
        raise InputError(msg, path=out_dir)


def _check_found(data_dir: Path, runs_glob: str | None, extra_runs: Sequence[str] = ()) -> None:
    """Refuse a report that would find nothing, before any notebook runs.

    Every ``--runs`` pattern and an ``--only-runs`` glob must match a file; without the latter
    the root must hold samples, stored runs or ContextBench rows (a report of nine skipped
    sections would read as a success).
    """
    for flag, pattern in [("--runs", p) for p in extra_runs] + [("--only-runs", runs_glob)]:
        if pattern and not glob_files(data_dir, pattern, recursive=True):
            msg = f"{flag} {pattern!r} matched no file under {data_dir} (relative to --data)"
            raise InputError(msg)
    if runs_glob:
        return
    kinds = {
        SAMPLES_GLOB: "samples",
        DEFAULT_RUNS_GLOB: "runs",
        CONTEXTBENCH_ROWS: "ContextBench rows",
    }
    if not any(glob_files(data_dir, pattern, recursive=True) for pattern in kinds):
        wanted = [f"{kind} ({pattern})" for pattern, kind in kinds.items()]
        msg = f"found no {', '.join(wanted[:-1])} or {wanted[-1]}; pass an ARB release root"
        raise InputError(msg, path=data_dir)


def _parameters(config: ReportConfig, data_dir: Path, work: Path) -> dict[str, Any]:
    """Notebook parameters; ``out_dir`` points at the temporary folder while running.

    ``methods_path`` "" lets a notebook use arbwb's own method table (``data/methods.csv``).
    """
    if config.methods is not None and not config.methods.is_file():
        raise InputError("method table not found; pass a CSV file", path=config.methods)
    runs = config.runs_glob or ""
    if runs and not Path(runs).is_absolute():
        runs = str(data_dir / runs)
    return {
        "data_dir": str(data_dir),
        "runs_glob": runs,
        "extra_runs": list(config.extra_runs),
        "out_dir": str(work),
        "seed": config.seed,
        "demo": data_dir == DEMO_DIR.resolve(),
        "methods_path": "" if config.methods is None else str(config.methods.resolve()),
    }


def _jobs(config: ReportConfig, count: int) -> int:
    """Kernels: ``config.jobs``, else the CPUs this process may use (every CPU where the
    system cannot say: ``sched_getaffinity`` is Linux-only); at most ``count``."""
    affinity = getattr(os, "sched_getaffinity", None)
    usable = config.jobs or (len(affinity(0)) if affinity else os.cpu_count() or 1)
    return max(1, min(usable, count))


def _execute_all(
    notebooks: Sequence[Path], work: Path, parameters: dict[str, Any], config: ReportConfig
) -> list[Section]:
    """Every notebook executed on ``_jobs`` kernels, each kept for the whole run and driven by one
    thread of this process (the kernels do the work), which takes the next waiting notebook when
    its last is done; one more thread renders each executed notebook's HTML page meanwhile, so no
    kernel waits for a page. Sections come back in notebook order whatever order
    they finish in, and each notebook writes only its own files, so any ``--jobs`` gives the
    same report."""
    from arbwb.report.kernel import KeptKernel

    jobs = _jobs(config, len(notebooks))
    waiting: SimpleQueue[Path | None] = SimpleQueue()
    done: SimpleQueue[Path | None] = SimpleQueue()  # finished notebooks; None: a thread stopped
    sections: dict[Path, Section] = {}
    pages: list[Future[None]] = []  # HTML pages, rendered while the kernels go on
    render = ThreadPoolExecutor(1, thread_name_prefix="arbwb-render")

    def drive() -> None:
        try:
            with closing(KeptKernel(config.kernel_name, notebooks[0].parent)) as kernel:
                with suppress(Exception):  # else each notebook's section names the error
                    kernel.start()  # while the corpus is read below
                for notebook in iter(waiting.get, None):
                    sections[notebook] = _execute(kernel, notebook, work, parameters)
                    pages.append(render.submit(_render, work / "notebooks" / notebook.name))
                    done.put(notebook)
        finally:
            done.put(None)

    with render, ThreadPoolExecutor(jobs, thread_name_prefix="arbwb-kernel") as pool:
        threads = [pool.submit(drive) for _ in range(jobs)]
        try:
            warm_cache(Path(parameters["data_dir"]), jobs=jobs)
        except BaseException:
            _drop_waiting(waiting, jobs)
            raise
        for notebook in [*notebooks, *[None] * jobs]:  # one None per thread: nothing left
            waiting.put(notebook)
        finished = _until_stopped(done, jobs)
        try:
            for _ in _progress(finished, total=len(notebooks), enabled=config.progress):
                pass
        except BaseException:  # Ctrl-C: each thread stops after its current notebook
            _drop_waiting(waiting, jobs)
            raise
    for future in [*threads, *pages]:
        future.result()  # an error outside a notebook (stopping a kernel, rendering) is raised
    return [sections[notebook] for notebook in notebooks]


def _drop_waiting(waiting: SimpleQueue[Path | None], threads: int) -> None:
    """The notebooks not yet taken dropped, and one None per thread put back."""
    with suppress(Empty):
        while True:
            waiting.get_nowait()
    for _ in range(threads):
        waiting.put(None)


def _until_stopped(done: SimpleQueue[Path | None], threads: int) -> Iterator[Path]:
    """Notebooks from ``done`` as they finish, until each of ``threads`` sent its None."""
    stopped = 0
    while stopped < threads:
        notebook = done.get()
        if notebook is None:
            stopped += 1
        else:
            yield notebook


def _render(executed: Path) -> None:
    """An executed notebook's HTML page, written beside it (none when it was not written)."""
    if executed.is_file():
        write_text_atomic(executed.with_suffix(".html"), render_notebook(executed))


def _progress(items: Iterable[Path], *, total: int, enabled: bool) -> Iterator[Path]:
    """``items`` (notebooks as they finish) passed through; when ``enabled``, a progress bar
    names each notebook that finished."""
    if not enabled:
        yield from items
        return
    from tqdm.auto import tqdm

    with tqdm(total=total, desc="arbwb report", unit="notebook") as bar:
        for item in items:
            bar.set_postfix_str(f"{item.stem} done")
            bar.update()
            yield item


def _execute(kernel: KeptKernel, notebook: Path, work: Path, parameters: dict[str, Any]) -> Section:
    """Run one notebook with the parameters it declares; a raising cell gives a failed Section."""
    from papermill.exceptions import PapermillExecutionError

    target = work / "notebooks" / notebook.name
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        given = {k: v for k, v in parameters.items() if k in declared_parameters(notebook)}
        kernel.execute(notebook, target, given)
    except PapermillExecutionError as exc:
        error = f"{exc.ename}: {exc.evalue}"
        return Section(notebook.name, "failed", error, exc.exec_count, exc.source)
    except Exception as exc:  # an unreadable notebook, dead kernel or timeout costs this section
        return Section(notebook.name, "failed", f"{type(exc).__name__}: {exc}")
    record = work / "records" / f"{notebook.stem}.json"
    skipped = read_json(record).get("skipped") if record.is_file() else None
    if skipped:
        return Section(notebook.name, "skipped", reason=str(skipped))
    return Section(notebook.name, "ok")


def declared_parameters(notebook: Path) -> set[str]:
    """Names in the notebook's cell tagged ``parameters`` (only those are passed).

    papermill reads the cell with the translator of the notebook's kernelspec.
    """
    import papermill

    return set(papermill.inspect_notebook(str(notebook)))


def _inputs(
    data_dir: Path,
    runs_glob: str | None,
    methods: Path | None = None,
    extra_runs: Sequence[str] = (),
) -> list[dict[str, str]]:
    """Every sample, run, corpus and method-table file the notebooks can read, with SHA-256."""
    patterns = ["benchmark/**/*", "corpus/**/*", runs_glob or DEFAULT_RUNS_GLOB, *extra_runs]
    files: set[Path] = set() if methods is None else {methods.resolve()}
    for pattern in patterns:
        files.update(glob_files(data_dir, pattern, recursive=True))
    return [{"path": str(p), "sha256": cache.sha256_of(p)} for p in sorted(files)]


def _manifest(
    config: ReportConfig, data_dir: Path, parameters: dict[str, Any], sections: Sequence[Section]
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
        "inputs": _inputs(
            data_dir, parameters["runs_glob"] or None, config.methods, config.extra_runs
        ),
        "notebooks": [_status(s) for s in sections],
        "parameters": {k: v for k, v in parameters.items() if k != "out_dir"},
        "seeds": {"seed": config.seed},
        "kernel": config.kernel_name,
        "python": platform.python_version(),
        "packages": versions,
    }


def _status(section: Section) -> dict[str, Any]:
    """A section's manifest entry: notebook, status, the failing cell and error, or the reason."""
    entry: dict[str, Any] = {"notebook": section.notebook, "status": section.status}
    if section.status == "failed":
        entry.update(cell=section.cell, source=section.source, error=section.error)
    if section.status == "skipped":
        entry.update(reason=section.reason)
    return entry


def _swap_into_place(work: Path, out_dir: Path) -> None:
    """Replace ``out_dir`` (an older report or nothing) by the finished ``work`` folder."""
    if out_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
        out_dir.rename(old / "report")
        work.rename(out_dir)
        shutil.rmtree(old, ignore_errors=True)
    else:
        work.rename(out_dir)
