"""Agentic-relevance labels of one sample (spec §10.1-10.6), following the spec literally: its
quirks are reproduced and named in ``flags``, never fixed (docs/taxonomy.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import polars as pl

from arbwb.io.samples import dedupe, load_samples, target_gold_files
from arbwb.jsonio import iter_jsonl

LABELS: tuple[str, ...] = (
    "semantic_direct", "structural_indirect", "workflow_conventional", "causal_indirect",
)  # fmt: skip
CORE_TASKS: tuple[str, ...] = ("code2test", "comment2context", "trace2code")
CONFIDENCES: tuple[str, ...] = ("high", "medium", "low")
_STOP_WORDS = """about after also before being build change changed class code could error file
files from func function gold have here impl into make method module only path should source test
tests that this using when with"""
STOP: frozenset[str] = frozenset(_STOP_WORDS.split())
_NON_PATH_KEYS_WORDS = """pr_title pr_body review_comment diff_hunk_context failure_excerpt command
changed_file_summary"""
NON_PATH_KEYS: frozenset[str] = frozenset(_NON_PATH_KEYS_WORDS.split())
_PATH_KEYS_WORDS = "changed_file given_file path implementation_files"
PATH_KEYS: frozenset[str] = frozenset(_PATH_KEYS_WORDS.split())
ANCHOR_KEYS: tuple[str, ...] = ("changed_file", "given_file", "path")
STRUCTURAL_SIGNALS: tuple[str, ...] = (
    "same_module_context", "symbol_or_path_overlap", "source_test_path_overlap",
)  # fmt: skip
WORKFLOW_SIGNALS: tuple[str, ...] = (
    "same_pr_changed_tests", "pr_level_changed_implementation_and_existing_tests",
    "behavior_test_for_reviewed_change", "review_requests_tests",
    "implementation_context_for_reviewed_change",
)  # fmt: skip
_FAMILY_DROP = frozenset({"src", "test", "tests"})
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{2,}")
_PUNCT = str.maketrans({"_": " ", "-": " ", "/": " ", ".": " "})

# Flag code -> explanation (arbwb-defined). Codes in INPUT_FLAGS make up ``reason``.
FLAG_TEXT: dict[str, str] = {
    "quirk_edit2ripple_always_structural": (
        "QUIRK: edit2ripple query keys (intent, anchor_file, anchor_diff) are all ignored, so "
        "the sample always gets structural_indirect (upstream leaves edit2ripple out)"
    ),
    "quirk_annotation_gold_differs": (
        "QUIRK: annotation gold files (spec 10.2) differ from the evaluation target (spec 2.6)"
    ),
    "fallback_task": (
        "task outside the taxonomy core (code2test, comment2context, trace2code): fallback rule"
    ),
    "no_gold": "gold.no_gold is true: annotation gold is empty",
    "missing_query": "no query object: Q and P are empty",
    "no_query_fields": "query has none of the taxonomy keys of spec 10.2: Q and P are empty",
    "missing_gold": "no gold object: annotation gold comes from gold_spans only",
    "empty_annotation_gold": "annotation gold files are empty: H holds gold symbols at most",
    "missing_task_type": "no task_type: treated as 'unknown' (fallback rule)",
    "raw_record_unavailable": (
        "raw sample record not readable: annotated from the samples frame (no gold_spans, "
        "no gold_blocks)"
    ),
    "malformed_skipped": "non-object or non-list members were skipped (upstream would crash)",
    "non_string_gold_path": "a gold list holds non-strings; upstream's str() of them is used",
    "implementation_files_not_list": (
        "query.implementation_files is not a list: iterated as upstream does (a string yields "
        "characters; other values give no anchors)"
    ),
}
INPUT_FLAGS: tuple[str, ...] = (
    "missing_query", "no_query_fields", "missing_gold", "no_gold", "empty_annotation_gold",
    "missing_task_type", "raw_record_unavailable",
)  # fmt: skip

SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    # the exact upstream record fields of spec §10.6, in the spec's order (RECORD_FIELDS)
    "sample_id": pl.String,
    "task_type": pl.String,
    "repo": pl.String,
    "primary_relevance_type": pl.String,
    "secondary_relevance_types": pl.List(pl.String),
    "confidence": pl.String,
    "gold_files": pl.List(pl.String),
    "query_token_overlap": pl.List(pl.String),
    "path_token_overlap": pl.List(pl.String),
    "semantic_overlap_score": pl.Float64,
    "structural_signal_count": pl.Int64,
    "workflow_signal_count": pl.Int64,
    "evidence": pl.List(pl.String),
    # arbwb columns: every quantity of spec 10.2 in full, and why a row looks as it does
    "relevance_types": pl.List(pl.String),  # all labels in rule order (multi-label view)
    "query_tokens": pl.List(pl.String),  # Q, sorted
    "path_query_tokens": pl.List(pl.String),  # P^q, sorted
    "gold_tokens": pl.List(pl.String),  # H, sorted
    "overlap": pl.List(pl.String),  # O, sorted, not truncated
    "path_overlap": pl.List(pl.String),  # p, sorted, not truncated
    "overlap_count": pl.Int64,  # |O|
    "gold_symbols": pl.List(pl.String),
    "evidence_signals": pl.List(pl.String),  # E, sorted
    "structural_evidence": pl.Int64,  # part of s from evidence keys
    "module_family_pairs": pl.Int64,  # part of s from (anchor, gold) pairs
    "anchors": pl.List(pl.String),
    "target_gold_files": pl.List(pl.String),  # evaluation target, spec 2.6
    "flags": pl.List(pl.String),  # codes of FLAG_TEXT
    "reason": pl.String,  # missing inputs in words (null when complete)
    "complete": pl.Boolean,  # query and gold objects were present
    "source": pl.String,
    "line": pl.Int64,
}
RECORD_FIELDS: tuple[str, ...] = tuple(SCHEMA)[:13]


def tokenize(text: str) -> set[str]:
    """T(text) of spec 10.1: camel split, ``_-/.`` to spaces, ASCII words >= 3 chars, no STOP."""
    if not text:
        return set()
    spaced = _CAMEL.sub(r"\1 \2", text).translate(_PUNCT)
    return {w.lower() for w in _WORD.findall(spaced) if w.lower() not in STOP}


def flatten(value: Any) -> list[str]:
    """Strings as-is, lists/dicts element-wise in order, null skipped, others via ``str``."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in flatten(item)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in flatten(item)]
    return [str(value)]


def field_text(query: Mapping[str, Any], keys: frozenset[str]) -> str:
    """Values of ``keys`` flattened and joined with newlines, in the query's key order."""
    return "\n".join(text for key, value in query.items() if key in keys for text in flatten(value))


def is_test_path(path: str) -> bool:
    """Taxonomy test path (spec 6.3): a part ``test``/``tests``, or stem ``*_test``/``test_*``."""
    pure = PurePosixPath(path)
    stem = pure.stem.lower()
    return (
        bool({"test", "tests"} & set(pure.parts))
        or stem.endswith("_test")
        or stem.startswith("test_")
    )


def same_module_family(anchor: str, gold: str) -> bool:
    """Spec 10.2: drop src/test/tests parts; empty -> no; same first part, or shared stem token."""
    a = [part for part in PurePosixPath(anchor).parts if part not in _FAMILY_DROP]
    g = [part for part in PurePosixPath(gold).parts if part not in _FAMILY_DROP]
    if not a or not g:
        return False
    if a[0] == g[0]:
        return True
    return bool(tokenize(PurePosixPath(anchor).stem) & tokenize(PurePosixPath(gold).stem))


@dataclass
class _Record:
    """One raw sample record, read defensively; ``flags`` collects what was odd about it."""

    raw: Mapping[str, Any]
    flags: list[str]

    def obj(self, key: str) -> dict[str, Any]:
        value = self.raw.get(key)
        return value if isinstance(value, dict) else {}

    def items(self, value: Any) -> list[Any]:
        """List members (upstream iterates ``value or []``); a non-list is skipped and flagged."""
        if not value:
            return []
        if isinstance(value, list):
            return value
        self.flag("malformed_skipped")
        return []

    def rows(self, value: Any) -> list[dict[str, Any]]:
        """Object members of a list; non-objects skipped and flagged."""
        members = self.items(value)
        rows = [m for m in members if isinstance(m, dict)]
        if len(rows) != len(members):
            self.flag("malformed_skipped")
        return rows

    def strings(self, value: Any) -> list[str]:
        """Every member via ``str`` as upstream does; non-strings flagged."""
        members = self.items(value)
        if any(not isinstance(m, str) for m in members):
            self.flag("non_string_gold_path")
        return [str(m) for m in members]

    def flag(self, code: str) -> None:
        if code not in self.flags:
            self.flags.append(code)


def _annotation_gold(rec: _Record) -> list[str]:
    # spans first (sample level), then no_gold empties everything, gold.files, per-task lists,
    # then must_context paths for comment2context or an empty task type (spec 10.2, literally)
    task = str(rec.raw.get("task_type") or "")
    paths = [str(row["path"]) for row in rec.rows(rec.raw.get("gold_spans")) if row.get("path")]
    gold = rec.obj("gold")
    if gold.get("no_gold") is True:
        return []
    paths += [str(p) for p in rec.items(gold.get("files")) if p]  # falsy skipped before str()
    if any(not isinstance(p, str) for p in rec.items(gold.get("files"))):
        rec.flag("non_string_gold_path")
    keys = {
        "code2test": ("related_tests",),
        "trace2code": ("root_cause_files",),
        "comment2context": ("root_cause_files", "supporting_files"),
    }.get(task, ("related_tests", "root_cause_files", "supporting_files"))
    for key in keys:
        paths += rec.strings(gold.get(key))
    if task in ("comment2context", ""):
        must = rec.rows(gold.get("must_context_files"))
        paths += [str(item["path"]) for item in must if item.get("path")]
    return dedupe(paths)


def _gold_symbols(rec: _Record) -> list[str]:
    """``symbol`` of each sample-level gold_blocks row, then gold.root_cause_symbols."""
    blocks = rec.rows(rec.raw.get("gold_blocks"))
    symbols = [str(row["symbol"]) for row in blocks if row.get("symbol")]
    return symbols + [str(v) for v in rec.items(rec.obj("gold").get("root_cause_symbols"))]


def _evidence_signals(rec: _Record) -> set[str]:
    """E_i: must_context evidence strings, plus metadata.evidence signals and source."""
    signals: set[str] = set()
    for item in rec.rows(rec.obj("gold").get("must_context_files")):
        signals.update(str(v) for v in rec.items(item.get("evidence")))
    meta = rec.obj("metadata").get("evidence")
    if isinstance(meta, dict):
        signals.update(str(v) for v in rec.items(meta.get("signals")))
        if meta.get("source"):
            signals.add(str(meta["source"]))
    return signals


def _anchors(rec: _Record, query: Mapping[str, Any]) -> list[str]:
    """String values of changed_file, given_file, path (each counted), then implementation_files."""
    anchors = [query[key] for key in ANCHOR_KEYS if isinstance(query.get(key), str)]
    files = query.get("implementation_files") or []
    if isinstance(files, list):
        return anchors + [str(v) for v in files]
    rec.flag("implementation_files_not_list")
    # upstream iterates whatever the value is (a string yields its characters): kept literal
    return anchors + [str(v) for v in files] if isinstance(files, str | dict) else anchors


@dataclass(frozen=True)
class Quantities:
    """The per-sample quantities of spec 10.2."""

    task: str
    query_tokens: set[str]
    path_tokens: set[str]
    gold_files: list[str]
    gold_symbols: list[str]
    gold_tokens: set[str]
    signals: set[str]
    overlap: list[str]
    path_overlap: list[str]
    directness: float
    structural_evidence: int
    family_pairs: int
    workflow: int
    anchors: list[str]

    @property
    def structural(self) -> int:
        """s_i = evidence keys present + same-module-family (anchor, gold) pairs."""
        return self.structural_evidence + self.family_pairs


def _quantities(rec: _Record, task: str, query: Mapping[str, Any]) -> Quantities:
    gold_files = _annotation_gold(rec)
    symbols = _gold_symbols(rec)
    q = tokenize(field_text(query, NON_PATH_KEYS))
    pq = tokenize(field_text(query, PATH_KEYS))
    h = tokenize(" ".join(gold_files + symbols))
    signals = _evidence_signals(rec)
    both = q & h
    directness = len(both) / max(1, min(len(q), len(h))) if q and h else 0.0
    anchors = _anchors(rec, query)
    pairs = sum(same_module_family(a, g) for a in anchors for g in gold_files)
    workflow = (
        (2 if task == "code2test" else 0)
        + sum(key in signals for key in WORKFLOW_SIGNALS)
        + (1 if any(is_test_path(p) for p in gold_files) else 0)
    )
    return Quantities(
        task=task,
        query_tokens=q,
        path_tokens=pq,
        gold_files=gold_files,
        gold_symbols=symbols,
        gold_tokens=h,
        signals=signals,
        overlap=sorted(both),
        path_overlap=sorted(pq & h),
        directness=directness,
        structural_evidence=sum(key in signals for key in STRUCTURAL_SIGNALS),
        family_pairs=pairs,
        workflow=workflow,
        anchors=anchors,
    )


def _words(tokens: Sequence[str]) -> str:
    return ", ".join(tokens[:8]) if tokens else "none"


def relevance_labels(qs: Quantities) -> tuple[list[str], list[str]]:
    """Multi-label rules of spec 10.3 (labels in rule order) and one evidence string per rule."""
    d, s, w, o = qs.directness, qs.structural, qs.workflow, qs.overlap
    out: list[tuple[str, str]] = []
    if qs.task == "trace2code":
        out.append(("causal_indirect", "trace2code: failure signal -> root-cause files"))
        if s > 0:
            out.append(("structural_indirect", f"s={s} structural witnesses"))
        if o:
            out.append(("semantic_direct", f"query/gold overlap {_words(o)}"))
    elif qs.task == "code2test":
        if d >= 0.10 or len(o) >= 2:
            out.append(("semantic_direct", f"d={d:.4f}, |O|={len(o)}: {_words(o)}"))
        out.append(("workflow_conventional", f"code2test: implementation -> tests (w={w})"))
        if s > 0 or qs.path_overlap:
            why = f"s={s}, path overlap {_words(qs.path_overlap)}"
            out.append(("structural_indirect", why))
    elif qs.task == "comment2context":
        symbol = "symbol_or_path_overlap" in qs.signals
        if d >= 0.12 or len(o) >= 2 or symbol:
            why = f"d={d:.4f}, |O|={len(o)}: {_words(o)}" + ("; symbol_or_path_overlap" * symbol)
            out.append(("semantic_direct", why))
        tests = any(is_test_path(p) for p in qs.gold_files)
        if w > 0 or tests:
            out.append(("workflow_conventional", f"w={w}" + ("; a gold file is a test" * tests)))
        if s > 0 or not out:
            why = f"s={s} structural witnesses" if s > 0 else "no other label: default"
            out.append(("structural_indirect", why))
    else:
        label = "semantic_direct" if o else "structural_indirect"
        out.append((label, f"fallback rule for task {qs.task!r}: overlap {_words(o)}"))
    labels = dedupe(label for label, _ in out)
    return labels, [f"{label}: {why}" for label, why in out]


def primary_label(qs: Quantities, labels: Sequence[str]) -> str:
    """Primary projection of spec 10.4 (thresholds 0.30 code2test, 0.16 comment2context)."""
    if qs.task == "trace2code":
        return "causal_indirect"
    if qs.task == "code2test":
        if "semantic_direct" in labels and qs.directness >= 0.30:
            return "semantic_direct"
        return "workflow_conventional"
    if qs.task == "comment2context":
        if "semantic_direct" in labels and qs.directness >= 0.16:
            return "semantic_direct"
        if "workflow_conventional" in labels and qs.workflow > qs.structural:
            return "workflow_conventional"
        if "structural_indirect" in labels:
            return "structural_indirect"
    return labels[0]


def confidence(qs: Quantities, labels: Sequence[str], primary: str) -> str:
    """Spec 10.5: start medium (fallback tasks low), then the three ordered overrides."""
    level = "medium" if qs.task in CORE_TASKS else "low"
    if primary == "semantic_direct" and len(qs.overlap) < 2 and qs.directness < 0.10:
        return "low"
    if qs.task == "trace2code" and primary == "causal_indirect":
        return "high"
    if qs.task in ("code2test", "comment2context") and len(labels) > 1:
        return "medium"
    return level


def annotate_record(
    record: Mapping[str, Any],
    *,
    source: str | None = None,
    line: int | None = None,
    rebuilt: bool = False,
) -> dict[str, Any]:
    """One annotation row (the :data:`SCHEMA` columns) for one raw sample record; never raises.
    ``rebuilt``: the record came from the samples frame (``raw_record_unavailable``)."""
    rec = _Record(record, [])
    task = str(record.get("task_type") or "unknown")
    if not record.get("task_type"):
        rec.flag("missing_task_type")
    raw_query = record.get("query")
    query = raw_query if isinstance(raw_query, dict) else {}
    if not isinstance(raw_query, dict):
        rec.flag("missing_query")
    elif not (NON_PATH_KEYS | PATH_KEYS) & set(query):
        rec.flag("no_query_fields")
    if not isinstance(record.get("gold"), dict):
        rec.flag("missing_gold")
    elif rec.obj("gold").get("no_gold") is True:
        rec.flag("no_gold")
    qs = _quantities(rec, task, query)
    labels, evidence = relevance_labels(qs)
    primary = primary_label(qs, labels)
    _quirk_flags(rec, record, qs)
    if rebuilt:
        rec.flag("raw_record_unavailable")
    flags = rec.flags
    reasons = [FLAG_TEXT[f] for f in INPUT_FLAGS if f in flags]
    return {
        "sample_id": str(record.get("id") or record.get("sample_id") or ""),
        "task_type": task,
        "repo": str(record.get("repo") or ""),
        "primary_relevance_type": primary,
        "secondary_relevance_types": [label for label in labels if label != primary],
        "confidence": confidence(qs, labels, primary),
        "gold_files": qs.gold_files,
        "query_token_overlap": qs.overlap[:12],
        "path_token_overlap": qs.path_overlap[:12],
        "semantic_overlap_score": float(qs.directness),
        "structural_signal_count": qs.structural,
        "workflow_signal_count": qs.workflow,
        "evidence": evidence,
        "relevance_types": labels,
        "query_tokens": sorted(qs.query_tokens),
        "path_query_tokens": sorted(qs.path_tokens),
        "gold_tokens": sorted(qs.gold_tokens),
        "overlap": qs.overlap,
        "path_overlap": qs.path_overlap,
        "overlap_count": len(qs.overlap),
        "gold_symbols": qs.gold_symbols,
        "evidence_signals": sorted(qs.signals),
        "structural_evidence": qs.structural_evidence,
        "module_family_pairs": qs.family_pairs,
        "anchors": qs.anchors,
        "target_gold_files": _target(record),
        "flags": flags,
        "reason": "; ".join(reasons) if reasons else None,
        "complete": isinstance(raw_query, dict) and isinstance(record.get("gold"), dict),
        "source": source,
        "line": line,
    }


def _target(record: Mapping[str, Any]) -> list[str]:
    """The §2.6 evaluation target (empty when gold is not an object)."""
    if not isinstance(record.get("gold"), dict):
        return []
    return target_gold_files(dict(record))


def _quirk_flags(rec: _Record, record: Mapping[str, Any], qs: Quantities) -> None:
    if qs.task == "edit2ripple":
        rec.flag("quirk_edit2ripple_always_structural")
    if qs.task not in CORE_TASKS:
        rec.flag("fallback_task")
    if isinstance(record.get("gold"), dict) and set(qs.gold_files) != set(_target(record)):
        rec.flag("quirk_annotation_gold_differs")
    if not qs.gold_files:
        rec.flag("empty_annotation_gold")


def annotate_records(
    records: Iterable[Mapping[str, Any] | tuple[str | None, int | None, Mapping[str, Any]]],
) -> pl.DataFrame:
    """The annotation frame (:data:`SCHEMA`) of raw records or ``(source, line, record)``
    triples, one row each, in input order."""
    triples = (item if isinstance(item, tuple) else (None, None, item) for item in records)
    return _frame([annotate_record(rec, source=src, line=line) for src, line, rec in triples])


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=SCHEMA, orient="row") if rows else pl.DataFrame(schema=SCHEMA)


def annotate_path(path: str | Path) -> pl.DataFrame:
    """Annotate every sample of a samples file, release folder or single-release root (read by
    :func:`~arbwb.io.samples.load_samples`, so bad records are InputErrors here too)."""
    return annotate_samples(load_samples(path).samples)


def annotate_samples(samples: pl.DataFrame) -> pl.DataFrame:
    """Annotate a SAMPLES frame from each row's raw record; a row whose record cannot be
    re-read is annotated from the frame's JSON and flagged ``raw_record_unavailable``."""
    wanted = samples.drop_nulls(["source", "line"]).group_by("source").agg("line")
    raw: dict[tuple[str, int], dict[str, Any]] = {}
    for source, lines in wanted.iter_rows():
        if Path(source).is_file():
            keep = set(lines)
            raw.update(((source, n), record) for n, record in iter_jsonl(source) if n in keep)
    rows = []
    for row in samples.iter_rows(named=True):
        record = raw.get((row["source"], row["line"]))
        rebuilt = record is None or str(record.get("id") or "") != row["sample_id"]
        if record is None or rebuilt:
            record = _from_frame(row)
        rows.append(
            annotate_record(record, source=row["source"], line=row["line"], rebuilt=rebuilt)
        )
    return _frame(rows)


def _from_frame(row: Mapping[str, Any]) -> dict[str, Any]:
    """A record rebuilt from SAMPLES columns (JSON strings; null when unknown)."""
    record: dict[str, Any] = {"id": row["sample_id"], "task_type": row["task"], "repo": row["repo"]}
    for key in ("query", "gold", "metadata"):
        if row.get(key) is not None:
            record[key] = json.loads(row[key])
    return record


def records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """The spec 10.6 annotation records (exactly :data:`RECORD_FIELDS`) of an annotation frame."""
    return frame.select(RECORD_FIELDS).to_dicts()
