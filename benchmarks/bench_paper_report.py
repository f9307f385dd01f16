"""`arbwb report` on the paper-scale release (issue 27) at 1/8, 1/4, 1/2 and full scale.

Each fraction's release is generated once by ``_paper_scale.paper_release`` under
``$ARBWB_BENCH_DIR/paper`` (default /tmp/arbwb-bench/paper) and reused. The report runs as a
whole process twice: cold (a fresh ``ARBWB_CACHE_DIR``) and warm (the same cache again). Per
step it prints wall and CPU seconds (the process tree's, from ``RUSAGE_CHILDREN`` of a small
wrapper process), peak RSS of the largest process (``ru_maxrss``, what ``/usr/bin/time -v``
prints) and of the whole tree (``/proc`` sampled every 0.2 s). Then: does wall grow at most
linearly with chunk bytes, does peak RSS stay within 20% from 1/4 to full scale, and the
issue's full-scale targets (cold <= 60 s, warm <= 20 s on 2 cores, peak RSS <= 1.5 GiB).
Usage: .venv/bin/python benchmarks/bench_paper_report.py [--fractions 0.125 0.25] [--root DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _installed import compile_package
from _paper_scale import describe, paper_release, plan

ROOT = Path(os.environ.get("ARBWB_BENCH_DIR", "/tmp/arbwb-bench")) / "paper"
FRACTIONS = (0.125, 0.25, 0.5, 1.0)
COLD_SECONDS, WARM_SECONDS, RSS_BYTES = 60.0, 20.0, 1.5 * 2**30
RSS_FLAT = 1.2  # peak RSS from 1/4 to full scale within 20%
# Runs the command as its child and prints the child tree's rusage as JSON on stderr's last line.
_WRAPPER = (
    "import json, resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps({'code': code, 'cpu': u.ru_utime + u.ru_stime, 'rss': u.ru_maxrss}),"
    " file=sys.stderr)\n"
)


@dataclass(frozen=True)
class Step:
    """One measured report run."""

    wall: float
    cpu: float
    rss: int  # bytes, largest single process
    tree_rss: int  # bytes, largest sampled sum over the process tree
    code: int
    statuses: dict[str, int]


def release(fraction: float, seed: int, root: Path) -> tuple[Path, float | None]:
    """The generated release of ``fraction`` (built once) and its generation seconds if built
    now."""
    base = root / f"f{round(fraction * 1000):04d}_s{seed}"
    done = base / "DONE"
    if done.is_file():
        return base / "data", None
    subprocess.run(["rm", "-rf", str(base)], check=True)
    start = time.perf_counter()
    paper_release(base / "data", fraction=fraction, seed=seed)
    seconds = time.perf_counter() - start
    done.write_text(f"{seconds:.1f}\n", encoding="utf-8")
    return base / "data", seconds


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (from /proc; 0 when gone)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            fields = stat.rsplit(")", 1)[1].split()
            parents[int(entry.name)] = int(fields[1])
            rss[int(entry.name)] = int(fields[21]) * page
        except (OSError, IndexError, ValueError):
            continue
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent and p not in tree]
        tree.update(kids)
        frontier += kids
    return sum(rss.get(p, 0) for p in tree)


def measure(data: Path, cache: Path, out: Path) -> Step:
    """Run ``arbwb report`` on ``data`` with ``cache`` as its cache folder; measure it."""
    env = {**os.environ, "ARBWB_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-c", _WRAPPER, sys.executable, "-m", "arbwb.cli", "report"]
    command += ["--data", str(data), "--out", str(out), "--no-progress"]
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    sampler.join()
    lines = err.strip().splitlines()
    usage: dict[str, Any] = (
        json.loads(lines[-1]) if lines else {"code": proc.returncode, "cpu": 0.0, "rss": 0}
    )
    if usage["code"]:
        print("\n".join(lines[-30:-1]), file=sys.stderr)
    manifest = out / "manifest.json"
    statuses: dict[str, int] = {}
    if manifest.is_file():
        for notebook in json.loads(manifest.read_text(encoding="utf-8"))["notebooks"]:
            statuses[notebook["status"]] = statuses.get(notebook["status"], 0) + 1
    return Step(wall, usage["cpu"], usage["rss"] * 1024, peak[0], usage["code"], statuses)


def _gib(value: float) -> str:
    return f"{value / 2**30:.2f} GiB"


def _verdict(ok: bool) -> str:
    return "yes" if ok else "NO"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fractions", type=float, nargs="+", default=list(FRACTIONS))
    parser.add_argument("--root", type=Path, default=ROOT, help="where releases are generated")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    compile_package()
    results: dict[float, tuple[int, Step, Step]] = {}
    for fraction in sorted(args.fractions):
        data, generated = release(fraction, args.seed, args.root)
        chunk_bytes = sum(p.stat().st_size for p in (data / "corpus").rglob("*.chunks.jsonl"))
        made = "reused" if generated is None else f"generated in {generated:.1f} s"
        print(f"fraction {fraction:g}: {data} ({made})")
        print(f"  {describe(data, plan(fraction, args.seed))}")
        with tempfile.TemporaryDirectory(prefix="arbwb-bench-paper-") as tmp:
            cold = measure(data, Path(tmp) / "cache", Path(tmp) / "report-cold")
            warm = measure(data, Path(tmp) / "cache", Path(tmp) / "report-warm")
        for name, step in (("cold", cold), ("warm", warm)):
            print(
                f"  {name}: wall {step.wall:.1f} s, CPU {step.cpu:.1f} s, peak RSS "
                f"{_gib(step.rss)} (largest process), {_gib(step.tree_rss)} (process tree), "
                f"exit {step.code}, notebooks {step.statuses}"
            )
        results[fraction] = (chunk_bytes, cold, warm)
    return _summary(results)


def _summary(results: dict[float, tuple[int, Step, Step]]) -> int:
    """Print the scaling checks and the full-scale targets; exit 1 when a report failed."""
    order = sorted(results)
    first_bytes, first_cold, _ = results[order[0]]
    print("scaling (relative to the smallest fraction measured):")
    for fraction in order:
        chunk_bytes, cold, warm = results[fraction]
        ratio = chunk_bytes / first_bytes
        linear = cold.wall / first_cold.wall <= ratio * 1.05 or fraction == order[0]
        print(
            f"  {fraction:g}: chunk bytes x{ratio:.2f} ({_gib(chunk_bytes)}), cold wall "
            f"x{cold.wall / first_cold.wall:.2f}, at most linear: {_verdict(linear)}"
        )
    flat = [max(s.tree_rss for s in results[f][1:]) for f in order if f >= 0.25]
    if len(flat) > 1:
        print(
            f"peak RSS (tree) from 1/4 up: {', '.join(_gib(v) for v in flat)}; within 20%: "
            f"{_verdict(max(flat) <= RSS_FLAT * min(flat))}"
        )
    if 1.0 in results:
        _, cold, warm = results[1.0]
        peak = max(cold.tree_rss, warm.tree_rss)
        print(
            f"full scale targets: cold {cold.wall:.1f} s <= {COLD_SECONDS:.0f} s: "
            f"{_verdict(cold.wall <= COLD_SECONDS)}; warm {warm.wall:.1f} s <= "
            f"{WARM_SECONDS:.0f} s: {_verdict(warm.wall <= WARM_SECONDS)}; peak RSS "
            f"{_gib(peak)} <= 1.5 GiB: {_verdict(peak <= RSS_BYTES)}"
        )
    else:
        print("full scale not measured (pass --fractions ... 1): targets not checked")
    return 1 if any(s.code for _, *steps in results.values() for s in steps) else 0


if __name__ == "__main__":
    sys.exit(main())
