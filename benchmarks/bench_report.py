"""`arbwb report --data data/demo` (issue 27): wall, CPU and peak RSS, cold and warm, against the
one-kernel-per-notebook path it replaced (target: <= 20 s wall on 2 cores).

Each run is the CLI in a subprocess, measured by a small Python parent of its own: wall, CPU
(user + sys of the whole tree, kernels included) and peak RSS (the largest single process).
Cold: an empty ``ARBWB_CACHE_DIR``; warm: the same folder again. "kernel per notebook" is the
same code with :class:`~arbwb.report.kernel.KeptKernel` replaced by one that starts a new kernel
for every notebook (``papermill.execute_notebook`` as before issue 27); that switch lives only
here. Both sides must record the same numbers and tables. The load average is printed with
each run: on a shared machine wall time follows the load, CPU seconds much less.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_report.py [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from arbwb.paths import DEMO_DIR, NOTEBOOKS_DIR, PROJECT_DIR

TARGET_SECONDS = 20.0

#: Runs the CLI with a kernel started for every notebook (papermill's own), in a process whose
#: working folder is the notebooks' folder, as the worker processes before issue 27 were.
_PER_NOTEBOOK = """
import sys
import papermill
from arbwb.report import kernel

class KernelPerNotebook(kernel.KeptKernel):
    def execute(self, notebook, target, parameters):
        papermill.execute_notebook(
            str(notebook), str(target), parameters=parameters, kernel_name=self.kernel_name,
            language="python", progress_bar=False, extra_arguments=[kernel.KERNEL_QUIET],
        )

kernel.KeptKernel = KernelPerNotebook
from arbwb.cli import main
sys.exit(main(sys.argv[1:]))
"""
_KEPT = "import sys\nfrom arbwb.cli import main\nsys.exit(main(sys.argv[1:]))\n"

#: The measuring parent: runs its arguments, prints wall, tree CPU and peak RSS as JSON.
_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:]).returncode
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = usage.ru_utime + usage.ru_stime
print(json.dumps({"code": code, "wall": wall, "cpu": cpu, "rss_mib": usage.ru_maxrss / 1024}))
"""

SIDES = {"kept kernels": _KEPT, "kernel per notebook": _PER_NOTEBOOK}


def _run(side: str, out: Path, cache: Path, jobs: int | None) -> dict[str, float]:
    """One report by ``side`` into ``out`` with ``cache`` as its cache folder, measured."""
    env = {**os.environ, "ARBWB_CACHE_DIR": str(cache), "PYTHONPATH": str(PROJECT_DIR)}
    argv = ["report", "--data", str(DEMO_DIR), "--out", str(out), "--no-progress"]
    argv += ["--jobs", str(jobs)] if jobs else []
    command = [sys.executable, "-c", _MEASURE, sys.executable, "-c", SIDES[side], *argv]
    result = subprocess.run(
        command, env=env, cwd=NOTEBOOKS_DIR, capture_output=True, text=True, check=True
    )
    measured: dict[str, float] = json.loads(result.stdout.splitlines()[-1])
    if measured["code"] != 0:
        msg = f"{side}: arbwb report exited {measured['code']}:\n{result.stdout}{result.stderr}"
        raise RuntimeError(msg)
    measured["load"] = os.getloadavg()[0]
    return measured


def _outputs(report: Path) -> dict[str, bytes]:
    """Recorded numbers and tables (not figures: seaborn's strip-plot jitter is unseeded)."""
    files = [*report.glob("records/*.json"), *report.glob("tables/*")]
    return {str(p.relative_to(report)): p.read_bytes() for p in sorted(files)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="arbwb report --jobs")
    args = parser.parse_args()
    results: dict[tuple[str, str], dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        work = Path(tmp)
        for phase in ("cold", "warm"):  # sides take turns, so load swings hit both
            for number, side in enumerate(SIDES):
                report = work / f"report-{number}"
                results[side, phase] = _run(side, report, work / f"cache-{number}", args.jobs)
        same = _outputs(work / "report-0") == _outputs(work / "report-1")
    cpus = len(os.sched_getaffinity(0))
    print(f"arbwb report --data data/demo, {cpus} usable CPUs, --jobs {args.jobs or cpus}")
    print(f"{'side':<20} {'phase':<5} {'wall s':>7} {'CPU s':>7} {'peak RSS MiB':>13} {'load':>5}")
    for (side, phase), m in results.items():
        print(
            f"{side:<20} {phase:<5} {m['wall']:7.2f} {m['cpu']:7.2f} {m['rss_mib']:13.0f} "
            f"{m['load']:5.1f}"
        )
    for phase in ("cold", "warm"):
        old, new = results["kernel per notebook", phase], results["kept kernels", phase]
        print(
            f"{phase}: kernel per notebook / kept kernels = {old['wall'] / new['wall']:.2f}x wall, "
            f"{old['cpu'] / new['cpu']:.2f}x CPU"
        )
    print(f"records and tables identical on both sides: {same}")
    for phase in ("cold", "warm"):
        met = results["kept kernels", phase]["wall"] <= TARGET_SECONDS
        print(f"target {phase} wall <= {TARGET_SECONDS:.0f} s: {'met' if met else 'MISSED'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
