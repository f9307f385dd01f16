"""Shared fixtures: the real ARB files in ../shared beside the checkout (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture
def shared_dir() -> Path:
    """``../shared/arb-data``; tests using it skip cleanly when the folder is absent."""
    data = SHARED / "arb-data"
    if not data.is_dir():
        pytest.skip("needs ../shared beside the checkout (CI has it)")
    return data


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test session writes the on-disk cache to its own folder, never ~/.cache/arbwb."""
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "arbwb-cache"))


@pytest.fixture(scope="session")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``arbwb report`` on the full demo, built once per session for the tests that read it."""
    from arbwb.cli import main
    from arbwb.paths import DEMO_DIR

    out = tmp_path_factory.mktemp("demo-report") / "report"
    assert main(["report", "--data", str(DEMO_DIR), "--out", str(out), "--no-progress"]) == 0
    return out
