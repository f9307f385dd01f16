"""The hand-made checkout of contextbench-spec §12 and the helpers its test vectors share."""

from __future__ import annotations

from typing import Any

import pytest

from arbwb.contextbench.inputs import Gold, Prediction, Step
from arbwb.contextbench.instance import evaluate_instance
from arbwb.contextbench.symbols import Definition
from arbwb.io import contextbench as cio
from arbwb.io.checkout import MappingCheckout

A_PY = (
    "import os\n\n\nclass Foo:\n    def bar(self):\n        return 1\n\n    def baz(self):\n"
    "        return 2\n\n\ndef top():\n    return Foo().bar()\n"
)
FILES = {
    "a.py": A_PY.encode(),
    "b.py": "".join(f"x{i} = {i}\n" for i in range(1, 21)).encode(),
    "pkg/c.py": b"def c1():\n    pass\n\n\ndef c2():\n    pass",
    "README.md": b"# T\n\nline3\nline4\nline5\n",
    ".hidden.js": b"function h() {\n  return 1;\n}\n",
}
CHECKOUT = MappingCheckout(FILES)
D = Definition
DEFS = {
    "a.py": [
        D("class_definition", 12, 95, "Foo"),
        D("function_definition", 27, 58, "bar"),
        D("function_definition", 64, 95, "baz"),
        D("function_definition", 98, 131, "top"),
    ],
    "pkg/c.py": [D("function_definition", 0, 18, "c1"), D("function_definition", 21, 39, "c2")],
    ".hidden.js": [D("function_declaration", 0, 28, "h")],
}


def finder(path: str, source: bytes) -> list[Definition]:
    """The definitions of ``DEFS``: a symbol finder for the hand-made checkout."""
    return DEFS.get(path, [])


#: V15's patch: deletes a.py line 6 (inside the gold), adds one line.
PATCH_V15 = (
    "--- a/a.py\n+++ b/a.py\n@@ -5,3 +5,3 @@\n     def bar(self):\n-        return 1\n"
    "+        return 10\n \n"
)


def parse_spans(items: list[str]) -> tuple[tuple[str, int, int], ...]:
    """``"path:start-end"`` items as (path, start, end) spans."""
    out = []
    for item in items:
        path, _, lines = item.rpartition(":")
        start, _, end = lines.partition("-")
        out.append((path, int(start), int(end)))
    return tuple(out)


def make_gold(items: list[str], patch: str | None = None) -> Gold:
    """Gold of instance ``I`` from ``"path:start-end"`` items (§2.1 paths; empty ones dropped)."""
    spans = tuple(
        (cio.normalize_gold_path(p), s, e)
        for p, s, e in parse_spans(items)
        if cio.normalize_gold_path(p)
    )
    return Gold("I", "I", "o/r", "c" * 40, spans, patch)


def make_step(
    spans: list[str], files: list[str] | None = None, symbols: dict[str, list[str]] | None = None
) -> Step:
    """A step predicting ``spans`` (their files unless ``files`` is given) and symbol names."""
    parsed = parse_spans(spans)
    names = tuple((p, n) for p, ns in (symbols or {}).items() for n in ns)
    chosen = files if files is not None else list(dict.fromkeys(p for p, _, _ in parsed))
    return Step(tuple(chosen), parsed, names)


def evaluate(
    gold: Gold, final: Step, steps: tuple[Step, ...] = (), patch: str | None = None
) -> dict[str, Any]:
    """The §3.3 record of one prediction on the §12 checkout with the table finder."""
    pred = Prediction("I", steps, final, patch)
    return evaluate_instance(gold, pred, CHECKOUT, symbol_finder=finder)


def check(
    record: dict[str, Any], level: str, c: float, p: float, igp: tuple[int, int, int]
) -> None:
    """One level's coverage, precision and (intersection, gold, pred) sizes."""
    got = record["final"][level]
    assert got["coverage"] == pytest.approx(c, abs=5e-7), (level, got)
    assert got["precision"] == pytest.approx(p, abs=5e-7), (level, got)
    assert (got["intersection"], got["gold_size"], got["pred_size"]) == igp, (level, got)
