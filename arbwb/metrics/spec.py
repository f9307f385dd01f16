"""Metric names (spec §5): parsed in one place, ranx style (``"recall@20"``, ``"bcy@8000"``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_METRICS: tuple[str, ...] = ("recall@5", "recall@10", "recall@20", "mrr")
_AT_K = re.compile(r"(recall|precision|ndcg|hit|any|coverage_auc)@([0-9]+)")
_F_AT_K = re.compile(r"f([0-9]+(?:\.[0-9]+)?)@([0-9]+)")
_BCY = re.compile(r"bcy(?:_tau([0-9]+))?@([0-9]+)")
VALID_FORMS = (
    "recall@K, precision@K, fB@K (e.g. f0.5@10), ndcg@K, hit@K (or any@K), coverage_auc@K, "
    "mrr, first_gold_rank, bcy@B, bcy_tauT@B"
)


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric name: its family and parameters (k, beta, budget B, threshold tau)."""

    family: str
    k: int | None = None
    beta: float | None = None
    budget: int | None = None
    tau: int | None = None

    @property
    def name(self) -> str:
        """The canonical spelling, e.g. ``recall@20``, ``f0.5@10``, ``bcy_tau16@8000``."""
        if self.family in ("mrr", "first_gold_rank"):
            return self.family
        if self.family == "bcy":
            prefix = "bcy" if self.tau == 1 else f"bcy_tau{self.tau}"
            return f"{prefix}@{self.budget}"
        if self.family == "f":
            return f"f{self.beta:g}@{self.k}"
        return f"{self.family}@{self.k}"


def parse_metric(name: str) -> MetricSpec:
    """Parse a metric name case-insensitively; upstream spellings (``Any@5``, ``MRR``) work."""
    text = name.strip().lower()
    if text in ("mrr", "first_gold_rank"):
        return MetricSpec(text)
    if match := _AT_K.fullmatch(text):
        family = "hit" if match[1] == "any" else match[1]
        spec = MetricSpec(family, k=int(match[2]))
    elif match := _F_AT_K.fullmatch(text):
        spec = MetricSpec("f", k=int(match[2]), beta=float(match[1]))
    elif match := _BCY.fullmatch(text):
        spec = MetricSpec("bcy", budget=int(match[2]), tau=int(match[1] or 1))
    else:
        msg = f"unknown metric {name!r}; valid forms: {VALID_FORMS}"
        raise ValueError(msg)
    if 0 in (spec.k, spec.beta, spec.budget, spec.tau):
        msg = f"metric {name!r} needs positive parameters; valid forms: {VALID_FORMS}"
        raise ValueError(msg)
    return spec
