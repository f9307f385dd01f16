"""Rank metrics (spec §5): one pure function per metric, names parsed in one place, and a
vectorised :func:`evaluate` over the RANKINGS and LABELS frames.

Notation: ``R`` is a ranking of distinct paths (rank = position + 1), ``G`` the set of
target gold paths, ``R[:k]`` the first k entries.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import polars as pl

from arbwb import schemas
from arbwb.errors import InputError

DEFAULT_METRICS: tuple[str, ...] = ("recall@5", "recall@10", "recall@20", "mrr")
_F_EPS = 1e-12
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


# --- reference metric functions (lists and sets; the spec's formulas verbatim) ---------


def _hits(ranked: Sequence[str], gold: AbstractSet[str], k: int) -> int:
    return sum(1 for path in ranked[:k] if path in gold)


def recall_at_k(ranked: Sequence[str], gold: AbstractSet[str], k: int) -> float:
    """Recall@k = |G ∩ R[:k]| / |G|; 0 when G is empty (spec §5.2)."""
    return _hits(ranked, gold, k) / len(gold) if gold else 0.0


def precision_at_k(
    ranked: Sequence[str],
    gold: AbstractSet[str],
    k: int,
    *,
    n_ranked: int | None = None,
    fusion: bool = False,
) -> float:
    """Precision@k = |G ∩ R[:k]| / min(k, |R|), 0 when R is empty (spec §5.4 QUIRK).

    ``n_ranked`` is |R| when ``ranked`` is a truncated prefix. Rank fusion
    (``fusion=True``) divides by k instead.
    """
    size = len(ranked) if n_ranked is None else n_ranked
    denominator = k if fusion else min(k, size)
    return _hits(ranked, gold, k) / denominator if denominator else 0.0


def f_beta(precision: float, recall: float, beta: float) -> float:
    """F_beta = (1+β²)·p·r / max(β²·p + r, 1e-12); 0 when p ≤ 0 and r ≤ 0 (spec §5.4)."""
    if precision <= 0 and recall <= 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / max(b2 * precision + recall, _F_EPS)


def first_gold_rank(ranked: Sequence[str], gold: AbstractSet[str]) -> int | None:
    """1-based position of the first path of R in G; None when no gold is ranked (§5.5)."""
    return next((rank for rank, path in enumerate(ranked, start=1) if path in gold), None)


def reciprocal_rank(ranked: Sequence[str], gold: AbstractSet[str]) -> float:
    """RR = 1 / first-gold rank, 0 if no gold is ranked; its mean is MRR (spec §5.3)."""
    rank = first_gold_rank(ranked, gold)
    return 1 / rank if rank else 0.0


def hit_at_k(ranked: Sequence[str], gold: AbstractSet[str], k: int) -> float:
    """Any@k = 1 if G ∩ R[:k] is non-empty else 0 (spec §5.5)."""
    return 1.0 if _hits(ranked, gold, k) else 0.0


def ndcg_at_k(ranked: Sequence[str], gold: AbstractSet[str], k: int) -> float:
    """nDCG@k with binary gain: Σ_{r≤k, R[r]∈G} 1/log2(r+1) / Σ_{r=1}^{min(|G|,k)} 1/log2(r+1)."""
    if not gold:
        return 0.0
    dcg = sum(1 / math.log2(r + 1) for r, p in enumerate(ranked[:k], start=1) if p in gold)
    return dcg / _idcg(min(len(gold), k))


def _idcg(n: int) -> float:
    return sum(1 / math.log2(r + 1) for r in range(1, n + 1))


def coverage_auc(ranked: Sequence[str], gold: AbstractSet[str], k: int) -> float:
    """coverage_auc@k = (1/k)·Σ_{c=1}^{k} Recall@c; 0 when G is empty (spec §5.6)."""
    return sum(recall_at_k(ranked, gold, c) for c in range(1, k + 1)) / k


# --- vectorised evaluation ---------------------------------------------------------------


def _gold(labels: pl.DataFrame, samples: pl.DataFrame | None) -> pl.DataFrame:
    """Distinct (sample_id, path) gold pairs of the evaluated samples."""
    gold = labels.filter(pl.col("role") == "gold").select("sample_id", "path").unique()
    if samples is not None:
        gold = gold.join(samples.select("sample_id").unique(), on="sample_id", how="semi")
    return gold


def _count_aggs(specs: Sequence[MetricSpec]) -> list[pl.Expr]:
    """Per-(run, sample) counts each metric needs, from rows flagged ``is_gold``."""
    rank, gold = pl.col("rank"), pl.col("is_gold")
    aggs: dict[str, pl.Expr] = {"first": rank.filter(gold).min()}
    for spec in specs:
        k = spec.k or 0
        top = gold & (rank <= k)
        aggs[f"hits{k}"] = top.sum()
        aggs[f"ranked{k}"] = (rank <= k).sum()
        if spec.family == "ndcg":
            aggs[f"dcg{k}"] = (1.0 / (rank + 1).log(2)).filter(top).sum()
        if spec.family == "coverage_auc":
            aggs[f"auc{k}"] = (k - rank + 1).filter(top).sum()
    return [expr.alias(name) for name, expr in aggs.items()]


def _value_expr(spec: MetricSpec, *, fusion: bool) -> pl.Expr:
    """The per-sample value of one metric from the count columns (formulas as above)."""
    k = spec.k or 0
    hits, n_gold = pl.col(f"hits{k}").cast(pl.Float64), pl.col("n_gold")
    recall = hits / n_gold
    denominator = pl.lit(k) if fusion else pl.min_horizontal(pl.lit(k), pl.col(f"ranked{k}"))
    precision = pl.when(denominator > 0).then(hits / denominator).otherwise(0.0)
    match spec.family:
        case "recall":
            return recall
        case "precision":
            return precision
        case "f":
            b2 = (spec.beta or 0.0) ** 2
            value = (
                (1 + b2) * precision * recall / pl.max_horizontal(b2 * precision + recall, _F_EPS)
            )
            return pl.when((precision > 0) | (recall > 0)).then(value).otherwise(0.0)
        case "hit":
            return (hits > 0).cast(pl.Float64)
        case "ndcg":
            idcg = [0.0] + [_idcg(n) for n in range(1, k + 1)]
            ideal = pl.min_horizontal(n_gold, k)
            return pl.col(f"dcg{k}") / ideal.replace_strict(list(range(k + 1)), idcg)
        case "coverage_auc":
            return pl.col(f"auc{k}") / n_gold / k
        case "mrr":
            return pl.when(pl.col("first").is_null()).then(0.0).otherwise(1.0 / pl.col("first"))
        case _:
            return pl.col("first").cast(pl.Float64)


def _apply_stored_mrr(per: pl.DataFrame, stored: pl.DataFrame | None) -> pl.DataFrame:
    """Take first-gold rank from the stored MRR where the ranking holds no gold but MRR > 0.

    Compact details without ``gold_ranks`` (e.g. the v0_1 lexical run) only keep the top 20,
    while upstream's MRR used the full ranking (spec §5.1); then rank = round(1 / MRR).
    """
    if stored is None:
        return per
    mrr = stored.filter(pl.col("metric") == "mrr").select(
        "run", "sample_id", pl.col("value").alias("stored_mrr")
    )
    per = per.join(mrr, on=["run", "sample_id"], how="left")
    use = pl.col("first").is_null() & (pl.col("stored_mrr") > 0)
    return per.with_columns(
        first=pl.when(use).then((1.0 / pl.col("stored_mrr")).round()).otherwise(pl.col("first")),
        stored_rr=pl.when(use).then(pl.col("stored_mrr")),
    ).drop("stored_mrr")


def _bcy(
    specs: Sequence[MetricSpec],
    rankings: pl.DataFrame,
    labels: pl.DataFrame,
    samples: pl.DataFrame | None,
    corpus: Any,
) -> pl.DataFrame:
    """BCY rows from :mod:`arbwb.budget`, with snapshots taken from the samples frame."""
    if corpus is None:
        raise InputError("BCY metrics need a corpus (--corpus DIR)")
    if samples is None:
        raise InputError("BCY metrics need the samples (or details) frame to find snapshots")
    from arbwb.budget import bcy_metrics

    frame: pl.DataFrame = bcy_metrics(
        rankings, labels, corpus, list(specs), snapshots=snapshot_map(samples)
    )
    return frame


def snapshot_map(samples: pl.DataFrame) -> pl.DataFrame:
    """sample_id -> snapshot_id from a samples (or details) frame."""
    if "snapshot_id" in samples.columns:
        return samples.select("sample_id", "snapshot_id").unique()
    snapshot = pl.format("{}@{}", "repo", "base_commit").alias("snapshot_id")
    return samples.select("sample_id", snapshot).unique()


def evaluate(
    rankings: pl.DataFrame,
    labels: pl.DataFrame,
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    samples: pl.DataFrame | None = None,
    stored: pl.DataFrame | None = None,
    corpus: Any = None,
    fusion: bool = False,
    runs: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Per-sample metrics (METRICS schema) for every run and every sample with gold.

    The evaluated samples are those with a non-empty ``gold`` role in ``labels``
    (restricted to ``samples`` when given; a SAMPLES or RunData.details frame). A sample a
    run did not rank scores as an empty ranking (zeros), so denominators never shrink.
    ``runs`` lists run names that may have no rows at all (e.g. only empty predictions).
    ``stored`` (upstream's per-sample metrics) supplies MRR past a truncated prefix (see
    :func:`_apply_stored_mrr`). ``fusion`` switches precision to the fusion denominator k.
    ``first_gold_rank`` is null when no gold is ranked.
    """
    specs = list({s.name: s for s in map(parse_metric, metrics)}.values())
    rank_specs = [s for s in specs if s.family != "bcy"]
    gold = _gold(labels, samples)
    run_names = sorted(set(rankings["run"].unique().to_list()) | set(runs or ()))
    if not run_names:
        msg = "no run to evaluate: rankings is empty; name the runs with runs=[...]"
        raise ValueError(msg)
    grid = (
        pl.DataFrame({"run": run_names}, schema={"run": pl.String})
        .join(gold.group_by("sample_id").agg(n_gold=pl.len().cast(pl.Int64)), how="cross")
        .sort("run", "sample_id")
    )
    ranked = rankings.join(gold.select("sample_id").unique(), on="sample_id", how="semi")
    if ranked.select("run", "sample_id", "path").is_duplicated().any():
        msg = "rankings repeat a path within a (run, sample); build them with load_rankings"
        raise ValueError(msg)
    flagged = ranked.join(
        gold.with_columns(is_gold=pl.lit(True)), on=["sample_id", "path"], how="left"
    ).with_columns(pl.col("is_gold").fill_null(False))
    counts = flagged.group_by("run", "sample_id").agg(_count_aggs(rank_specs))
    per = grid.join(counts, on=["run", "sample_id"], how="left").with_columns(
        pl.exclude("run", "sample_id", "n_gold", "first").fill_null(0)
    )
    per = _apply_stored_mrr(per.with_columns(stored_rr=pl.lit(None, pl.Float64)), stored)
    values = {s.name: _value_expr(s, fusion=fusion).cast(pl.Float64) for s in rank_specs}
    if "mrr" in values:
        values["mrr"] = pl.coalesce("stored_rr", values["mrr"])
    parts = []
    if values:
        parts.append(
            per.select("run", "sample_id", **values).unpivot(
                index=["run", "sample_id"], variable_name="metric", value_name="value"
            )
        )
    bcy_specs = [s for s in specs if s.family == "bcy"]
    if bcy_specs:
        bcy = _bcy(
            bcy_specs, ranked, labels.join(gold, on="sample_id", how="semi"), samples, corpus
        )
        # every (run, sample) gets each BCY row; one the packer did not report scores 0
        full = grid.select("run", "sample_id").join(
            pl.DataFrame({"metric": [s.name for s in bcy_specs]}), how="cross"
        )
        bcy = full.join(bcy, on=["run", "sample_id", "metric"], how="left")
        parts.append(bcy.with_columns(pl.col("value").fill_null(0.0)))
    long = pl.concat(parts)
    order = {s.name: i for i, s in enumerate(specs)}
    long = long.sort(
        "run", "sample_id", pl.col("metric").replace_strict(order, return_dtype=pl.Int64)
    )
    return schemas.validate(long, schemas.METRICS, name="metrics")


def coverage(
    rankings: pl.DataFrame,
    labels: pl.DataFrame,
    samples: pl.DataFrame | None = None,
    *,
    submitted: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Per run: n_expected (samples with gold), n_ranked, n_missing and n_error.

    ``submitted`` (RunData.submitted: run, sample_id, status) marks samples that a run
    answered with an empty ranking (``ok``) or an error; without it a sample counts as
    ranked when it has at least one ranking row.
    """
    expected = _gold(labels, samples).select("sample_id").unique()
    answered = rankings.select("run", "sample_id", status=pl.lit("ok")).unique()
    if submitted is not None:
        answered = pl.concat([answered, submitted.select("run", "sample_id", "status")])
    runs = answered.select("run").unique().sort("run")
    answered = answered.join(expected, on="sample_id", how="semi").unique(
        ["run", "sample_id"], keep="last"
    )
    counts = answered.group_by("run").agg(
        n_ranked=(pl.col("status") == "ok").sum(), n_error=(pl.col("status") == "error").sum()
    )
    return (
        runs.join(counts, on="run", how="left")
        .with_columns(pl.col("n_ranked", "n_error").fill_null(0).cast(pl.Int64))
        .with_columns(n_expected=pl.lit(expected.height, pl.Int64))
        .with_columns(n_missing=pl.col("n_expected") - pl.col("n_ranked") - pl.col("n_error"))
        .select("run", "n_expected", "n_ranked", "n_missing", "n_error")
    )
