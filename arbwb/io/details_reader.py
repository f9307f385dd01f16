"""Read an ARB details file (spec §4.2, §5.1) into a :class:`RunData`: the top-20 prefix, gold
ranks past it, gold, stored metrics (MRR checked against its row), nested and selective fields.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from arbwb import schemas
from arbwb.errors import InputError
from arbwb.io import run_frames as rf
from arbwb.io.samples import check_fields, dedupe, path_list, split_of
from arbwb.jsonio import iter_jsonl
from arbwb.metrics.spec import parse_metric

_DETAILS_REQUIRED: dict[str, type] = {
    "sample_id": str,
    "task_type": str,
    "repo": str,
    "base_commit": str,
    "gold_files": list,
    "top_files": list,
}
_LABELS = ("positive", "no_gold")
_MRR_REL_TOL = 1e-4  # a stored MRR equals 1/rank to this relative precision (upstream: exact)
_TOP_FILES = 20  # details store the first 20 distinct paths of the ranking (spec §4.2)
_EXTRA = {"seq": pl.Int64, "sample_id": pl.String, "path": pl.String, "gold_rank": pl.Int64}


def canonical_metric_name(name: str) -> str:
    """arbwb's spelling of an upstream metric key (``Any@5`` -> ``hit@5``); others kept."""
    try:
        return parse_metric(name).name
    except ValueError:
        return name


def read_details(path: Path, run: str) -> rf.RunData:
    """ARB details JSONL (spec §4.2-4.7); keeps gold ranks past the stored prefix (§5.1)."""
    raw: list[dict[str, Any]] = []
    extra: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    stored: list[dict[str, Any]] = []
    selective: list[dict[str, Any]] = []
    nested: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for seq, (line, obj) in enumerate(iter_jsonl(path)):
        check_fields(obj, _DETAILS_REQUIRED, path, line)
        sample_id = obj["sample_id"]
        rf.claim(seen, sample_id, path, line)
        top = _string_list(obj["top_files"], path, line, "top_files")
        gold = _string_list(obj["gold_files"], path, line, "gold_files")
        scores = _scores(obj, path, line)
        raw += [
            {"seq": seq, "sample_id": sample_id, "path": p, "order": i, "score": scores.get(p)}
            for i, p in enumerate(top)
        ]
        distinct = dedupe(top)
        deep = list(_gold_ranks(obj, distinct, path, line))
        extra += [{"seq": seq, "sample_id": sample_id, "path": p, "gold_rank": r} for p, r in deep]
        stored += [
            {"run": run, "sample_id": sample_id, "metric": canonical_metric_name(key), "value": v}
            for key, v in _numbers(obj, "metrics", path, line)
        ]
        _check_mrr(obj, distinct, path_list(gold), deep, (path, line))
        if "label" in obj or "confidence" in obj:
            selective.append(_selective_row(obj, path, line))
        nested += [
            {"run": run, "sample_id": sample_id, "field": f"{group}.{key}", "value": value}
            for group in rf.NESTED_GROUPS
            for key, value in _numbers(obj, group, path, line)
        ]
        labels += [{"sample_id": sample_id, "path": p, "role": "gold"} for p in path_list(gold)]
        details.append(
            {
                "sample_id": sample_id,
                "task": obj["task_type"],
                "repo": obj["repo"],
                "base_commit": obj["base_commit"],
                "snapshot_id": f"{obj['repo']}@{obj['base_commit']}",
                "candidate_filter": _optional_str(obj, "candidate_filter", path, line),
                "split": split_of(sample_id),
                "line": line,
            }
        )
    prefix = rf.normalise(pl.DataFrame(raw, schema=rf.RAW_SCORED), run)
    frame = pl.DataFrame(details, schema=dict(rf.DETAILS))
    rankings = _with_deep_gold(prefix, pl.DataFrame(extra, schema=_EXTRA), frame, run)
    return rf.RunData(
        run=run,
        rankings=rankings,
        details=frame,
        labels=pl.DataFrame(labels, schema=dict(schemas.LABELS)),
        stored=schemas.rows_frame(stored, schemas.METRICS),
        errors=rf.run_frame([], rf.ERRORS, run),
        submitted=frame.select(
            run=pl.lit(run), sample_id="sample_id", line="line", status=pl.lit("ok")
        ),
        path=str(path),
        selective=pl.DataFrame(selective, schema=dict(rf.SELECTIVE)) if selective else None,
        nested=schemas.rows_frame(nested, rf.NESTED),
    )


def _string_list(value: list[Any], path: Path, line: int, field: str) -> list[str]:
    bad = next((v for v in value if not isinstance(v, str)), None)
    if bad is not None:
        msg = f"expected a list of path strings, got element {bad!r}"
        raise InputError(msg, path=path, line=line, field=field)
    return value


def _scores(obj: dict[str, Any], path: Path, line: int) -> dict[str, float | None]:
    """``top_file_scores`` as {path: score}, first occurrence wins (RepoMap, grep)."""
    rows = obj.get("top_file_scores") or []
    scores: dict[str, float | None] = {}
    for row in rows if isinstance(rows, list) else [None]:
        if not isinstance(row, dict) or not isinstance(row.get("path"), str):
            msg = f"expected {{path, score}} objects, got {row!r}"
            raise InputError(msg, path=path, line=line, field="top_file_scores")
        score = _number(row.get("score"), (path, line, "top_file_scores.score"))
        scores.setdefault(row["path"], score)
    return scores


def _gold_ranks(
    obj: dict[str, Any], prefix: list[str], path: Path, line: int
) -> Iterator[tuple[str, int]]:
    """Non-null positive ``gold_ranks`` entries (rank in the full ranking), each agreeing with
    ``top_files`` (the deduplicated ``prefix``): the path stored there, or one not in it."""
    ranks = obj.get("gold_ranks")
    if ranks is None:
        return
    if not isinstance(ranks, dict):
        msg = f"expected an object {{path: rank or null}}, got {ranks!r}"
        raise InputError(msg, path=path, line=line, field="gold_ranks")
    for gold_path, rank in ranks.items():
        if rank is None:
            continue
        if not isinstance(rank, int) or isinstance(rank, bool) or not 1 <= rank < 2**63:
            msg = f"expected a positive integer rank or null for {gold_path!r}, got {rank!r}"
            raise InputError(msg, path=path, line=line, field="gold_ranks")
        if rank <= len(prefix) and prefix[rank - 1] != gold_path:
            msg = f"{gold_path!r} has rank {rank} but top_files has {prefix[rank - 1]!r} there"
            raise InputError(msg, path=path, line=line, field="gold_ranks")
        if rank > len(prefix) and gold_path in prefix:
            where = prefix.index(gold_path) + 1
            msg = f"{gold_path!r} has rank {rank} but top_files has it at rank {where}"
            raise InputError(msg, path=path, line=line, field="gold_ranks")
        yield gold_path, rank


def _check_mrr(
    obj: dict[str, Any],
    prefix: list[str],
    gold: list[str],
    deep: list[tuple[str, int]],
    where: tuple[Path, int],
) -> None:
    """A stored MRR must be the reciprocal rank its own row implies (spec §5.1, §5.3; the rule
    as docs/metrics.md states it), or score and depth would count different samples."""
    metrics = obj.get("metrics")
    key = next((k for k in metrics or {} if canonical_metric_name(k) == "mrr"), None)
    if metrics is None or key is None or metrics[key] is None:
        return
    path, line = where
    mrr, field = float(metrics[key]), f"metrics.{key}"
    if not 0.0 <= mrr <= 1.0:
        msg = f"a reciprocal rank lies in [0, 1], got {mrr!r}"
        raise InputError(msg, path=path, line=line, field=field)
    gold_set = set(gold)
    ranked = [i for i, p in enumerate(prefix, start=1) if p in gold_set]
    ranked += [rank for p, rank in deep if p in gold_set]
    if ranked:
        first = min(ranked)
        if not math.isclose(mrr, 1.0 / first, rel_tol=_MRR_REL_TOL):
            msg = f"the first gold file is at rank {first}, so MRR is 1/{first}, got {mrr!r}"
            raise InputError(msg, path=path, line=line, field=field)
        return
    if mrr == 0.0:
        return
    ranks, implied = obj.get("gold_ranks"), 1.0 / mrr
    rank = round(implied) if implied < 2**63 else 0
    if not gold_set:
        msg = f"the row has no gold_files, so MRR is 0, got {mrr!r}"
    elif isinstance(ranks, dict) and gold_set <= set(ranks):
        msg = f"gold_ranks ranks none of the gold files, so MRR is 0, got {mrr!r}"
    elif len(prefix) < _TOP_FILES:
        msg = (
            f"top_files holds the whole ranking ({len(prefix)} files, fewer than {_TOP_FILES}) "
            f"and no gold file, so MRR is 0, got {mrr!r}"
        )
    elif 0 < rank <= len(prefix):
        msg = f"MRR {mrr!r} puts the first gold file at rank {rank}, where top_files has no gold"
    elif not rank or not math.isclose(mrr, 1.0 / rank, rel_tol=_MRR_REL_TOL):
        msg = f"expected 1/r for a whole rank r past top_files, got {mrr!r} (1/{implied:.6g})"
    else:
        return
    raise InputError(msg, path=path, line=line, field=field)


def _numbers(obj: dict[str, Any], group: str, path: Path, line: int) -> Iterator[tuple[str, float]]:
    """``(key, value)`` of an object of metric values (``metrics``, ``line_metrics``, ...),
    nulls skipped; anything but finite numbers is an error."""
    values = obj.get(group)
    if values is None:
        return
    if not isinstance(values, dict):
        msg = f"expected an object of metric values, got {values!r}"
        raise InputError(msg, path=path, line=line, field=group)
    for key, value in values.items():
        if (number := _number(value, (path, line, f"{group}.{key}"))) is not None:
            yield key, number


def _number(value: Any, where: tuple[Path, int, str], what: str = "a number") -> float | None:
    """A finite JSON number as float, None for null; else an error at ``(path, line, field)``."""
    if value is None:
        return None
    if not rf.is_number(value):
        path, line, field = where
        raise InputError(f"expected {what}, got {value!r}", path=path, line=line, field=field)
    return float(value)


def _selective_row(obj: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    """The §4.7 fields of one details row: label, no-gold reason, confidence, top score."""
    label = obj.get("label")
    if label is not None and label not in _LABELS:
        msg = f"expected one of {list(_LABELS)}, got {label!r}"
        raise InputError(msg, path=path, line=line, field="label")
    row = {"sample_id": obj["sample_id"], "label": label}
    row["no_gold_reason"] = _optional_str(obj, "no_gold_reason", path, line)
    for field in ("confidence", "top_score"):
        row[field] = _number(obj.get(field), (path, line, field), "a number or null")
    return row


def _with_deep_gold(
    prefix: pl.DataFrame, extra: pl.DataFrame, details: pl.DataFrame, run: str
) -> pl.DataFrame:
    """Add rows for gold ranked past the stored prefix, at their full-ranking rank (rows in
    details line order)."""
    if extra.is_empty():  # nothing to add: the prefix is already in (seq, rank) order
        return schemas.validate(prefix, schemas.RANKINGS, name="rankings")
    depth = prefix.group_by("sample_id").agg(depth=pl.col("rank").max())
    deep = (
        extra.join(depth, on="sample_id", how="left")
        .filter(pl.col("gold_rank") > pl.col("depth").fill_null(0))
        .join(prefix, on=["sample_id", "path"], how="anti")
        .select(
            run=pl.lit(run, pl.String),
            sample_id="sample_id",
            rank="gold_rank",
            path="path",
            score=pl.lit(None, pl.Float64),
        )
    )
    lines = details.select("sample_id", "line")
    merged = pl.concat([prefix, deep]).join(lines, on="sample_id", how="left")
    merged = merged.sort("line", "rank").drop("line")
    return schemas.validate(merged, schemas.RANKINGS, name="rankings")


def _optional_str(obj: dict[str, Any], field: str, path: Path, line: int) -> str | None:
    value = obj.get(field)
    if value is not None and not isinstance(value, str):
        msg = f"expected a string, got {value!r}"
        raise InputError(msg, path=path, line=line, field=field)
    return value
