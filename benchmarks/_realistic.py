"""A realistic ARB-style corpus for benchmarks, built once and cached under benchmarks/.work/.

A git repository of a few hundred Python standard-library modules with a series of commits
that each edit a few files (so snapshots share most text, as ARB's do), every commit built
into a corpus with ``arbwb snapshot build``, plus stored-style top-20 details rows.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

STDLIB = Path("/root/.pyenv/versions/3.11.7/lib/python3.11")
WORK = Path(__file__).resolve().parent / ".work"
REPO = "bench/stdlib"
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


@dataclass(frozen=True)
class Realistic:
    """Paths of the cached benchmark inputs."""

    git_dir: Path
    commits: list[str]
    corpus_dir: Path
    details: Path


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True)
    return out.stdout.decode().strip()


def source_files(limit: int) -> list[Path]:
    """Up to ``limit`` stdlib .py files: top-level modules first, then a few packages."""
    top = sorted(STDLIB.glob("*.py"))
    packages = sorted(
        p
        for d in ("email", "json", "http", "asyncio", "unittest", "xml", "logging", "concurrent")
        for p in (STDLIB / d).rglob("*.py")
    )
    return (top + packages)[:limit]


def make_git(root: Path, *, n_files: int, n_commits: int, seed: int = 0) -> list[str]:
    """Create the repository; each commit after the first edits 1-8 files. Returns commits."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    _git(root, "init", "-q")
    files = source_files(n_files)
    rel = []
    for src in files:
        target = Path("lib") / src.relative_to(STDLIB)
        (root / target).parent.mkdir(parents=True, exist_ok=True)
        (root / target).write_bytes(src.read_bytes())
        rel.append(target)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "import stdlib")
    commits = [_git(root, "rev-parse", "HEAD")]
    for i in range(1, n_commits):
        for target in rng.sample(rel, rng.randint(1, 8)):
            text = (root / target).read_text(encoding="utf-8", errors="replace")
            lines = text.splitlines(keepends=True)
            at = rng.randrange(len(lines) + 1)
            lines.insert(at, f"def bench_change_{i}_{at}(value):\n    return helper(value)\n")
            (root / target).write_text("".join(lines), encoding="utf-8")
        _git(root, "commit", "-q", "-am", f"change {i}")
        commits.append(_git(root, "rev-parse", "HEAD"))
    return commits


def make_details(corpus_dir: Path, commits: list[str], path: Path, *, per_snapshot: int) -> None:
    """Stored-style details rows: top-20 files (one not in the corpus) and 1-3 gold files."""
    rng = random.Random(1)
    rows = []
    for commit in commits:
        chunk_file = corpus_dir / REPO.replace("/", "__") / f"{commit}.chunks.jsonl"
        with chunk_file.open(encoding="utf-8") as handle:
            paths = sorted({json.loads(line)["path"] for line in handle})
        for k in range(per_snapshot):
            top = rng.sample(paths, 19)
            top.insert(rng.randrange(20), "lib/not_in_corpus.py")
            gold = rng.sample(top[:10], rng.randint(1, 2)) + rng.sample(paths, 1)
            sample = f"{commit[:12]}-{k}"
            rows.append(
                {
                    "id": sample,
                    "task_type": "code2test",
                    "repo": REPO,
                    "base_commit": commit,
                    "top_files": top,
                    "gold_files": sorted(set(gold)),
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def realistic(
    *, n_files: int = 300, n_commits: int = 55, per_snapshot: int = 4, verbose: bool = True
) -> Realistic:
    """Build (or reuse) the cached repository, corpus and details file."""
    key = f"stdlib_{n_files}f_{n_commits}c_{per_snapshot}s"
    base = WORK / key
    git_dir, corpus_dir, details = base / "repo", base / "corpus" / "bench", base / "details.jsonl"
    commits_file = base / "commits.txt"
    if not commits_file.is_file():
        if verbose:
            print(f"building {key} under {base} (cached for reruns)", file=sys.stderr)
        subprocess.run(["rm", "-rf", str(base)], check=True)
        commits = make_git(git_dir, n_files=n_files, n_commits=n_commits)
        args = [
            "snapshot",
            "build",
            "--git",
            str(git_dir),
            "--repo",
            REPO,
            "--out",
            str(corpus_dir),
        ]
        for commit in commits:
            args += ["--commit", commit]
        subprocess.run(
            [
                sys.executable,
                "-m",
                "arbwb.cli",
                *args,
                "--generated-at",
                "2026-01-01T00:00:00+00:00",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        make_details(corpus_dir, commits, details, per_snapshot=per_snapshot)
        commits_file.write_text("\n".join(commits) + "\n", encoding="utf-8")
    commits = commits_file.read_text(encoding="utf-8").split()
    return Realistic(git_dir, commits, corpus_dir, details)


if __name__ == "__main__":
    print(realistic())
