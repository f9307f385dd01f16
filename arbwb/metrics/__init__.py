"""Metrics, one module per family (names, rank, budget, chunks, aggregate) and one
:func:`evaluate`; the names below load on first use, so a command imports only what it needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arbwb.metrics.evaluation import coverage, evaluate, snapshot_map
    from arbwb.metrics.spec import DEFAULT_METRICS, VALID_FORMS, MetricSpec, parse_metric

_HOMES = {
    "spec": ("DEFAULT_METRICS", "VALID_FORMS", "MetricSpec", "parse_metric"),
    "evaluation": ("coverage", "evaluate", "snapshot_map"),
}

__all__ = [
    "DEFAULT_METRICS", "VALID_FORMS", "MetricSpec", "coverage", "evaluate", "parse_metric",
    "snapshot_map",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    """Load ``name`` from its module the first time it is asked for (PEP 562)."""
    home = next((module for module, names in _HOMES.items() if name in names), None)
    if home is None:
        raise AttributeError(f"module 'arbwb.metrics' has no attribute {name!r}")
    return getattr(importlib.import_module(f"arbwb.metrics.{home}"), name)
