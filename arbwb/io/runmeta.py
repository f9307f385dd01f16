"""What a stored run says about itself (its summary JSON, spec §4.8, and first details row,
§4.6): mode, model, candidate filter and fusion components, read once per run file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbwb.jsonio import as_object, iter_jsonl, read_json

FILTERS = ("all_files", "code_only", "tests_only")
_STEM_MODES = (("rrf", "rank_fusion"), ("repomap", "repomap"), ("grep", "grep"))
_CORPUS_STEMS = ("lexical", "bm25")


@dataclass(frozen=True)
class RunMeta:
    """A run's mode, model, candidate filter, method (stem without filter) and components."""

    mode: str
    model: str | None
    candidate_filter: str
    method: str
    components: tuple[str, ...]
    family: str | None = None  # what a plug-in retriever said it is (summary ``family``)


def summary_of(details: Path) -> Path:
    """The summary beside a details file: ``_details.jsonl`` -> ``_summary.json`` (spec §1.5)."""
    stem = details.name.removesuffix(".jsonl").removesuffix("_details").removesuffix(".details")
    return details.with_name(f"{stem}_summary.json")


def filter_from_stem(stem: str) -> str:
    """Upstream's inference when a summary lacks ``candidate_filter`` (spec §1.5)."""
    if stem.endswith("_code_only"):
        return "code_only"
    if stem.endswith("_tests_only"):
        return "tests_only"
    return "all_files"


def method_of(stem: str, candidate_filter: str) -> str:
    """The stem without its filter suffix (``lexical_code_only`` -> ``lexical``; arbwb-defined)."""
    return stem.removesuffix(f"_{candidate_filter}").removesuffix("_all_files") or stem


def mode_from_stem(stem: str) -> str:
    """Mode guessed from a stem when no summary says it (arbwb-defined; else ``other``)."""
    low = stem.lower()
    for prefix, mode in _STEM_MODES:
        if low.startswith(prefix):
            return mode
    if any(low.startswith(name) for name in _CORPUS_STEMS):
        return "corpus"
    return "other"


def run_meta(path: str | Path, run: str | None = None) -> RunMeta:
    """Read the summary beside ``path`` (if any) and its first details row; infer the rest."""
    path = Path(path)
    stem = run or path.stem.removesuffix("_details")
    summary = as_object(read_json(summary_of(path))) if summary_of(path).is_file() else {}
    first: dict[str, Any] = {}
    if path.suffix.lower() == ".jsonl" and path.is_file():
        first = next((obj for _, obj in iter_jsonl(path)), {})
    mode = _text(summary.get("mode")) or _text(first.get("mode")) or mode_from_stem(stem)
    cfilter = (
        _text(summary.get("candidate_filter"))
        or _text(first.get("candidate_filter"))
        or filter_from_stem(stem)
    )
    components = summary.get("components") or first.get("component_labels") or []
    return RunMeta(
        mode=mode,
        model=_text(summary.get("model")) or _text(first.get("model")),
        candidate_filter=cfilter,
        method=method_of(stem.rsplit("/", 1)[-1], cfilter),
        components=tuple(str(c) for c in components) if isinstance(components, list) else (),
        family=_text(summary.get("family")),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
