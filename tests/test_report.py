"""`arbwb report`: shared layout, a failing notebook, a root without benchmark/, offline links."""

from __future__ import annotations

import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path
from queue import SimpleQueue
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
from test_leaderboard import V1_1, shared_layout

from arbwb.analysis.explorer import QUERY_UNAVAILABLE
from arbwb.cli import main
from arbwb.jsonio import sha256_file
from arbwb.paths import DEMO_DIR, NOTEBOOKS_DIR
from arbwb.report.build import ReportConfig, _drop_waiting, _jobs, _progress, declared_parameters
from arbwb.report.html import Section, render_docs, render_index

INJECTED = 'raise RuntimeError("injected failure for the report test")'


def _notebooks(folder: Path, *cells: str, name: str = "01-tiny", title: str = "01 · Tiny") -> Path:
    """``folder`` with one notebook ``name``.ipynb: a title, a parameters cell, then ``cells``."""
    folder.mkdir(exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "py"}
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# {title}\n\nDoes the report runner work?"),
        nbformat.v4.new_code_cell(
            'data_dir: str = "../data/demo"  # release\nout_dir: str = "."  # output',
            metadata={"tags": ["parameters"]},
        ),
        *[nbformat.v4.new_code_cell(c) for c in cells],
    ]
    nbformat.write(nb, folder / f"{name}.ipynb")
    return folder


def _report(data: Path, out: Path, notebooks: Path) -> int:
    argv = ["report", "--data", str(data), "--out", str(out), "--notebooks", str(notebooks)]
    return main([*argv, "--no-progress"])


class _Links(HTMLParser):
    """Every href/src and every id of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.urls.append(value)
            if name == "id" and value is not None:
                self.ids.add(value)


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _check_links(report: Path) -> int:
    """Follow every href/src of index.html and each notebook HTML; return how many were followed."""
    pages = [report / "index.html", *sorted((report / "notebooks").glob("*.html"))]
    followed = 0
    for page in pages:
        links = _parse(page)
        for url in links.urls:
            if url.startswith("data:"):
                assert url.startswith("data:image/"), (page, url[:40])
                continue
            parts = urlsplit(url)
            assert not parts.scheme and not parts.netloc, f"absolute link {url} in {page}"
            assert not parts.path.startswith("/"), f"absolute path {url} in {page}"
            if parts.path:
                target = page.parent / unquote(parts.path)
                assert target.is_file(), f"{page.name} links {url}, which is missing"
                target_ids = _parse(target).ids if target.suffix == ".html" else set()
            else:
                target_ids = links.ids
            if parts.fragment:  # browsers try the fragment as written, then percent-decoded
                found = {parts.fragment, unquote(parts.fragment)} & target_ids
                assert found, f"{page.name}: no anchor for {url}"
            followed += 1
    return followed


@pytest.fixture(scope="module")
def no_benchmark_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """Every notebook on a copy of data/demo without benchmark/ (stored runs, queries unknown)."""
    root = tmp_path_factory.mktemp("nobench")
    shutil.copytree(DEMO_DIR, root / "data", ignore=shutil.ignore_patterns("benchmark"))
    code = _report(root / "data", root / "report", NOTEBOOKS_DIR)
    return root / "report", code


@pytest.mark.slow
def test_every_notebook_runs_without_benchmark(no_benchmark_report: tuple[Path, int]) -> None:
    report, code = no_benchmark_report
    assert code == 0
    manifest = json.loads((report / "manifest.json").read_text())
    names = sorted(p.name for p in NOTEBOOKS_DIR.glob("[0-9][0-9]-*.ipynb"))
    skipped = {  # no queries to label; no strata, so no no-gold samples to abstain on
        "02-relevance-taxonomy.ipynb": "no samples with query and gold under",
        "04-abstention-calibration.ipynb": "no selective runs (ranking positives and no-gold",
    }
    statuses = [(s["notebook"], s["status"], s.get("reason", "")) for s in manifest["notebooks"]]
    assert [(n, status) for n, status, _ in statuses] == [
        (n, "skipped" if n in skipped else "ok") for n in names
    ]
    assert all(reason.startswith(skipped.get(n, "")) for n, _, reason in statuses)
    assert not any("/benchmark/" in entry["path"] for entry in manifest["inputs"])
    explorer = json.loads((report / "records" / "06-sample-explorer.json").read_text())
    details = [
        json.loads(line) for line in (DEMO_DIR / "eval/demo/lexical_details.jsonl").open()
    ]  # without sample files the first sample is the first details row
    assert explorer["sample_id"] == details[0]["sample_id"]
    assert explorer["query_available"] is False
    page = (report / "notebooks" / "06-sample-explorer.html").read_text()
    assert QUERY_UNAVAILABLE.replace("<", "&lt;").replace(">", "&gt;") in page
    index = (report / "index.html").read_text()
    assert f"{len(names) - 2} notebooks ran, 2 skipped (02-relevance-taxonomy: " in index
    assert "<span class='skipped'>(skipped)</span>" in index and "{&quot;" not in index


@pytest.mark.slow
def test_links_are_relative_and_survive_a_move(
    no_benchmark_report: tuple[Path, int], tmp_path: Path
) -> None:
    report, _ = no_benchmark_report
    index = _parse(report / "index.html").urls
    for stem in (p.stem for p in NOTEBOOKS_DIR.glob("[0-9][0-9]-*.ipynb")):
        assert f"notebooks/{stem}.html" in index and f"notebooks/{stem}.ipynb" in index
    for table in (report / "tables").glob("*.csv"):
        for ext in (".csv", ".md", ".tex"):
            # a table recorded with latex=False (07's per-sample frame) has no TeX to link
            if ext != ".tex" or table.with_suffix(".tex").is_file():
                assert f"tables/{table.stem}{ext}" in index
    assert not [t for t in (report / "tables").glob("*.tex") if f"tables/{t.name}" not in index]
    for png in (report / "figures").glob("*.png"):
        assert f"figures/{png.name}" in index and f"figures/{png.stem}.svg" in index
    followed = _check_links(report)
    moved = tmp_path / "elsewhere" / "appendix"
    shutil.copytree(report, moved)
    assert _check_links(moved) == followed > 50


@pytest.mark.slow
def test_figures_show_inline_once_in_executed_notebooks(
    no_benchmark_report: tuple[Path, int],
) -> None:
    report, _ = no_benchmark_report
    for executed in sorted((report / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(executed, as_version=4)
        shown = [
            o
            for c in nb.cells
            if c.cell_type == "code"
            for o in c.outputs
            if "image/png" in o.get("data", {})
        ]
        saved = list((report / "figures").glob(f"{executed.stem}__*.png"))
        assert len(shown) == len(saved), executed.name
        page = _parse(report / "notebooks" / f"{executed.stem}.html")
        assert sum(u.startswith("data:image/png;base64,") for u in page.urls) == len(saved)


@pytest.mark.slow
def test_failing_notebook_costs_only_its_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    shutil.copytree(DEMO_DIR, data)
    notebooks = tmp_path / "nbs"
    notebooks.mkdir()
    for name in ("00-overview.ipynb", "06-sample-explorer.ipynb"):
        shutil.copy(NOTEBOOKS_DIR / name, notebooks / name)
    broken = nbformat.read(notebooks / "00-overview.ipynb", as_version=4)
    at = next(i for i, c in enumerate(broken.cells) if "show(result.repositories)" in c.source) + 1
    broken.cells.insert(at, nbformat.v4.new_code_cell(INJECTED))
    nbformat.write(broken, notebooks / "00-overview.ipynb")
    # papermill numbers the injected parameters cell too, right after the parameters cell
    cell = sum(c.cell_type == "code" for c in broken.cells[: at + 1]) + 1
    out = tmp_path / "report"

    code = _report(data, out, notebooks)

    err = capsys.readouterr().err
    assert code == 1
    failure = f"notebook 00-overview.ipynb failed in cell In [{cell}]: RuntimeError: injected"
    assert failure in err and "1 of 2 notebooks failed (00-overview.ipynb)" in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "nbs", "report"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["notebooks"] == [
        {
            "notebook": "00-overview.ipynb",
            "status": "failed",
            "cell": cell,
            "source": INJECTED,
            "error": "RuntimeError: injected failure for the report test",
        },
        {"notebook": "06-sample-explorer.ipynb", "status": "ok"},
    ]
    index = (out / "index.html").read_text()
    assert "1 of 2 notebooks failed" in index
    assert failure in index
    assert INJECTED.replace('"', "&quot;") in index  # the cell's source excerpt
    assert "href='notebooks/00-overview.html#papermill-error-cell'" in index  # checked below
    assert (out / "records" / "06-sample-explorer.json").is_file()
    assert (out / "tables" / "00-overview__repositories.csv").is_file()  # written before the error
    assert "href='tables/00-overview__repositories.tex'" in index
    page = (out / "notebooks" / "00-overview.html").read_text()
    assert "injected failure for the report test" in page
    _check_links(out)


@pytest.mark.shared
@pytest.mark.slow
def test_report_on_shared_layout_without_corpus(
    tmp_path: Path, shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = shared_layout(tmp_path / "release", shared_dir)
    out = tmp_path / "report"
    notebooks = tmp_path / "nbs"
    notebooks.mkdir()
    (notebooks / "01-leaderboard.ipynb").symlink_to(NOTEBOOKS_DIR / "01-leaderboard.ipynb")
    code = _report(data, out, notebooks)
    assert code == 0, capsys.readouterr().err
    record = json.loads((out / "records" / "01-leaderboard.json").read_text())
    assert record["bcy"] is False
    assert any("no corpus" in note and "BCY" in note for note in record["notes"])
    for run in ("lexical_code_only", "repomap_tests_only"):
        summary = json.loads((shared_dir / "eval" / V1_1 / f"{run}_summary.json").read_text())
        got = record["overall"][f"{V1_1}/{run}/weighted/mrr"]
        assert got == pytest.approx(summary["metrics"]["overall"]["MRR"], abs=1e-9)
    index = (out / "index.html").read_text()
    assert "no corpus/&lt;release&gt;/ found: budget (BCY) metrics and curves skipped" in index
    assert "Traceback" not in index
    pngs = sorted((out / "figures").glob("*.png"))
    assert [p.name for p in pngs] == [
        f"01-leaderboard__{kind}__{V1_1}.png"
        for kind in ("heatmap", "methods_mrr", "significance", "task_bars")
    ]  # no corpus: no methods_bcy figure
    assert all(p.stat().st_size > 5000 and p.with_suffix(".svg").is_file() for p in pngs)
    for png in pngs:
        assert f"figures/{png.name}" in index
    manifest = json.loads((out / "manifest.json").read_text())
    details = data / "eval" / V1_1 / "lexical_code_only_details.jsonl"
    assert {"path": str(details), "sha256": sha256_file(details)} in manifest["inputs"]
    assert manifest["parameters"]["seed"] == 0 and manifest["packages"]["polars"]
    assert (out / "notebooks" / "01-leaderboard.ipynb").is_file()
    assert (out / "notebooks" / "01-leaderboard.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nbs", "release", "report"]
    _check_links(out)


def test_refuses_to_replace_a_folder_that_is_not_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("keep me")
    code = main(["report", "--data", str(DEMO_DIR), "--out", str(out), "--no-progress"])
    assert code == 2
    assert "not an arbwb report" in capsys.readouterr().err
    assert (out / "thesis.tex").read_text() == "keep me"


def test_declared_parameters_come_from_the_tagged_cell(tmp_path: Path) -> None:
    notebooks = _notebooks(tmp_path / "nbs", "seed = 3")
    assert declared_parameters(notebooks / "01-tiny.ipynb") == {"data_dir", "out_dir"}
    assert {"data_dir", "runs_glob", "out_dir", "seed", "demo"} <= declared_parameters(
        NOTEBOOKS_DIR / "01-leaderboard.ipynb"
    )


def test_index_shows_contents_failure_records_figures_and_tables(tmp_path: Path) -> None:
    notebooks = _notebooks(tmp_path / "nbs", "x = 1")
    report = tmp_path / "report"
    for sub in ("records", "figures", "tables", "notebooks"):
        (report / sub).mkdir(parents=True)
    record = {
        "skipped": "no corpus <here>",
        "mrr": 0.25,
        "by_stratum": {"unknown": 214},
        "rows": [{"run": "A", "n": 3}, {"run": "B", "n": None}],
        "runs": ["A", "B"],
        "p": 0.00001234,
    }
    (report / "records" / "01-tiny.json").write_text(json.dumps(record))
    (report / "figures" / "01-tiny__curve.png").write_bytes(b"png")
    (report / "figures" / "01-tiny__curve.svg").write_text("<svg/>")
    (report / "tables" / "01-tiny__board.csv").write_text("run,mrr,n\nA,0.123456,7\n")
    (report / "tables" / "01-tiny__board.md").write_text("| run | mrr |\n")
    (report / "notebooks" / "01-tiny.html").write_text('<p id="papermill-error-cell"></p>')
    failed = Section("01-tiny.ipynb", "failed", "ValueError: bad <x>", 4, "y = 1\nraise X")
    page = render_index(report, [notebooks / "01-tiny.ipynb"], [failed])
    assert "<a href='#01-tiny'>01 · Tiny</a> <span class='failed'>(failed)</span>" in page
    assert "<section id='01-tiny'><h2>01 · Tiny</h2>" in page
    assert "Does the report runner work?" in page
    assert "notebook 01-tiny.ipynb failed in cell In [4]: ValueError: bad &lt;x&gt;" in page
    assert "<pre>y = 1\nraise X</pre>" in page
    assert "Skipped: no corpus &lt;here&gt;" in page
    assert "<th>mrr</th><td class='num' title='0.25'>0.2500</td>" in page
    assert "<th>by_stratum</th><td><table><tr><th>unknown</th><td class='num'>214</td>" in page
    assert "<tr><th>run</th><th>n</th></tr><tr><td>A</td><td class='num'>3</td></tr>" in page
    assert "<tr><td>B</td><td>n/a</td></tr>" in page
    assert "<th>runs</th><td>A, B</td>" in page and ">1.23e-05</td>" in page
    assert "&quot;" not in page
    assert "<img src='figures/01-tiny__curve.png' alt='curve'>" in page
    assert "<td>A</td><td class='num' title='0.123456'>0.1235</td><td class='num'>7</td>" in page
    assert "<a href='tables/01-tiny__board.csv'>CSV</a>" in page
    assert "<a href='tables/01-tiny__board.md'>Markdown</a>" in page
    assert "tables/01-tiny__board.tex" not in page  # only files that exist are linked
    assert "<a href='notebooks/01-tiny.html'>notebook (HTML)</a>" in page
    assert "notebooks/01-tiny.ipynb" not in page
    (report / "manifest.json").write_text("{}")
    (report / "index.html").write_text(page)
    assert sorted(_parse(report / "index.html").urls) == [
        "#01-tiny",  # contents, key numbers, failure summary
        "#01-tiny",
        "#01-tiny",
        "figures/01-tiny__curve.png",
        "figures/01-tiny__curve.png",
        "figures/01-tiny__curve.svg",
        "manifest.json",
        "notebooks/01-tiny.html",
        "notebooks/01-tiny.html#papermill-error-cell",
        "records/01-tiny.json",
        "tables/01-tiny__board.csv",
        "tables/01-tiny__board.md",
    ]
    assert _check_links(report) == 12


def test_index_reads_as_an_appendix(tmp_path: Path) -> None:
    """First screen: each group's leaderboard and each section's key numbers; big tables start
    collapsed, infinities read as words, JSON cells become tables, tables keep recorded order."""
    notebooks = _notebooks(tmp_path / "nbs")
    report = tmp_path / "report"
    for sub in ("tables", "records"):
        (report / sub).mkdir(parents=True)
    board = report / "tables" / "01-leaderboard__v1__overall.csv"
    board.write_text('Run,n,MRR\nA,3,"0.5000 [0.4000, 0.6000]"\n')
    wide = report / "tables" / "01-tiny__zz_first.csv"
    wide.write_text("k,v\n" + "".join(f"r{i},-inf\n" for i in range(20)))
    later = report / "tables" / "01-tiny__aa_later.csv"
    later.write_text('k,v\nx,"{""command"": ""pytest"", ""n"": 2}"\n')
    os.utime(wide, ns=(1, 1))
    os.utime(later, ns=(2, 2))
    (report / "records" / "01-tiny.json").write_text(json.dumps({"n_samples": 9, "a/b": 1.0}))
    page = render_index(report, [notebooks / "01-tiny.ipynb"], [Section("01-tiny.ipynb", "ok")])
    first = page.index("Leaderboard, run group v1")
    assert first < page.index("<h2>Contents</h2>")
    assert "<td>0.5000 [0.4000, 0.6000]</td>" in page
    assert "n_samples = 9" in page and "a/b = " not in page  # per-run records stay below
    assert "<details><summary>20 rows, 2 columns</summary>" in page
    assert "<td>minus infinity</td>" in page and "-inf" not in page
    assert "<th>command</th><td>pytest</td>" in page and "&quot;" not in page
    assert page.index("zz_first") < page.index("aa_later")  # recorded order, not alphabetical
    assert page.count("<script>") == 1 and "arbwb-enhanced" in page  # tables.js, inlined once


def test_an_unreadable_docs_page_fails_naming_the_file(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "README.md").write_text("# Rules\n\nSee [metrics](metrics.md).\n", encoding="utf-8")
    (docs / "metrics.md").write_bytes(b"# Metrics\n\nlatin-1 \xe9 is not UTF-8\n")
    with pytest.raises(ValueError, match=r"docs page .*metrics\.md as UTF-8 Markdown"):
        render_docs(docs, tmp_path / "out")
    (docs / "metrics.md").unlink()
    (docs / "folder.md").mkdir()  # a name that matches but cannot be read
    with pytest.raises(ValueError, match=r"folder\.md"):
        render_docs(docs, tmp_path / "out")
    (docs / "folder.md").rmdir()
    render_docs(docs, tmp_path / "out")
    assert 'href="metrics.html"' in (tmp_path / "out" / "README.html").read_text()


def test_progress_bar_names_each_notebook(capsys: pytest.CaptureFixture[str]) -> None:
    items = [Path("01-a.ipynb"), Path("02-b.ipynb")]
    assert list(_progress(iter(items), total=2, enabled=True)) == items
    err = capsys.readouterr().err
    assert "01-a done" in err and "02-b done" in err and "2/2" in err
    assert list(_progress(iter(items), total=2, enabled=False)) == items
    assert not capsys.readouterr().err


def test_kernels_start_without_the_tcp_warning(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    notebooks = _notebooks(tmp_path / "nb", "print('ran')")
    assert _report(DEMO_DIR, tmp_path / "report", notebooks) == 0
    assert "without encryption" not in capfd.readouterr().err


def test_a_kept_kernel_forgets_the_previous_notebook(tmp_path: Path) -> None:
    """On one kernel for every notebook, a notebook sees no variable of the one before, numbers
    its cells from 1 and shows a module's warning again; one that kills the kernel costs only its
    section and the next runs on a new kernel."""
    notebooks = tmp_path / "nbs"
    notebooks.mkdir()
    (notebooks / "helper.py").write_text(  # the kernel runs in the notebooks' folder
        "import warnings\n\ndef warn():\n    warnings.warn('shown by every notebook')\n"
    )
    _notebooks(notebooks, "import helper\nleaked = 1\nhelper.warn()", name="01-first")
    _notebooks(
        notebooks, "assert 'leaked' not in globals()\nimport helper\nhelper.warn()", name="02-next"
    )
    _notebooks(notebooks, "import os\nos._exit(1)", name="03-dies")
    _notebooks(notebooks, "assert 'leaked' not in globals()", name="04-after")
    out = tmp_path / "report"
    argv = ["--data", str(DEMO_DIR), "--out", str(out), "--notebooks", str(notebooks)]
    assert main(["report", *argv, "--jobs", "1", "--no-progress"]) == 1
    manifest = json.loads((out / "manifest.json").read_text())
    statuses = [(s["notebook"], s["status"]) for s in manifest["notebooks"]]
    assert statuses == [
        ("01-first.ipynb", "ok"),
        ("02-next.ipynb", "ok"),
        ("03-dies.ipynb", "failed"),
        ("04-after.ipynb", "ok"),
    ]
    assert "DeadKernelError" in manifest["notebooks"][2]["error"]
    for stem in ("01-first", "02-next"):
        nb = nbformat.read(out / "notebooks" / f"{stem}.ipynb", as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert [c.execution_count for c in code] == [1, 2, 3]  # parameters, injected, cell
        stderr = [o.text for o in code[-1].outputs if o.get("name") == "stderr"]
        assert len(stderr) == 1 and "shown by every notebook" in stderr[0], stem


def test_an_interrupted_report_drops_the_waiting_notebooks() -> None:
    """After Ctrl-C each kernel's thread finds a None next, so it stops after its notebook."""
    waiting: SimpleQueue[Path | None] = SimpleQueue()
    for item in (Path("02-b.ipynb"), Path("03-c.ipynb"), None, None):
        waiting.put(item)
    _drop_waiting(waiting, 2)
    assert [waiting.get_nowait() for _ in range(2)] == [None, None]
    assert waiting.empty()


def test_default_kernels_without_sched_getaffinity(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Where the system has no ``sched_getaffinity`` (macOS, Windows) the report runs one
    kernel per CPU, at most one per notebook, rather than failing."""
    config = ReportConfig(data_dir=tmp_path, out_dir=tmp_path / "out")
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert (_jobs(config, 9), _jobs(config, 2)) == (3, 2)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert _jobs(config, 9) == 1
    assert _jobs(ReportConfig(data_dir=tmp_path, out_dir=tmp_path, jobs=4), 9) == 4
