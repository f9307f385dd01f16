"""ContextBench (notebook 07): gold context retrieved by agents and ranked lists, beside ARB;
a part that lacks its inputs is ``None`` and says why in ``notes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from arbwb.analysis import board as boards
from arbwb.analysis import leaderboard as lb
from arbwb.analysis.result import Resampling, Table
from arbwb.contextbench import compare as cc
from arbwb.contextbench.aggregate import aggregate, aggregate_editloc, metrics_frame
from arbwb.contextbench.inputs import gold_from_rows
from arbwb.contextbench.ranked import ceilings, ranked_means, score_ranked
from arbwb.contextbench.score import (
    Scored,
    editloc_frame,
    results_frame,
    score_predictions,
    step_coverage_frame,
)
from arbwb.contextbench.sources import SourceChoice, choose_source
from arbwb.contextbench.symbols import optional_finder
from arbwb.io import method_table as mt
from arbwb.io.contextbench import ContextBenchRows, load_rows
from arbwb.io.contextbench_agents import load_predictions
from arbwb.io.corpus import open_corpus
from arbwb.io.rankings import load_rankings
from arbwb.io.release import Release

SIDE_SKIP = "skipped: needs both ARB runs and ContextBench rows"
_AGG_KEYS = ("coverage", "precision", "f1_mean", "f1_harmonic", "auc_coverage", "redundancy")
_RANKED_KEYS = ("file_coverage", "file_precision", "line_coverage", "line_precision", "n_error")


@dataclass(frozen=True)
class ContextBenchOptions:
    """Where the ContextBench inputs lie under ``data_dir`` (empty: the defaults under
    ``contextbench/``) and how to score them; ``symbols`` asks for the block level."""

    data_dir: str | Path
    rows_path: str = ""
    predictions_glob: str = ""
    rankings_glob: str = ""
    corpus_dir: str = ""
    repos_dir: str = ""
    methods_path: str = ""
    ks: tuple[int, ...] = (1, 3, 5, 10)
    arb_k: int = 20
    symbols: bool = False
    resampling: Resampling = field(default_factory=Resampling)


@dataclass(frozen=True)
class Composition:
    """The loaded rows: instances, per benchmark and language, spans per row, path forms."""

    rows: ContextBenchRows
    by_source: pl.DataFrame
    per_row: pl.DataFrame
    forms: pl.DataFrame

    def records(self) -> dict[str, Any]:
        """Instance, exclusion and span counts; languages, benchmarks and quirks hit."""
        inst, gold = self.rows.instances, self.rows.gold
        quirks = gold.filter(pl.col("quirk").is_not_null())
        return {
            "n_instances": inst.height,
            "n_excluded": self.rows.excluded.height,
            "n_spans": gold.height,
            "languages": _counts(inst, "language"),
            "benchmarks": _counts(inst, "benchmark"),
            "quirks": _counts(quirks, "quirk"),
        }


@dataclass(frozen=True)
class AgentScores:
    """Agent runs scored (§5-§8) with the leaderboard's intervals and tests on top."""

    runs: tuple[str, ...]
    results: pl.DataFrame  # RESULTS
    aggregate: pl.DataFrame  # AGGREGATE
    editloc: pl.DataFrame  # EditLoc per run
    errors: pl.DataFrame  # run, error, len
    steps: pl.DataFrame  # STEP_COVERAGE
    metrics: pl.DataFrame  # METRICS (error rows as zeros)
    board: pl.DataFrame  # the long leaderboard
    tests: pl.DataFrame  # paired tests, Holm-corrected

    @property
    def macro(self) -> pl.DataFrame:
        """The README/paper aggregation: macro over valid instances."""
        return self.aggregate.filter(pl.col("aggregation") == "macro")

    @property
    def headline(self) -> pl.DataFrame:
        """Overall, sample-weighted leaderboard rows."""
        overall = pl.col("scope") == "overall"
        return self.board.filter(overall, pl.col("aggregation") == "weighted")

    @property
    def multi_step(self) -> pl.DataFrame:
        """Step coverage of the runs with more than one step (those a step curve shows)."""
        most = self.steps.group_by("run").agg(pl.col("num_steps").max())
        multi = most.filter(pl.col("num_steps") > 1)["run"]
        return self.steps.filter(pl.col("run").is_in(multi.implode()))

    def records(self) -> dict[str, Any]:
        """Error counts, every aggregate and the headline leaderboard values."""
        return {
            "errors": {f"{r}/{e}": n for r, e, n in self.errors.iter_rows()},
            "aggregate": {
                f"{r['run']}/{r['level']}/{r['aggregation']}": {
                    k: r[k] for k in (*_AGG_KEYS, "n_valid", "n_error")
                }
                for r in self.aggregate.iter_rows(named=True)
            },
            "scores": _values(self.headline, "run", "metric"),
        }


@dataclass(frozen=True)
class RankedLists:
    """Ranked file lists read as whole-file context at every k (§13) and the gold's ceilings."""

    ranked: pl.DataFrame  # RANKED at every k
    means: pl.DataFrame  # :func:`arbwb.contextbench.ranked.ranked_means`
    ceilings: pl.DataFrame | None  # CEILINGS; None without any checkout source

    def curve(self, level: str) -> pl.DataFrame:
        """run, k, coverage, precision at ``level`` (file or line) for the trade-off figure."""
        return self.means.select(
            "run", "k", coverage=f"{level}_coverage", precision=f"{level}_precision"
        ).drop_nulls()

    def records(self) -> dict[str, Any]:
        """Means per run@k and the mean ceilings."""
        out: dict[str, Any] = {
            "ranked": {
                f"{r['run']}@{r['k']}": {k: r[k] for k in _RANKED_KEYS}
                for r in self.means.iter_rows(named=True)
            }
        }
        if self.ceilings is not None:
            cols = pl.col("max_file_cov", "max_line_cov", "perfect_line_precision")
            out["ceilings"] = self.ceilings.select(cols.mean()).row(0, named=True)
        return out


@dataclass(frozen=True)
class ContextBenchResult:
    """Everything notebook 07 shows; parts are None when their inputs are absent."""

    notes: tuple[str, ...]
    arb_k: int
    skipped: str | None = None  # no rows: every ContextBench part is None
    composition: Composition | None = None
    sources: SourceChoice | None = None
    block_level: bool = False  # a symbol finder was used
    agents: AgentScores | None = None
    ranked: RankedLists | None = None
    side: cc.Comparison | None = None

    def tables(self) -> Sequence[Table]:
        """Composition, agent scores, ranked lists and the side-by-side frames, as available."""
        out: list[Table] = []
        if self.composition is not None:
            c = self.composition
            out += [Table("composition", c.by_source), Table("spans_per_row", c.per_row)]
            out.append(Table("path_forms", c.forms))
        if self.agents is not None:
            a = self.agents
            out += [Table("aggregate", a.aggregate), Table("editloc", a.editloc)]
            out += [Table("errors", a.errors), Table("scores", a.headline)]
            out.append(Table("significance", a.tests))
        if self.ranked is not None:
            out.append(Table("ranked_lists", self.ranked.means))
            if self.ranked.ceilings is not None:
                out.append(Table("ceilings", self.ranked.ceilings))
        if self.side is not None:
            out.append(Table("file_level", self.side.frame, latex=False))
            out.append(Table("file_level_scores", self.side.scores))
            out.append(Table("file_level_significance", self.side.tests))
        return out

    def records(self) -> Mapping[str, Any]:
        """The notebook's record keys, in its order; ``skipped`` when there are no rows."""
        out: dict[str, Any] = {}
        if self.skipped is not None:
            out["skipped"] = self.skipped
        if self.composition is not None and self.sources is not None:
            out |= self.composition.records()
            out["sources"] = {
                "repos": self.sources.repos,
                "demo_bytes": self.sources.demo_bytes,
                "corpus": self.sources.corpus,
                "symbols": self.block_level,
            }
            out["runs"] = [] if self.agents is None else list(self.agents.runs)
        if self.agents is not None:
            out |= self.agents.records()
        if self.ranked is not None:
            out |= self.ranked.records()
        if self.agents is not None and self.agents.steps.height:
            line = self.agents.macro.filter(pl.col("level") == "line")
            out["auc_line_macro"] = dict(line.select("run", "auc_coverage").iter_rows())
        side = self.side
        out["side_by_side"] = {"skipped": SIDE_SKIP} if side is None else _side(side, self.arb_k)
        return out


def _side(side: cc.Comparison, k: int) -> dict[str, Any]:
    """The side-by-side record: k, rows, runs per benchmark, scores, significant pairs."""
    runs = side.frame.group_by("benchmark").agg("run").iter_rows()
    return {
        "k": k,
        "rows": side.frame.height,
        "runs": {b: sorted(set(r)) for b, r in runs},
        "scores": _values(side.scores, "benchmark", "run", "metric"),
        "n_significant": int(side.tests["significant"].sum()),
    }


def run(release: Release, options: ContextBenchOptions) -> ContextBenchResult:
    """Score the ContextBench rows, runs and ranked lists under ``options.data_dir``, and set
    the ARB runs of ``release`` beside them; no rows means every ContextBench part skips.
    """
    root = Path(options.data_dir)
    cb_dir = root / "contextbench"
    rows_file = Path(options.rows_path) if options.rows_path else cb_dir / "rows.parquet"
    if not rows_file.is_file():
        skipped = f"no ContextBench rows at {rows_file} (pass rows_path)"
        return ContextBenchResult((skipped, SIDE_SKIP), options.arb_k, skipped)
    rows = load_rows(rows_file, on_error="exclude")
    corpus = open_corpus(options.corpus_dir) if options.corpus_dir else release.corpus
    sources = choose_source(repos_dir=options.repos_dir, demo_dir=cb_dir, corpus=corpus)
    finder, symbols_note = optional_finder(options.symbols)
    excluded = f"{rows.excluded.height} rows excluded: {rows.excluded.to_dicts()}"
    notes = [f"{rows.instances.height} instances; {excluded}"]
    notes += [sources.used, *([symbols_note] if symbols_note else [])]
    pattern = options.predictions_glob or "contextbench/predictions/*"
    predictions = [load_predictions(p) for p in sorted(root.glob(pattern))]
    notes.append(f"{len(predictions)} runs: {[p.run for p in predictions]}")
    agents = None
    if predictions:
        scored = score_predictions(predictions, rows, source=sources.source, symbol_finder=finder)
        agents = _agent_scores(scored, rows, options.resampling)
    rank_paths = sorted(root.glob(options.rankings_glob or "contextbench/rankings/*.jsonl"))
    rankings = pl.concat([load_rankings(p).rankings for p in rank_paths]) if rank_paths else None
    ranked = None
    if rankings is not None:
        ranked = _ranked(rankings, rows, options.ks, sources)
    else:
        notes.append("no ranked file lists found")
    side = None
    if agents is not None and release.runs:
        at_k = None
        if rankings is not None:
            gold = gold_from_rows(rows)
            at_k = score_ranked(rankings, gold, [options.arb_k], source=sources.source)
        side = _side_by_side(release, rows, agents.metrics, at_k, options)
    else:
        notes.append(
            f"{SIDE_SKIP} (ARB runs: {len(release.runs)}, ContextBench runs: {len(predictions)})"
        )
    return ContextBenchResult(
        tuple(notes),
        options.arb_k,
        composition=_composition(rows),
        sources=sources,
        block_level=finder is not None,
        agents=agents,
        ranked=ranked,
        side=side,
    )


def _composition(rows: ContextBenchRows) -> Composition:
    """Instances per benchmark and language, span counts per row, gold path forms and quirks."""
    inst = rows.instances
    spans = pl.col("n_spans")
    per_row = inst.select(
        n=pl.len(),
        spans=spans.sum(),
        spans_min=spans.min(),
        spans_median=spans.median(),
        spans_mean=spans.mean(),
        spans_max=spans.max(),
    )
    by_source = inst.group_by("benchmark", "language").len().sort("benchmark", "language")
    forms = rows.gold.group_by("path_form", "quirk").len().sort("path_form")
    return Composition(rows, by_source, per_row, forms)


def _agent_scores(scored: Sequence[Scored], rows: ContextBenchRows, rs: Resampling) -> AgentScores:
    """Frames of the scored runs, the three aggregations, EditLoc, errors, intervals, tests."""
    results = results_frame(scored)
    editloc_rows = editloc_frame(scored)
    metrics = metrics_frame(results, editloc_rows)
    errors = results.filter(pl.col("error").is_not_null()).group_by("run", "error").len()
    return AgentScores(
        runs=tuple(s.run for s in scored),
        results=results,
        aggregate=aggregate(results),
        editloc=aggregate_editloc(editloc_rows),
        errors=errors.sort("run", "error"),
        steps=step_coverage_frame(scored),
        metrics=metrics,
        board=boards.scores(
            metrics, rows.samples, n_boot=rs.n_boot, seed=rs.seed, cluster=rs.cluster
        ),
        tests=boards.pairwise_tests(
            metrics, rows.samples, n_perm=rs.n_perm, seed=rs.seed, cluster=rs.cluster
        ),
    )


def _ranked(
    rankings: pl.DataFrame, rows: ContextBenchRows, ks: Sequence[int], sources: SourceChoice
) -> RankedLists:
    """Ranked lists at every k and, with a checkout source, the ceilings of the gold."""
    gold = gold_from_rows(rows)
    ranked = score_ranked(rankings, gold, list(ks), source=sources.source)
    ceil = None if sources.source is None else ceilings(gold, sources.source)
    return RankedLists(ranked, ranked_means(ranked), ceil)


def _side_by_side(
    release: Release,
    rows: ContextBenchRows,
    cb_metrics: pl.DataFrame,
    cb_ranked: pl.DataFrame | None,
    options: ContextBenchOptions,
) -> cc.Comparison:
    """ARB recall@k/precision@k of every release run beside ContextBench file level."""
    rs = options.resampling
    return cc.compare(
        lb.release_metrics(release, metrics=cc.arb_metric_names(options.arb_k)),
        release.samples,
        cb_metrics,
        rows.samples,
        arb_runs=mt.run_methods(release, mt.read_methods(options.methods_path or None)),
        cb_ranked=cb_ranked,
        k=options.arb_k,
        n_boot=rs.n_boot,
        n_perm=rs.n_perm,
        seed=rs.seed,
    )


def _counts(frame: pl.DataFrame, column: str) -> dict[str, int]:
    """Rows per value of ``column``, sorted by value."""
    return dict(frame.group_by(column).len().sort(column).iter_rows())


def _values(frame: pl.DataFrame, *keys: str) -> dict[str, list[Any]]:
    """``"k1/k2/..."`` -> [value, ci_low, ci_high, n] of leaderboard-style rows."""
    return {
        "/".join(str(r[k]) for k in keys): [r["value"], r["ci_low"], r["ci_high"], r["n"]]
        for r in frame.iter_rows(named=True)
    }
