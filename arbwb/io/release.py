"""One entry point for analyses: a release folder's samples, stored runs and corpus as frames,
each run paired with the samples it is scored against, and ``notes`` on what is missing."""

from __future__ import annotations

import glob
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from arbwb import schemas
from arbwb.errors import InputError
from arbwb.io.corpus import MANIFEST_NAME, Corpus, open_corpus
from arbwb.io.rankings import RunData, load_rankings
from arbwb.io.samples import SampleSet, load_samples

DEFAULT_RUNS_GLOB = "eval/*/*_details.jsonl"
#: Denominator rules: ``zero`` (arbwb) scores a sample without a ranking as 0 over all the
#: run's gold samples; ``skip`` (upstream's summaries, spec §4.8) averages evaluated ones only.
MISSING_RULES = ("zero", "skip")
UNITS = {"run": pl.String, "group": pl.String, "sample_id": pl.String}


@dataclass(frozen=True)
class Release:
    """Samples (from sample files, else from details rows), runs, corpus and what is missing;
    ``gold[group]`` is what every run of a group (``run_group[run]``, its eval folder) is
    scored against, so runs are only compared on the same samples."""

    samples: pl.DataFrame
    labels: pl.DataFrame
    spans: pl.DataFrame
    runs: dict[str, RunData]
    corpus: Corpus | None
    notes: list[str]
    run_group: dict[str, str] = field(default_factory=dict)
    gold: dict[str, pl.DataFrame] = field(default_factory=dict)
    root: Path | None = None  # the data root loaded (e.g. for ``repo_manifest.jsonl``)
    runs_glob: str = DEFAULT_RUNS_GLOB  # what the run set was read from (for skip messages)

    @property
    def groups(self) -> dict[str, list[str]]:
        """Run group (``eval/<R>`` folder name) -> its runs, in load order: a comparison unit."""
        out: dict[str, list[str]] = {}
        for run, group in self.run_group.items():
            out.setdefault(group, []).append(run)
        return out

    def gold_of(self, run: str) -> pl.DataFrame:
        """The gold LABELS ``run`` is scored against: its group's."""
        return self.gold[self.run_group[run]]

    def universe(self, group: str) -> pl.DataFrame:
        """SAMPLES rows a group's runs are scored over: the samples with gold in that group."""
        ids = self.gold[group]["sample_id"].unique()
        return self.samples.filter(pl.col("sample_id").is_in(ids.implode()))

    def run_universe(self, run: str) -> pl.DataFrame:
        """SAMPLES rows ``run`` is scored over: its group's universe, never the whole root."""
        return self.universe(self.run_group[run])

    def answered(self) -> pl.DataFrame:
        """``run, sample_id`` of every sample a run ranked (an ``ok`` record, possibly empty)."""
        frames = [
            run.submitted.filter(pl.col("status") == "ok").select(
                run=pl.lit(name), sample_id="sample_id"
            )
            for name, run in self.runs.items()
        ]
        empty = pl.DataFrame(schema={"run": pl.String, "sample_id": pl.String})
        return pl.concat([empty, *frames]).unique(maintain_order=True)

    def units(self, missing: str = "zero") -> pl.DataFrame:
        """UNITS rows: the samples each run's means are over under the ``missing`` rule
        (``zero``: every gold sample of the run's group; ``skip``: those the run answered)."""
        rule = check_missing(missing)
        frames = [
            self.gold[group]
            .select("sample_id")
            .unique(maintain_order=True)
            .select(run=pl.lit(run), group=pl.lit(group), sample_id="sample_id")
            for run, group in self.run_group.items()
        ]
        units = pl.concat([pl.DataFrame(schema=UNITS), *frames])
        if rule == "skip":
            units = units.join(self.answered(), on=["run", "sample_id"], how="semi")
        return units

    @property
    def rankings(self) -> pl.DataFrame:
        """Every run's RANKINGS rows in one frame (run order as loaded)."""
        return pl.concat(
            [schemas.empty(schemas.RANKINGS), *(r.rankings for r in self.runs.values())]
        )


def check_missing(missing: str) -> str:
    """``missing`` itself when it is one of :data:`MISSING_RULES`; else a clear error."""
    if missing not in MISSING_RULES:
        raise InputError(f"missing must be one of {MISSING_RULES}, got {missing!r}")
    return missing


def apply_missing(metrics: pl.DataFrame, done: pl.DataFrame, missing: str) -> pl.DataFrame:
    """METRICS rows under the ``missing`` rule: ``zero`` keeps every row (absent rankings
    already score 0), ``skip`` keeps the ``done`` (run, sample_id) pairs only."""
    if check_missing(missing) == "zero":
        return metrics
    return metrics.join(done.select("run", "sample_id"), on=["run", "sample_id"], how="semi")


def load_release(
    data_dir: str | Path, runs_glob: str | None = None, extra_runs: Sequence[str | Path] = ()
) -> Release:
    """Load ``benchmark/*/``, the runs matching ``runs_glob`` (relative to ``data_dir``; default
    without selective runs) plus ``extra_runs`` (files or globs), and ``corpus/<R>/``; runs
    are paired with their samples as docs/data-layout.md says (arbwb-defined)."""
    root = Path(data_dir)
    if not root.is_dir():
        raise InputError("data folder not found; pass a release root", path=root)
    notes: list[str] = []
    releases = _sample_releases(root, notes)
    pattern = runs_glob or DEFAULT_RUNS_GLOB
    paths = glob_files(root, pattern)
    if runs_glob is None and (selective := [p for p in paths if "_selective_" in p.name]):
        # upstream's selective details (spec §1.5, §4.7) rank no-gold samples too
        paths = [p for p in paths if p not in selective]
        names = ", ".join(p.name for p in selective)
        notes.append(f"selective (abstention) runs left out of the default run set: {names}")
    extra = [p for glob_ in extra_runs for p in glob_files(root, str(glob_))]
    paths += [p for p in dict.fromkeys(extra) if p not in paths]
    if not paths:
        notes.append(f"no runs match {pattern!r} under {root}")
    runs: dict[str, RunData] = {}
    run_group: dict[str, str] = {}
    for path, name in _run_names(paths, root).items():
        runs[name] = load_rankings(path, run=name)
        run_group[name] = path.parent.name
    gold = _group_gold(releases, runs, run_group, notes)
    samples, labels, spans = _merge_samples(releases, runs, run_group, gold, notes)
    return Release(
        samples=samples,
        labels=labels,
        spans=spans,
        runs=runs,
        corpus=_corpus(root, notes),
        notes=notes,
        run_group=run_group,
        gold=gold,
        root=root,
        runs_glob=pattern,
    )


def _sample_releases(root: Path, notes: list[str]) -> dict[str, SampleSet]:
    """Every ``benchmark/<R>/`` folder that holds sample files, loaded separately."""
    found: dict[str, SampleSet] = {}
    for folder in sorted((root / "benchmark").glob("*/")):
        if any(folder.glob("*.jsonl")):
            found[folder.name] = load_samples(folder)
    if not found:
        notes.append("no benchmark/<release>/ samples: queries, strata and spans are unavailable")
    return found


def glob_files(root: Path, pattern: str, *, recursive: bool = False) -> list[Path]:
    """Files matching ``pattern`` (relative to ``root`` unless absolute), sorted; ``**`` spans
    folders only when ``recursive``."""
    full = pattern if Path(pattern).is_absolute() else str(root / pattern)
    return [Path(p) for p in sorted(glob.glob(full, recursive=recursive)) if Path(p).is_file()]


def _run_names(paths: list[Path], root: Path) -> dict[Path, str]:
    """Run name = file stem without ``_details``; clashing stems get their folder as a prefix,
    and runs that still clash (one folder name in two places, e.g. a report's ``runs/<R>/``
    beside ``eval/<R>/``) are named by their path, so no run replaces another."""
    stems = [p.stem.removesuffix("_details") for p in paths]
    names = [
        f"{p.parent.name}/{stem}" if stems.count(stem) > 1 else stem
        for p, stem in zip(paths, stems, strict=True)
    ]
    return {
        p: (_path_name(p, root) if names.count(name) > 1 else name)
        for p, name in zip(paths, names, strict=True)
    }


def _path_name(path: Path, root: Path) -> str:
    """A run's path without ``_details.jsonl``, relative to the data root when inside it."""
    resolved, base = path.resolve(), root.resolve()
    shown = resolved.relative_to(base) if resolved.is_relative_to(base) else resolved
    return str(shown.with_name(path.stem.removesuffix("_details")))


def _gold_of(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("role") == "gold").select(list(schemas.LABELS))


def _group_gold(
    releases: dict[str, SampleSet],
    runs: dict[str, RunData],
    run_group: dict[str, str],
    notes: list[str],
) -> dict[str, pl.DataFrame]:
    """Gold labels per run group (see :func:`load_release` for the pairing rule)."""
    gold: dict[str, pl.DataFrame] = {}
    for group in dict.fromkeys(run_group.values()):
        members = [name for name, g in run_group.items() if g == group]
        if group in releases:
            gold[group] = _gold_of(releases[group].labels)
            continue
        embedded = [labels for m in members if (labels := runs[m].labels) is not None]
        if embedded:
            gold[group] = _union_gold(embedded, group, notes)
            notes.append(
                f"eval/{group}: no benchmark/{group}/ samples; gold, task and repo of its "
                f"{gold[group]['sample_id'].n_unique()} samples come from the details rows "
                "(queries unavailable)"
            )
        elif len(releases) == 1:
            only = next(iter(releases))
            gold[group] = _gold_of(releases[only].labels)
            notes.append(f"eval/{group}: scored against the only sample release, {only}")
        else:
            msg = (
                f"cannot tell which samples run {members[0]!r} ranks: it carries no gold and "
                f"there is no benchmark/{group}/; put it under eval/<release>/"
            )
            raise InputError(msg, path=runs[members[0]].path)
    return gold


def _union_gold(frames: list[pl.DataFrame], group: str, notes: list[str]) -> pl.DataFrame:
    """Union of the details gold of a group's runs; the first run's gold wins on disagreement."""
    tagged = pl.concat([_gold_of(f).with_columns(_run=pl.lit(i)) for i, f in enumerate(frames)])
    sets = tagged.group_by("sample_id", "_run", maintain_order=True).agg(pl.col("path").sort())
    first = sets.unique("sample_id", keep="first", maintain_order=True)
    other = (pl.col("_run") != pl.col("_run_first")) & (pl.col("path") != pl.col("path_first"))
    if disagree := sets.join(first, on="sample_id", suffix="_first").filter(other).height:
        notes.append(
            f"eval/{group}: {disagree} details rows disagree on gold; the first run's is used"
        )
    return tagged.join(first, on=["sample_id", "_run"], how="semi").drop("_run")


def _merge_samples(
    releases: dict[str, SampleSet],
    runs: dict[str, RunData],
    run_group: dict[str, str],
    gold: dict[str, pl.DataFrame],
    notes: list[str],
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Samples of all releases (first release wins a shared id) plus details-only samples
    (no query, gold or metadata: nulls), with their labels and spans."""
    frame = pl.concat([schemas.empty(schemas.SAMPLES), *(s.samples for s in releases.values())])
    repeated = frame.height - frame["sample_id"].n_unique()
    if repeated:
        notes.append(f"{repeated} sample ids appear in several releases; the first release's kept")
        frame = frame.unique("sample_id", keep="first", maintain_order=True)
    samples, labels = [frame], [s.labels for s in releases.values()]
    for name, run in runs.items():
        if run.details is None:
            continue
        known = pl.concat([f.select("sample_id") for f in samples])["sample_id"].implode()
        group = run_group[name]
        positive = pl.col("sample_id").is_in(gold[group]["sample_id"].implode())
        first = (
            run.details.filter(~pl.col("sample_id").is_in(known))
            .unique("sample_id", keep="first", maintain_order=True)
            .select(
                pl.col("sample_id", "task", "repo", "base_commit", "snapshot_id", "split"),
                stratum=pl.when(positive).then(pl.lit("positive")),
                source=pl.lit(f"eval/{group} details"),
            )
        )
        samples.append(schemas.conform(first, schemas.SAMPLES))
        labels.append(gold[group].join(first, on="sample_id", how="semi"))
    return (
        pl.concat(samples),
        pl.concat([schemas.empty(schemas.LABELS), *labels]).unique(maintain_order=True),
        pl.concat([schemas.empty(schemas.SPANS), *(s.spans for s in releases.values())]),
    )


def _corpus(root: Path, notes: list[str]) -> Corpus | None:
    """One corpus view over every ``corpus/*/`` manifest of the root (spec §1.4 merge rule)."""
    if not any((root / "corpus").glob(f"*/{MANIFEST_NAME}")):
        notes.append("no corpus/<release>/ found: budget (BCY) metrics and curves skipped")
        return None
    corpus = open_corpus(root)
    if len(corpus.manifests) > 1:
        names = [m.parent.name for m in corpus.manifests]
        notes.append(f"one corpus view over {len(names)} manifests {names}")
    return corpus
