"""The package's shape: no import cycles between arbwb modules, and a CLI that imports only
what the command it runs needs."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "arbwb"
DEMO_RUN = ROOT / "data" / "demo" / "eval" / "demo" / "lexical_details.jsonl"


def _module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def import_graph() -> dict[str, set[str]]:
    """Module -> arbwb modules it imports anywhere in its body (lazy imports included)."""
    modules = _module_names()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{alias.name}" for alias in node.names]
                targets = [t if t in modules else node.module for t in targets]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_arbwb_module_imports_another_in_a_cycle() -> None:
    graph = import_graph()
    assert "arbwb.metrics.budget" in graph["arbwb.metrics.evaluation"]  # the graph is real
    assert find_cycle(graph) is None


def test_io_imports_no_analysis_or_retriever() -> None:
    """Readers and writers sit below everything; metric *names* (metrics.spec) and the line
    interval merge rule (metrics.intervals, a primitive readers check spans with) are shared."""
    for name, targets in import_graph().items():
        if name.startswith("arbwb.io"):
            bad = {t for t in targets if t.startswith(("arbwb.retrievers", "arbwb.metrics"))}
            bad -= {"arbwb.metrics.spec", "arbwb.metrics.intervals"}
            assert not bad, f"{name} imports {bad}"


def _modules_after(code: str) -> dict[str, bool]:
    probe = (
        "import sys, json\n"
        f"{code}\n"
        "print(json.dumps({m: m in sys.modules for m in "
        "('polars', 'scipy', 'matplotlib', 'arbwb.retrievers.registry')}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    loaded: dict[str, bool] = json.loads(out.splitlines()[-1])
    return loaded


def test_help_imports_no_command_module() -> None:
    loaded = _modules_after(
        "from arbwb.cli import build_parser\n"
        "build_parser(None).format_help(); build_parser('validate').format_help()"
    )
    assert loaded == {
        "polars": False,
        "scipy": False,
        "matplotlib": False,
        "arbwb.retrievers.registry": False,
    }


@pytest.mark.skipif(not DEMO_RUN.is_file(), reason="data/demo has no lexical run")
def test_score_with_rank_metrics_leaves_scipy_and_matplotlib_out() -> None:
    loaded = _modules_after(
        "import contextlib, io\n"
        "from arbwb.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['score', {str(DEMO_RUN)!r}, '--metrics', 'recall@20,mrr']) == 0"
    )
    assert loaded["polars"] is True  # the command really ran
    assert (loaded["scipy"], loaded["matplotlib"]) == (False, False)
