"""Deterministic builder of ``data/demo`` (ARB layout, spec §1) from ``data/demo-src``: git
repositories with fixed dates, chunk files, sample records and baseline runs, swapped in whole."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from arbwb.demo.contextbench import read_tasks, write_contextbench_demo
from arbwb.demo.samples import SampleSpec, SpanSpec, locate_span, read_samples
from arbwb.demo.source import DemoRepo, ReleaseSpec, RunSpec, read_release, read_repos, source_dir
from arbwb.errors import InputError
from arbwb.io.corpus import Corpus, open_corpus, snapshot_id
from arbwb.io.samples import SampleSet, load_samples
from arbwb.jsonio import read_json, write_json, write_jsonl
from arbwb.release.snapshot import build_snapshots, stable_id
from arbwb.retrievers import dense
from arbwb.retrievers.common import RetrievalMethod
from arbwb.retrievers.details import summary_path
from arbwb.retrievers.fusion import run_fusion
from arbwb.retrievers.registry import MethodOptions, get_method
from arbwb.retrievers.runner import run_method


@dataclass(frozen=True)
class BuildResult:
    """What a build wrote: commit SHAs per repository, sample and run counts."""

    out: Path
    commits: Mapping[str, Sequence[str]]
    n_samples: int
    runs: Sequence[str]


#: With PATH added, the environment of reproducible commits that ignore the user's git config.
_GIT_ENV = {
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
    env = _GIT_ENV | {"PATH": os.environ.get("PATH", "")}
    work.mkdir(parents=True)
    _git(work, "init", "-q", "-b", "main", env=env)
    shas: list[str] = []
    previous: Mapping[str, str] = {}
    for commit in repo.commits:
        for path in sorted(set(previous) - set(commit.files)):
            (work / path).unlink()
        for path, text in sorted(commit.files.items()):
            target = work / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))
        _git(work, "add", "-A", env=env)
        dated = env | {"GIT_AUTHOR_DATE": commit.date, "GIT_COMMITTER_DATE": commit.date}
        _git(work, "commit", "-q", "-m", commit.message, env=dated)
        shas.append(_git(work, "rev-parse", "HEAD", env=env))
        previous = commit.files
    return shas


def sample_id(spec: SampleSpec) -> str:
    """Stable id of a demo sample (spec §0 stable_id over a fixed prefix, task, repo and key)."""
    return stable_id("arbwb-demo", spec.task_type, spec.repo, spec.key)


def gold_blocks(
    chunks: pl.DataFrame, spans: Sequence[tuple[SpanSpec, int, int]]
) -> list[dict[str, Any]]:
    """Symbol chunks overlapping each span (source corpus_symbol_overlap), else the span itself."""
    blocks: list[dict[str, Any]] = []
    for span, start, end in spans:
        overlap = pl.col("start_line").le(end) & pl.col("end_line").ge(start)
        hits = chunks.filter(overlap, path=span.path, kind="symbol")
        rows = hits.select("chunk_id", "end_line", "start_line", "symbol").to_dicts()
        where = {"path": span.path, "reason": span.reason}
        fallback = {"end_line": end, "start_line": start, "symbol": "", "kind": "span_fallback"}
        blocks += [
            row | where | {"kind": "symbol", "source": "corpus_symbol_overlap"} for row in rows
        ] or [fallback | where | {"source": "gold_span_fallback"}]
    return blocks


def sample_record(
    spec: SampleSpec,
    repo: DemoRepo,
    shas: Sequence[str],
    chunks: pl.DataFrame,
    by_key: Mapping[str, SampleSpec],
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
        metadata["source_sample_id"] = sample_id(by_key[spec.source_key])
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


#: Dense encoders a ``release.json`` run may name (``encoder``).
ENCODERS: dict[str, dense.Encoder] = {"hash": dense.hash_encoder}


def make_method(run: RunSpec) -> RetrievalMethod:
    """The registry method of a run, with its model label and named encoder."""
    if run.encoder is not None and run.encoder not in ENCODERS:
        msg = f"release.json run {run.name!r}: encoder must be one of {sorted(ENCODERS)}"
        raise InputError(msg, field="encoder")
    encoder = ENCODERS[run.encoder] if run.encoder is not None else None
    return get_method(str(run.method), MethodOptions(model=run.model, encoder=encoder))


def _reproducible_summary(details: Path) -> None:
    """Blank wall-clock ``runtime``, make input paths release-relative, mark it as demo data."""
    path = summary_path(details)
    summary = read_json(path) | {"runtime": {}, "demo": True}
    root = details.parent.parent.parent
    for item in summary.get("inputs", []):
        item["path"] = Path(item["path"]).relative_to(root).as_posix()
    write_json(path, summary)


def write_runs(out: Path, sample_set: SampleSet, corpus: Corpus, spec: ReleaseSpec) -> list[str]:
    """The positive runs of ``release.json`` in order (fusions of earlier runs), then selective
    runs over every sample."""
    positives = sample_set.filter(pl.col("stratum") == "positive")
    eval_dir = out / "eval" / spec.release
    for run in spec.runs:
        details = eval_dir / f"{run.name}_details.jsonl"
        if run.fuse:
            run_fusion([eval_dir / f"{p}_details.jsonl" for p in run.fuse], positives, details)
        else:
            filt = run.candidate_filter or spec.candidate_filter
            run_method(make_method(run), positives, corpus, details, candidate_filter=filt)
        _reproducible_summary(details)
    runs, filt = {run.name: run for run in spec.runs}, spec.candidate_filter
    for name in spec.selective_runs:
        details = out / "eval" / f"{spec.release}_selective"
        details /= f"{spec.release}_{filt}_selective_{name}_details.jsonl"
        run_method(make_method(runs[name]), sample_set, corpus, details, candidate_filter=filt)
        _reproducible_summary(details)
    return [run.name for run in spec.runs]


def benchmark_manifest(records: Sequence[Mapping[str, Any]], release: str) -> dict[str, Any]:
    """Informational ``manifest.json`` of the demo benchmark folder (spec §1.3)."""
    counts = Counter(str(r["task_type"]) for r in records)
    return {
        "counts_by_task": dict(sorted(counts.items())),
        "demo": True,
        "note": "arbwb demo data, not ARB data",
        "outputs": {t: f"benchmark/{release}/{t}.jsonl" for t in sorted(counts)}
        | {"samples": f"benchmark/{release}/samples.jsonl"},
        "tasks": sorted(counts),
        "total": len(records),
    }


def repo_manifest_rows(
    repos: Sequence[DemoRepo], samples: Sequence[SampleSpec], commits: Mapping[str, Sequence[str]]
) -> list[dict[str, Any]]:
    """``repo_manifest.jsonl`` rows (format of ../shared/arb-data) for the demo repositories."""
    return [
        {
            "default_branch": "main",
            "demo": True,
            "language": repo.language,
            "license": repo.license,
            "n_commits": len(commits[repo.repo]),
            "repo": repo.repo,
            "tasks": sorted({s.task_type for s in samples if s.repo == repo.repo}),
        }
        for repo in repos
    ]


def build_into(out: Path, scratch: Path, src: Path) -> BuildResult:
    """Write the whole demo release from ``src`` into the empty folder ``out`` (git work trees in
    ``scratch``); ``src/static`` is copied as it is."""
    spec, samples, repo_list = read_release(src), read_samples(src), read_repos(src)
    corpus_dir = out / "corpus" / spec.release
    commits: dict[str, list[str]] = {}
    for repo in repo_list:
        git_dir = scratch / repo.repo.replace("/", "__")
        commits[repo.repo] = create_git_repo(repo, git_dir)
        build_snapshots(git_dir, repo.repo, commits[repo.repo], corpus_dir, stamp=spec.stamp)
    corpus = open_corpus(corpus_dir)
    repos = {r.repo: r for r in repo_list}
    by_key = {s.key: s for s in samples}
    records = []
    for sample in samples:
        if sample.repo not in repos or not 0 <= sample.commit < len(commits[sample.repo]):
            msg = f"sample {sample.key!r} names {sample.repo}@{sample.commit}, not in repos.json"
            raise InputError(msg, path=src / "samples.jsonl", field="commit")
        shas = commits[sample.repo]
        chunks = corpus.chunks(snapshot_id(sample.repo, shas[sample.commit]))
        records.append(sample_record(sample, repos[sample.repo], shas, chunks, by_key))
    bench = out / "benchmark" / spec.release
    write_jsonl(bench / "samples.jsonl", records)
    for task in spec.task_order:
        write_jsonl(bench / f"{task}.jsonl", [r for r in records if r["task_type"] == task])
    write_json(bench / "manifest.json", benchmark_manifest(records, spec.release))
    write_jsonl(out / "repo_manifest.jsonl", repo_manifest_rows(repo_list, samples, commits))
    runs = write_runs(out, load_samples(bench), corpus, spec)
    write_contextbench_demo(out / "contextbench", commits, repos, read_tasks(src))
    shutil.copytree(src / "static", out, dirs_exist_ok=True, copy_function=shutil.copyfile)
    return BuildResult(out, commits, len(records), runs)


def build_demo(out: str | Path, src: str | Path | None = None) -> BuildResult:
    """Build the demo release at ``out`` from ``src``, replacing a previous demo build atomically;
    a non-empty folder that is not a demo release (no demo README) is refused."""
    folder = source_dir(src)
    target = Path(out)
    if target.exists() and any(target.iterdir()):
        readme = target / "README.md"
        if not readme.is_file() or "Demo data" not in readme.read_text(encoding="utf-8"):
            msg = "refusing to replace a non-empty folder that is not a demo release; pick --out"
            raise InputError(msg, path=target, field="--out")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".demo-build-", dir=target.parent) as tmp:
        staging = Path(tmp) / "release"
        result = build_into(staging, Path(tmp) / "git", folder)
        if target.exists():
            target.rename(Path(tmp) / "previous")
        staging.rename(target)
    return dataclasses.replace(result, out=target)
