"""The one table renderer: a frame as Markdown, CSV (full precision) or LaTeX (floats with
``decimals`` places, spec §5.9 uses 4; nulls ``n/a``), each escaped as its syntax needs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl

FORMATS = ("markdown", "csv", "latex")
_LATEX_SPECIAL = str.maketrans(
    {c: "\\" + c for c in "&%$#_{}"}
    | {"\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
)


def cell(value: Any, decimals: int = 4) -> str:
    """One value as text: floats with ``decimals`` places, None as ``n/a``."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{decimals}f}"
    return str(value)


def latex_escape(text: str) -> str:
    """Escape every LaTeX special character (``\\ & % $ # _ { } ~ ^``)."""
    return text.translate(_LATEX_SPECIAL)


def _markdown_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(frame: pl.DataFrame, *, decimals: int = 4) -> str:
    """A GitHub Markdown table; numeric columns right-aligned."""
    header = "| " + " | ".join(_markdown_escape(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---:" if t.is_numeric() else "---" for t in frame.dtypes) + "|"
    rows = [
        "| " + " | ".join(_markdown_escape(cell(v, decimals)) for v in row) + " |"
        for row in frame.iter_rows()
    ]
    return "\n".join([header, rule, *rows]) + "\n"


def rows_to_markdown(
    header: Sequence[str], rows: Iterable[Sequence[Any]], *, decimals: int = 4
) -> str:
    """A Markdown table of ``rows`` under ``header``, each cell by :func:`cell` (for report
    tables whose cells are already text, e.g. ``"12/35"``)."""
    body = [[cell(value, decimals) for value in row] for row in rows]
    schema = dict.fromkeys(header, pl.String)
    return to_markdown(pl.DataFrame(body, schema=schema, orient="row"))


def to_latex(frame: pl.DataFrame, *, decimals: int = 4) -> str:
    """A booktabs LaTeX tabular for papers; numeric columns right-aligned."""
    align = "".join("r" if t.is_numeric() else "l" for t in frame.dtypes)
    lines = [
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in frame.columns) + r" \\",
        r"\midrule",
        *(
            " & ".join(latex_escape(cell(v, decimals)) for v in row) + r" \\"
            for row in frame.iter_rows()
        ),
        r"\bottomrule",
        r"\end{tabular}",
    ]
    return "\n".join(lines) + "\n"


def to_csv(frame: pl.DataFrame) -> str:
    """CSV with a header row, full precision (nested columns as JSON text)."""
    nested = [c for c, t in frame.schema.items() if t.is_nested()]
    if nested:
        frame = frame.with_columns(pl.col(nested).map_elements(_json, return_dtype=pl.String))
    return frame.write_csv()


def _json(value: Any) -> str:
    return json.dumps(value.to_list() if isinstance(value, pl.Series) else value)


def show(frame: pl.DataFrame, *, decimals: int = 3, max_rows: int = 100) -> None:
    """Display ``frame`` as a notebook HTML table, floats rounded for reading and no column cut."""
    from IPython.display import display

    with pl.Config(tbl_cols=-1, tbl_rows=max_rows, fmt_str_lengths=200, float_precision=decimals):
        display(frame)  # type: ignore[no-untyped-call]


def render(frame: pl.DataFrame, fmt: str, *, decimals: int = 4) -> str:
    """``frame`` in one of :data:`FORMATS`."""
    if fmt == "markdown":
        return to_markdown(frame, decimals=decimals)
    if fmt == "latex":
        return to_latex(frame, decimals=decimals)
    if fmt == "csv":
        return to_csv(frame)
    msg = f"unknown table format {fmt!r}; use one of {FORMATS}"
    raise ValueError(msg)
