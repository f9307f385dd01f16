"""The embedded demo release (our own data, not ARB's): readers of ``data/demo-src`` and the
builder that regenerates ``data/demo`` byte for byte (``arbwb demo build``)."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    """``DEMO_REPOS`` and ``DEMO_SAMPLES``: the repositories and samples of the checkout's
    ``data/demo-src``, read on first use (not at import)."""
    from arbwb.demo.samples import read_samples
    from arbwb.demo.source import default_repos, source_dir

    if name == "DEMO_REPOS":
        return default_repos()
    if name == "DEMO_SAMPLES":
        return read_samples(source_dir())
    raise AttributeError(name)
