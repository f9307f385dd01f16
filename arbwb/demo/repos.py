"""The demo repositories of ``data/demo-src`` (five languages, two commits each) as
``DEMO_REPOS``."""

from __future__ import annotations

from typing import Any

from arbwb.demo.source import DemoCommit, DemoRepo, default_repos

__all__ = ["DEMO_REPOS", "DemoCommit", "DemoRepo"]

#: The checkout's repositories, read on first use by :func:`__getattr__` (not at import).
DEMO_REPOS: tuple[DemoRepo, ...]


def __getattr__(name: str) -> Any:
    """``DEMO_REPOS``: the repositories of the checkout's ``data/demo-src`` (read once)."""
    if name != "DEMO_REPOS":
        raise AttributeError(name)
    return default_repos()
