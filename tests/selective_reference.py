"""A literal, list-based reading of spec §9.3-9.6 for tests (independent of
arbwb.analysis.selective_*).

Rows are dicts ``{sample_id, repo, label, reason, conf, recall}``.
"""

from __future__ import annotations

from typing import Any

Row = dict[str, Any]


def metrics(rows: list[Row], abstain: list[bool]) -> dict[str, Any]:
    """§9.3 counts and rates, written out one sample at a time."""
    pr = pa = nr = na = hits = 0
    recall_sum = 0.0
    for row, abst in zip(rows, abstain, strict=True):
        if row["label"] == "positive":
            if abst:
                pa += 1
            else:
                pr += 1
                recall_sum += row["recall"]
                hits += row["recall"] > 0
        elif abst:
            na += 1
        else:
            nr += 1
    p, n, t = pr + pa, nr + na, pr + pa + nr + na
    pass_rate = pr / p if p else 0.0
    abstain_rate = na / n if n else 0.0
    acc = (pr + na) / t
    return {
        "positive_returned": pr,
        "positive_abstained": pa,
        "no_gold_returned": nr,
        "no_gold_abstained": na,
        "positive_pass_rate": pass_rate,
        "no_gold_abstain_rate": abstain_rate,
        "selective_accuracy": acc,
        "balanced_accuracy": (pass_rate + abstain_rate) / 2 if p and n else acc,
        "selective_success@20": (na + hits) / t,
        "coverage": (pr + nr) / t,
        "accepted_positive_recall@20": recall_sum / pr if pr else 0.0,
        "accepted_positive_hit@20": hits / pr if pr else 0.0,
    }


def at(rows: list[Row], threshold: float) -> dict[str, Any]:
    return metrics(rows, [r["conf"] < threshold for r in rows])


def thresholds(rows: list[Row]) -> list[float]:
    s = sorted({r["conf"] for r in rows})
    mids = [(s[j] + s[j + 1]) / 2 for j in range(len(s) - 1)]
    return [float("-inf"), *mids, s[-1] + max(1e-9, abs(s[-1]) * 1e-9)]


def best_threshold(rows: list[Row]) -> float:
    """Max (balanced, selective accuracy, success@20); the lowest threshold wins ties."""
    best_t, best_key = None, None
    for t in thresholds(rows):
        m = at(rows, t)
        key = (m["balanced_accuracy"], m["selective_accuracy"], m["selective_success@20"])
        if best_key is None or key > best_key:
            best_t, best_key = t, key
    assert best_t is not None
    return best_t


def folds(rows: list[Row], f: int) -> dict[str, int]:
    """§9.6 greedy assignment, literally."""
    p: dict[str, int] = {}
    n: dict[str, int] = {}
    for r in rows:
        p.setdefault(r["repo"], 0)
        n.setdefault(r["repo"], 0)
        if r["label"] == "positive":
            p[r["repo"]] += 1
        else:
            n[r["repo"]] += 1
    big_p, big_n = sum(p.values()), sum(n.values())
    tp, tn, tt, tg = big_p / f, big_n / f, (big_p + big_n) / f, len(p) / f
    order = sorted(p, key=lambda r: (-max(p[r] / max(tp, 1), n[r] / max(tn, 1)), -(p[r] + n[r]), r))
    fp, fn, fg = [0] * f, [0] * f, [0] * f
    out: dict[str, int] = {}
    for repo in order:
        options = []
        for k in range(f):
            cost = 0.0
            for g in range(f):
                pg = fp[g] + (p[repo] if g == k else 0)
                ng = fn[g] + (n[repo] if g == k else 0)
                gg = fg[g] + (1 if g == k else 0)
                cost += (
                    ((pg - tp) / max(tp, 1)) ** 2
                    + ((ng - tn) / max(tn, 1)) ** 2
                    + 0.25 * ((pg + ng - tt) / max(tt, 1)) ** 2
                    + 0.01 * ((gg - tg) / max(tg, 1)) ** 2
                )
            options.append((cost, fp[k] + fn[k], k))
        k = min(options)[2]
        out[repo] = k
        fp[k] += p[repo]
        fn[k] += n[repo]
        fg[k] += 1
    return out


def out_of_fold(rows: list[Row], f: int) -> dict[str, Any]:
    """Fold map, per-fold thresholds, out-of-fold and no-abstain metrics."""
    fold_of = folds(rows, f)
    chosen = []
    decided = {}
    for k in range(f):
        train = [r for r in rows if fold_of[r["repo"]] != k]
        t = best_threshold(train)
        chosen.append(t)
        for r in rows:
            if fold_of[r["repo"]] == k:
                decided[r["sample_id"]] = r["conf"] < t
    abstain = [decided[r["sample_id"]] for r in rows]
    return {
        "folds": fold_of,
        "thresholds": chosen,
        "out_of_fold": metrics(rows, abstain),
        "no_abstain": at(rows, float("-inf")),
    }


def natural(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r["reason"] != "counterfactual_wrong_repo"]
