"""Release roots over (part of) the ARB-shaped corpus of ``_arb_shape.py``, and a literal
reading of any release root, for the whole-process grep and RepoMap benchmarks.

A subset keeps the samples of the first ``snapshots`` snapshots (in the order samples name
them) and links the corpus folders, so the chunk files are the generated ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _arb_shape import SUBSETS, arb_shape


def arb_release(root: Path, snapshots: int | None = None) -> Path:
    """A release root (``benchmark/bench``, ``corpus/<subset>``) over the ARB-shaped corpus."""
    shape = arb_shape()
    data = root / "data"
    (data / "corpus").mkdir(parents=True)
    for subset in SUBSETS:
        (data / "corpus" / subset).symlink_to(shape.data / "corpus" / subset)
    tasks = sorted((shape.data / "benchmark" / "bench").glob("*.jsonl"))
    records = {path.name: read_jsonl(path) for path in tasks}
    order: list[tuple[str, str]] = []
    for rows in records.values():
        for row in rows:
            key = (row["repo"], row["base_commit"])
            if key not in order:
                order.append(key)
    kept = set(order if snapshots is None else order[:snapshots])
    bench = data / "benchmark" / "bench"
    bench.mkdir(parents=True)
    for name, rows in records.items():
        chosen = [r for r in rows if (r["repo"], r["base_commit"]) in kept]
        (bench / name).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in chosen))
    return data


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def release_inputs(data: Path) -> tuple[list[dict[str, Any]], dict[tuple[str, str], Path]]:
    """Samples (benchmark files in name order) and the chunk file of each (repo, commit):
    subset manifests in name order, the first ``ok`` row wins (spec §1.4)."""
    files: dict[tuple[str, str], Path] = {}
    for manifest in sorted((data / "corpus").glob("*/corpus_manifest.jsonl")):
        for row in read_jsonl(manifest):
            if row.get("status", "ok") == "ok":
                key = (row["repo"], row["base_commit"])
                files.setdefault(key, data / "corpus" / row["chunks_path"])
    samples = [r for path in sorted(data.glob("benchmark/*/*.jsonl")) for r in read_jsonl(path)]
    return samples, files


def gold_files(sample: dict[str, Any]) -> list[str]:
    """The files a sample's gold names (every list but ``given_files``, which is query input)."""
    gold = sample["gold"]
    return [p for key in sorted(gold) if key != "given_files" for p in gold[key]]


def release_mib(data: Path) -> float:
    """MiB of the chunk files the release's samples use."""
    samples, files = release_inputs(data)
    used = {files[(s["repo"], s["base_commit"])] for s in samples}
    return sum(path.stat().st_size for path in used) / 2**20
