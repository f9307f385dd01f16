"""Dataset composition: samples by repository, language, task and stratum (the paper's repo table).

Frame in, frame out. The language of a repository is not part of ARB samples; it comes from an
optional ``repo_manifest.jsonl`` at the release root (format of ARB's repository manifest) and
falls back to ``"unknown"`` (arbwb-defined).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from arbwb.errors import InputError
from arbwb.jsonio import iter_jsonl

REPO_MANIFEST = "repo_manifest.jsonl"
UNKNOWN_LANGUAGE = "unknown"
POSITIVE_TASKS = ("code2test", "comment2context", "trace2code", "edit2ripple")
NO_GOLD_STRATA = ("natural", "counterfactual")


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
    return pl.DataFrame(
        {"repo": list(rows), "language": list(rows.values())},
        schema={"repo": pl.String, "language": pl.String},
    )


def _with_language(samples: pl.DataFrame, languages: pl.DataFrame | None) -> pl.DataFrame:
    if languages is None or languages.is_empty():
        return samples.with_columns(pl.lit(UNKNOWN_LANGUAGE).alias("language"))
    return samples.join(languages.select("repo", "language"), on="repo", how="left").with_columns(
        pl.col("language").fill_null(UNKNOWN_LANGUAGE)
    )


def composition(samples: pl.DataFrame, languages: pl.DataFrame | None = None) -> pl.DataFrame:
    """Long counts ``repo, language, task, stratum, n``, sorted by repo, task, stratum."""
    return (
        _with_language(samples, languages)
        .group_by("repo", "language", "task", "stratum")
        .agg(pl.len().cast(pl.Int64).alias("n"))
        .sort("repo", "task", "stratum")
    )


def repo_table(samples: pl.DataFrame, languages: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per repository, as the paper's repository table.

    Columns: repo, language, snapshots, one count per positive task, natural and
    counterfactual no-gold counts, positives, total. Sorted by total desc, then repo (spec §12's
    repository distribution order). Missing combinations are 0.
    """
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
    """``repo, language`` from a repo's code-file extensions (arbwb-defined; labelled).

    ``extensions`` holds ``repo, extension, files``
    (:func:`arbwb.analysis.corpus_scale.corpus_scale`).
    The language with the most files wins, ties by name; the value carries the suffix
    ``" (inferred)"`` so tables and figures say where it came from.
    """
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
