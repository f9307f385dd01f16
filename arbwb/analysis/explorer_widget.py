"""Notebook 06 in JupyterLab: ipywidgets to filter and pick a sample, rendering
:mod:`.explorer`'s frames and :func:`arbwb.metrics.budget.pack`'s packing as HTML.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets
import polars as pl

from arbwb.analysis import explorer as ex
from arbwb.io.release import Release
from arbwb.metrics import budget as bm

ABSTAIN = "no gold: this sample asks the retriever to abstain"
NO_MATCH = "no sample matches these filters; loosen them"
GOLD_STYLE = "background:#ffe08a;font-weight:bold"
FILTERS = ("task", "repo", "stratum")
PACKED_SCHEMA = {"run": pl.String, "path": pl.String, "partial": pl.Boolean}


def packed_files(release: Release, sample_id: str, *, budget: int) -> pl.DataFrame | None:
    """``run, path, partial`` of the files :func:`budget.pack` takes at ``budget`` for one
    sample; None when the corpus lacks the sample's snapshot."""
    card = ex.sample_card(release.samples, release.labels, sample_id)
    snapshot = card["snapshot_id"]
    if release.corpus is None or not release.corpus.has(snapshot):
        return None
    top = (
        release.rankings.filter(
            pl.col("sample_id") == sample_id,
            pl.col("rank") <= bm.STORED_PREFIX,
            pl.col("path") != "",
        )
        .sort("run", "rank")
        .unique(subset=["run", "path"], keep="first", maintain_order=True)
    )
    if top.is_empty():
        return pl.DataFrame(schema=PACKED_SCHEMA)
    costs = release.corpus.file_costs({snapshot: top["path"].to_list()})
    ranked = top.join(costs.drop("snapshot_id"), on="path", how="left")
    # pack() needs the sample in ``gold``; an abstention sample gets a path no file has
    gold = pl.DataFrame({"sample_id": sample_id, "path": card["gold"] or [""]})
    counts = bm.pack(ranked, gold, budgets=[budget], thresholds=[1]).select(
        "run", "packed_files", "partial_files"
    )
    order = pl.col("n_tokens").is_not_null().cum_sum().over("run", order_by="rank")
    return (
        ranked.filter(pl.col("n_tokens").is_not_null())
        .with_columns(order.alias("nth"))
        .join(counts, on="run")
        .filter(pl.col("nth") <= pl.col("packed_files"))
        .with_columns(
            partial=(pl.col("nth") == pl.col("packed_files")) & (pl.col("partial_files") > 0)
        )
        .select("run", "path", "partial")
    )


def card_html(card: dict[str, Any]) -> str:
    """The sample's ids, query lines, gold files (or the abstain message) and given files."""
    gold = card["gold"]
    gold_text = (
        ", ".join(f'<span style="{GOLD_STYLE}">{html.escape(p)}</span>' for p in gold)
        if gold
        else html.escape(ABSTAIN)
    )
    query = "<br>".join(html.escape(line) for line in ex.query_lines(card["query"]))
    head = f"{card['sample_id']} · {card['task']} · {card['repo']} · stratum={card['stratum']}"
    return (
        f"<h4>{html.escape(head)}</h4><p>snapshot: {html.escape(str(card['snapshot_id']))}</p>"
        f'<p style="white-space:pre-wrap"><b>query</b><br>{query}</p>'
        f"<p><b>gold</b>: {gold_text}</p>"
        f"<p><b>given</b>: {html.escape(', '.join(card['given'])) or 'none'}</p>"
    )


def runs_html(
    lists: pl.DataFrame, packed: pl.DataFrame | None, runs: list[str], *, budget: int
) -> str:
    """One column per run, one row per rank: gold highlighted, files of ``packed``
    (:func:`packed_files`; None without a corpus) marked."""
    if lists.is_empty():
        return "<p>no run ranked any file for this sample</p>"
    shown = packed if packed is not None else pl.DataFrame(schema=PACKED_SCHEMA)
    marks = lists.join(shown, on=["run", "path"], how="left").with_columns(
        pl.when(pl.col("partial"))
        .then(pl.lit(" [partial]"))
        .when(pl.col("partial").is_not_null())
        .then(pl.lit(" [packed]"))
        .otherwise(pl.lit(""))
        .alias("mark")
    )
    cells = {(r["run"], r["rank"]): r for r in marks.iter_rows(named=True)}
    ranks = sorted({rank for _, rank in cells})
    header = "".join(f"<th>{html.escape(run)}</th>" for run in runs)
    body = "".join(
        f"<tr><th>{rank}</th>{''.join(_cell(cells.get((run, rank))) for run in runs)}</tr>"
        for rank in ranks
    )
    note = (
        f"<p>marked packed or partial: the files BCY packing takes at budget {budget} tokens</p>"
        if packed is not None
        else "<p>no corpus for this snapshot: packing not shown</p>"
    )
    return f"<table><tr><th>rank</th>{header}</tr>{body}</table>{note}"


def _cell(row: dict[str, Any] | None) -> str:
    """One ranked file: the path (highlighted when gold, tagged when given) and its mark."""
    if row is None:
        return "<td></td>"
    text = html.escape(row["path"]) + (" (given)" if row["given"] else "") + row["mark"]
    style = f' style="{GOLD_STYLE}"' if row["gold"] else ""
    return f"<td{style}>{text}</td>"


def render(release: Release, sample_id: str, *, depth: int = 10, budget: int = 8000) -> str:
    """The whole view of one sample as HTML: its card, then every run's top ``depth`` files."""
    card = ex.sample_card(release.samples, release.labels, sample_id)
    lists = ex.ranked_lists(release.rankings, release.labels, sample_id, depth=depth)
    packed = packed_files(release, sample_id, budget=budget)
    return card_html(card) + runs_html(lists, packed, sorted(release.runs), budget=budget)


def explorer(release: Release, *, depth: int = 10, budget: int = 8000) -> widgets.VBox:
    """Task/repo/stratum filters, a sample picker and a budget choice above the HTML view."""
    samples = release.samples
    filters = {
        name: widgets.Dropdown(
            options=[("any", ""), *((v, v) for v in sorted(samples[name].unique()))],
            description=name,
        )
        for name in FILTERS
    }
    picker = widgets.Dropdown(description="sample")
    budgets = sorted({*bm.DEFAULT_BUDGETS, budget})
    chooser = widgets.Dropdown(options=budgets, value=budget, description="budget")
    chooser.disabled = release.corpus is None
    view = widgets.HTML()

    def refresh(_: object = None) -> None:
        """Redraw the view for the picked sample (or say that no sample matches)."""
        picked = picker.value
        view.value = (
            render(release, picked, depth=depth, budget=chooser.value) if picked else NO_MATCH
        )

    def refilter(_: object = None) -> None:
        """Offer the samples matching the filters and pick the first (as notebook 06 does)."""
        active = {name: box.value for name, box in filters.items()}
        ids = ex.matching_samples(samples, **active)["sample_id"].to_list()
        picker.options = ids
        first = ids[0] if ids else None
        if picker.value == first:
            refresh()
        else:
            picker.value = first  # observed: redraws the view

    for box in filters.values():
        box.observe(refilter, names="value")
    picker.observe(refresh, names="value")
    chooser.observe(refresh, names="value")
    refilter()
    return widgets.VBox(
        [widgets.HBox(list(filters.values())), widgets.HBox([picker, chooser]), view]
    )
