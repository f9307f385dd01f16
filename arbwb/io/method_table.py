"""Methods across subsets: which stored runs (one per ``eval/<release>/`` folder) are one
method, by a method table (``data/methods.csv``: the labels and families of spec §13.1), else
the run's stem and :func:`default_family` (arbwb-defined)."""

from __future__ import annotations

import csv
from pathlib import Path

import polars as pl

from arbwb.errors import InputError
from arbwb.io.rankings import default_run_name
from arbwb.io.release import Release
from arbwb.io.runmeta import run_meta
from arbwb.paths import DATA_DIR

METHODS_FILE = DATA_DIR / "methods.csv"
ANY_RELEASE = "*"
COLUMNS = ("release", "stem", "method", "family")
METHOD_TABLE = {name: pl.String for name in COLUMNS}
#: One row per loaded run: its comparison group (eval folder), stem, method, family and whether
#: the method table named it (``table``) or :func:`default_family` found it (``default``).
RUN_METHODS = {
    "run": pl.String,
    "group": pl.String,
    "stem": pl.String,
    "method": pl.String,
    "family": pl.String,
    "source": pl.String,
}
#: Substring of a lower-cased stem -> family, first match wins (rrf before repomap: fusions of
#: RepoMap are fusions). BM25 is in the lexical family as in spec §13.1.
_FAMILY_HINTS = (
    ("rrf", "rank fusion"),
    ("fusion", "rank fusion"),
    ("repomap", "structure"),
    ("grep", "grep"),
    ("bm25", "lexical"),
    ("lexical", "lexical"),
)


#: Summary ``mode`` (spec §4.8; ``selective_`` prefix removed) -> family.
_MODE_FAMILIES = {
    "corpus": "lexical", "lexical": "lexical", "bm25": "lexical", "bm25-okapi": "lexical",
    "grep": "grep", "repomap": "structure", "rank_fusion": "rank fusion", "embedding": "embedding",
}  # fmt: skip
#: The family of a run nothing identifies.
OTHER = "other"


def default_family(stem: str, *, family: str | None = None, mode: str | None = None) -> str:
    """Family of a run no method table names: the one its summary states, else its mode's,
    else a hint in its stem, else ``other`` (arbwb-defined)."""
    if family:
        return family
    by_mode = _MODE_FAMILIES.get((mode or "").removeprefix("selective_"))
    if by_mode:
        return by_mode
    lower = stem.lower()
    return next((found for hint, found in _FAMILY_HINTS if hint in lower), OTHER)


def read_methods(path: str | Path | None = None) -> pl.DataFrame:
    """The method table (``#`` lines are comments; None or "" reads :data:`METHODS_FILE`): all
    four columns non-empty, each (release, stem) once."""
    source = METHODS_FILE if path is None or str(path) == "" else Path(path)
    if not source.is_file():
        msg = "method table not found; pass a CSV with columns " + ",".join(COLUMNS)
        raise InputError(msg, path=source)
    text = source.read_text(encoding="utf-8").splitlines()
    lines = [
        (n, t) for n, t in enumerate(text, start=1) if t.strip() and not t.lstrip().startswith("#")
    ]
    if not lines:
        raise InputError("empty method table: needs a header " + ",".join(COLUMNS), path=source)
    (header_line, header), *body = lines
    if tuple(f.strip() for f in next(csv.reader([header]))) != COLUMNS:
        msg = f"header must be {','.join(COLUMNS)}, got {header!r}"
        raise InputError(msg, path=source, line=header_line)
    rows: list[dict[str, str]] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in body:
        values = [v.strip() for v in next(csv.reader([line]))]
        if len(values) != len(COLUMNS):
            msg = f"expected {len(COLUMNS)} comma-separated values, got {len(values)}"
            raise InputError(msg, path=source, line=number)
        row = dict(zip(COLUMNS, values, strict=True))
        if empty := next((name for name, value in row.items() if not value), None):
            raise InputError("must not be empty", path=source, line=number, field=empty)
        key = (row["release"], row["stem"])
        if key in seen:
            msg = f"release {key[0]!r} stem {key[1]!r} already on line {seen[key]}"
            raise InputError(msg, path=source, line=number, field="stem")
        seen[key] = number
        rows.append(row)
    return pl.DataFrame(rows, schema=METHOD_TABLE, orient="row")


def run_methods(release: Release, table: pl.DataFrame | None = None) -> pl.DataFrame:
    """RUN_METHODS rows for every run of ``release`` (in load order): its own ``eval/<release>``
    row, else a ``*`` row, else its stem and :func:`default_family`."""
    named: dict[tuple[str, str], tuple[str, str]] = {}
    if table is not None:
        named = {(r, s): (m, f) for r, s, m, f in table.select(COLUMNS).iter_rows()}
    rows = []
    for name, run in release.runs.items():
        group = release.run_group.get(name, "")
        stem = default_run_name(run.path)
        found = named.get((group, stem)) or named.get((ANY_RELEASE, stem))
        if found is None:
            meta = run_meta(run.path, stem)
            method, family = stem, default_family(stem, family=meta.family, mode=meta.mode)
        else:
            method, family = found
        rows.append((name, group, stem, method, family, "table" if found else "default"))
    return pl.DataFrame(rows, schema=RUN_METHODS, orient="row")


def method_groups(methods: pl.DataFrame) -> dict[str, str]:
    """Comparison group of each method: its runs' eval folders joined by ``+`` (sorted), so
    methods are compared only on the same samples (arbwb-defined)."""
    spans = methods.group_by("method", maintain_order=True).agg(
        pl.col("group").unique().sort().str.join("+").alias("span")
    )
    return dict(spans.select("method", "span").iter_rows())


def families(methods: pl.DataFrame) -> dict[str, str]:
    """Family of each method; a method whose runs disagree gets them joined by ``/``."""
    found = methods.group_by("method", maintain_order=True).agg(
        pl.col("family").unique(maintain_order=True).str.join("/")
    )
    return dict(found.iter_rows())
