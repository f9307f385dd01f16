"""Rank metrics (spec §5.2-5.6): a reference function per metric (the spec's formulas on
lists and sets) beside the Polars expressions that compute them for whole frames.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet

import polars as pl

from arbwb.metrics.spec import MetricSpec

_F_EPS = 1e-12
CUTOFFS = (5, 10, 20)

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
    """Precision@k = |G ∩ R[:k]| / min(k, |R|) (|R| = ``n_ranked`` for a prefix), 0 when R is
    empty (spec §5.4 QUIRK); rank fusion divides by k."""
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


def rank_of(ranked: Sequence[str], paths: Iterable[str]) -> dict[str, int | None]:
    """``{path: 1-based rank in the full ranking or None}`` (``gold_ranks``, spec §4.2)."""
    position = {p: i for i, p in enumerate(ranked, start=1)}
    return {p: position.get(p) for p in paths}


# --- Polars expressions: per (run, sample) counts, then values ---------------------------


def count_aggs(specs: Sequence[MetricSpec]) -> list[pl.Expr]:
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


def value_expr(spec: MetricSpec, *, fusion: bool) -> pl.Expr:
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


def apply_stored_mrr(per: pl.LazyFrame, stored: pl.DataFrame | None) -> pl.LazyFrame:
    """First-gold rank = round(1 / MRR) from the stored MRR where a top-20 prefix holds no gold
    but MRR > 0 (upstream's MRR used the full ranking, spec §5.1)."""
    if stored is None:
        return per
    mrr = (
        stored.lazy()
        .filter(pl.col("metric") == "mrr")
        .select("run", "sample_id", pl.col("value").alias("stored_mrr"))
    )
    per = per.join(mrr, on=["run", "sample_id"], how="left")
    use = pl.col("first").is_null() & (pl.col("stored_mrr") > 0)
    return per.with_columns(
        first=pl.when(use).then((1.0 / pl.col("stored_mrr")).round()).otherwise(pl.col("first")),
        stored_rr=pl.when(use).then(pl.col("stored_mrr")),
    ).drop("stored_mrr")


# --- per-row metric sets in upstream's details keys (spec §4.8, §8) ---------------------


def row_metrics(
    ranked: Sequence[str], gold: Sequence[str], hard_negatives: Sequence[str]
) -> dict[str, float]:
    """Single-run per-sample metrics of spec §5.2-5.6 (§4.8 keys) on the full file ranking R,
    Precision@k with the min(k, |R|) QUIRK."""
    gold_set = frozenset(gold)
    negatives = frozenset(hard_negatives)
    out: dict[str, float] = {}
    for k in CUTOFFS:
        recall = recall_at_k(ranked, gold_set, k)
        precision = precision_at_k(ranked, gold_set, k)
        out[f"Recall@{k}"] = recall
        out[f"Precision@{k}"] = precision
        out[f"F0.5@{k}"] = f_beta(precision, recall, 0.5)
        out[f"irrelevant_files@{k}"] = float(sum(1 for p in ranked[:k] if p not in gold_set))
        out[f"hard_negative_hits@{k}"] = float(sum(1 for p in ranked[:k] if p in negatives))
    out["MRR"] = reciprocal_rank(ranked, gold_set)
    out["coverage_auc@20"] = coverage_auc(ranked, gold_set, 20)
    return out


def fusion_row_metrics(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    """Fusion metric set of spec §8 on the fused list (precision denominator k)."""
    gold_set = frozenset(gold)
    out: dict[str, float] = {}
    for k in CUTOFFS:
        out[f"Recall@{k}"] = recall_at_k(ranked, gold_set, k)
        out[f"Precision@{k}"] = precision_at_k(ranked, gold_set, k, fusion=True)
    out |= {f"F0.5@{k}": f_beta(out[f"Precision@{k}"], out[f"Recall@{k}"], 0.5) for k in CUTOFFS}
    out |= {f"Any@{k}": hit_at_k(ranked, gold_set, k) for k in CUTOFFS}
    out["MRR"] = reciprocal_rank(ranked, gold_set)
    out["nDCG@20"] = ndcg_at_k(ranked, gold_set, 20)
    out["coverage_auc@20"] = coverage_auc(ranked, gold_set, 20)
    return out
