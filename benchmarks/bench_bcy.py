"""BCY speed and memory: arbwb vs a literal reference of spec §5.7, on a realistic corpus.

Every run is its own process (so peak RSS is its own; imports are not timed) and scores every
details row at budgets 4k-32k and τ in {1, 16, 32, 64, 128}. Sides run interleaved ``--repeat``
times; the parent checks all per-sample numbers are identical and prints median times, the
ratio of medians, CPU times and peak RSS (medians damp noise from other work on the machine).
Usage: .venv/bin/python benchmarks/bench_bcy.py [--repeat 3 --files 300 --commits 55]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import polars as pl
from _literal_bcy import file_texts, literal_covered
from _realistic import realistic

from arbwb.io.corpus import open_corpus
from arbwb.metrics.budget import bcy_table

BUDGETS = (4000, 8000, 16000, 32000)
TAUS = (1, 16, 32, 64, 128)


def reference(corpus_dir: Path, details: Path) -> dict[str, float]:
    """Spec §5.7 read literally: json per line, re.findall per file, dict lookups."""
    manifest = {}
    with (corpus_dir / "corpus_manifest.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            manifest[(row["repo"], row["base_commit"])] = corpus_dir.parent / row["chunks_path"]
    texts_cache: dict[tuple[str, str], dict[str, str]] = {}
    out = {}
    with details.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            key = (row["repo"], row["base_commit"])
            if key not in texts_cache:
                # one snapshot at a time, like a streaming reader
                texts_cache = {key: file_texts(manifest[key])}
            texts = texts_cache[key]
            gold = set(row["gold_files"])
            ranked = list(dict.fromkeys(p for p in row["top_files"] if p))[:20]
            for budget in BUDGETS:
                covered = literal_covered(ranked, texts, gold, budget, TAUS)
                for t in TAUS:
                    out[f"{row['id']}|{budget}|{t}"] = covered[t] / len(gold)
    return out


def arbwb_side(corpus_dir: Path, details: Path, cache_dir: Path | None) -> dict[str, float]:
    """arbwb: details -> frames, then bcy_table (cold without ``cache_dir``)."""
    raw = pl.read_ndjson(details)
    rankings = (
        raw.select("id", "top_files")
        .explode("top_files")
        .select(
            run=pl.lit("bench"),
            sample_id="id",
            rank=pl.int_range(1, pl.len() + 1).over("id").cast(pl.Int64),
            path="top_files",
        )
    )
    labels = (
        raw.select(sample_id="id", path="gold_files")
        .explode("path")
        .with_columns(role=pl.lit("gold"))
    )
    snapshots = raw.select(sample_id="id", snapshot_id=pl.format("{}@{}", "repo", "base_commit"))
    table = bcy_table(
        rankings,
        labels,
        open_corpus(corpus_dir, cache_dir=cache_dir),
        snapshots=snapshots,
        budgets=BUDGETS,
        thresholds=TAUS,
    )
    keys = table.select(pl.format("{}|{}|{}", "sample_id", "budget", "tau"))
    return dict(zip(keys.to_series().to_list(), table["bcy"].to_list(), strict=True))


def run_side(side: str, corpus_dir: Path, details: Path, out: Path) -> None:
    start, start_cpu = time.perf_counter(), time.process_time()
    if side == "reference":
        values = reference(corpus_dir, details)
    else:
        cache = None if side == "arbwb" else out.parent / "token-cache"
        values = arbwb_side(corpus_dir, details, cache)
    seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {"seconds": seconds, "cpu": cpu, "peak_mib": peak_mib, "values": values}
    out.write_text(json.dumps(result))


def run_in_process(side: str, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """One timed run of ``side`` in a fresh process (cold: new corpus object, no imports timed)."""
    cmd = [sys.executable, __file__, "--side", side, "--out", str(out)]
    cmd += ["--files", str(args.files), "--commits", str(args.commits)]
    cmd += ["--per-snapshot", str(args.per_snapshot)]
    subprocess.run(cmd, check=True)
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--commits", type=int, default=55)
    parser.add_argument("--per-snapshot", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3, help="runs per side; medians reported")
    parser.add_argument(
        "--side", choices=["reference", "arbwb", "fill", "warm"], help=argparse.SUPPRESS
    )
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    data = realistic(n_files=args.files, n_commits=args.commits, per_snapshot=args.per_snapshot)
    if args.side:
        run_side(args.side, data.corpus_dir, data.details, args.out)
        return
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        order = ["fill"] + ["reference", "arbwb", "warm"] * args.repeat  # interleaved vs drift
        for k, side in enumerate(order):
            runs.setdefault(side, []).append(run_in_process(side, args, Path(tmp) / f"{k}.json"))
    values = [run["values"] for side_runs in runs.values() for run in side_runs]
    identical = all(v == values[0] for v in values)
    median = {side: statistics.median(r["seconds"] for r in rs) for side, rs in runs.items()}
    cpu = {side: statistics.median(r["cpu"] for r in rs) for side, rs in runs.items()}
    peak = {side: max(r["peak_mib"] for r in rs) for side, rs in runs.items()}
    n_rows = sum(1 for _ in data.details.open())
    size_mib = sum(p.stat().st_size for p in data.corpus_dir.rglob("*.jsonl")) / 2**20
    print(
        f"corpus: {len(data.commits)} snapshots, {size_mib:.0f} MiB of chunk files; "
        f"{n_rows} details rows; {len(values[0])} (sample, budget, tau) values; "
        f"medians of {args.repeat} runs per side, each in a fresh process"
    )
    for side, label in [
        ("reference", "reference"),
        ("arbwb", "arbwb, cold"),
        ("warm", "arbwb, token counts cached on disk"),
    ]:
        times = ", ".join(f"{r['seconds']:.2f}" for r in runs[side])
        print(
            f"{label}: median {median[side]:.3f} s ({times}), CPU {cpu[side]:.3f} s, "
            f"peak RSS {peak[side]:.0f} MiB"
        )
    print(
        f"speed-up cold: {median['reference'] / median['arbwb']:.1f}x; "
        f"warm cache: {median['reference'] / median['warm']:.1f}x; identical numbers: {identical}"
    )
    # CPU time adds up all threads: arbwb pages files in on a second core while it scans, so
    # this ratio is about the speed-up when only one core is free (the reference uses one).
    ratio = cpu["reference"] / cpu["arbwb"]
    print(f"speed-up cold by CPU time (about what one free core gives): {ratio:.1f}x")
    if not identical:
        sys.exit("MISMATCH between arbwb and the reference")


if __name__ == "__main__":
    main()
