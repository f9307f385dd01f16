"""Sample explorer (notebook 06): one sample by id or filter, its query, gold and every run's
list; frame in, frame out, so JupyterLab and papermill share the views.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from arbwb.analysis.result import Table
from arbwb.io.release import Release

FILTER_COLUMNS = ("task", "repo", "stratum", "split")
QUERY_UNAVAILABLE = (
    "query: unavailable (no benchmark/<release>/ sample files under this data root; "
    "stored runs do not carry queries)"
)


def pick_sample(samples: pl.DataFrame, sample_id: str = "", **filters: str) -> str:
    """``sample_id`` if given (must exist), else the first sample in file order matching the
    equality ``filters`` (empty values ignored, so notebook parameters default to ``""``)."""
    matching = matching_samples(samples, **filters)
    if sample_id:
        if sample_id not in samples["sample_id"].to_list():
            msg = f"sample id {sample_id!r} is not in this release; leave it empty to filter"
            raise ValueError(msg)
        return sample_id
    if matching.is_empty():
        active = {k: v for k, v in filters.items() if v}
        msg = f"no sample matches {active}; loosen the filters"
        raise ValueError(msg)
    return str(matching["sample_id"][0])


def sample_card(samples: pl.DataFrame, labels: pl.DataFrame, sample_id: str) -> dict[str, Any]:
    """Task, repo, snapshot, stratum, parsed query (None without ``benchmark/`` samples),
    gold and given paths of one sample."""
    rows = samples.filter(pl.col("sample_id") == sample_id)
    if rows.is_empty():
        msg = f"sample id {sample_id!r} is not in the samples frame"
        raise ValueError(msg)
    row = rows.row(0, named=True)
    mine = labels.filter(pl.col("sample_id") == sample_id)
    return {
        "sample_id": sample_id,
        "task": row["task"],
        "repo": row["repo"],
        "snapshot_id": row["snapshot_id"],
        "stratum": row["stratum"],
        "no_gold_reason": row["no_gold_reason"],
        "query": None if row["query"] is None else json.loads(row["query"]),
        "gold": mine.filter(pl.col("role") == "gold")["path"].to_list(),
        "given": mine.filter(pl.col("role") == "given")["path"].to_list(),
    }


def ranked_lists(
    rankings: pl.DataFrame, labels: pl.DataFrame, sample_id: str, *, depth: int = 10
) -> pl.DataFrame:
    """Every run's top ``depth`` files for one sample: ``run, rank, path, score, gold, given``."""
    if depth < 1:
        msg = f"depth must be at least 1, got {depth}"
        raise ValueError(msg)
    mine = labels.filter(pl.col("sample_id") == sample_id)
    gold = mine.filter(pl.col("role") == "gold")["path"].implode()
    given = mine.filter(pl.col("role") == "given")["path"].implode()
    return (
        rankings.filter(pl.col("sample_id") == sample_id, pl.col("rank") <= depth)
        .select("run", "rank", "path", "score")
        .with_columns(
            pl.col("path").is_in(gold).alias("gold"), pl.col("path").is_in(given).alias("given")
        )
        .sort("run", "rank")
    )


def first_gold_ranks(
    rankings: pl.DataFrame, labels: pl.DataFrame, sample_id: str, runs: list[str]
) -> pl.DataFrame:
    """Per run in ``runs``: ``first_gold_rank`` in the full stored ranking (null when no gold
    file is ranked or the run never answered) and the gold files found."""
    gold = labels.filter(pl.col("sample_id") == sample_id, pl.col("role") == "gold")["path"]
    hits = (
        rankings.filter(pl.col("sample_id") == sample_id, pl.col("path").is_in(gold.implode()))
        .group_by("run")
        .agg(
            pl.col("rank").min().alias("first_gold_rank"),
            pl.col("path").n_unique().cast(pl.Int64).alias("gold_found"),
        )
    )
    return (
        pl.DataFrame({"run": runs}, schema={"run": pl.String})
        .join(hits, on="run", how="left")
        .with_columns(
            pl.col("gold_found").fill_null(0), pl.lit(gold.len(), dtype=pl.Int64).alias("n_gold")
        )
        .sort(["first_gold_rank", "run"], nulls_last=True)
    )


def mark(rows: pl.DataFrame) -> pl.DataFrame:
    """Ranked lists with a readable ``hit`` column: ``GOLD``, ``given`` or empty."""
    return rows.with_columns(
        pl.when(pl.col("gold"))
        .then(pl.lit("GOLD"))
        .when(pl.col("given"))
        .then(pl.lit("given"))
        .otherwise(pl.lit(""))
        .alias("hit")
    )


def query_lines(query: Mapping[str, Any] | None, *, width: int = 400) -> list[str]:
    """``key: value`` lines of a raw query, values cut at ``width`` characters; one line
    saying so when queries are unavailable (``None``)."""
    if query is None:
        return [QUERY_UNAVAILABLE]
    lines = []
    for key, value in query.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"{key}: {text if len(text) <= width else text[:width] + ' ...'}")
    return lines


@dataclass(frozen=True)
class ExplorerOptions:
    """Which sample (``sample_id``, else the first matching the filters) and files per run."""

    sample_id: str = ""
    task: str = ""
    repo: str = ""
    stratum: str = ""
    depth: int = 10


@dataclass(frozen=True)
class ExplorerResult:
    """One sample's card, every run's top ``depth`` files marked by :func:`mark`, and the
    first-gold ranks; or a skip."""

    card: dict[str, Any] = field(default_factory=dict)
    ranked_lists: pl.DataFrame = field(default_factory=pl.DataFrame)
    first_gold_rank: pl.DataFrame = field(default_factory=pl.DataFrame)
    skipped: str | None = None

    @property
    def card_lines(self) -> list[str]:
        """The sample as text: ids, snapshot, query lines, gold and given files."""
        card = self.card
        if not card:
            return []
        gold = card["gold"] or f"none (no-gold: {card['no_gold_reason']})"
        return [
            f"{card['sample_id']}  {card['task']}  {card['repo']}  stratum={card['stratum']}",
            f"snapshot: {card['snapshot_id']}",
            *query_lines(card["query"]),
            f"gold : {gold}",
            f"given: {card['given']}",
        ]

    def tables(self) -> Sequence[Table]:
        """The ranked lists and first-gold ranks of the picked sample (none when skipped)."""
        if not self.card:
            return []
        return [
            Table("ranked_lists", self.ranked_lists),
            Table("first_gold_rank", self.first_gold_rank),
        ]

    def records(self) -> Mapping[str, Any]:
        """The sample, its gold and given files, and each run's first-gold rank and top file."""
        if not self.card:
            return {"skipped": self.skipped}
        top1 = self.ranked_lists.filter(pl.col("rank") == 1).select("run", "path")
        return {
            "sample_id": self.card["sample_id"],
            "task": self.card["task"],
            "repo": self.card["repo"],
            "gold": self.card["gold"],
            "given": self.card["given"],
            "query_available": self.card["query"] is not None,
            "first_gold_rank": dict(
                self.first_gold_rank.select("run", "first_gold_rank").iter_rows()
            ),
            "top1": dict(top1.iter_rows()),
        }


def run(release: Release, options: ExplorerOptions) -> ExplorerResult:
    """Pick the sample and build its views; a release without samples is a skip with a reason."""
    if release.samples.is_empty():
        where = release.root if release.root is not None else "this release"
        return ExplorerResult(skipped=f"no samples found under {where}")
    picked = pick_sample(
        release.samples,
        options.sample_id,
        task=options.task,
        repo=options.repo,
        stratum=options.stratum,
    )
    rankings = release.rankings
    lists = ranked_lists(rankings, release.labels, picked, depth=options.depth)
    return ExplorerResult(
        card=sample_card(release.samples, release.labels, picked),
        ranked_lists=mark(lists).drop("gold", "given"),
        first_gold_rank=first_gold_ranks(rankings, release.labels, picked, sorted(release.runs)),
    )


def matching_samples(samples: pl.DataFrame, **filters: str) -> pl.DataFrame:
    """The samples rows (file order) passing the equality ``filters``, empty values ignored
    (shared by :func:`pick_sample` and the JupyterLab picker)."""
    unknown = sorted(set(filters) - set(FILTER_COLUMNS))
    if unknown:
        msg = f"unknown sample filters {unknown}; use {list(FILTER_COLUMNS)}"
        raise ValueError(msg)
    active = {k: v for k, v in filters.items() if v}
    return samples.filter(*[pl.col(k) == v for k, v in active.items()]) if active else samples
