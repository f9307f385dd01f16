"""Load a run's rankings (ARB details, predictions, TREC, Parquet/CSV) into the RANKINGS frame.

Every format ends in the same normalisation: per sample, paths in the given rank order,
duplicates collapsed at their first occurrence and ranks renumbered 1..n (upstream's dedupe).
ARB details additionally keep gold ranks beyond the stored top-20 prefix (spec §5.1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from arbwb import schemas
from arbwb.errors import InputError
from arbwb.io.samples import dedupe, path_list, split_of
from arbwb.jsonio import iter_jsonl, read_json
from arbwb.metrics.spec import parse_metric

FORMATS = ("details", "predictions", "trec", "table")
_DETAILS_REQUIRED: dict[str, type] = {
    "sample_id": str,
    "task_type": str,
    "repo": str,
    "base_commit": str,
    "gold_files": list,
    "top_files": list,
}
_RAW = {"seq": pl.Int64, "sample_id": pl.String, "path": pl.String, "order": pl.Float64}
_RAW_SCORED = {**_RAW, "score": pl.Float64}
DETAILS: schemas.Schema = {
    "sample_id": pl.String,
    "task": pl.String,
    "repo": pl.String,
    "base_commit": pl.String,
    "snapshot_id": pl.String,
    "candidate_filter": pl.String,
    "split": pl.String,
    "line": pl.Int64,
}
SUBMITTED: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "line": pl.Int64,
    "status": pl.String,
}
ERRORS: schemas.Schema = {"run": pl.String, "sample_id": pl.String, "error": pl.String}
SELECTIVE: schemas.Schema = {  # selective details fields (spec §4.7); nulls where a row lacks them
    "sample_id": pl.String,
    "label": pl.String,  # positive | no_gold
    "no_gold_reason": pl.String,
    "confidence": pl.Float64,  # null when missing (spec §9.2 reads it as 0.0; analyses decide)
    "top_score": pl.Float64,
}
_LABELS = ("positive", "no_gold")

#: Stored ``line_metrics``/``block_metrics`` values (spec §5.8), ``field`` = ``group.key``.
NESTED: schemas.Schema = {
    "run": pl.String,
    "sample_id": pl.String,
    "field": pl.String,
    "value": pl.Float64,
}
NESTED_GROUPS = ("line_metrics", "block_metrics")


@dataclass(frozen=True)
class RunData:
    """One run's rankings plus what its file says about samples, gold and upstream metrics.

    ``details``/``labels``/``stored``/``nested`` exist only for ARB details files; ``nested``
    keeps the per-row ``line_metrics``/``block_metrics`` (spec §5.8) as NESTED rows.
    ``submitted`` lists every sample the file answers (``ok`` or ``error``, with its line)
    so that empty rankings count as answered and unknown ids can be located; ``errors``
    holds the messages of ``error`` records. ``selective`` holds the §4.7 fields of details
    rows that carry ``label`` or ``confidence`` (selective runs); None when no row does.
    """

    run: str
    rankings: pl.DataFrame
    details: pl.DataFrame | None
    labels: pl.DataFrame | None
    stored: pl.DataFrame | None
    errors: pl.DataFrame
    submitted: pl.DataFrame
    path: str
    selective: pl.DataFrame | None = None
    nested: pl.DataFrame | None = None

    def stored_for(self, labels: pl.DataFrame) -> pl.DataFrame | None:
        """``stored`` of the samples whose row gold equals the ``gold`` role of ``labels``.

        Upstream's per-sample metrics (spec §5.1) belong to the row's own ``gold_files``:
        scored against other gold (``--samples`` of another release), a stored MRR would
        credit a file the run never ranked, so those samples use the ranking alone.
        """
        if self.stored is None or self.labels is None:
            return self.stored
        same = (
            _gold_sets(self.labels)
            .join(_gold_sets(labels), on="sample_id", suffix="_wanted")
            .filter(pl.col("gold") == pl.col("gold_wanted"))
        )
        return self.stored.join(same.select("sample_id"), on="sample_id", how="semi")


def _gold_sets(labels: pl.DataFrame) -> pl.DataFrame:
    """``sample_id, gold``: each sample's gold paths as a sorted list."""
    gold = labels.filter(pl.col("role") == "gold")
    return gold.group_by("sample_id").agg(gold=pl.col("path").unique().sort())


@dataclass
class _Collected:
    """Rows gathered while reading one file (internal accumulator)."""

    raw: list[dict[str, Any]]
    submitted: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    table: pl.DataFrame | None = None  # raw rows already in a frame (Parquet/CSV)
    name: str | None = None  # the run name the file states (a TREC run's tag)

    def frame(self) -> pl.DataFrame:
        """The raw rows (seq, sample_id, path, order, score) as one frame."""
        return self.table if self.table is not None else pl.DataFrame(self.raw, schema=_RAW_SCORED)


def default_run_name(path: str | Path) -> str:
    """The file stem with a trailing ``_details`` removed (``lexical_code_only``)."""
    return Path(path).stem.removesuffix("_details")


def canonical_metric_name(name: str) -> str:
    """arbwb's spelling of an upstream metric key (``Any@5`` -> ``hit@5``); others kept."""
    try:
        return parse_metric(name).name
    except ValueError:
        return name


def detect_format(path: Path) -> str:
    """Format by extension; ``.jsonl`` by its first record (``top_files`` means details)."""
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".csv", ".tsv"):
        return "table"
    if suffix == ".json":
        return "predictions"
    if suffix != ".jsonl":
        return "trec"
    _, first = next(iter_jsonl(path))
    if "top_files" in first:
        return "details"
    if "ranked_files" in first or "status" in first:
        return "predictions"
    msg = "cannot tell the format: expected `top_files` (details) or `ranked_files` (predictions)"
    raise InputError(msg, path=path, line=1)


def load_rankings(path: str | Path, *, run: str | None = None, fmt: str | None = None) -> RunData:
    """Read one run file; ``fmt`` in :data:`FORMATS` overrides detection by extension/content."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        msg = f"unknown rankings format {fmt!r}; use one of {FORMATS}"
        raise ValueError(msg)
    if fmt == "details":
        return _read_details(path, run or default_run_name(path))
    readers: dict[str, Callable[[Path], _Collected]] = {
        "predictions": _read_predictions,
        "trec": _read_trec,
        "table": _read_table,
    }
    got = readers[fmt](path)
    name = run or got.name or default_run_name(path)
    return RunData(
        run=name,
        rankings=_normalise(got.frame(), name),
        details=None,
        labels=None,
        stored=None,
        errors=_errors(got.errors, name),
        submitted=_submitted(got.submitted, name),
        path=str(path),
    )


def _normalise(raw: pl.DataFrame, run: str) -> pl.DataFrame:
    """Order by (sample, given order), drop empty/duplicate paths, renumber ranks from 1."""
    ranked = (
        raw.lazy()
        .filter(pl.col("path").is_not_null() & (pl.col("path") != ""))
        .sort("seq", "order", maintain_order=True)
        .unique(["sample_id", "path"], keep="first", maintain_order=True)
    )
    return ranked.select(
        run=pl.lit(run, pl.String),
        sample_id="sample_id",
        rank=(pl.int_range(pl.len()).over("sample_id") + 1).cast(pl.Int64),
        path="path",
        score="score",
    ).collect(engine="in-memory")  # one small query: the in-memory engine starts fastest


def _errors(rows: list[dict[str, Any]], run: str) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=dict(ERRORS)).with_columns(run=pl.lit(run, pl.String))


def _submitted(rows: list[dict[str, Any]], run: str) -> pl.DataFrame:
    frame = pl.DataFrame(rows, schema=dict(SUBMITTED)).with_columns(run=pl.lit(run, pl.String))
    return frame.select(list(SUBMITTED))


def _claim(seen: dict[str, int], sample_id: str, path: Path, line: int | None) -> None:
    """Refuse a sample id seen before in the same run, naming both places."""
    if sample_id in seen:
        msg = f"duplicate sample id {sample_id!r} in one run (first at line {seen[sample_id]})"
        raise InputError(msg, path=path, line=line, field="sample_id")
    seen[sample_id] = line or 0


def _number(value: Any) -> bool:
    """A JSON number that converts to a finite float (huge integers do not)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _check_fields(obj: dict[str, Any], required: dict[str, type], path: Path, line: int) -> None:
    for field, kind in required.items():
        value = obj.get(field)
        if field not in obj:
            raise InputError("required field is missing", path=path, line=line, field=field)
        if not isinstance(value, kind) or (kind is str and not value):
            what = "a list" if kind is list else "a non-empty string"
            msg = f"expected {what}, got {value!r}"
            raise InputError(msg, path=path, line=line, field=field)


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
        score = row.get("score")
        if score is not None and not _number(score):
            msg = f"expected a number, got {score!r}"
            raise InputError(msg, path=path, line=line, field="top_file_scores.score")
        scores.setdefault(row["path"], None if score is None else float(score))
    return scores


def _gold_ranks(
    obj: dict[str, Any], prefix: list[str], path: Path, line: int
) -> Iterator[tuple[str, int]]:
    """Non-null positive ``gold_ranks`` entries (rank in the full ranking).

    A rank must agree with ``top_files`` (the deduplicated ``prefix``): inside it, the path
    stored there; past it, a path that is not in it. Otherwise the file is inconsistent and
    metrics from it would be wrong.
    """
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


_MRR_REL_TOL = 1e-4  # a stored MRR equals 1/rank to this relative precision (upstream: exact)
_TOP_FILES = 20  # details store the first 20 distinct paths of the ranking (spec §4.2)


def _check_mrr(
    obj: dict[str, Any],
    prefix: list[str],
    gold: list[str],
    deep: list[tuple[str, int]],
    where: tuple[Path, int],
) -> None:
    """A stored MRR must be the reciprocal rank its own row implies (spec §5.1, §5.3).

    A gold file of the row in ``top_files`` or ``gold_ranks`` fixes the first gold rank r:
    MRR must be 1/r. Without one, MRR is 0, or 1/r for a whole rank r past a full top-20
    list (upstream ranked every candidate file; a shorter list is the whole ranking); it
    is 0 when the row has no gold or ``gold_ranks`` lists every gold file as unranked.
    Otherwise score (recall from the list, RR from MRR) and depth (rank from MRR) would
    count different samples.
    """
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


def _stored_rows(obj: dict[str, Any], path: Path, line: int) -> Iterator[dict[str, Any]]:
    """Upstream's per-sample ``metrics`` with canonical names (nulls skipped)."""
    metrics = obj.get("metrics")
    if metrics is None:
        return
    if not isinstance(metrics, dict):
        msg = f"expected an object of metric values, got {metrics!r}"
        raise InputError(msg, path=path, line=line, field="metrics")
    for key, value in metrics.items():
        if value is None:
            continue
        if not _number(value):
            msg = f"expected a number, got {value!r}"
            raise InputError(msg, path=path, line=line, field=f"metrics.{key}")
        name = canonical_metric_name(key)
        yield {"sample_id": obj["sample_id"], "metric": name, "value": float(value)}


def _nested_rows(obj: dict[str, Any], path: Path, line: int) -> Iterator[dict[str, Any]]:
    """``line_metrics``/``block_metrics`` numbers as ``group.key`` rows (nulls skipped)."""
    for group in NESTED_GROUPS:
        values = obj.get(group)
        if values is None:
            continue
        if not isinstance(values, dict):
            msg = f"expected an object of metric values, got {values!r}"
            raise InputError(msg, path=path, line=line, field=group)
        for key, value in values.items():
            if value is None:
                continue
            if not _number(value):
                msg = f"expected a number, got {value!r}"
                raise InputError(msg, path=path, line=line, field=f"{group}.{key}")
            yield {"sample_id": obj["sample_id"], "field": f"{group}.{key}", "value": float(value)}


def _read_details(path: Path, run: str) -> RunData:
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
        _check_fields(obj, _DETAILS_REQUIRED, path, line)
        sample_id = obj["sample_id"]
        _claim(seen, sample_id, path, line)
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
        stored += _stored_rows(obj, path, line)
        _check_mrr(obj, distinct, path_list(gold), deep, (path, line))
        if "label" in obj or "confidence" in obj:
            selective.append(_selective_row(obj, path, line))
        nested += _nested_rows(obj, path, line)
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
    prefix = _normalise(pl.DataFrame(raw, schema=_RAW_SCORED), run)
    order = pl.DataFrame(
        {"sample_id": list(seen), "seq": range(len(seen))},
        schema={"sample_id": pl.String, "seq": pl.Int64},
    )
    rankings = _with_deep_gold(prefix, pl.DataFrame(extra, schema=_EXTRA), order, run)
    submitted = [{"sample_id": d["sample_id"], "line": d["line"], "status": "ok"} for d in details]
    return RunData(
        run=run,
        rankings=rankings,
        details=pl.DataFrame(details, schema=dict(DETAILS)),
        labels=pl.DataFrame(labels, schema=dict(schemas.LABELS)),
        stored=pl.DataFrame(stored, schema=_STORED)
        .with_columns(run=pl.lit(run, pl.String))
        .select(list(schemas.METRICS)),
        errors=_errors([], run),
        submitted=_submitted(submitted, run),
        path=str(path),
        selective=pl.DataFrame(selective, schema=dict(SELECTIVE)) if selective else None,
        nested=pl.DataFrame(nested, schema=_NESTED_RAW)
        .with_columns(run=pl.lit(run, pl.String))
        .select(list(NESTED)),
    )


def _selective_row(obj: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    """The §4.7 fields of one details row: label, no-gold reason, confidence, top score."""
    label = obj.get("label")
    if label is not None and label not in _LABELS:
        msg = f"expected one of {list(_LABELS)}, got {label!r}"
        raise InputError(msg, path=path, line=line, field="label")
    row = {"sample_id": obj["sample_id"], "label": label}
    row["no_gold_reason"] = _optional_str(obj, "no_gold_reason", path, line)
    for field in ("confidence", "top_score"):
        value = obj.get(field)
        if value is not None and not _number(value):
            msg = f"expected a number or null, got {value!r}"
            raise InputError(msg, path=path, line=line, field=field)
        row[field] = None if value is None else float(value)
    return row


_NESTED_RAW = {"sample_id": pl.String, "field": pl.String, "value": pl.Float64}
_STORED = {"sample_id": pl.String, "metric": pl.String, "value": pl.Float64}
_EXTRA = {"seq": pl.Int64, "sample_id": pl.String, "path": pl.String, "gold_rank": pl.Int64}


def _with_deep_gold(
    prefix: pl.DataFrame, extra: pl.DataFrame, order: pl.DataFrame, run: str
) -> pl.DataFrame:
    """Add rows for gold ranked past the stored prefix, at their full-ranking rank."""
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
    merged = pl.concat([prefix, deep]).join(order, on="sample_id", how="left")
    merged = merged.sort("seq", "rank").drop("seq")
    return schemas.validate(merged, schemas.RANKINGS, name="rankings")


def _optional_str(obj: dict[str, Any], field: str, path: Path, line: int) -> str | None:
    value = obj.get(field)
    if value is not None and not isinstance(value, str):
        msg = f"expected a string, got {value!r}"
        raise InputError(msg, path=path, line=line, field=field)
    return value


def _prediction_records(path: Path) -> Iterable[tuple[int | None, str, dict[str, Any]]]:
    """(line, location prefix, record) from a JSONL file, a JSON array of predictions or a
    ``{sample_id: [paths]}`` object."""
    if path.suffix.lower() != ".json":
        for line, obj in iter_jsonl(path):
            yield line, "", obj
        return
    records = read_json(path)
    if isinstance(records, dict) and records:  # {sample_id: [paths]}: one ok record per key
        for key, ranked in records.items():
            yield None, f"{key}.", {"sample_id": key, "ranked_files": ranked}
        return
    if not isinstance(records, list):
        msg = (
            "expected a JSON array of prediction records or a {sample_id: [paths]} object, "
            f"got {type(records).__name__}"
        )
        raise InputError(msg, path=path)
    if not records:
        raise InputError("file has no records (empty array)", path=path)
    for index, obj in enumerate(records):
        if not isinstance(obj, dict):
            msg = f"expected a JSON object, got {obj!r}"
            raise InputError(msg, path=path, field=f"[{index}]")
        yield None, f"[{index}].", obj


def _ranked_entry(item: Any, path: Path, line: int | None, field: str) -> tuple[str, float | None]:
    """A ``ranked_files`` element: a path string or a ``{path, score}`` object."""
    if isinstance(item, str):
        return item, None
    if isinstance(item, dict) and isinstance(item.get("path"), str):
        score = item.get("score")
        if score is None or _number(score):
            return item["path"], None if score is None else float(score)
    msg = f"expected a path string or {{path, score}} object, got {item!r}"
    raise InputError(msg, path=path, line=line, field=field)


def _read_predictions(path: Path) -> _Collected:
    """Records ``{sample_id, status, ranked_files}``; ``status`` defaults to ``ok``.

    An ``ok`` record with an empty list is an answered, zero-score sample; an ``error``
    record needs an ``error`` message and ranks nothing.
    """
    got = _Collected([], [], [])
    seen: dict[str, int] = {}
    for seq, (line, where, obj) in enumerate(_prediction_records(path)):
        sample_id = obj.get("sample_id")
        if not isinstance(sample_id, str) or not sample_id:
            msg = f"expected a non-empty string, got {sample_id!r}"
            raise InputError(msg, path=path, line=line, field=f"{where}sample_id")
        _claim(seen, sample_id, path, line if line is not None else seq + 1)
        status = obj.get("status", "ok")
        if status == "error":
            message = obj.get("error")
            if not isinstance(message, str):
                msg = f"an error record needs an `error` message string, got {message!r}"
                raise InputError(msg, path=path, line=line, field=f"{where}error")
            got.errors.append({"sample_id": sample_id, "error": message})
        elif status == "ok":
            ranked = obj.get("ranked_files")
            if not isinstance(ranked, list):
                msg = f"expected a list (possibly empty), got {ranked!r}"
                raise InputError(msg, path=path, line=line, field=f"{where}ranked_files")
            for order, item in enumerate(ranked):
                p, score = _ranked_entry(item, path, line, f"{where}ranked_files[{order}]")
                got.raw.append(
                    {"seq": seq, "sample_id": sample_id, "path": p, "order": order, "score": score}
                )
        else:
            msg = f"expected status 'ok' or 'error', got {status!r}"
            raise InputError(msg, path=path, line=line, field=f"{where}status")
        got.submitted.append({"sample_id": sample_id, "line": line or seq + 1, "status": status})
    return got


def _read_trec(path: Path) -> _Collected:
    """TREC run lines ``qid Q0 docno rank score tag``; order by the rank column (stable).

    Ranks are whole numbers from 1 and scores finite (:func:`_check_ranked`); gaps are fine
    (ranks are renumbered 1..n). The run is named after its tag when every line has the same
    one (else after the file).
    """
    got = _Collected([], [], [])
    tags: set[str] = set()
    first_line: dict[str, int] = {}
    lines: list[int] = []
    with path.open("rb") as handle:
        for line, raw_line in enumerate(handle, start=1):
            try:
                fields = raw_line.decode("utf-8").split()
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 ({exc.reason})", path=path, line=line) from None
            if not fields:
                continue
            if len(fields) != 6:
                msg = f"expected 6 columns `qid Q0 docno rank score tag`, got {len(fields)}"
                raise InputError(msg, path=path, line=line)
            qid, _, doc, rank_text, score_text, tag = fields
            tags.add(tag)
            rank = _parse(int, rank_text, path, line, "rank")
            if abs(rank) >= 2**63:
                raise InputError(
                    f"rank out of range, got {rank}", path=path, line=line, field="rank"
                )
            score = _parse(float, score_text, path, line, "score")
            seq = first_line.setdefault(qid, len(first_line))
            if seq == len(got.submitted):
                got.submitted.append({"sample_id": qid, "line": line, "status": "ok"})
            got.raw.append(
                {"seq": seq, "sample_id": qid, "path": doc, "order": float(rank), "score": score}
            )
            lines.append(line)
    if not got.raw:
        raise InputError("file has no records (empty file)", path=path)
    _check_ranked(got.frame().with_columns(line=pl.Series(lines, dtype=pl.Int64)), path)
    got.name = next(iter(tags)) if len(tags) == 1 else None
    return got


def _check_ranked(rows: pl.DataFrame, path: Path) -> None:
    """Explicit ranks (TREC, tables; rows with their ``line``) are whole numbers from 1, and
    scores are finite: a rank 0 or -1 would otherwise sort first and move MRR.

    Repeats are not errors: a path given twice keeps its best rank (upstream's dedupe) and
    equal ranks keep file order, as :func:`_normalise` does for every format.
    """
    rank, score = pl.col("order"), pl.col("score")
    bad_rank = rank.is_nan() | (rank < 1) | (rank != rank.floor())
    bad = rows.filter(bad_rank | (score.is_nan() | score.is_infinite()).fill_null(False))
    if bad.is_empty():
        return
    row = bad.row(0, named=True)
    if not (row["order"] >= 1 and row["order"].is_integer()):
        msg, field = f"ranks start at 1 and are whole numbers, got {row['order']:g}", "rank"
    else:
        msg, field = f"expected a finite number, got {row['score']!r}", "score"
    raise InputError(msg, path=path, line=row["line"], field=field)


def _parse(kind: Callable[[str], Any], text: str, path: Path, line: int, field: str) -> Any:
    try:
        return kind(text)
    except ValueError:
        msg = f"expected {'an integer' if kind is int else 'a number'}, got {text!r}"
        raise InputError(msg, path=path, line=line, field=field) from None


def _read_table(path: Path) -> _Collected:
    """Parquet/CSV/TSV with columns ``sample_id, path, rank[, score]`` (order by rank).

    The rank and score rules are TREC's (:func:`_check_ranked`).
    """
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            table, offset = pl.read_parquet(path), 1
        else:
            separator = "\t" if suffix == ".tsv" else ","
            overrides = {"sample_id": pl.String, "path": pl.String}
            table = pl.read_csv(path, separator=separator, schema_overrides=overrides)
            offset = 2  # header line, then 1-based data lines
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"cannot read table: {exc}", path=path) from None
    if table.height == 0:
        raise InputError("file has no records (empty table)", path=path)
    for column in ("sample_id", "path", "rank"):
        if column not in table.columns:
            msg = f"required column is missing (have {table.columns})"
            raise InputError(msg, path=path, field=column)
    score = (
        table["score"] if "score" in table.columns else pl.repeat(None, table.height, eager=True)
    )
    for column, dtype in (("sample_id", pl.String), ("path", pl.String), ("rank", pl.Float64)):
        _check_column(table[column], dtype, path, offset, column, nullable=False)
    _check_column(score, pl.Float64, path, offset, "score", nullable=True)
    seq = table["sample_id"].unique(maintain_order=True)
    raw = table.select(
        seq=pl.col("sample_id").replace_strict(seq, range(len(seq)), return_dtype=pl.Int64),
        sample_id="sample_id",
        path="path",
        order=pl.col("rank").cast(pl.Float64),
        score=score.cast(pl.Float64),
    )
    _check_ranked(raw.with_columns(line=pl.int_range(pl.len(), dtype=pl.Int64) + offset), path)
    first = (
        table.with_row_index("row")
        .group_by("sample_id", maintain_order=True)
        .agg(line=pl.col("row").first().cast(pl.Int64) + offset)
    )
    submitted = first.with_columns(status=pl.lit("ok")).to_dicts()
    return _Collected([], submitted, [], table=raw)


def _check_column(
    column: pl.Series,
    dtype: type[pl.DataType],
    path: Path,
    offset: int,
    name: str,
    *,
    nullable: bool,
) -> None:
    """Every value must cast to ``dtype`` (and be non-null unless ``nullable``)."""
    cast = column.cast(dtype, strict=False)
    bad = cast.is_null() if not nullable else cast.is_null() & column.is_not_null()
    if bad.any():
        row = int(bad.arg_true()[0])
        msg = f"expected a {'number' if dtype is pl.Float64 else 'string'}, got {column[row]!r}"
        raise InputError(msg, path=path, line=row + offset, field=name)
