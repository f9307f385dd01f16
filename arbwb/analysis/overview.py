"""Dataset composition (notebook 00): samples by repository, language, task and stratum, plus
the corpus scale (:mod:`arbwb.analysis.corpus_scale`). Languages come from an optional
``repo_manifest.jsonl``, else the corpus, else ``"unknown"`` (docs/overview.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from arbwb.analysis import corpus_scale as cs
from arbwb.analysis.result import Table
from arbwb.errors import InputError
from arbwb.io.release import Release
from arbwb.jsonio import iter_jsonl

REPO_MANIFEST = "repo_manifest.jsonl"
UNKNOWN_LANGUAGE = "unknown"
POSITIVE_TASKS = ("code2test", "comment2context", "trace2code", "edit2ripple")
NO_GOLD_STRATA = ("natural", "counterfactual")
LANGUAGES = {"repo": pl.String, "language": pl.String}


def repo_languages(data_dir: str | Path) -> pl.DataFrame:
    """``repo, language`` from ``<data_dir>/repo_manifest.jsonl``; empty frame when absent."""
    path = Path(data_dir) / REPO_MANIFEST
    rows: dict[str, str] = {}
    if path.is_file():
        for line, obj in iter_jsonl(path, allow_empty=True):
            repo, language = obj.get("repo"), obj.get("language")
            if not isinstance(repo, str) or "/" not in repo:
                raise InputError(
                    f"expected OWNER/NAME, got {repo!r}", path=path, line=line, field="repo"
                )
            rows[repo] = language if isinstance(language, str) and language else UNKNOWN_LANGUAGE
    return pl.DataFrame({"repo": list(rows), "language": list(rows.values())}, schema=LANGUAGES)


def _with_language(samples: pl.DataFrame, languages: pl.DataFrame | None) -> pl.DataFrame:
    if languages is None or languages.is_empty():
        return samples.with_columns(pl.lit(UNKNOWN_LANGUAGE).alias("language"))
    return samples.join(languages.select("repo", "language"), on="repo", how="left").with_columns(
        pl.col("language").fill_null(UNKNOWN_LANGUAGE)
    )


def repo_table(samples: pl.DataFrame, languages: pl.DataFrame | None = None) -> pl.DataFrame:
    """The paper's repository table: one row per repository, counts per task and stratum,
    sorted by total desc, then repo (spec §12); missing combinations are 0."""
    frame = _with_language(samples, languages)
    counts = [
        (pl.col("task") == task).sum().cast(pl.Int64).alias(task) for task in POSITIVE_TASKS
    ] + [(pl.col("stratum") == s).sum().cast(pl.Int64).alias(s) for s in NO_GOLD_STRATA]
    return (
        frame.group_by("repo", "language")
        .agg(
            pl.col("snapshot_id").n_unique().cast(pl.Int64).alias("snapshots"),
            *counts,
            (pl.col("stratum") == "positive").sum().cast(pl.Int64).alias("positives"),
            pl.len().cast(pl.Int64).alias("total"),
        )
        .sort(["total", "repo"], descending=[True, False])
    )


def totals_row(table: pl.DataFrame, samples: pl.DataFrame) -> pl.DataFrame:
    """``table`` with a final ``all`` row: column sums, distinct snapshots and languages."""
    numeric = [c for c in table.columns if c not in ("repo", "language", "snapshots")]
    total = table.select(
        pl.lit("all").alias("repo"),
        pl.lit(f"{table['language'].n_unique()} languages").alias("language"),
        pl.lit(samples["snapshot_id"].n_unique()).cast(pl.Int64).alias("snapshots"),
        *[pl.col(c).sum().cast(pl.Int64) for c in numeric],
    )
    return pl.concat([table, total.select(table.columns)])


def task_strata(samples: pl.DataFrame) -> pl.DataFrame:
    """Counts ``task, stratum, n, share`` (share of all samples), sorted by task and stratum."""
    return (
        samples.group_by("task", "stratum")
        .agg(pl.len().cast(pl.Int64).alias("n"))
        .with_columns((pl.col("n") / pl.col("n").sum()).alias("share"))
        .sort("task", "stratum")
    )


def language_table(samples: pl.DataFrame, languages: pl.DataFrame | None = None) -> pl.DataFrame:
    """Counts ``language, repos, samples`` sorted by samples desc, then language."""
    return (
        _with_language(samples, languages)
        .group_by("language")
        .agg(
            pl.col("repo").n_unique().cast(pl.Int64).alias("repos"),
            pl.len().cast(pl.Int64).alias("samples"),
        )
        .sort(["samples", "language"], descending=[True, False])
    )


#: File extension -> language for :func:`infer_languages`; only code files vote (docs, config
#: and data files do not), so a repository's language is its most common code language.
EXTENSION_LANGUAGES = {
    ".py": "Python", ".pyi": "Python", ".go": "Go", ".rs": "Rust", ".java": "Java",
    ".kt": "Kotlin", ".kts": "Kotlin", ".scala": "Scala", ".js": "JavaScript",
    ".mjs": "JavaScript", ".cjs": "JavaScript", ".jsx": "JavaScript", ".ts": "TypeScript",
    ".tsx": "TypeScript", ".mts": "TypeScript", ".cts": "TypeScript", ".rb": "Ruby",
    ".php": "PHP", ".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++", ".cxx": "C++",
    ".hpp": "C++", ".hh": "C++", ".cs": "C#", ".swift": "Swift", ".m": "Objective-C",
    ".ex": "Elixir", ".exs": "Elixir", ".erl": "Erlang", ".clj": "Clojure", ".hs": "Haskell",
    ".lua": "Lua", ".dart": "Dart", ".jl": "Julia", ".zig": "Zig", ".r": "R", ".ml": "OCaml",
    ".sh": "Shell", ".vue": "Vue", ".svelte": "Svelte",
}  # fmt: skip
INFERRED = " (inferred)"


def infer_languages(extensions: pl.DataFrame) -> pl.DataFrame:
    """``repo, language`` from ``extensions`` (:func:`.corpus_scale.corpus_scale`): the most
    files wins, ties by name, marked ``" (inferred)"`` (arbwb-defined)."""
    mapping = pl.DataFrame(
        {"extension": list(EXTENSION_LANGUAGES), "language": list(EXTENSION_LANGUAGES.values())}
    )
    return (
        extensions.join(mapping, on="extension", how="inner")
        .group_by("repo", "language")
        .agg(pl.col("files").sum())
        .sort(["repo", "files", "language"], descending=[False, True, False])
        .unique("repo", keep="first", maintain_order=True)
        .select("repo", (pl.col("language") + INFERRED).alias("language"))
    )


def fill_languages(declared: pl.DataFrame, inferred: pl.DataFrame) -> pl.DataFrame:
    """Declared languages (``repo_manifest.jsonl``), else the inferred one for that repo."""
    known = declared.filter(pl.col("language") != UNKNOWN_LANGUAGE)
    extra = inferred.join(known, on="repo", how="anti")
    return pl.concat([known.select("repo", "language"), extra.select("repo", "language")])


@dataclass(frozen=True)
class OverviewOptions:
    """The overview has no settings; the class keeps every analysis called the same way."""


@dataclass(frozen=True)
class OverviewResult:
    """Composition tables (``repos`` without the ``all`` row of ``repositories``), languages
    with their source, and the corpus scale (None: skipped)."""

    samples: pl.DataFrame
    repos: pl.DataFrame
    repositories: pl.DataFrame
    task_strata: pl.DataFrame
    languages: pl.DataFrame
    language_of: pl.DataFrame  # repo, language (declared, else inferred with INFERRED)
    scale: cs.Scale | None
    skipped: str | None
    corpus_skipped: str | None

    @property
    def corpus_totals(self) -> dict[str, float | int]:
        """:func:`arbwb.analysis.corpus_scale.scale_totals`, empty when the corpus is skipped."""
        return {} if self.scale is None else cs.scale_totals(self.scale)

    @property
    def corpus_lines(self) -> list[str]:
        """What to say about the corpus: the skip reason, or its problems and duplicated share."""
        if self.scale is None:
            return [f"corpus scale skipped: {self.corpus_skipped}"]
        share = self.corpus_totals["duplicated_text_share"]
        problems = [f"problem: {p}" for p in self.scale.problems]
        return [*problems, f"duplicated chunk text across snapshots: {share:.2%}"]

    @property
    def corpus_table(self) -> pl.DataFrame:
        """The corpus totals as a one-row frame (no columns when skipped)."""
        return pl.DataFrame([self.corpus_totals])

    def tables(self) -> Sequence[Table]:
        """Repositories, strata and languages; the corpus tables when a corpus was scanned."""
        out = [
            Table("repositories", self.repositories),
            Table("task_strata", self.task_strata),
            Table("languages", self.languages),
        ]
        if self.scale is not None:
            out += [
                Table("corpus_snapshots", self.scale.snapshots),
                Table("corpus_scale", self.corpus_table),
                Table("corpus_extensions", self.scale.extensions),
            ]
        return out

    def records(self) -> Mapping[str, Any]:
        """Counts by task, stratum and language, the repository rows, corpus totals, skips."""
        samples = self.samples
        out: dict[str, Any] = {
            "n_samples": samples.height,
            "n_repos": samples["repo"].n_unique(),
            "n_snapshots": samples["snapshot_id"].n_unique(),
            "by_task": dict(samples["task"].value_counts().iter_rows()),
            "by_stratum": dict(samples["stratum"].value_counts().iter_rows()),
            "by_language": {lang: n for lang, _, n in self.languages.iter_rows()},
            "repositories": self.repos.to_dicts(),
            "corpus_scale": self.corpus_totals,
            "language_source": {
                repo: "inferred" if lang.endswith(INFERRED) else "repo_manifest"
                for repo, lang in self.language_of.iter_rows()
            },
        }
        if self.skipped is not None:
            out["skipped"] = self.skipped
        if self.corpus_skipped is not None:
            out["corpus_skipped"] = self.corpus_skipped
        return out


def run(release: Release, options: OverviewOptions | None = None) -> OverviewResult:
    """Composition of ``release`` and one pass over its corpus; no samples is a skip with a
    reason, not an error."""
    samples = release.samples
    root = release.root
    declared = repo_languages(root) if root is not None else pl.DataFrame(schema=LANGUAGES)
    scale = cs.corpus_scale(release.corpus) if release.corpus is not None else None
    inferred = infer_languages(scale.extensions) if scale is not None else declared.clear()
    language_of = fill_languages(declared, inferred)
    repos = repo_table(samples, language_of)
    where = f"{release.root}/benchmark" if release.root is not None else "benchmark/"
    return OverviewResult(
        samples=samples,
        repos=repos,
        repositories=totals_row(repos, samples),
        task_strata=task_strata(samples),
        languages=language_table(samples, language_of),
        language_of=language_of,
        scale=scale,
        skipped=f"no samples found under {where} or in run details" if samples.is_empty() else None,
        corpus_skipped=(
            None
            if scale is not None
            else "no corpus/<release>/corpus_manifest.jsonl under the data root"
        ),
    )
