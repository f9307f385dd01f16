"""Granularity statistics stream one snapshot at a time: peak RSS stays flat in the snapshot count.

Uses the realistic corpus of :mod:`benchmarks._realistic` (55 snapshots of ~300 stdlib modules,
built once and cached), writes samples with gold files and spans for its details rows, and
runs gold-file sizes + span density + the summaries over the first N snapshots, each N in a
fresh process, printing peak RSS (``ru_maxrss`` of the child) and wall time.

    PYTHONPATH=. python benchmarks/bench_granularity.py [--counts 5,15,30,55]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _realistic import WORK, realistic


def write_samples(details: Path, out: Path) -> None:
    """A samples file from the benchmark's details rows: their gold files plus 1-3 spans."""
    rng = random.Random(3)
    rows = []
    for line in details.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        spans = [
            {
                "path": path,
                "start_line": (s := rng.randint(1, 200)),
                "end_line": s + rng.randint(0, 40),
            }
            for path in row["gold_files"][: rng.randint(1, 3)]
        ]
        rows.append(
            {
                "id": row["id"],
                "task_type": row["task_type"],
                "repo": row["repo"],
                "base_commit": row["base_commit"],
                "query": {"text": row["id"]},
                "gold": {"files": row["gold_files"]},
                "gold_spans": spans,
            }
        )
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def child(corpus_dir: str, samples_path: str, count: int) -> None:
    """Run the statistics over the samples of the first ``count`` snapshots; print JSON."""
    import polars as pl

    from arbwb.analysis import granularity as g
    from arbwb.io.corpus import open_corpus
    from arbwb.io.samples import load_samples

    start = time.perf_counter()
    corpus = open_corpus(corpus_dir)
    keep = corpus.snapshot_ids()[:count]
    ss = load_samples(samples_path)
    samples = ss.samples.filter(pl.col("snapshot_id").is_in(keep))
    sizes = g.gold_file_sizes(samples, ss.labels, corpus)
    density = g.span_density(samples, ss.spans, sizes)
    summary = g.file_size_summary(sizes, samples)["overall"]
    g.span_summary(density, samples, ss.spans)
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "snapshots": len(keep),
                "occurrences": summary["gold_file_occurrences"],
                "median_lines": summary["file_lines"]["median"],
                "peak_rss_mib": rss_kib / 1024,
                "seconds": time.perf_counter() - start,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="5,15,30,55", help="snapshot counts to run")
    parser.add_argument("--child", nargs=3, metavar=("CORPUS", "SAMPLES", "COUNT"))
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return
    data = realistic()
    samples = WORK / "granularity_samples.jsonl"
    write_samples(data.details, samples)
    corpus_bytes = sum(p.stat().st_size for p in data.corpus_dir.rglob("*.chunks.jsonl"))
    print(f"corpus: {len(data.commits)} snapshots, {corpus_bytes / 2**20:.0f} MiB of chunk files")
    print(f"{'snapshots':>9} {'occurrences':>11} {'peak RSS MiB':>12} {'seconds':>8}")
    results = []
    for count in (int(c) for c in args.counts.split(",")):
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(data.corpus_dir), str(samples), str(count)],
            check=True,
            capture_output=True,
            text=True,
        )
        got = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(got)
        print(
            f"{got['snapshots']:>9} {got['occurrences']:>11} {got['peak_rss_mib']:>12.1f} "
            f"{got['seconds']:>8.2f}"
        )
    first, last = results[0], results[-1]
    growth = last["peak_rss_mib"] / first["peak_rss_mib"]
    scale = last["snapshots"] / first["snapshots"]
    print(f"peak RSS x{growth:.2f} for x{scale:.0f} snapshots (flat memory: close to x1)")


if __name__ == "__main__":
    main()
