"""The report's HTML: executed notebooks via nbconvert, and an index that reads like an appendix.

Every link is relative to the page that holds it, so the report folder works offline and
after it is moved. Recorded numbers become HTML tables (nested dicts as key/value tables),
tables link their CSV, Markdown and LaTeX files, figures are shown inline. Long tables on the
index and notebook pages are sortable, filterable and paginated by ``tables.js``, inlined in
each page (no network; without JavaScript they show whole).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from arbwb.jsonio import write_text_atomic

if TYPE_CHECKING:
    from nbconvert import HTMLExporter

_INLINE_ROWS = 30  # table rows shown in the index; the files hold them all
_OPEN_ENTRIES = 12  # nested records longer than this start collapsed
_OPEN_ROWS, _OPEN_COLUMNS = 12, 10  # larger tables start collapsed behind <details>
_KEY_NUMBERS = 6  # scalar records per section on the first screen
_HEADLINE_COLUMNS = 9  # Run, n, ... of the leaderboard shown on the first screen
_EXCERPT_LINES = 8
_WORDS = {"inf": "infinity", "-inf": "minus infinity", "nan": "n/a"}  # how non-finite floats read

_NOTEBOOK_TEMPLATE = r"""{%- extends 'index.html.j2' -%}
{#- arbwb: no CDN scripts (require.js, MathJax, mermaid), so the page works offline. -#}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block body_header -%}
{{ super() }}
<nav style="padding:4px 12px"><a href="../index.html">&larr; report index</a></nav>
{%- endblock body_header -%}
{% block input_group -%}
{%- set failed = cell.outputs | selectattr('output_type', 'equalto', 'error') | list -%}
<details class="arbwb-code"{{ ' open' if failed }}>
<summary style="cursor:pointer;color:#666;font-size:85%">
code, In [{{ cell.execution_count }}]</summary>
{{ super() }}
</details>
{%- endblock input_group %}
"""

_INDEX_CSS = """
body{font-family:system-ui,sans-serif;max-width:1300px;margin:auto;padding:0 1em;color:#222}
h2{border-bottom:1px solid #ccc;margin-top:2em}
table{border-collapse:collapse;font-size:12px;margin:4px 0}
td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%}figure{margin:1em 0}figcaption{font-size:12px;color:#555}
.question{font-style:italic}.skipped{color:#a40}.ok{color:#070}.failed{color:#b00}
.failure{border:2px solid #b00;padding:6px 10px;background:#fff4f4}
pre{background:#f6f6f6;padding:6px;overflow-x:auto;font-size:12px}
summary{cursor:pointer;color:#555}
.scroll{overflow-x:auto;max-width:100%}
.headline{background:#f7f9fc;border:1px solid #dde3ea;padding:4px 12px;margin:1em 0}
.headline td.num,.headline td{white-space:nowrap}
"""


@dataclass(frozen=True)
class Section:
    """One notebook's outcome in a report run; ``cell``/``source`` locate a failure."""

    notebook: str  # file name, e.g. "06-sample-explorer.ipynb"
    status: Literal["ok", "failed", "skipped"]  # skipped: it ran, but its input kind is absent
    error: str = ""  # "TypeError: ..." when failed
    cell: int | None = None  # execution count of the failing cell, as the executed notebook shows
    source: str = ""  # the failing cell's source
    reason: str = ""  # the notebook's recorded ``skipped`` reason

    @property
    def stem(self) -> str:
        """The notebook's file stem, which prefixes its figures, tables and records."""
        return Path(self.notebook).stem

    def describe(self) -> str:
        """One line naming the notebook, the failing cell and the error (empty unless failed)."""
        if self.status != "failed":
            return ""
        where = f" in cell In [{self.cell}]" if self.cell is not None else ""
        return f"notebook {self.notebook} failed{where}: {self.error}"

    def excerpt(self) -> str:
        """The first lines of the failing cell's source."""
        lines = self.source.splitlines()
        more = ["..."] if len(lines) > _EXCERPT_LINES else []
        return "\n".join(lines[:_EXCERPT_LINES] + more)


def outcome_summary(sections: Sequence[Section]) -> str:
    """``All 9 notebooks ran``, or how many ran and which were skipped, and why (no failures)."""
    skipped = [s for s in sections if s.status == "skipped"]
    if not skipped:
        return f"All {_notebooks(len(sections))} ran"
    reasons = "; ".join(f"{s.stem}: {s.reason}" for s in skipped)
    ran = _notebooks(len(sections) - len(skipped))
    return f"{ran} ran, {len(skipped)} skipped ({reasons})"


def _notebooks(count: int) -> str:
    return f"{count} notebook{'' if count == 1 else 's'}"


def render_notebook(executed: Path) -> str:
    """An executed notebook as standalone HTML: code collapsed, figures embedded, no CDN scripts."""
    import nbformat

    nb = nbformat.read(executed, as_version=4)  # type: ignore[no-untyped-call]
    with _EXPORTING:
        body, _ = _notebook_exporter().from_notebook_node(
            nb, resources={"metadata": {"name": executed.stem}}
        )
    return with_table_script(docs_links_to_html(str(body)))


_EXPORTING = threading.Lock()  # the report's threads share one exporter


@cache
def _notebook_exporter() -> HTMLExporter:
    """The notebook pages' exporter, made once: making it took about half of each page's time."""
    import jinja2
    from nbconvert import HTMLExporter

    return HTMLExporter(  # type: ignore[no-untyped-call]
        template_name="lab",
        template_file="arbwb_notebook.html.j2",
        extra_loaders=[jinja2.DictLoader({"arbwb_notebook.html.j2": _NOTEBOOK_TEMPLATE})],
        embed_images=True,
    )


@cache
def _table_script() -> str:
    """``tables.js``, the script that makes long tables sortable, filterable and paginated."""
    return Path(__file__).with_name("tables.js").read_text(encoding="utf-8")


def with_table_script(page: str) -> str:
    """``page`` with :func:`_table_script` inlined before its last ``</body>``."""
    head, tag, tail = page.rpartition("</body>")
    if not tag:
        msg = "the page has no </body>; render it as a whole HTML document first"
        raise ValueError(msg)
    return f"{head}<script>\n{_table_script()}</script>\n{tag}{tail}"


#: A link from a notebook to one of our docs pages (``../docs/<page>.md#anchor``).
_DOCS_LINK = re.compile(r"""(href=["'])\.\./docs/([\w-]+)\.md""")


def docs_links_to_html(page: str) -> str:
    """Links to ``../docs/<page>.md`` pointed at the report's rendered copy, ``<page>.html``."""
    return _DOCS_LINK.sub(r"\1../docs/\2.html", page)


def render_docs(source: Path, target: Path) -> None:
    """Our rule pages (``docs/*.md``) as standalone HTML in the report, so a notebook's links to
    them work offline; headings get GitHub's anchor ids, links between pages stay relative."""
    import mistune

    target.mkdir(parents=True, exist_ok=True)
    for page in sorted(source.glob("*.md")):
        try:
            text = page.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            msg = f"cannot read docs page {page} as UTF-8 Markdown ({exc}); fix or remove it"
            raise ValueError(msg) from exc
        body = str(mistune.html(text))
        body = re.sub(r"""href="([\w-]+)\.md""", r'href="\1.html', body)
        body = re.sub(r"<h([1-6])>(.*?)</h\1>", _heading_with_id, body)
        title = _esc(page.stem)
        write_text_atomic(
            target / f"{page.stem}.html",
            "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{title}</title><style>{_INDEX_CSS}</style></head><body>"
            f"<nav><a href='README.html'>docs index</a></nav>{body}</body></html>\n",
        )


def _heading_with_id(match: re.Match[str]) -> str:
    """``<hN>`` with GitHub's slug of its text as id (lower case, punctuation out, ``-``)."""
    level, inner = match.group(1), match.group(2)
    text = html.unescape(re.sub(r"<[^>]+>", "", inner)).strip().lower()
    slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
    return f"<h{level} id='{_esc(slug)}'>{inner}</h{level}>"


def _title_and_question(notebook: Path) -> tuple[str, str]:
    """The first markdown cell's heading and its first body line (the notebook's question)."""
    import nbformat

    cells = nbformat.read(notebook, as_version=4).cells  # type: ignore[no-untyped-call]
    text = cells[0].source if cells and cells[0].cell_type == "markdown" else ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    heads = [line.lstrip("#").strip() for line in lines if line.startswith("#")]
    body = [line.replace("**", "") for line in lines if not line.startswith("#")]
    return (heads or [notebook.stem])[0], (body or [""])[0]


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _number(value: float) -> str:
    """Four decimals like the Markdown tables; scientific notation for tiny non-zero values."""
    return f"{value:.2e}" if 0 < abs(value) < 1e-3 else f"{value:.4f}"


def _scalar_html(value: Any) -> str:
    """A scalar as a table cell: finite numbers right-aligned, the rest as :func:`_plain`."""
    if isinstance(value, float) and math.isfinite(value):
        return f"<td class='num' title='{value!r}'>{_number(value)}</td>"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"<td class='num'>{value}</td>"
    if isinstance(value, str):
        return f"<td>{_WORDS.get(value.lower()) or _esc(value)}</td>"
    return f"<td>{_plain(value)}</td>"


def _csv_cell(text: str) -> str:
    """A CSV cell as HTML: decimals shortened like :func:`_number` (full value in the title),
    infinities as words, JSON objects and lists as nested tables rather than escaped text."""
    if text.startswith(("{", "[")):
        try:
            return _value_cell(json.loads(text))
        except json.JSONDecodeError:
            pass
    if text.lower() in _WORDS:
        return f"<td>{_WORDS[text.lower()]}</td>"
    try:
        value = float(text)
    except ValueError:
        return f"<td>{_esc(text)}</td>"
    if text.lstrip("-").isdigit():
        return f"<td class='num'>{text}</td>"
    return f"<td class='num' title='{_esc(text)}'>{_number(value)}</td>"


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _collapse(inner: str, count: int, noun: str) -> str:
    if count <= _OPEN_ENTRIES:
        return inner
    return f"<details><summary>{count} {noun}</summary>{inner}</details>"


def _value_cell(value: Any) -> str:
    """A recorded value as a table cell: dicts as key/value tables, lists of dicts as tables."""
    if _is_scalar(value):
        return _scalar_html(value)
    if isinstance(value, Mapping):
        return f"<td>{_collapse(_mapping_table(value), len(value), 'entries')}</td>"
    items = list(value)
    if items and all(isinstance(i, Mapping) for i in items):
        columns = list(dict.fromkeys(k for item in items for k in item))
        head = "".join(f"<th>{_esc(c)}</th>" for c in columns)
        rows = "".join(
            "<tr>" + "".join(_value_cell(item.get(c)) for c in columns) + "</tr>" for item in items
        )
        table = f"<table><tr>{head}</tr>{rows}</table>"
        return f"<td>{_collapse(table, len(items), 'rows')}</td>"
    if all(_is_scalar(i) for i in items):
        text = ", ".join("n/a" if i is None else str(i) for i in items) or "(none)"
        return f"<td>{_collapse(_esc(text), len(items), 'items')}</td>"
    rows = "".join(f"<tr>{_value_cell(i)}</tr>" for i in items)
    return f"<td>{_collapse(f'<table>{rows}</table>', len(items), 'items')}</td>"


def _mapping_table(record: Mapping[str, Any]) -> str:
    """A key/value HTML table; nested values become nested tables."""
    rows = "".join(f"<tr><th>{_esc(k)}</th>{_value_cell(v)}</tr>" for k, v in record.items())
    return f"<table>{rows}</table>"


def _csv_table(
    path: Path, *, max_rows: int = _INLINE_ROWS, columns: int | None = None, collapse: bool = True
) -> str:
    """The first ``max_rows`` rows (and ``columns`` columns) of a CSV table as HTML in a
    horizontally scrolling box, saying how many rows were left out; a large table starts
    collapsed behind ``<details>`` so the page reads as an appendix."""
    rows = [row[:columns] for row in csv.reader(io.StringIO(path.read_text(encoding="utf-8")))]
    if not rows:
        return "<p>(empty table)</p>"
    head = "".join(f"<th>{_esc(c)}</th>" for c in rows[0])
    body = "".join(
        "<tr>" + "".join(_csv_cell(c) for c in row) + "</tr>" for row in rows[1 : max_rows + 1]
    )
    shown = len(rows) - 1
    note = (
        f"<p>First {max_rows} of {shown} rows; the files hold all of them.</p>"
        if shown > max_rows
        else ""
    )
    table = f"<div class='scroll'><table><tr>{head}</tr>{body}</table></div>{note}"
    if collapse and (shown > _OPEN_ROWS or len(rows[0]) > _OPEN_COLUMNS):
        size = f"{shown} rows, {len(rows[0])} columns"
        return f"<details><summary>{size}</summary>{table}</details>"
    return table


def _recorded_order(paths: list[Path]) -> list[Path]:
    """Files in the order the notebook recorded them (write time), name breaking ties."""
    return sorted(paths, key=lambda p: (p.stat().st_mtime_ns, p.name))


def _link(href: str, text: str) -> str:
    return f"<a href='{_esc(href)}'>{_esc(text)}</a>"


def _section_html(report: Path, notebook: Path, section: Section, title: str, question: str) -> str:
    stem = section.stem
    parts = [f"<section id='{_esc(stem)}'><h2>{_esc(title)}</h2>"]
    if question:
        parts.append(f"<p class='question'>{_esc(question)}</p>")
    if section.status == "failed":
        page = report / "notebooks" / f"{stem}.html"
        traceback = (  # papermill marks the failing cell with this anchor
            f" {_link(f'notebooks/{page.name}#papermill-error-cell', 'Traceback in the notebook.')}"
            if page.is_file()
            else ""
        )
        parts.append(
            f"<div class='failure'><p class='failed'><b>Failed.</b> {_esc(section.describe())}</p>"
            + (f"<pre>{_esc(section.excerpt())}</pre>" if section.source else "")
            + f"<p>Outputs below were written before the error.{traceback}</p></div>"
        )
    pages = (
        (f"notebooks/{stem}.html", "notebook (HTML)"),
        (f"notebooks/{notebook.name}", "notebook (ipynb)"),
        (f"records/{stem}.json", "recorded numbers (JSON)"),
    )
    links = [_link(href, label) for href, label in pages if (report / href).is_file()]
    record = _record(report, stem)
    parts.append(f"<p>{' · '.join(links)}</p>")
    if "skipped" in record:
        parts.append(f"<p class='skipped'>Skipped: {_esc(record['skipped'])}</p>")
    parts.extend(f"<p class='skipped'>Note: {_esc(note)}</p>" for note in record.get("notes", []))
    figures = _recorded_order(list((report / "figures").glob(f"{stem}__*.png")))
    if figures:
        parts.append("<h3>Figures</h3>")
    for png in figures:
        caption = png.stem.removeprefix(f"{stem}__")
        svg = png.with_suffix(".svg")
        img = f"<img src='figures/{_esc(png.name)}' alt='{_esc(caption)}'>"
        files = [_link(f"figures/{f.name}", f.suffix[1:]) for f in (png, svg) if f.is_file()]
        parts.append(
            f"<figure>{img}<figcaption>{_esc(caption)} ({' · '.join(files)})</figcaption></figure>"
        )
    tables = _recorded_order(list((report / "tables").glob(f"{stem}__*.csv")))
    if tables:
        parts.append("<h3>Tables</h3>")
    for table in tables:
        files = [
            _link(f"tables/{f.name}", label)
            for f, label in (
                (table, "CSV"),
                (table.with_suffix(".md"), "Markdown"),
                (table.with_suffix(".tex"), "LaTeX"),
            )
            if f.is_file()
        ]
        name = table.stem.removeprefix(f"{stem}__")
        parts.append(f"<h4>{_esc(name)} ({' · '.join(files)})</h4>{_csv_table(table)}")
    numbers = {k: v for k, v in record.items() if k not in ("skipped", "notes")}
    if numbers:
        parts.append(
            "<h3>Recorded numbers</h3><div class='scroll'>" + _mapping_table(numbers) + "</div>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def _key_numbers(record: Mapping[str, Any]) -> dict[str, Any]:
    """A section's headline numbers: its first scalar records that are not per run."""
    scalars = {
        k: v
        for k, v in record.items()
        if _is_scalar(v) and "/" not in k and k not in ("skipped", "missing_rule")
    }
    return dict(list(scalars.items())[:_KEY_NUMBERS])


def _first_screen(report: Path, titled: Sequence[tuple[Path, Section, str, str]]) -> str:
    """The leaderboard of each run group (mean [95% interval]) and each section's key numbers."""
    parts = []
    for path in sorted((report / "tables").glob("01-leaderboard__*__overall.csv")):
        group = path.stem.removeprefix("01-leaderboard__").removesuffix("__overall")
        parts.append(
            f"<h3>Leaderboard, run group {_esc(group)}: mean [95% bootstrap interval]</h3>"
            + _csv_table(path, columns=_HEADLINE_COLUMNS, collapse=False)
        )
    rows = []
    for _, section, title, _ in titled:
        numbers = _key_numbers(_record(report, section.stem))
        cells = "; ".join(f"{k} = {_plain(v)}" for k, v in numbers.items()) or section.status
        rows.append(f"<tr><th>{_link(f'#{section.stem}', title)}</th><td>{_esc(cells)}</td></tr>")
    parts.append(f"<h3>Key numbers</h3><div class='scroll'><table>{''.join(rows)}</table></div>")
    return "<div class='headline'>" + "".join(parts) + "</div>"


def _record(report: Path, stem: str) -> dict[str, Any]:
    """A notebook's recorded numbers, empty when it recorded none."""
    path = report / "records" / f"{stem}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _plain(value: Any) -> str:
    """A scalar as plain text, as the tables print it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return _WORDS[repr(value)] if not math.isfinite(value) else _number(value)
    return "n/a" if value is None else str(value)


def render_index(
    report: Path,
    notebooks: Sequence[Path],
    sections: Sequence[Section],
    *,
    header: Mapping[str, str] | None = None,
) -> str:
    """Static HTML index: a table of contents, then per notebook its status, links and outputs.

    ``notebooks`` are the source notebooks (for titles and questions); ``sections`` their
    outcomes in the same order; ``header`` adds ``label: text`` lines under the title.
    """
    by_name = {s.notebook: s for s in sections}
    titled = [(nb, by_name[nb.name], *_title_and_question(nb)) for nb in notebooks]
    failed = [s for s in sections if s.status == "failed"]
    summary = (
        f"<p class='failed'><b>{len(failed)} of {len(sections)} notebooks failed:</b> "
        + ", ".join(_link(f"#{s.stem}", s.notebook) for s in failed)
        + "</p>"
        if failed
        else f"<p class='{'ok' if all(s.status == 'ok' for s in sections) else 'skipped'}'>"
        f"{_esc(outcome_summary(sections))}.</p>"
    )
    toc = "".join(
        f"<li>{_link(f'#{s.stem}', title)} <span class='{s.status}'>({s.status})</span></li>"
        for _, s, title, _ in titled
    )
    meta = "".join(f"<li>{_esc(k)}: {_esc(v)}</li>" for k, v in (header or {}).items())
    rules = (
        f"<li>{_link('docs/README.html', 'how every number is computed')}: the rules arbwb "
        "implements, one page per analysis</li>"
        if (report / "docs" / "README.html").is_file()
        else ""
    )
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>arbwb report</title><style>{_INDEX_CSS}</style></head><body>",
        "<h1>arbwb report</h1>",
        f"<ul>{meta}<li>{_link('manifest.json', 'manifest.json')}: inputs with SHA-256, "
        f"package versions, parameters, seeds and each notebook's status</li>{rules}</ul>",
        summary,
        _first_screen(report, titled),
        f"<nav><h2>Contents</h2><ol>{toc}</ol></nav>",
    ]
    parts.extend(_section_html(report, nb, s, title, q) for nb, s, title, q in titled)
    parts.append("</body></html>")
    return with_table_script("\n".join(parts) + "\n")
