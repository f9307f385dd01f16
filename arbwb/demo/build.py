"""Deterministic builder of the demo release ``data/demo`` (ARB on-disk layout, spec §1).

Creates the demo repositories as real git repositories with fixed dates (so commit SHAs never
change), builds their chunk files with :mod:`arbwb.release.snapshot`, resolves the hand-written
samples
into ARB records, and stores rankings of arbwb's own baselines. Everything is written to a
staging folder first and swapped into place, so a failed build never leaves half a release.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from arbwb.demo.contextbench import write_contextbench_demo
from arbwb.demo.repos import DEMO_REPOS, DemoRepo
from arbwb.demo.samples import DEMO_SAMPLES, SampleSpec, SpanSpec
from arbwb.errors import InputError
from arbwb.io.corpus import Corpus, open_corpus, snapshot_id
from arbwb.io.pathclass import CandidateFilter
from arbwb.io.samples import SampleSet, load_samples
from arbwb.jsonio import read_json, write_json, write_jsonl, write_text_atomic
from arbwb.release.snapshot import build_snapshots, stable_id
from arbwb.retrievers import dense
from arbwb.retrievers.common import RetrievalMethod
from arbwb.retrievers.details import summary_path
from arbwb.retrievers.fusion import run_fusion
from arbwb.retrievers.registry import get_method
from arbwb.retrievers.runner import run_method

RELEASE = "demo"
#: Fixed ``generated_at`` of the demo corpus manifest (no wall-clock time in committed files).
STAMP = "2024-05-01T00:00:00+00:00"
CANDIDATE_FILTER: CandidateFilter = "all_files"
TASK_ORDER = ("code2test", "comment2context", "trace2code", "edit2ripple", "abstention")
README = """\
# Demo data (not ARB data)

This folder is a small release in Agent Retrieval Bench's exact on-disk layout, written by
arbwb for demonstrations and tests. **It is demo data**: five small repositories of our own,
two commits each (`arbdemo/tallyho` Python, `arbdemo/kvcache` Go, `arbdemo/routekit`
JavaScript, and the larger `arbdemo/bucketeer` Rust and `arbdemo/formcheck` TypeScript, with
26-35 files per snapshot so some gold files rank past 20), hand-written samples for all four
positive tasks plus natural and counterfactual no-gold samples in every repository (so
repo-grouped 5-fold abstention calibration works under both protocols), and stored rankings
of arbwb's own baselines. Every relevance type of the taxonomy has core-task samples, and one
trace2code sample is missed at 20 by every run. Numbers computed from it say nothing about
real retrievers; every figure it feeds is labelled "demo data".

Layout:
- `benchmark/demo/`: `samples.jsonl`, one `<task>.jsonl` per task, `manifest.json`
- `corpus/demo/`: `corpus_manifest.jsonl` and `OWNER__NAME/<commit>.chunks.jsonl`
- `eval/demo/`: `<run>_details.jsonl` + `<run>_summary.json` for the positive runs
  (`lexical`, `bm25-arb` = upstream BM25, `bm25` = rank-bm25's formula, `dense_hash` = a
  hashing bag-of-identifiers encoder standing in for a dense model, so files are identical
  on every machine, `grep` and `grep-expanded` (spec arb-grep.md), `repomap` (spec
  arb-repomap.md), `lexical_code_only` = lexical with the `code_only` candidate filter for
  the candidate-filter ablation, and `rrf_lexical_dense_hash`, a reciprocal-rank fusion)
- `eval/demo_selective/`: selective details (positives and no-gold) of `lexical` and `bm25-arb`
- `contextbench/`: a few ContextBench-style rows about the demo repositories (Parquet),
  predictions and a mini-SWE-agent trajectory of our own, for notebook 07
- `repo_manifest.jsonl`: language and license per demo repository

Rebuild byte for byte with `arbwb demo build` (default output `data/demo`). Summaries carry
an empty `runtime` so the files do not change between builds.
"""


@dataclass(frozen=True)
class BuildResult:
    """What a build wrote: commit SHAs per repository, sample and run counts."""

    out: Path
    commits: Mapping[str, Sequence[str]]
    n_samples: int
    runs: Sequence[str]


# --------------------------------------------------------------------------- git


def _git_env() -> dict[str, str]:
    """An environment that makes commits reproducible and ignores the user's git config."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.devnull,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "arbwb demo",
        "GIT_AUTHOR_EMAIL": "demo@arbwb.invalid",
        "GIT_COMMITTER_NAME": "arbwb demo",
        "GIT_COMMITTER_EMAIL": "demo@arbwb.invalid",
        "TZ": "UTC",
        "LC_ALL": "C",
    }


def _git(work: Path, *args: str, env: Mapping[str, str]) -> str:
    proc = subprocess.run(
        ["git", "-C", str(work), "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", *args],
        capture_output=True,
        text=True,
        env=dict(env),
        check=False,
    )
    if proc.returncode != 0:
        msg = f"git {' '.join(args)} failed in {work}: {proc.stderr.strip()}; is git installed?"
        raise RuntimeError(msg)
    return proc.stdout.strip()


def create_git_repo(repo: DemoRepo, work: Path) -> list[str]:
    """Write ``repo``'s commits into a new git repository at ``work``; return the commit SHAs."""
    env = _git_env()
    work.mkdir(parents=True)
    _git(work, "init", "-q", "-b", "main", env=env)
    shas = []
    for commit in repo.commits:
        for path, text in sorted(commit.files.items()):
            target = work / path
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))
        _git(work, "add", "-A", env=env)
        dated = env | {"GIT_AUTHOR_DATE": commit.date, "GIT_COMMITTER_DATE": commit.date}
        _git(work, "commit", "-q", "-m", commit.message, env=dated)
        shas.append(_git(work, "rev-parse", "HEAD", env=env))
    return shas


# --------------------------------------------------------------------------- samples


def sample_id(spec: SampleSpec) -> str:
    """Stable id of a demo sample (spec §0 stable_id over a fixed prefix, task, repo and key)."""
    return stable_id("arbwb-demo", spec.task_type, spec.repo, spec.key)


def locate_span(files: Mapping[str, str], span: SpanSpec) -> tuple[int, int]:
    """1-based inclusive line range of a span: first line containing the needle, n lines long."""
    text = files.get(span.path)
    if text is None:
        msg = f"demo span names {span.path!r}, which is not in the snapshot; fix samples.py"
        raise ValueError(msg)
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if span.needle in line:
            end = number + span.n_lines - 1
            if end > len(lines):
                msg = f"demo span {span.needle!r} runs past the end of {span.path}, got end {end}"
                raise ValueError(msg)
            return number, end
    msg = f"demo span needle {span.needle!r} not found in {span.path}; fix samples.py"
    raise ValueError(msg)


def gold_blocks(
    chunks: pl.DataFrame, spans: Sequence[tuple[SpanSpec, int, int]]
) -> list[dict[str, Any]]:
    """Symbol chunks overlapping each span (source corpus_symbol_overlap), else the span itself."""
    blocks: list[dict[str, Any]] = []
    for span, start, end in spans:
        hits = chunks.filter(
            (pl.col("path") == span.path)
            & (pl.col("kind") == "symbol")
            & (pl.col("start_line") <= end)
            & (pl.col("end_line") >= start)
        )
        for row in hits.iter_rows(named=True):
            blocks.append(
                {
                    "chunk_id": row["chunk_id"],
                    "end_line": row["end_line"],
                    "kind": "symbol",
                    "path": span.path,
                    "reason": span.reason,
                    "source": "corpus_symbol_overlap",
                    "start_line": row["start_line"],
                    "symbol": row["symbol"],
                }
            )
        if hits.is_empty():
            blocks.append(
                {
                    "end_line": end,
                    "kind": "span_fallback",
                    "path": span.path,
                    "reason": span.reason,
                    "source": "gold_span_fallback",
                    "start_line": start,
                    "symbol": "",
                }
            )
    return blocks


def sample_record(
    spec: SampleSpec, repo: DemoRepo, shas: Sequence[str], chunks: pl.DataFrame
) -> dict[str, Any]:
    """The ARB sample record of a spec (spec §2): ids, commits, spans and blocks resolved."""
    commit = shas[spec.commit]
    fix = shas[spec.commit + 1] if spec.commit + 1 < len(shas) else None
    gold = dict(spec.gold)
    metadata = dict(spec.metadata)
    if fix is not None and spec.task_type == "edit2ripple":
        metadata["fix_commit"] = fix
    elif fix is not None and spec.task_type != "abstention":
        gold["fix_commit"] = fix
    if spec.source_key is not None:
        source = next(s for s in DEMO_SAMPLES if s.key == spec.source_key)
        metadata["source_sample_id"] = sample_id(source)
    record: dict[str, Any] = {
        "base_commit": commit,
        "candidate_corpus": {"base_commit": commit, "type": "repo_at_base_commit"},
        "gold": gold,
        "id": sample_id(spec),
        "metadata": metadata | {"demo": True},
        "query": dict(spec.query),
        "repo": spec.repo,
        "task_type": spec.task_type,
        "version": 2,
    }
    if spec.hard_negative_files:
        record["hard_negative_files"] = list(spec.hard_negative_files)
    if spec.audit is not None:
        record["audit"] = dict(spec.audit)
    if spec.spans:
        files = repo.files_at(spec.commit)
        located = [(s, *locate_span(files, s)) for s in spec.spans]
        record["gold_spans"] = [
            {"end_line": end, "path": s.path, "reason": s.reason, "start_line": start}
            for s, start, end in located
        ]
        record["gold_blocks"] = gold_blocks(chunks, located)
    return record


# --------------------------------------------------------------------------- runs


#: Run name -> method factory, in the order runs are written.
DEMO_METHODS: dict[str, Callable[[], RetrievalMethod]] = {
    "lexical": lambda: get_method("lexical"),
    "bm25-arb": lambda: get_method("bm25-arb"),
    "bm25": lambda: get_method("bm25"),
    "dense_hash": lambda: dense.method("dense_hash", encoder=dense.hash_encoder),
    "grep": lambda: get_method("grep"),
    "grep-expanded": lambda: get_method("grep-expanded"),
    "repomap": lambda: get_method("repomap"),
}
#: Candidate-filter ablation runs (spec §13.8): run name -> (DEMO_METHODS entry, filter).
FILTERED_RUNS: dict[str, tuple[str, CandidateFilter]] = {
    "lexical_code_only": ("lexical", "code_only"),
}
SELECTIVE_RUNS = ("lexical", "bm25-arb")
FUSION_RUN = ("rrf_lexical_dense_hash", ("lexical", "dense_hash"))


def subset(sample_set: SampleSet, keep: pl.Expr) -> SampleSet:
    """The samples matching ``keep`` with their labels and spans."""
    samples = sample_set.samples.filter(keep)
    ids = samples["sample_id"].implode()
    return SampleSet(
        samples,
        sample_set.labels.filter(pl.col("sample_id").is_in(ids)),
        sample_set.spans.filter(pl.col("sample_id").is_in(ids)),
    )


def _reproducible_summary(details: Path) -> None:
    """Blank wall-clock ``runtime``, make input paths release-relative, mark it as demo data."""
    path = summary_path(details)
    summary = read_json(path) | {"runtime": {}, "demo": True}
    root = details.parent.parent.parent
    for item in summary.get("inputs", []):
        item["path"] = Path(item["path"]).relative_to(root).as_posix()
    write_json(path, summary)


def write_runs(out: Path, sample_set: SampleSet, corpus: Corpus) -> list[str]:
    """Positive runs, a filtered run, an RRF fusion and selective runs (:mod:`arbwb.retrievers`)."""
    positives = subset(sample_set, pl.col("stratum") == "positive")
    eval_dir = out / "eval" / RELEASE
    for name, factory in DEMO_METHODS.items():
        details = eval_dir / f"{name}_details.jsonl"
        run_method(factory(), positives, corpus, details, candidate_filter=CANDIDATE_FILTER)
        _reproducible_summary(details)
    for name, (method, candidate_filter) in FILTERED_RUNS.items():
        details = eval_dir / f"{name}_details.jsonl"
        factory = DEMO_METHODS[method]
        run_method(factory(), positives, corpus, details, candidate_filter=candidate_filter)
        _reproducible_summary(details)
    fused, parts = FUSION_RUN
    details = eval_dir / f"{fused}_details.jsonl"
    run_fusion([eval_dir / f"{p}_details.jsonl" for p in parts], positives, details)
    _reproducible_summary(details)
    for name in SELECTIVE_RUNS:
        details = out / "eval" / f"{RELEASE}_selective"
        details = details / f"{RELEASE}_{CANDIDATE_FILTER}_selective_{name}_details.jsonl"
        run_method(DEMO_METHODS[name](), sample_set, corpus, details)
        _reproducible_summary(details)
    return [*DEMO_METHODS, *FILTERED_RUNS, fused]


def benchmark_manifest(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Informational ``manifest.json`` of the demo benchmark folder (spec §1.3)."""
    counts = Counter(str(r["task_type"]) for r in records)
    return {
        "counts_by_task": dict(sorted(counts.items())),
        "demo": True,
        "note": "arbwb demo data, not ARB data",
        "outputs": {t: f"benchmark/{RELEASE}/{t}.jsonl" for t in sorted(counts)}
        | {"samples": f"benchmark/{RELEASE}/samples.jsonl"},
        "tasks": sorted(counts),
        "total": len(records),
    }


def repo_manifest_rows(commits: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """``repo_manifest.jsonl`` rows (format of ../shared/arb-data) for the demo repositories."""
    rows = []
    for repo in DEMO_REPOS:
        tasks = sorted({s.task_type for s in DEMO_SAMPLES if s.repo == repo.repo})
        rows.append(
            {
                "default_branch": "main",
                "demo": True,
                "language": repo.language,
                "license": repo.license,
                "n_commits": len(commits[repo.repo]),
                "repo": repo.repo,
                "tasks": tasks,
            }
        )
    return rows


def build_into(out: Path, scratch: Path) -> BuildResult:
    """Write the whole demo release into the empty folder ``out`` (git work trees in scratch)."""
    corpus_dir = out / "corpus" / RELEASE
    commits: dict[str, list[str]] = {}
    for repo in DEMO_REPOS:
        git_dir = scratch / repo.repo.replace("/", "__")
        commits[repo.repo] = create_git_repo(repo, git_dir)
        build_snapshots(git_dir, repo.repo, commits[repo.repo], corpus_dir, stamp=STAMP)
    corpus = open_corpus(corpus_dir)
    repos = {r.repo: r for r in DEMO_REPOS}
    records = []
    for spec in DEMO_SAMPLES:
        shas = commits[spec.repo]
        chunks = corpus.chunks(snapshot_id(spec.repo, shas[spec.commit]))
        records.append(sample_record(spec, repos[spec.repo], shas, chunks))
    bench = out / "benchmark" / RELEASE
    write_jsonl(bench / "samples.jsonl", records)
    for task in TASK_ORDER:
        write_jsonl(bench / f"{task}.jsonl", [r for r in records if r["task_type"] == task])
    write_json(bench / "manifest.json", benchmark_manifest(records))
    write_jsonl(out / "repo_manifest.jsonl", repo_manifest_rows(commits))
    runs = write_runs(out, load_samples(bench), corpus)
    write_contextbench_demo(out / "contextbench", commits)
    write_text_atomic(out / "README.md", README)
    return BuildResult(out, commits, len(records), runs)


def build_demo(out: str | Path) -> BuildResult:
    """Build the demo release at ``out``, replacing a previous demo build there atomically.

    Refuses to replace a non-empty folder that is not a demo release (no demo README), so a
    mistyped ``--out`` cannot delete someone's data.
    """
    target = Path(out)
    if target.exists() and any(target.iterdir()):
        readme = target / "README.md"
        if not readme.is_file() or "Demo data" not in readme.read_text(encoding="utf-8"):
            msg = "refusing to replace a non-empty folder that is not a demo release; pick --out"
            raise InputError(msg, path=target, field="--out")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".demo-build-", dir=target.parent) as tmp:
        staging = Path(tmp) / "release"
        result = build_into(staging, Path(tmp) / "git")
        if target.exists():
            old = Path(tmp) / "previous"
            target.rename(old)
        staging.rename(target)
    return BuildResult(target, result.commits, result.n_samples, result.runs)
