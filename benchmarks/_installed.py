"""Benchmarks time arbwb as an installed package runs: with its modules' bytecode compiled."""

from __future__ import annotations

import compileall
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def compile_package() -> None:
    """Write arbwb's bytecode once, as ``pip install`` or a first import does.

    This machine sets ``PYTHONDONTWRITEBYTECODE=1``, under which every timed process would
    otherwise recompile each arbwb module (about 50 ms); Python still reads bytecode that exists.
    """
    compileall.compile_dir(ROOT / "arbwb", quiet=1)
