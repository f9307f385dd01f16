"""ContextBench rows and predictions (contextbench-spec §1-§3) as arbwb frames.

Rows become the canonical samples, labels and spans (task ``contextbench``) plus ``instances``
and ``gold`` (every span, raw and §2.1-normalised, quirks flagged); unified records (§3.1) and
agent trajectories (:mod:`arbwb.io.contextbench_agents`) become ``records`` and a long
``context`` frame (step 0 is the declared final context).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from arbwb import schemas
from arbwb.errors import InputError
from arbwb.io.samples import split_of
from arbwb.jsonio import dumps_upstream, iter_jsonl, read_json

TASK = "contextbench"
_REQUIRED = ("instance_id", "original_inst_id", "repo", "language", "base_commit", "gold_context")
_OPTIONAL = ("patch", "test_patch", "problem_statement", "hints_text", "created_at", "f2p", "p2p")
#: §1.1: the 14 string columns of the published Parquet.
ROW_COLUMNS = (*_REQUIRED, *_OPTIONAL, "source")

INSTANCES: schemas.Schema = {
    "sample_id": pl.String,  # instance_id
    "original_inst_id": pl.String,
    "repo": pl.String,  # owner/name (recovered for bare Multi names, §1.1)
    "repo_field": pl.String,  # the row's raw `repo` value
    "language": pl.String,
    "benchmark": pl.String,  # source benchmark: Multi | Poly | Pro | Verified
    "category": pl.String,  # e.g. maintenance__bugfix (3rd+4th instance_id fields)
    "base_commit": pl.String,
    "patch": pl.String,  # gold patch (EditLoc fallback, §7)
    "gold_encoding": pl.String,  # json | text (§1.2 variant)
    "n_spans": pl.Int64,
    "source": pl.String,
    "line": pl.Int64,  # 1-based row number in the Parquet file
}

GOLD: schemas.Schema = {
    "sample_id": pl.String,
    "span_index": pl.Int64,  # position in gold_context (0-based)
    "raw_path": pl.String,
    "path": pl.String,  # §2.1 normalisation (parity); "" = ignored span
    "fixed_path": pl.String,  # arbwb-defined §13.1 "fixed" mode; null = dropped (B3)
    "path_form": pl.String,  # relative | dot_relative | dotfile | testbed | workspace | ...
    "quirk": pl.String,  # Q1 | B2 | B3 | empty (span ignored); null when none applies
    "start_line": pl.Int64,
    "end_line": pl.Int64,
}

EXCLUDED: schemas.Schema = {
    "sample_id": pl.String,
    "line": pl.Int64,
    "field": pl.String,
    "reason": pl.String,
}

RECORDS: schemas.Schema = {
    "run": pl.String,
    "instance_id": pl.String,  # as given (instance_id or original_inst_id)
    "line": pl.Int64,  # line (JSONL) or record index (JSON list), 1-based; 0 for one-file agents
    "n_steps": pl.Int64,  # len(pred_steps); 0 = the final context is the only step
    "model_patch": pl.String,  # nullable
    "commit": pl.String,  # nullable commit override
    "source": pl.String,  # file the record came from
}

CONTEXT: schemas.Schema = {
    "run": pl.String,
    "instance_id": pl.String,
    "step": pl.Int64,  # 1..n_steps for pred_steps; 0 = final context (pred_files/spans/symbols)
    "kind": pl.String,  # file | span | symbol
    "path": pl.String,  # as predicted (resolved only at scoring time, §2.2)
    "start_line": pl.Int64,  # span rows only
    "end_line": pl.Int64,  # span rows only
    "symbol": pl.String,  # symbol rows only
}

#: Source benchmark of an ``instance_id``'s first ``__`` field -> its short name.
_BENCHMARKS = {
    "Multi-SWE-Bench": "Multi",
    "SWE-PolyBench": "Poly",
    "SWE-Bench-Pro": "Pro",
    "SWE-Bench-Verified": "Verified",
}
_DIGITS_TAIL = re.compile(r"-\d+$")
_PRO_TAIL = re.compile(r"-[0-9a-f]{40}-v[0-9a-f]+$")
_DOT_SEGMENTS = re.compile(r"^(?:\.\.?/|/)+")
_TEXT_BLOCK = re.compile(
    r"context\d+\uff1a\s*\nfile: (?P<file>[^\n]*)\nstart_line: (?P<start>-?\d+)\n"
    r"end_line: (?P<end>-?\d+)\n?"
)

OnError = Literal["raise", "exclude"]


# --------------------------------------------------------------------------- paths (§2.1)


def normalize_gold_path(raw: str) -> str:
    """Gold path normalisation of §2.1, literally (QUIRK Q1: every leading '.'/'/' is stripped)."""
    path = raw.replace("\\", "/")
    if path.startswith("/testbed/"):
        return path.removeprefix("/testbed/")
    if path.startswith("/workspace/"):
        return path.removeprefix("/workspace/").split("/", 1)[-1]
    return path.lstrip("/") if path.startswith("/") else path.lstrip("./")


def path_form(raw: str) -> str:
    """Which §2.1 branch a raw gold path takes (for the composition tables)."""
    path = raw.replace("\\", "/")
    if path.startswith("/testbed/"):
        return "testbed"
    if path.startswith("/workspace/"):
        return "workspace" if "/" in path.removeprefix("/workspace/") else "workspace_root"
    if path.startswith("/"):
        return "absolute"
    if path.startswith(("./", "../")):
        return "dot_relative"
    return "dotfile" if path.startswith(".") else "relative"


def _gold_path(raw: str) -> dict[str, str | None]:
    """GOLD's path columns of a raw gold path: the §2.1 ``path``, the arbwb-defined §13.1
    ``fixed_path`` (names keep their leading dots; ``/workspace/<file>`` dropped), its
    ``path_form`` and the §10 ``quirk`` it hits (B2 dot-file, B3 /workspace/<file>, Q1, empty)."""
    path, form = normalize_gold_path(raw), path_form(raw)
    kept = _DOT_SEGMENTS.sub("", raw.replace("\\", "/"))  # leading ./ ../ / only
    fixed = kept if form in ("dotfile", "dot_relative", "relative") else path
    quirk = {"dotfile": "B2", "workspace_root": "B3"}.get(form)
    if not path:
        quirk = "empty"
    elif form == "dot_relative" and path != kept:
        quirk = "Q1"
    fixed_path = None if form == "workspace_root" else fixed or None
    return {"path": path, "fixed_path": fixed_path, "path_form": form, "quirk": quirk}


# --------------------------------------------------------------------------- rows (§1)


def recover_repo(repo: str, original_inst_id: str) -> str:
    """``owner/name`` of a row (§1.1): ``repo`` if it has a '/', else from ``original_inst_id``
    (``ValueError`` when that does not parse or names another repository, case-insensitively)."""
    if "/" in repo:
        owner, _, name = repo.partition("/")
        if not owner or not name or "/" in name:
            msg = f"repo must be owner/name or a bare name, got {repo!r}"
            raise ValueError(msg)
        return repo
    ident = original_inst_id.removeprefix("instance_")
    owner, sep, rest = ident.partition("__")
    name = _PRO_TAIL.sub("", rest) if _PRO_TAIL.search(rest) else _DIGITS_TAIL.sub("", rest)
    if not sep or not owner or not name or name == rest:
        msg = (
            f"cannot recover owner/name of the bare repository {repo!r}: original_inst_id "
            f"{original_inst_id!r} is not <owner>__<name>-<number>"
        )
        raise ValueError(msg)
    if name.lower() != repo.lower():
        msg = (
            f"unknown repository short name {repo!r}: original_inst_id {original_inst_id!r} "
            f"names {owner}/{name}"
        )
        raise ValueError(msg)
    return f"{owner}/{name}"


def parse_gold_context(text: str) -> tuple[list[dict[str, Any]], str]:
    """Gold spans of a ``gold_context`` cell and its encoding (JSON list or the text variant);
    ``ValueError`` for anything else (upstream: silently empty gold, QUIRK Q14) or a bad span."""
    try:
        spans = json.loads(text)
        encoding = "json"
    except json.JSONDecodeError:
        spans = [
            {"file": m["file"], "start_line": m["start"], "end_line": m["end"]}
            for m in _TEXT_BLOCK.finditer(text)
        ]
        encoding = "text"
        if not spans:
            msg = "not a JSON list of spans nor the text encoding ('context<i>\uff1a' blocks)"
            raise ValueError(msg) from None
    if not isinstance(spans, list):
        msg = f"expected a JSON list of span objects, got {type(spans).__name__}"
        raise ValueError(msg)
    return [_gold_span(span, index) for index, span in enumerate(spans)], encoding


def _gold_span(span: Any, index: int) -> dict[str, Any]:
    if not isinstance(span, dict) or not isinstance(span.get("file"), str):
        msg = f"span {index} is not an object with a string 'file', got {span!r:.80}"
        raise ValueError(msg)
    lines = []
    for key in ("start_line", "end_line"):
        value = span.get(key)
        try:
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise ValueError
            lines.append(int(value))
        except ValueError:
            msg = f"span {index} ({span['file']}) has no integer {key}, got {value!r}"
            raise ValueError(msg) from None
    if lines[1] < lines[0]:
        msg = f"span {index} ({span['file']}) has end_line {lines[1]} < start_line {lines[0]}"
        raise ValueError(msg)
    return {"file": span["file"], "start_line": lines[0], "end_line": lines[1]}


@dataclass(frozen=True)
class ContextBenchRows:
    """Loaded rows: canonical frames plus the ContextBench-specific ones and exclusions."""

    samples: pl.DataFrame  # schemas.SAMPLES, task "contextbench"
    labels: pl.DataFrame  # schemas.LABELS, role "gold" (distinct §2.1 paths)
    spans: pl.DataFrame  # schemas.SPANS, kind "gold_context" (§2.1 paths, empty paths left out)
    instances: pl.DataFrame  # INSTANCES
    gold: pl.DataFrame  # GOLD (every span, raw and normalised, quirks flagged)
    excluded: pl.DataFrame  # EXCLUDED: rows left out with on_error="exclude"
    path: str


def load_rows(path: str | Path, *, on_error: OnError = "raise") -> ContextBenchRows:
    """Read a ContextBench Parquet (every column as text) into frames. A bad row raises an
    :class:`InputError` naming file, row and field; ``on_error="exclude"`` lists it instead."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    try:
        frame = pl.read_parquet(path)
    except Exception as exc:  # polars raises several error types for bad files
        raise InputError(f"not a readable Parquet file ({exc})", path=path) from None
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if missing:
        raise InputError(f"missing columns {missing}", path=path, field=missing[0])
    frame = schemas.conform(frame, dict.fromkeys(ROW_COLUMNS, pl.String))
    parsed: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    excluded: list[dict[str, Any]] = []
    seen: set[str] = set()
    for line, row in enumerate(frame.iter_rows(named=True), start=1):
        try:
            parsed.append(_parse_row(row, line, str(path), seen))
        except InputError as exc:
            if on_error == "raise":
                raise
            reason = {"field": exc.field, "reason": exc.reason}
            excluded.append({"sample_id": row.get("instance_id"), "line": line, **reason})
            continue
        seen.add(row["instance_id"])
    gold = schemas.rows_frame([g for _, spans in parsed for g in spans], GOLD)
    kept = gold.filter(pl.col("path") != "")  # an empty §2.1 path ignores the span
    rows = [parsed_row for parsed_row, _ in parsed]
    return ContextBenchRows(
        samples=schemas.rows_frame(rows, schemas.SAMPLES),
        labels=kept.select("sample_id", "path", role=pl.lit("gold")).unique(maintain_order=True),
        spans=schemas.conform(kept.with_columns(kind=pl.lit("gold_context")), schemas.SPANS),
        instances=schemas.rows_frame(rows, INSTANCES),
        gold=gold,
        excluded=schemas.rows_frame(excluded, EXCLUDED),
        path=str(path),
    )


def _parse_row(
    row: Mapping[str, Any], line: int, source: str, seen: set[str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A row's INSTANCES and SAMPLES columns in one dict (query_text = problem statement;
    language etc. in ``metadata``) and its GOLD rows."""
    for field in _REQUIRED:
        if not row.get(field):
            raise InputError("required cell is empty", path=source, line=line, field=field)
    sample_id = str(row["instance_id"])
    if sample_id in seen:
        raise InputError("duplicate instance_id", path=source, line=line, field="instance_id")
    try:
        repo = recover_repo(str(row["repo"]), str(row["original_inst_id"]))
    except ValueError as exc:
        raise InputError(str(exc), path=source, line=line, field="repo") from None
    try:
        spans, encoding = parse_gold_context(str(row["gold_context"]))
    except ValueError as exc:
        raise InputError(str(exc), path=source, line=line, field="gold_context") from None
    parts = sample_id.split("__")
    inst = {
        "sample_id": sample_id,
        "original_inst_id": row["original_inst_id"],
        "repo": repo,
        "repo_field": row["repo"],
        "language": row["language"],
        "benchmark": row.get("source") or _BENCHMARKS.get(parts[0]),
        "category": "__".join(parts[2:4]) if len(parts) >= 5 else None,
        "base_commit": row["base_commit"],
        "patch": row.get("patch"),
        "gold_encoding": encoding,
        "n_spans": len(spans),
        "source": source,
        "line": line,
    }
    keys = ("language", "benchmark", "category", "original_inst_id", "repo_field")
    metadata = {key: inst[key] for key in keys} | {"created_at": row.get("created_at")}
    query = {"problem_statement": row.get("problem_statement"), "hints_text": row.get("hints_text")}
    sample = {
        "task": TASK,
        "snapshot_id": f"{repo}@{row['base_commit']}",
        "stratum": "positive",
        "split": split_of(sample_id),
        "query_text": row.get("problem_statement") or "",
        "query": dumps_upstream(query),
        "gold": row["gold_context"] if encoding == "json" else dumps_upstream(spans),
        "metadata": dumps_upstream(metadata),
    }
    gold = [
        {"sample_id": sample_id, "span_index": index, "raw_path": span["file"]}
        | _gold_path(span["file"])
        | {"start_line": span["start_line"], "end_line": span["end_line"]}
        for index, span in enumerate(spans)
    ]
    return inst | sample, gold


# --------------------------------------------------------------------------- predictions (§3)


#: One instance of a run: id, ``traj_data``, its record (``model_patch``, ``commit``), line, file.
Item = tuple[str, Mapping[str, Any], Mapping[str, Any], int, str]


@dataclass(frozen=True)
class Predictions:
    """One run's predictions: per-instance records and the long context frame."""

    run: str
    path: str
    records: pl.DataFrame  # RECORDS
    context: pl.DataFrame  # CONTEXT

    @classmethod
    def from_items(cls, run: str, path: Path, items: Iterable[Item]) -> Predictions:
        """A run from its instances: a RECORDS row each (a record's non-empty string
        ``model_patch`` and ``commit``) and CONTEXT rows (steps 1..T, final context as step 0)."""
        records: list[dict[str, Any]] = []
        context: list[dict[str, Any]] = []
        for instance, traj, record, line, source in items:
            context.extend(_traj_rows(run, instance, traj, f"{source}:{line}" if line else source))
            patch, commit = record.get("model_patch"), record.get("commit")
            records.append(
                {
                    "run": run,
                    "instance_id": instance,
                    "line": line,
                    "n_steps": len(traj.get("pred_steps") or []),
                    "model_patch": patch if isinstance(patch, str) and patch else None,
                    "commit": commit if isinstance(commit, str) and commit else None,
                    "source": source,
                }
            )
        frames = schemas.rows_frame(records, RECORDS), schemas.rows_frame(context, CONTEXT)
        return cls(run, str(path), *frames)


def _traj_rows(
    run: str, instance_id: str, traj: Mapping[str, Any], where: str
) -> Iterator[dict[str, Any]]:
    """CONTEXT rows of one ``traj_data`` object (steps 1..T, then the final context as step 0)."""
    steps = traj.get("pred_steps") or []
    if not isinstance(steps, list):
        raise InputError("expected a list", path=where, field="traj_data.pred_steps")
    for number, step in enumerate(steps, start=1):
        if not isinstance(step, dict):
            raise InputError("expected an object", path=where, field=f"pred_steps[{number - 1}]")
        base = {"run": run, "instance_id": instance_id, "step": number}
        yield from _context_rows(base, step, "", where, f"traj_data.pred_steps[{number - 1}]")
    base = {"run": run, "instance_id": instance_id, "step": 0}
    yield from _context_rows(base, traj, "pred_", where, "traj_data")


def _context_rows(
    base: dict[str, Any],
    context: Mapping[str, Any],
    prefix: str,
    where: str,
    field: str,
) -> Iterator[dict[str, Any]]:
    """CONTEXT rows of one step's (or, keys prefixed ``pred_``, the final context's) files, spans
    and symbols."""
    keys = [f"{prefix}{key}" for key in ("files", "spans", "symbols")]
    files_field, spans_field, symbols_field = (f"{field}.{key}" for key in keys)
    files = context.get(keys[0])
    if files is not None and not isinstance(files, list):
        raise InputError("expected a list of paths", path=where, field=files_field)
    for path in files or []:
        if not isinstance(path, str):
            msg = f"expected a path string, got {path!r}"
            raise InputError(msg, path=where, field=files_field)
        yield {**base, "kind": "file", "path": path}
    for key, items in _mapping(context.get(keys[1]), where, spans_field).items():
        for index, span in enumerate(items):
            start, end = _span_bounds(span, where, f"{spans_field}[{key!r}][{index}]")
            yield {**base, "kind": "span", "path": key, "start_line": start, "end_line": end}
    for key, names in _mapping(context.get(keys[2]), where, symbols_field).items():
        for name in names:
            if not isinstance(name, str):
                msg = f"expected a symbol name, got {name!r}"
                raise InputError(msg, path=where, field=f"{symbols_field}[{key!r}]")
            yield {**base, "kind": "symbol", "path": key, "symbol": name}


def _mapping(value: Any, where: str, field: str) -> dict[str, list[Any]]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, list) for v in value.values()):
        raise InputError("expected an object of path -> list", path=where, field=field)
    return value


def _span_bounds(span: Any, where: str, field: str) -> tuple[int, int]:
    """``start``/``end`` of a predicted span object (kept as given: reversed spans are Q5)."""
    if not isinstance(span, dict) or "start" not in span or "end" not in span:
        raise InputError(f"span needs 'start' and 'end', got {span!r:.80}", path=where, field=field)
    bounds = []
    for key in ("start", "end"):
        try:
            bounds.append(int(span[key]))
        except (TypeError, ValueError):
            msg = f"{key} must be an integer, got {span[key]!r}"
            raise InputError(msg, path=where, field=field) from None
    return bounds[0], bounds[1]


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Unified records of a ``.jsonl`` (line numbers) or ``.json`` (object or list, 1-based)."""
    if path.suffix == ".jsonl":
        yield from iter_jsonl(path)
        return
    data = read_json(path)
    items = data if isinstance(data, list) else [data]
    for index, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            msg = f"expected a JSON object, got {type(item).__name__}"
            raise InputError(msg, path=path, line=index)
        yield index, item


def unified_items(path: Path) -> Iterator[Item]:
    """Each unified record's (§3.1, ``.json``/``.jsonl``) instance and ``traj_data``; an instance
    predicted twice is an error."""
    seen: dict[str, int] = {}
    for line, record in _records(path):
        instance = record.get("instance_id") or record.get("original_inst_id")
        if not isinstance(instance, str) or not instance:
            raise InputError("record has no instance_id", path=path, line=line, field="instance_id")
        if instance in seen:
            msg = f"instance {instance!r} already predicted on line {seen[instance]}"
            raise InputError(msg, path=path, line=line, field="instance_id")
        seen[instance] = line
        traj = record.get("traj_data") or {}
        if not isinstance(traj, dict):
            raise InputError("expected an object", path=path, line=line, field="traj_data")
        yield instance, traj, record, line, str(path)


def default_run_name(path: Path) -> str:
    """Run name of a predictions file or folder: its name without the usual suffixes."""
    name = path.name
    for suffix in (".jsonl", ".json", ".preds", "_predictions", ".predictions"):
        name = name.removesuffix(suffix)
    return name or path.name
