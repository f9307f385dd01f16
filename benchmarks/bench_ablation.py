"""Ablation of the term pipeline's speed machinery (issue 24): whole-process ``arbwb rank`` and
``arbwb score`` with and without each piece, on (part of) the ARB-shaped corpus.

The remaining piece is turned off by its switch: ``ARBWB_NO_NATIVE=1`` (the C term counter and
line scanner). The pieces issue 24 removed (worker processes, counting threads, the process's
allocator defaults, the mapped blob entries, ctypes ``memmem``/``madvise``, the radix tie sort)
are timed together as ``--before``, a checkout of the commit before
removal with its C modules built (each was first ablated alone, benchmarks/README.md). Cold =
an empty ``ARBWB_CACHE_DIR`` before each run, warm = the same folder again; sides take turns,
each the fastest of ``--repeat`` rounds; outputs must equal the current tree's. A piece stays
only if removing it costs >= 15% of its command's time, cold or warm.
Usage: .venv/bin/python benchmarks/bench_ablation.py [--large 1] [--repeat 2] [--before DIR]
[--only 'rank lexical' 'score bcy']
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _arb_shape import arb_shape
from _arb_subset import arb_release, read_jsonl, release_mib
from _installed import compile_package
from bench_cli_speed import BUDGETS, Side, arbwb_cmd, details_top, interleaved, score_means

ROOT = Path(__file__).resolve().parent.parent
#: side -> (the switch's environment, the side it is compared with)
SWITCHES: dict[str, tuple[dict[str, str], str]] = {
    "C modules": ({"ARBWB_NO_NATIVE": "1"}, "current"),
}


def commands(data: Path, runs: list[Path]) -> dict[str, list[str]]:
    """The timed commands, by name (``--out`` is added per side)."""
    metrics = ",".join(f"bcy@{b}" for b in BUDGETS)
    return {
        "rank lexical": arbwb_cmd("rank", "--method", "lexical", "--data", str(data)),
        "rank bm25-arb": arbwb_cmd("rank", "--method", "bm25-arb", "--data", str(data)),
        "score bcy": arbwb_cmd(
            "score", *map(str, runs), "--corpus", str(data), "--metrics", metrics
        ),
    }


def drop_large(data: Path, keep: int) -> None:
    """Keep the samples of the first ``keep`` large snapshots (``bench/big*``) and of every
    small one, so a round takes minutes on a shared machine."""
    bench = data / "benchmark" / "bench"
    large = sorted(
        {
            (r["repo"], r["base_commit"])
            for f in bench.glob("*.jsonl")
            for r in read_jsonl(f)
            if r["repo"].startswith("bench/big")
        }
    )
    dropped = set(large[keep:])
    for path in bench.glob("*.jsonl"):
        rows = [r for r in read_jsonl(path) if (r["repo"], r["base_commit"]) not in dropped]
        path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", type=int, default=1, help="large snapshots kept (of 4)")
    parser.add_argument("--repeat", type=int, default=2, help="rounds; the fastest counts")
    parser.add_argument("--before", type=Path, default=None, help="checkout before removal")
    parser.add_argument("--only", nargs="*", default=None, help="command names to time")
    args = parser.parse_args()
    compile_package()
    shape = arb_shape()
    with tempfile.TemporaryDirectory(prefix="arbwb-ablation-") as name:
        tmp = Path(name)
        data = arb_release(tmp)
        drop_large(data, args.large)
        print(f"{release_mib(data):.0f} MiB of chunk files used ({args.large} large snapshots)")
        print(f"load average at start: {os.getloadavg()}")
        roots = {"current": ROOT, **({"before": args.before} if args.before else {})}
        envs = {side: ({}, root) for side, root in roots.items()}
        envs |= {side: (env, ROOT) for side, (env, _) in SWITCHES.items()}
        for command, cmd in commands(data, shape.runs).items():
            if args.only is not None and command not in args.only:
                continue
            sides = {}
            for side, (extra, root) in envs.items():
                env = os.environ | extra | {"PYTHONPATH": str(root)}
                cache = tmp / f"cache-{side}"
                for phase in ("cold", "warm"):
                    out = ["--out", str(output(tmp, command, side, phase))]
                    fresh = cache if phase == "cold" else None
                    log = output(tmp, command, side, phase).with_suffix(".log")
                    run_env = env | {"ARBWB_CACHE_DIR": str(cache)}
                    sides[side, phase] = Side([*cmd, *out], run_env, log, fresh)
            results = interleaved(args.repeat, sides)  # type: ignore[arg-type]
            report(command, results, tmp)
        print(f"load average at end: {os.getloadavg()}")


def report(command: str, results: dict[tuple[str, str], tuple[float, float]], tmp: Path) -> None:
    """One line per side: cold and warm seconds, and the cost of removing the piece."""
    print(f"\n{command}")
    print("| piece removed | cold s | warm s | cost cold | cost warm | same output |")
    print("|---|---|---|---|---|---|")
    for side in dict.fromkeys(s for s, _ in results):
        base = SWITCHES[side][1] if side in SWITCHES else "current"
        cold, warm = results[side, "cold"][0], results[side, "warm"][0]
        costs = [f"{results[side, p][0] / results[base, p][0] - 1:+.0%}" for p in ("cold", "warm")]
        same = all(
            same_output(output(tmp, command, side, p), output(tmp, command, "current", p))
            for p in ("cold", "warm")
        )
        print(f"| {side} (vs {base}) | {cold:.2f} | {warm:.2f} | {' | '.join(costs)} | {same} |")


def output(tmp: Path, command: str, side: str, phase: str) -> Path:
    """Where a side's run writes: details rows (rank) or the score document."""
    suffix = ".json" if command.startswith("score") else ".jsonl"
    return tmp / re.sub(r"[^A-Za-z0-9.-]+", "_", f"{command}-{side}-{phase}{suffix}")


def same_output(path: Path, reference: Path) -> bool:
    """Rank: the same top files per sample; score: the same means."""
    if path.suffix == ".json":
        return score_means(path) == score_means(reference)
    return details_top(path) == details_top(reference)


if __name__ == "__main__":
    main()
