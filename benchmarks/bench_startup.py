"""Whole-process start-up of the CLI against ``python -c 'import argparse'`` (same run).

Targets (issue 9): ``arbwb --help`` and ``arbwb validate --help`` at most 3x the baseline;
``arbwb score`` with rank metrics only, on the demo run, never imports scipy or matplotlib
(the test suite asserts that; here its wall time is printed). Median of 5 runs each.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "data" / "demo" / "eval" / "demo" / "lexical_details.jsonl"
REPEATS = 5
TARGET = 3.0


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("arbwb")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "arbwb"]


def median_seconds(argv: list[str]) -> float:
    """Median wall time of ``argv`` as a fresh process (output discarded)."""
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    """Print each command's median and its ratio to the argparse baseline."""
    baseline = median_seconds([sys.executable, "-c", "import argparse"])
    print(f"baseline python -c 'import argparse': {baseline * 1000:.0f} ms")
    cases = {
        "arbwb --help": [*_cli(), "--help"],
        "arbwb validate --help": [*_cli(), "validate", "--help"],
        "arbwb score (rank metrics, demo run)": [
            *_cli(),
            "score",
            str(RUN),
            "--metrics",
            "recall@5,recall@10,recall@20,mrr",
        ],
    }
    failed = False
    for name, argv in cases.items():
        seconds = median_seconds(argv)
        ratio = seconds / baseline
        gated = "help" in name
        verdict = ("ok" if ratio <= TARGET else "OVER TARGET") if gated else "(not gated)"
        failed |= gated and ratio > TARGET
        print(f"{name}: {seconds * 1000:.0f} ms = {ratio:.2f}x baseline {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
