"""Wall time of `arbwb report` on the 287-sample shared runs (target: <= 60 s on 2 cores).

Baseline measured in the same run: papermill executing a one-cell notebook (kernel
start-up), so the printed ratio says how many "empty notebooks" the report costs.
Needs ../shared beside the checkout; builds a release root of symlinks in a temp dir.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import nbformat
import papermill

from arbwb.paths import NOTEBOOKS_DIR, PROJECT_DIR
from arbwb.report.build import ReportConfig, run_report

SHARED = PROJECT_DIR.parent / "shared" / "arb-data"
TARGET_SECONDS = 60.0


def _release(root: Path) -> Path:
    (root / "benchmark").mkdir(parents=True)
    (root / "eval").mkdir()
    (root / "benchmark" / "v0_1").symlink_to(SHARED / "benchmark" / "v0_1")
    (root / "eval" / "v1_1_candidate_filter_ablation").symlink_to(
        SHARED / "eval" / "v1_1_candidate_filter_ablation"
    )
    return root


def _empty_notebook_seconds(folder: Path) -> float:
    nb = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]  # type: ignore[no-untyped-call]
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "py"}
    path = folder / "empty.ipynb"
    nbformat.write(nb, path)  # type: ignore[no-untyped-call]
    start = time.perf_counter()
    papermill.execute_notebook(str(path), str(folder / "out.ipynb"), progress_bar=False)
    return time.perf_counter() - start


def main() -> int:
    if not SHARED.is_dir():
        print(f"skipped: needs {SHARED} (../shared beside the checkout)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        baseline = _empty_notebook_seconds(work)
        data = _release(work / "release")
        notebooks = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]-*.ipynb"))
        start = time.perf_counter()
        run_report(ReportConfig(data_dir=data, out_dir=work / "report", progress=False))
        wall = time.perf_counter() - start
    print(f"notebooks: {len(notebooks)} ({', '.join(p.stem for p in notebooks)})")
    print(f"baseline one-cell notebook: {baseline:.2f} s")
    print(f"arbwb report on 287-sample shared runs: {wall:.2f} s wall")
    print(f"ratio report / empty notebook: {wall / baseline:.1f}x")
    print(f"target <= {TARGET_SECONDS:.0f} s: {'met' if wall <= TARGET_SECONDS else 'MISSED'}")
    return 0 if wall <= TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
