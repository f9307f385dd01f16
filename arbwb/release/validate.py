"""Released-data validation (spec §2.10-2.11): unlike the loaders, which stop at the first
bad record, every problem is listed, named by file, line and field (docs/data-layout.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from arbwb.errors import InputError
from arbwb.io import samples
from arbwb.io.corpus import Corpus, open_corpus, snapshot_id
from arbwb.io.predictions import is_predictions, problems
from arbwb.jsonio import as_object, iter_jsonl

EXPECTED_COUNTS: dict[str, dict[str, int]] = {
    "v2_code2test": {"positive": 106},
    "v2_comment2context": {"positive": 80},
    "v2_trace2code": {"positive": 101},
    "v2_edit2ripple": {"positive": 58},
    "v2_abstention": {"natural": 50, "counterfactual": 32},
}
ABSTENTION_SOURCES = frozenset({"ci_log", "issue", "counterfactual_wrong_repo"})
NO_GOLD_REASONS = samples.NATURAL_REASONS | {samples.COUNTERFACTUAL_REASON}
MERGED_CORPUS = {  # auxiliary releases search the merged selective corpus (spec §1.4)
    "v2_selective_retrieval_balanced": "v2_selective_mixed",
    "v2_selective_retrieval_natural": "v2_selective_mixed",
}
SUMMARY_SCHEMA = {
    "release": pl.String,
    "stratum": pl.String,
    "samples": pl.Int64,
    "expected": pl.Int64,
    "tasks": pl.String,
}


@dataclass(frozen=True)
class Problem:
    """One violation, located like :class:`InputError` (``FILE:LINE: field 'F': message``)."""

    path: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        return str(InputError(self.message, path=self.path, line=self.line, field=self.field))


@dataclass(frozen=True)
class ReleaseReport:
    """Validation result of one release (or one sample file)."""

    name: str
    files: list[Path]
    strata: dict[tuple[str, str], int]  # (stratum, task) -> samples
    expected: dict[str, int] | None  # stratum -> count, for known release ids
    corpus: str  # which corpus membership was checked against, or why it was not
    problems: list[Problem]


def _blank(value: Any) -> bool:
    return not isinstance(value, str) or not value.strip()


def _one_of(value: Any, allowed: frozenset[str]) -> bool:
    """Membership that tolerates unhashable JSON values (lists, objects)."""
    return isinstance(value, str) and value in allowed


def _structure(record: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, message) for the common fields of spec §2.1/§2.11."""
    if _blank(record.get("id")):
        yield "id", f"must be a non-empty string, got {record.get('id')!r}"
    task = record.get("task_type")
    if not _one_of(task, samples.TASKS):
        yield "task_type", f"unknown task_type {task!r}; expected one of {sorted(samples.TASKS)}"
    repo = record.get("repo")
    if not isinstance(repo, str) or "/" not in repo.strip("/"):
        yield "repo", f"must be 'owner/name', got {repo!r}"
    commit = record.get("base_commit")
    if _blank(commit):
        yield "base_commit", f"must be a non-empty string, got {commit!r}"
    corpus = record.get("candidate_corpus")
    if not isinstance(corpus, dict):
        yield "candidate_corpus", f"must be a JSON object, got {corpus!r}"
    else:
        if (kind := corpus.get("type")) != "repo_at_base_commit":
            yield "candidate_corpus.type", f"must be 'repo_at_base_commit', got {kind!r}"
        if corpus.get("base_commit") != commit:
            got = corpus.get("base_commit")
            yield "candidate_corpus.base_commit", f"must equal base_commit {commit!r}, got {got!r}"
    for key in ("query", "gold"):
        if not isinstance(record.get(key), dict):
            yield key, f"must be a JSON object, got {record.get(key)!r}"
    if "metadata" in record and not isinstance(record["metadata"], dict):
        yield "metadata", f"must be a JSON object, got {record['metadata']!r}"
    version = record.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        yield "version", f"must be an integer, got {version!r}"


def _abstention(gold: dict[str, Any], query: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Abstention rules beyond the loader's: a known reason and a usable query."""
    if not _one_of(gold.get("reason"), NO_GOLD_REASONS):
        yield "gold.reason", f"must be one of {sorted(NO_GOLD_REASONS)}, got {gold.get('reason')!r}"
    if not _one_of(query.get("source"), ABSTENTION_SOURCES):
        got = query.get("source")
        yield "query.source", f"must be one of {sorted(ABSTENTION_SOURCES)}, got {got!r}"
    if _blank(query.get("text")):
        yield "query.text", "must be non-blank text"


def _positive(record: dict[str, Any], gold: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Spec §2.11's per-task fields: each task names its gold lists (edit2ripple its query)."""
    query, task = as_object(record.get("query")), record.get("task_type")
    needs: list[str] = []
    if task == "edit2ripple":
        needs += ["gold.files", "gold.given_files"]
        for key in ("anchor_file", "anchor_diff", "intent"):
            if _blank(query.get(key)):
                yield f"query.{key}", "must be non-blank text"
    version = record.get("version")
    if task == "comment2context" and isinstance(version, int) and version >= 2:
        needs.append("gold.given_files")
        if not (
            samples.path_list(gold.get("must_context_files"))
            or samples.path_list(gold.get("context_files"))
        ):
            yield "gold.must_context_files", "needs must_context_files (or context_files)"
    if task not in ("code2test", "edit2ripple"):
        needs.append("gold.root_cause_files")
    if task == "code2test":
        needs.append("gold.related_tests")
    for name in needs:
        if not samples.path_list(gold.get(name.removeprefix("gold."))):
            yield name, f"needs a non-empty list of paths for task {task!r}"


def _leak_field(record: dict[str, Any]) -> str:
    """Which field a detected leak points at, for the message (the rule is query_has_leakage)."""
    text = samples.query_text(record.get("query")).replace("\\n", "\n")
    for name, source in (("gold.fix_commit", "gold"), ("metadata.fix_commit", "metadata")):
        fix = str(as_object(record.get(source)).get("fix_commit") or "").strip()
        if fix and fix in text:
            return name
    return "query"


def check_record(record: dict[str, Any]) -> list[tuple[str, str]]:
    """All (field, message) violations of one sample record (spec §2.10-2.11, §9.6 strata)."""
    problems = list(_structure(record)) or list(samples.gold_type_problems(record))
    if problems:  # the rules below would repeat a mistyped field as a missing one
        return problems
    gold, query = as_object(record.get("gold")), as_object(record.get("query"))
    problems += samples.gold_consistency(record)  # the loader's gold checks, then §2.11's fields
    if record["task_type"] == "abstention":
        problems += _abstention(gold, query)
    else:
        problems += _positive(record, gold)
    reason = gold.get("reason")
    if gold.get("no_gold") is True and not _one_of(reason, NO_GOLD_REASONS):
        problems.append(("gold.reason", f"no-gold sample needs a known reason, got {reason!r}"))
    else:
        try:
            samples.stratum(record)
        except InputError as exc:
            problems.append((exc.field or "gold", exc.reason))
    if samples.query_has_leakage(record):
        where = _leak_field(record)
        problems.append(
            (
                where,
                "query leaks the answer (spec §2.10: patch text, fix commit, or "
                "a gold path named in an edit2ripple query)",
            )
        )
    return problems


def _corpus_for(
    root: Path | None, release: str, override: Path | None
) -> tuple[Corpus | None, str]:
    """The corpus to check membership against, and a sentence saying which (or why none)."""
    if override is not None:
        return open_corpus(override), f"checked against {override}"
    if root is None:
        return None, "not checked: no corpus given (pass --corpus)"
    folder = root / "corpus" / MERGED_CORPUS.get(release, release)
    if not (folder / "corpus_manifest.jsonl").is_file():
        return None, f"not checked: no {folder}/corpus_manifest.jsonl"
    return open_corpus(folder), f"checked against {folder}"


def _membership(record: dict[str, Any], corpus: Corpus) -> Iterator[tuple[str, str]]:
    sid = snapshot_id(record["repo"], record["base_commit"])
    if not corpus.has(sid):
        yield (
            "base_commit",
            f"snapshot {sid} is not an ok row of {', '.join(map(str, corpus.manifests))}",
        )
        return
    paths = set(corpus.files(sid)["path"].to_list())
    for role, files in (
        ("gold", samples.target_gold_files(record)),
        ("gold.given_files", samples.given_files(record)),
    ):
        for path in files:
            if path not in paths:
                yield role, f"file {path!r} is not in corpus snapshot {sid}"


def _located(exc: InputError, default: Path) -> Problem:
    return Problem(exc.path or str(default), exc.line, exc.field, exc.reason)


def _scan(
    files: list[Path], corpus: Corpus | None
) -> tuple[list[Problem], Counter[tuple[str, str]]]:
    """Problems of every record in ``files`` (corpus membership only of otherwise valid ones),
    and valid-sample counts by (stratum, task)."""
    problems: list[Problem] = []
    strata: Counter[tuple[str, str]] = Counter()
    seen: dict[str, str] = {}
    for source in files:
        try:
            for line, record in iter_jsonl(source):
                found = check_record(record)
                sample_id = record.get("id")
                if isinstance(sample_id, str) and sample_id in seen:
                    found.append(("id", f"duplicate id {sample_id!r}, first at {seen[sample_id]}"))
                elif isinstance(sample_id, str):
                    seen[sample_id] = f"{source}:{line}"
                if not found and corpus is not None:
                    try:
                        found += _membership(record, corpus)
                    except InputError as exc:  # unreadable chunk file: report where it is
                        problems.append(_located(exc, source))
                        continue
                if not found:
                    strata[(samples.stratum(record), record["task_type"])] += 1
                problems.extend(Problem(str(source), line, f, m) for f, m in found)
        except InputError as exc:  # malformed line: the rest of this file cannot be read
            problems.append(_located(exc, source))
    return problems, strata


def validate_release(
    name: str, files: list[Path], *, corpus: Corpus | None, corpus_note: str
) -> ReleaseReport:
    """Validate the sample files of one release; a known release id's stratum counts too."""
    problems, strata = _scan(files, corpus)
    expected = EXPECTED_COUNTS.get(name)
    if expected is not None:
        found: Counter[str] = Counter()
        for (group, _task), count in strata.items():
            found[group] += count
        where = str(files[0].parent) if files else name
        for group in sorted(set(expected) | set(found)):
            want, got = expected.get(group, 0), found[group]
            if want != got:
                msg = f"release {name} should hold {want} valid {group} samples, found {got}"
                problems.append(Problem(where, None, "count", msg))
    return ReleaseReport(name, files, dict(strata), expected, corpus_note, problems)


def validate_path(path: str | Path, *, corpus: str | Path | None = None) -> list[ReleaseReport]:
    """Validate a release root (every ``benchmark/<R>/``), a benchmark folder, a JSONL sample
    file or a predictions file; corpus membership against ``corpus``, else ``ROOT/corpus/<R>/``
    (the merged one for the selective releases) when there is one."""
    path = Path(path)
    override = None if corpus is None else Path(corpus)
    if path.is_file() and is_predictions(path):  # every place it breaks the predictions schema
        found = [Problem(str(path), line, field, msg) for line, field, msg in problems(path)]
        return [ReleaseReport(path.name, [path], {}, None, "not checked (predictions file)", found)]
    if path.is_dir() and (path / "benchmark").is_dir():
        folders = sorted(p for p in (path / "benchmark").iterdir() if p.is_dir())
        if not folders:
            raise InputError("benchmark/ holds no release folders", path=path / "benchmark")
    elif path.exists():
        folders = [path]
    else:
        raise InputError("no such file or directory", path=path)
    reports = []
    for folder in folders:
        release_dir = folder.parent if folder.is_file() else folder  # ROOT/benchmark/R
        root = release_dir.parent.parent if release_dir.parent.name == "benchmark" else None
        release = release_dir.name
        name = release if folder.is_dir() else folder.name
        handle, note = _corpus_for(root, release, override)
        reports.append(
            validate_release(name, samples.sample_files(folder), corpus=handle, corpus_note=note)
        )
    return reports


def summary_table(reports: list[ReleaseReport]) -> pl.DataFrame:
    """One row per (release, stratum): valid samples, expected count (null if unknown), tasks."""
    rows = []
    for report in reports:
        for group in sorted({g for g, _ in report.strata} | set(report.expected or {})):
            tasks = {t: n for (g, t), n in sorted(report.strata.items()) if g == group}
            expected = None if report.expected is None else report.expected.get(group, 0)
            text = ", ".join(f"{t}={n}" for t, n in tasks.items())
            rows.append((report.name, group, sum(tasks.values()), expected, text))
    return pl.DataFrame(rows, schema=SUMMARY_SCHEMA, orient="row")
