"""The package's shape (docs/architecture.md): no import cycles between arbwb modules, rooms
that import only downwards, small modules, a cheap ``import arbwb`` with its public names, and
a CLI that imports only what the command it runs needs."""

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


MAX_MODULE_LINES = 700
#: Top-level modules besides ``__init__``, ``__main__`` and ``cli``; the rest live in rooms.
MAX_TOP_LEVEL_MODULES = 12


def _imports_into(room: str, forbidden: tuple[str, ...]) -> dict[str, set[str]]:
    """Each module of ``room`` (a package name) -> the forbidden arbwb modules it imports."""
    found = {}
    for name, targets in import_graph().items():
        if name == room or name.startswith(f"{room}."):
            bad = {t for t in targets if t.startswith(forbidden)}
            if bad:
                found[name] = bad
    return found


def test_io_imports_no_analysis_report_or_retriever() -> None:
    """Readers and writers sit below everything. From metrics only the import-free helpers
    are shared: metric *names* (metrics.spec) and interval merging (metrics.intervals)."""
    rooms = ("arbwb.analysis", "arbwb.report", "arbwb.retrievers", "arbwb.commands")
    found = _imports_into("arbwb.io", (*rooms, "arbwb.metrics", "arbwb.plots"))
    helpers = {"arbwb.metrics.spec", "arbwb.metrics.intervals"}
    found = {name: bad - helpers for name, bad in found.items() if bad - helpers}
    assert not found, f"io imports rooms above it: {found}"


def test_analysis_imports_no_report_or_command() -> None:
    """Analyses return results; writing them (report) and the CLI (commands) sit above."""
    found = _imports_into("arbwb.analysis", ("arbwb.report", "arbwb.commands"))
    assert not found, f"analysis imports rooms above it: {found}"


def test_the_room_checks_see_a_planted_import(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = {"arbwb.io.x": {"arbwb.analysis.y"}, "arbwb.analysis.y": set()}
    monkeypatch.setattr(sys.modules[__name__], "import_graph", lambda: graph)
    assert _imports_into("arbwb.io", ("arbwb.analysis",)) == {"arbwb.io.x": {"arbwb.analysis.y"}}


def test_few_top_level_modules() -> None:
    top = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__", "cli"}
    assert len(top) <= MAX_TOP_LEVEL_MODULES, f"{len(top)} top-level modules: {sorted(top)}"


def test_no_module_over_the_line_limit() -> None:
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    over = {path: n for path, n in sizes.items() if n > MAX_MODULE_LINES}
    assert not over, f"split these by job: {over}"


def test_import_arbwb_is_cheap_and_every_public_name_imports() -> None:
    """``import arbwb`` loads no Polars (its names are lazy, PEP 562); each name in
    ``__all__`` then resolves, and ``dir(arbwb)`` lists it."""
    probe = (
        "import sys, json\n"
        "import arbwb\n"
        "cheap = 'polars' not in sys.modules and 'typing' not in sys.modules\n"
        "missing = [n for n in arbwb.__all__ if getattr(arbwb, n, None) is None]\n"
        "undir = sorted(set(arbwb.__all__) - set(dir(arbwb)))\n"
        "lazy = sorted({'__version__', *arbwb._LAZY})\n"
        "print(json.dumps([cheap, missing, undir, sorted(arbwb.__all__) == lazy]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert json.loads(out.splitlines()[-1]) == [True, [], [], True]


def test_public_names_are_the_defining_objects() -> None:
    import arbwb
    from arbwb.io.release import load_release
    from arbwb.retrievers import plugin

    assert arbwb.load_release is load_release
    assert arbwb.Retriever is plugin.Retriever
    assert arbwb.analysis.__name__ == "arbwb.analysis"
    with pytest.raises(AttributeError, match="__all__"):
        _ = arbwb.no_such_name


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
