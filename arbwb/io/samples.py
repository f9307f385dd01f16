"""Load ARB sample records into the SAMPLES, LABELS and SPANS frames (spec §1.3, §2); the
per-record rules (target gold, given files, query text, leakage, stratum) are pure functions."""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import polars as pl

from arbwb import schemas
from arbwb.errors import InputError
from arbwb.jsonio import as_object, dumps_upstream, iter_jsonl

TASKS = frozenset(
    {"code2test", "comment2context", "trace2code", "edit2ripple", "abstention", "testlog2code"}
)
NATURAL_REASONS = frozenset({"flaky_ci", "upstream_dependency", "external_service", "user_error"})
COUNTERFACTUAL_REASON = "counterfactual_wrong_repo"
_REQUIRED: dict[str, type] = {
    "id": str, "task_type": str, "repo": str, "base_commit": str, "query": dict, "gold": dict,
}  # fmt: skip
_KINDS: dict[type, str] = {dict: "a JSON object", list: "a list", str: "a non-empty string"}
_RAW_PATCH_RE = re.compile(r"diff --git\b|(^|\n)(---\s+(?:a/|/dev/null)|\+\+\+\s+(?:b/|/dev/null))")
_PROVENANCE_BY_TASK = {
    "code2test": "pr_summary", "comment2context": "review_comment", "trace2code": "failure_trace",
    "testlog2code": "failure_trace",
}  # fmt: skip
# gold fields holding path lists (strings or {path} objects), spec §2.3
_GOLD_PATH_LISTS = (
    "files", "related_tests", "root_cause_files", "must_context_files", "context_files",
    "given_files", "supporting_files", "negative_distractors", "hard_negative_files",
)  # fmt: skip
_LABEL_LISTS = (
    ("root_cause", "root_cause_files"), ("related_test", "related_tests"),
    ("supporting", "supporting_files"), ("negative", "negative_distractors"),
)  # fmt: skip


@dataclass(frozen=True)
class SampleSet:
    """The three frames of a sample release: one row per sample, per labelled path, per span."""

    samples: pl.DataFrame
    labels: pl.DataFrame
    spans: pl.DataFrame

    def filter(self, keep: pl.Expr) -> SampleSet:
        """The samples matching ``keep``, with their labels and spans (order kept)."""
        samples = self.samples.filter(keep)
        ids = samples["sample_id"].implode()
        return SampleSet(
            samples,
            self.labels.filter(pl.col("sample_id").is_in(ids)),
            self.spans.filter(pl.col("sample_id").is_in(ids)),
        )


def dedupe(values: Iterable[Any]) -> list[Any]:
    """Keep the first occurrence of each value, drop falsy values, keep order (spec §0)."""
    return list(dict.fromkeys(value for value in values if value))


def path_list(items: Any) -> list[str]:
    """Deduped paths from a list of strings and/or ``{"path": ...}`` objects; others dropped."""
    items = items if isinstance(items, list) else []
    paths = (item.get("path") if isinstance(item, dict) else item for item in items)
    return dedupe(p for p in paths if isinstance(p, str))


def target_gold_files(record: dict[str, Any]) -> list[str]:
    """The evaluation target (spec §2.6): no_gold -> []; gold.files; then per-task fallbacks."""
    gold = as_object(record.get("gold"))
    task = record.get("task_type")
    if gold.get("no_gold") is True:
        return []
    files = path_list(gold.get("files"))
    if files:
        return files
    if task == "code2test":
        return path_list(gold.get("related_tests"))
    if task == "comment2context":
        must = gold.get("must_context_files")
        context = path_list(must if isinstance(must, list) and must else gold.get("context_files"))
        if context:
            return context
    return path_list(gold.get("root_cause_files")) or path_list(gold.get("related_tests"))


def given_files(record: dict[str, Any]) -> list[str]:
    """Files the agent already has (spec §2.7): gold.given_files, else comment2context's file."""
    given = path_list(as_object(record.get("gold")).get("given_files"))
    if given or record.get("task_type") != "comment2context":
        return given
    query = as_object(record.get("query"))
    value = query.get("given_file") or query.get("path")
    return [value] if isinstance(value, str) and value else []


def query_provenance(record: dict[str, Any]) -> str | None:
    """Where the query text came from (spec §2.8), with upstream's metadata and task fallbacks."""
    metadata = as_object(record.get("metadata"))
    keys = ("query_provenance", "source_signal", "signal_type")
    found = (record.get("query_provenance"), *(metadata.get(key) for key in keys))
    return next((str(v) for v in found if v), _PROVENANCE_BY_TASK.get(str(record.get("task_type"))))


def query_text(query: Any) -> str:
    """The evaluation text every ranker sees (spec §2.9), byte-exact with upstream."""
    return dumps_upstream(query or {})


def _module_variants(path: str) -> list[str]:
    """Dotted/slashed module spellings of a path without its last suffix (spec §2.10)."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    joins = [".".join(parts), "/".join(parts)]
    if len(parts) > 1:
        joins += [".".join(parts[1:]), "/".join(parts[1:])]
    return [v.lower() for v in joins if len(v) >= 3]


def query_has_leakage(record: dict[str, Any]) -> bool:
    """True when upstream skips the sample as ``query_leakage`` (spec §2.10): patch text or the
    fix commit in the query; for edit2ripple also metadata's fix commit or a gold
    path/basename/module named."""
    normalised = query_text(record.get("query")).replace("\\n", "\n")
    gold, edit2ripple = as_object(record.get("gold")), record.get("task_type") == "edit2ripple"
    fixes = [gold.get("fix_commit")]
    fixes += [as_object(record.get("metadata")).get("fix_commit")] if edit2ripple else []
    if _RAW_PATCH_RE.search(normalised) or any(
        fix and fix in normalised for fix in (str(f or "").strip() for f in fixes)
    ):
        return True
    lowered = normalised.lower()
    return edit2ripple and any(
        path.lower() in lowered
        or PurePosixPath(path.lower()).name in lowered
        or any("." in v and v in lowered for v in _module_variants(path))
        for path in path_list(gold.get("files"))
    )


def stratum(record: dict[str, Any]) -> str:
    """``positive``, or for no-gold samples ``natural``/``counterfactual`` by gold.reason (§9.6),
    which ``metadata.organic``, when present, must agree with."""
    gold = as_object(record.get("gold"))
    if gold.get("no_gold") is not True:
        return "positive"
    reason = gold.get("reason")
    if isinstance(reason, str) and reason in NATURAL_REASONS:
        result = "natural"
    elif reason == COUNTERFACTUAL_REASON:
        result = "counterfactual"
    else:
        valid = sorted(NATURAL_REASONS | {COUNTERFACTUAL_REASON})
        msg = f"no-gold sample needs a reason in {valid}, got {reason!r}"
        raise InputError(msg, field="gold.reason")
    organic = as_object(record.get("metadata")).get("organic")
    if organic is not None and organic != (result == "natural"):
        msg = f"metadata.organic={organic!r} disagrees with gold.reason {reason!r}; fix one of them"
        raise InputError(msg, field="metadata.organic")
    return result


def split_of(sample_id: str) -> str:
    """arbwb-defined split (spec §12): ``dev`` if sha256(id)[0] is even, else ``heldout``."""
    return "dev" if hashlib.sha256(sample_id.encode("utf-8")).digest()[0] % 2 == 0 else "heldout"


_INT64_MAX = 2**63 - 1


def _as_int(value: Any, field: str) -> int | None:
    """A line number as int, None when it does not parse (§2.5 drops those rows); one past 64
    bits is an InputError."""
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if abs(number) > _INT64_MAX:
        raise InputError(f"line number out of range, got {value!r}", field=field)
    return number


def _span_rows(sample_id: str, record: dict[str, Any], key: str) -> Iterator[dict[str, Any]]:
    """Normalised ``gold_spans``/``gold_blocks`` rows (spec §2.5), top-level or under gold."""
    rows = record.get(key)
    if rows is None:
        rows = as_object(record.get("gold")).get(key)
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict) or not row.get("path"):
            continue
        start = _as_int(row.get("start_line"), f"{key}.start_line")
        end = _as_int(row.get("end_line"), f"{key}.end_line")
        if start is None or end is None:
            continue
        if key == "gold_blocks" and (start < 1 or end < start):
            continue
        kind = "span" if key == "gold_spans" else str(row.get("kind") or "block")
        symbol = row.get("symbol")
        yield {
            "sample_id": sample_id,
            "path": str(row["path"]),
            "start_line": start,
            "end_line": end,
            "kind": kind,
            "symbol": str(symbol) if symbol else None,
        }


def hard_negative_files(record: dict[str, Any]) -> list[str]:
    """Dedupe of sample-level then gold-level ``hard_negative_files`` (spec §4.2)."""
    gold = as_object(record.get("gold"))
    return dedupe(
        path_list(record.get("hard_negative_files")) + path_list(gold.get("hard_negative_files"))
    )


def _label_rows(sample_id: str, record: dict[str, Any]) -> Iterator[dict[str, str]]:
    gold = as_object(record.get("gold"))
    groups = [
        ("gold", target_gold_files(record)),
        ("given", given_files(record)),
        ("hard_negative", hard_negative_files(record)),
    ]
    groups += [(role, path_list(gold.get(key))) for role, key in _LABEL_LISTS]
    for role, paths in groups:
        for path in paths:
            yield {"sample_id": sample_id, "path": path, "role": role}


def check_fields(
    obj: dict[str, Any],
    required: dict[str, type],
    path: Path | None = None,
    line: int | None = None,
) -> None:
    """Every ``required`` field present with its type (a string non-empty), else an
    InputError naming the field (and ``path:line`` when given)."""
    for field, kind in required.items():
        value = obj.get(field)
        if field not in obj:
            raise InputError("required field is missing", path=path, line=line, field=field)
        if not isinstance(value, kind) or (kind is str and not value):
            msg = f"expected {_KINDS[kind]}, got {value!r}"
            raise InputError(msg, path=path, line=line, field=field)


def _check_record(record: dict[str, Any]) -> None:
    """Refuse a record whose numbers would be wrong: fields, task type, gold types and sense
    (``validate`` runs the same gold checks, listing every problem)."""
    check_fields(record, _REQUIRED)
    if record["task_type"] not in TASKS:
        msg = f"unknown task_type {record['task_type']!r}; expected one of {sorted(TASKS)}"
        raise InputError(msg, field="task_type")
    if "metadata" in record and not isinstance(record["metadata"], dict):
        msg = f"expected a JSON object, got {record['metadata']!r}"
        raise InputError(msg, field="metadata")
    problem = next(itertools.chain(gold_type_problems(record), gold_consistency(record)), None)
    if problem is not None:
        raise InputError(problem[1], field=problem[0])


def _path_list_problem(value: Any) -> str | None:
    """Why ``value`` is not a list of path strings / ``{path}`` objects (null counts as empty)."""
    if value is None:
        return None
    if not isinstance(value, list):
        return f"expected a list of paths, got {type(value).__name__}"
    paths = (item.get("path") if isinstance(item, dict) else item for item in value)
    index = next((i for i, p in enumerate(paths) if not isinstance(p, str)), None)
    if index is None:
        return None
    return f"element {index}: expected a path string or {{path: ...}} object, got {value[index]!r}"


def gold_consistency(record: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Gold that contradicts the task: abstention must be no-gold, every other task not."""
    gold, task = as_object(record.get("gold")), record.get("task_type")
    if task == "abstention":
        if gold.get("files") != []:
            yield "gold.files", f"must be [] for abstention, got {gold.get('files')!r}"
        if gold.get("no_gold") is not True:
            yield "gold.no_gold", f"must be true for abstention, got {gold.get('no_gold')!r}"
    elif gold.get("no_gold") is True:
        yield "gold.no_gold", f"must not be true for task {task!r}"


def gold_type_problems(record: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Mistyped gold fields; the path readers would take each as empty, without a word."""
    gold = as_object(record.get("gold"))
    paths = [(f"gold.{key}", gold.get(key)) for key in _GOLD_PATH_LISTS]
    for field, value in [*paths, ("hard_negative_files", record.get("hard_negative_files"))]:
        problem = _path_list_problem(value)
        if problem:
            yield field, problem
    lists = [(key, record.get(key)) for key in ("gold_spans", "gold_blocks")]
    lists += [
        (f"gold.{k}", gold.get(k)) for k in ("gold_spans", "gold_blocks", "root_cause_symbols")
    ]
    for field, value in lists:
        if value is not None and not isinstance(value, list):
            yield field, f"expected a list, got {type(value).__name__}"
    no_gold = gold.get("no_gold")
    if no_gold is not None and not isinstance(no_gold, bool):
        yield "gold.no_gold", f"expected true or false, got {no_gold!r}"
    fix = gold.get("fix_commit")
    if fix is not None and not isinstance(fix, str):
        yield "gold.fix_commit", f"expected a commit string, got {fix!r}"


def _sample_row(record: dict[str, Any], source: Path, line: int) -> dict[str, Any]:
    gold = record["gold"]
    metadata = as_object(record.get("metadata"))
    fix = gold.get("fix_commit") or metadata.get("fix_commit")
    no_gold = gold.get("no_gold") is True
    return {
        "sample_id": record["id"],
        "task": record["task_type"],
        "repo": record["repo"],
        "base_commit": record["base_commit"],
        "snapshot_id": f"{record['repo']}@{record['base_commit']}",
        "stratum": stratum(record),
        "split": split_of(record["id"]),
        "query_text": query_text(record["query"]),
        "query": dumps_upstream(record["query"]),
        "query_provenance": query_provenance(record),
        "no_gold_reason": str(gold["reason"]) if no_gold and gold.get("reason") else None,
        "fix_commit": str(fix) if fix else None,
        "gold": dumps_upstream(gold),
        "metadata": dumps_upstream(metadata),
        "source": str(source),
        "line": line,
    }


def sample_files(path: str | Path) -> list[Path]:
    """The JSONL files a path stands for (spec §1.3 discovery; a release root with one release)."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError("no such file or directory", path=path)
    if (path / "samples.jsonl").is_file():
        return [path / "samples.jsonl"]
    benchmark = path / "benchmark"
    if benchmark.is_dir():
        releases = sorted(p for p in benchmark.iterdir() if p.is_dir())
        if len(releases) == 1:
            return sample_files(releases[0])
        names = ", ".join(str(p) for p in releases) or "none found"
        msg = f"release root holds {len(releases)} releases; pass one release folder ({names})"
        raise InputError(msg, path=path)
    files = sorted(path.glob("*.jsonl"), key=lambda p: p.name)
    if not files:
        raise InputError("no samples.jsonl, *.jsonl files or benchmark/<release>/ here", path=path)
    return files


def load_samples(path: str | Path) -> SampleSet:
    """Read sample records from a file, a release folder or a single-release root; each bad
    record (:func:`_check_record`) or duplicate id is an error naming file, line and field."""
    rows: list[dict[str, Any]] = []
    labels: list[dict[str, str]] = []
    spans: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for source in sample_files(path):
        for line, record in iter_jsonl(source):
            try:
                _check_record(record)
                row = _sample_row(record, source, line)
                sample_id = row["sample_id"]
                record_labels = list(_label_rows(sample_id, record))
                record_spans = [
                    *_span_rows(sample_id, record, "gold_spans"),
                    *_span_rows(sample_id, record, "gold_blocks"),
                ]
            except InputError as exc:
                raise InputError(exc.reason, path=source, line=line, field=exc.field) from None
            if sample_id in seen:
                msg = f"duplicate sample id {sample_id!r} (first at {seen[sample_id]})"
                raise InputError(msg, path=source, line=line, field="id")
            seen[sample_id] = f"{source}:{line}"
            rows.append(row)
            labels.extend(record_labels)
            spans.extend(record_spans)
    return SampleSet(
        samples=schemas.rows_frame(rows, schemas.SAMPLES),
        labels=schemas.rows_frame(labels, schemas.LABELS),
        spans=schemas.rows_frame(spans, schemas.SPANS),
    )


def release_samples(data: Path, release: str | None) -> SampleSet:
    """Samples of ``benchmark/<release>/`` (or of the only release) under a release root."""
    if release is None:
        return load_samples(data)
    folder = data / "benchmark" / release
    if not folder.is_dir():
        raise InputError(f"no benchmark/{release}/ under {data}", path=data, field="--release")
    return load_samples(folder)


def select_tasks(sample_set: SampleSet, tasks: list[str] | None) -> SampleSet:
    """Keep only samples of ``tasks`` (all when None); unknown task names are an error."""
    if tasks is None:
        return sample_set
    unknown = sorted(set(tasks) - TASKS)
    if unknown:
        raise InputError(f"unknown task {unknown}; choose from {sorted(TASKS)}", field="--task")
    return sample_set.filter(pl.col("task").is_in(tasks))
