"""`arbwb report` on a release-shaped root: 3 subsets, 150+ snapshots, ~2 GB of chunk files.

Targets (issue 11): the whole report process within 120 s wall on this 2-core machine with
peak RSS under 2 GB (the largest process, children included: the report and its kernels).
The corpus is one git repository of stdlib modules (``_realistic.make_git``: each commit edits
a few files, so snapshots share most text, as ARB's do) built with ``arbwb snapshot build``
once and cached under /tmp; the root splits its commits into subsets S1-S3, each with its own
``benchmark/S``, ``corpus/S`` (hard links into the cache) and ``eval/S`` (three stored runs,
lexical named ``lexical_all_files`` in S3 and joined back by a method table). The report runs
with an empty cache directory (cold: every token count computed).
Usage: .venv/bin/python benchmarks/bench_release_report.py [--snapshots 156 --files 260]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import polars as pl
from _realistic import REPO, make_git

from arbwb.paths import DEMO_DIR, NOTEBOOKS_DIR

CACHE = Path(os.environ.get("ARBWB_BENCH_RELEASE_CACHE", "/tmp/arbwb-bench-release"))
SUBSETS = ("S1", "S2", "S3")
RUNS = ("lexical", "bm25", "dense")
TASKS = ("code2test", "comment2context", "trace2code", "edit2ripple")
TARGET_SECONDS = 120.0
TARGET_RSS_BYTES = 2 * 2**30
METHODS_CSV = "release,stem,method,family\nS3,lexical_all_files,lexical,lexical\n"


def corpus(n_snapshots: int, n_files: int) -> tuple[Path, list[str]]:
    """The cached corpus folder (``arbwb snapshot build`` output) and its commits."""
    base = CACHE / f"stdlib_{n_files}f_{n_snapshots}c"
    done = base / "commits.txt"
    if not done.is_file():
        print(f"building {n_snapshots} snapshots under {base} (cached)", file=sys.stderr)
        shutil.rmtree(base, ignore_errors=True)
        commits = make_git(base / "repo", n_files=n_files, n_commits=n_snapshots)
        args = [sys.executable, "-m", "arbwb.cli", "snapshot", "build", "--git"]
        args += [str(base / "repo"), "--repo", REPO, "--out", str(base / "corpus")]
        for commit in commits:
            args += ["--commit", commit]
        args += ["--generated-at", "2026-01-01T00:00:00+00:00"]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        done.write_text("\n".join(commits) + "\n", encoding="utf-8")
    return base / "corpus", done.read_text(encoding="utf-8").split()


def _templates() -> dict[str, dict[str, object]]:
    """One demo sample per positive task: query shapes of each task (spans dropped)."""
    found: dict[str, dict[str, object]] = {}
    for line in (DEMO_DIR / "benchmark/demo/samples.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        if row["task_type"] in TASKS and not row["gold"].get("no_gold"):
            found.setdefault(row["task_type"], row)
    return found


def _paths(chunk_file: Path) -> list[str]:
    frame = pl.read_ndjson(chunk_file, schema={"kind": pl.String, "path": pl.String})
    return sorted(set(frame.filter(pl.col("kind") == "file")["path"].to_list()))


def release_root(source: Path, commits: list[str], root: Path, *, per_snapshot: int) -> Path:
    """Write the 3-subset root (hard links to the cached chunk files) and ``methods.csv``."""
    shutil.rmtree(root, ignore_errors=True)
    templates = _templates()
    manifest = {
        json.loads(line)["base_commit"]: json.loads(line)
        for line in (source / "corpus_manifest.jsonl").open(encoding="utf-8")
    }
    slug = REPO.replace("/", "__")
    rng = random.Random(0)
    thirds = [commits[i :: len(SUBSETS)] for i in range(len(SUBSETS))]
    for subset, mine in zip(SUBSETS, thirds, strict=True):
        folder = root / "corpus" / subset / slug
        folder.mkdir(parents=True)
        rows, samples = [], []
        details: dict[str, list[dict[str, object]]] = {run: [] for run in RUNS}
        for commit in sorted(mine):
            name = f"{commit}.chunks.jsonl"
            os.link(source / slug / name, folder / name)
            rows.append({**manifest[commit], "chunks_path": f"{subset}/{slug}/{name}"})
            paths = _paths(folder / name)
            for k in range(per_snapshot):
                task = TASKS[(len(samples)) % len(TASKS)]
                gold = rng.sample(paths, rng.randint(1, 3))
                sample_id = f"{subset}-{commit[:12]}-{k}"
                sample = {**templates[task], "id": sample_id, "repo": REPO}
                sample.update(base_commit=commit, gold={"files": gold})
                sample.pop("gold_spans", None)
                sample.pop("gold_blocks", None)
                samples.append(sample)
                for run in RUNS:
                    top = rng.sample(paths, 20)
                    if rng.random() < 0.6:
                        top[rng.randrange(20)] = gold[0]
                    top = list(dict.fromkeys(top))
                    details[run].append(
                        {"sample_id": sample_id, "task_type": task, "repo": REPO,
                         "base_commit": commit, "gold_files": gold, "top_files": top}
                    )  # fmt: skip
        _jsonl(root / "corpus" / subset / "corpus_manifest.jsonl", rows)
        _jsonl(root / "benchmark" / subset / "samples.jsonl", samples)
        for run, found in details.items():
            stem = "lexical_all_files" if (subset, run) == ("S3", "lexical") else run
            _jsonl(root / "eval" / subset / f"{stem}_details.jsonl", found)
    (root.parent / "methods.csv").write_text(METHODS_CSV, encoding="utf-8")
    return root


def _jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def _durations(folder: Path) -> dict[str, float]:
    """Execution seconds papermill stored in each executed notebook's metadata."""
    out = {}
    for path in sorted(folder.glob("*.ipynb")):
        meta = json.loads(path.read_text(encoding="utf-8"))["metadata"].get("papermill", {})
        out[path.stem[:2]] = float(meta.get("duration") or 0.0)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=156)
    parser.add_argument("--files", type=int, default=260)
    parser.add_argument("--per-snapshot", type=int, default=2, help="samples per snapshot")
    args = parser.parse_args()
    source, commits = corpus(args.snapshots, args.files)
    root = release_root(source, commits, CACHE / "release" / "data", per_snapshot=args.per_snapshot)
    chunk_bytes = sum(p.stat().st_size for p in (root / "corpus").rglob("*.chunks.jsonl"))
    n_samples = sum(
        len(p.read_text(encoding="utf-8").splitlines())
        for p in (root / "benchmark").rglob("samples.jsonl")
    )
    with tempfile.TemporaryDirectory(prefix="arbwb-bench-report-") as tmp:
        env = {**os.environ, "ARBWB_CACHE_DIR": str(Path(tmp) / "cache"), "HF_HUB_OFFLINE": "1"}
        command = [sys.executable, "-m", "arbwb.cli", "report", "--data", str(root)]
        command += [
            "--out",
            str(Path(tmp) / "report"),
            "--methods",
            str(root.parent / "methods.csv"),
        ]
        command += ["--no-progress"]
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        manifest_path = Path(tmp) / "report" / "manifest.json"
        statuses = (
            json.loads(manifest_path.read_text())["notebooks"] if manifest_path.is_file() else []
        )
        durations = _durations(Path(tmp) / "report" / "notebooks")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # KiB on Linux
    notebooks = sorted(p.stem for p in NOTEBOOKS_DIR.glob("[0-9][0-9]-*.ipynb"))
    print(f"root: {root} ({len(SUBSETS)} subsets, {len(commits)} snapshots, "
          f"{chunk_bytes / 2**30:.2f} GiB chunk files, {n_samples} samples, "
          f"{len(SUBSETS) * len(RUNS)} stored runs)")  # fmt: skip
    print(f"notebooks: {len(notebooks)}; statuses: {[s['status'] for s in statuses]}")
    seconds = ", ".join(f"{k} {v:.1f}" for k, v in durations.items())
    print(f"seconds per notebook (papermill, kernel start included): {seconds}")
    if done.returncode:
        print(done.stderr[-3000:], file=sys.stderr)
    print(f"arbwb report wall time: {wall:.1f} s (target <= {TARGET_SECONDS:.0f} s: "
          f"{'met' if wall <= TARGET_SECONDS else 'MISSED'})")  # fmt: skip
    print(f"peak RSS, largest process incl. children: {peak / 2**30:.2f} GiB (target < 2 GiB: "
          f"{'met' if peak < TARGET_RSS_BYTES else 'MISSED'})")  # fmt: skip
    ok = done.returncode == 0 and wall <= TARGET_SECONDS and peak < TARGET_RSS_BYTES
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
