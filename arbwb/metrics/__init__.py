"""Metrics, one module per family (ranx style): names (:mod:`.spec`), rank metrics
(:mod:`.rank`), budgets and BCY (:mod:`.budget`), chunk packing and line/block overlap
(:mod:`.chunks`), aggregation levels (:mod:`.aggregate`) and one :func:`evaluate`.
"""

from arbwb.metrics.evaluation import coverage, evaluate, snapshot_map
from arbwb.metrics.spec import DEFAULT_METRICS, VALID_FORMS, MetricSpec, parse_metric

__all__ = [
    "DEFAULT_METRICS",
    "VALID_FORMS",
    "MetricSpec",
    "coverage",
    "evaluate",
    "parse_metric",
    "snapshot_map",
]
