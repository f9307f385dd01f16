"""Choosing the C modules or their fallbacks (:mod:`arbwb.native.select`): one notice per
process, and the same rankings either way."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arbwb.paths import DEMO_DIR, PROJECT_DIR

#: Prints which implementations were chosen, importing both users of the choice.
CHOSEN = (
    "from arbwb.retrievers import grep, terms\n"
    "from arbwb.native import select as s\n"
    "print(s.termcount.__name__, s.jsonlines.__name__)\n"
)


def python(code: str, no_native: str | None) -> subprocess.CompletedProcess[str]:
    """``python -c code`` with this checkout first on the path and ``ARBWB_NO_NATIVE`` set to
    ``no_native`` (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k != "ARBWB_NO_NATIVE"}
    env |= {"PYTHONPATH": str(PROJECT_DIR), "HF_HUB_OFFLINE": "1"}
    if no_native is not None:
        env["ARBWB_NO_NATIVE"] = no_native
    command = [sys.executable, "-c", code]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=True)


def test_no_native_selects_the_fallbacks_with_one_notice() -> None:
    result = python(CHOSEN + "from arbwb.native import select\n", "1")
    assert result.stdout.split() == ["arbwb.native.fallback", "arbwb.native.fallback"]
    assert result.stderr.splitlines() == [
        "arbwb: C extensions arbwb.native._termcount and arbwb.native._jsonlines off "
        "(ARBWB_NO_NATIVE=1); "
        "using the slower pure-Python fallback"
    ]


def test_a_module_not_built_is_replaced_with_the_notice() -> None:
    """An extension that does not import (here: blocked) falls back alone, and says so."""
    pytest.importorskip("arbwb.native._jsonlines", reason="C module not built")
    result = python("import sys\nsys.modules['arbwb.native._termcount'] = None\n" + CHOSEN, None)
    assert result.stdout.split()[0] == "arbwb.native.fallback"
    assert result.stderr.splitlines() == [
        "arbwb: C extension arbwb.native._termcount not built (no compiler?); "
        "using the slower pure-Python fallback"
    ]


def test_built_modules_are_used_silently() -> None:
    pytest.importorskip("arbwb.native._termcount", reason="C module not built")
    pytest.importorskip("arbwb.native._jsonlines", reason="C module not built")
    for no_native in (None, "0", ""):
        result = python(CHOSEN, no_native)
        assert (result.stdout.split(), result.stderr) == (
            ["arbwb.native._termcount", "arbwb.native._jsonlines"],
            "",
        )


@pytest.mark.parametrize("method", ["lexical", "grep"])
def test_rankings_are_byte_identical_without_the_c_modules(method: str, tmp_path: Path) -> None:
    """``arbwb rank`` on a copy of the demo release, once as built and once with
    ``ARBWB_NO_NATIVE=1`` (no cache, so both really count and scan): the same details."""
    data = tmp_path / "demo"
    shutil.copytree(DEMO_DIR, data)
    details = {}
    for no_native in (None, "1"):
        out = tmp_path / f"{method}-{no_native}.jsonl"
        argv = ["rank", "--method", method, "--data", str(data), "--out", str(out), "--no-cache"]
        run = python(
            f"import sys\nfrom arbwb.cli import main\nsys.exit(main({argv!r}))\n", no_native
        )
        assert no_native is None or "pure-Python fallback" in run.stderr
        details[no_native] = out.read_bytes()
    assert details[None] == details["1"]
    assert details[None].count(b"\n") > 20  # every demo sample ranked
