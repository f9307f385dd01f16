"""Corpus builder speed: arbwb vs a literal builder (one ``git show`` per file, every symbol
pattern on every line), on snapshots of the realistic stdlib repository; output must be
byte-identical. Usage: .venv/bin/python benchmarks/bench_builder.py [--snapshots 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _realistic import REPO, realistic

from arbwb.release.snapshot import (
    MAX_FILE_BYTES,
    SYMBOL_PATTERNS,
    build_chunk_file,
    chunk_row,
    is_candidate_path,
    list_tree,
)


def literal_build(git_dir: Path, repo: str, commit: str, out: Path) -> None:
    """Spec §3 as written: git show per file, all nine patterns tried on every line."""
    rows = []
    for entry in [e for e in list_tree(git_dir, commit) if is_candidate_path(e.path)][:20_000]:
        if entry.size is None or entry.size > MAX_FILE_BYTES:
            continue
        proc = subprocess.run(
            ["git", "-C", str(git_dir), "show", f"{commit}:{entry.path}"],
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0 or b"\x00" in proc.stdout:
            continue
        content = proc.stdout.decode("utf-8", errors="replace")
        if not content:
            continue
        lines = content.splitlines()
        rows.append((entry.path, "file", "", 1, len(lines), content))
        starts = []
        for number, line in enumerate(lines, start=1):
            for pattern in SYMBOL_PATTERNS:
                match = pattern.match(line)
                if match:
                    starts.append((match.group("name"), number))
                    break
        for k, (name, start) in enumerate(starts):
            end = starts[k + 1][1] - 1 if k + 1 < len(starts) else len(lines)
            end = max(start, end)
            rows.append((entry.path, "symbol", name, start, end, "\n".join(lines[start - 1 : end])))
    with out.open("w", encoding="utf-8") as handle:
        for path, kind, symbol, start, end, text in rows:
            row = chunk_row(repo, commit, path, kind, symbol, start, end, text)
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--snapshots", type=int, default=3)
    args = parser.parse_args()
    data = realistic()
    commits = data.commits[: args.snapshots]
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        for commit in commits:
            literal_build(data.git_dir, REPO, commit, Path(tmp) / f"lit-{commit}.jsonl")
        literal = time.perf_counter() - start
        memo: dict[str, str | None] = {}
        start = time.perf_counter()
        for commit in commits:
            build_chunk_file(data.git_dir, REPO, commit, Path(tmp) / f"arb-{commit}.jsonl", memo)
        ours = time.perf_counter() - start
        identical = all(
            (Path(tmp) / f"lit-{c}.jsonl").read_bytes()
            == (Path(tmp) / f"arb-{c}.jsonl").read_bytes()
            for c in commits
        )
    n_files = len(list_tree(data.git_dir, commits[0]))
    print(f"{len(commits)} snapshots of {n_files} files")
    print(f"literal builder: {literal / len(commits):.2f} s per snapshot")
    print(f"arbwb builder:   {ours / len(commits):.2f} s per snapshot")
    print(f"speed-up: {literal / ours:.1f}x; byte-identical: {identical}")
    if not identical:
        sys.exit("MISMATCH between the builders")


if __name__ == "__main__":
    main()
