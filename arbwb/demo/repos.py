"""The five tiny demo repositories (their trees live in ``data/demo-src/repos``).

``tallyho`` is a Python ledger package, ``kvcache`` a Go cache module, ``routekit`` a
JavaScript router, ``bucketeer`` a Rust rate limiter and ``formcheck`` a TypeScript form
validator (the last two larger, so some gold files rank past 20). Each has tests and two
commits, so the demo has ten snapshots. ``DEMO_REPOS`` reads the checkout's copy on first use.
"""

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
