"""What a stored run says about itself (its summary JSON, spec §4.8, and first details row,
§4.6): mode, candidate filter, method and fusion components, read once per run file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbwb.jsonio import as_object, iter_jsonl, read_json

FILTERS = ("all_files", "code_only", "tests_only")
#: Stem prefix -> mode when no summary says it (arbwb-defined; else ``other``).
_STEM_MODES = (
    ("rrf", "rank_fusion"),
    ("repomap", "repomap"),
    ("grep", "grep"),
    ("lexical", "corpus"),
    ("bm25", "corpus"),
)


@dataclass(frozen=True)
class RunMeta:
    """A run's mode, candidate filter, method (stem without filter) and components."""

    mode: str
    candidate_filter: str
    method: str
    components: tuple[str, ...]
    family: str | None = None  # what a plug-in retriever said it is (summary ``family``)


def run_meta(path: str | Path, run: str | None = None) -> RunMeta:
    """Read the summary beside ``path`` (``_details.jsonl`` -> ``_summary.json``, spec §1.5)
    and its first details row; infer the rest from the run's stem."""
    path = Path(path)
    stem = run or path.stem.removesuffix("_details")
    name = path.name.removesuffix(".jsonl").removesuffix("_details").removesuffix(".details")
    summary_path = path.with_name(f"{name}_summary.json")
    summary = as_object(read_json(summary_path)) if summary_path.is_file() else {}
    first: dict[str, Any] = {}
    if path.suffix.lower() == ".jsonl" and path.is_file():
        first = next((obj for _, obj in iter_jsonl(path)), {})

    def stated(key: str) -> str | None:
        found = (summary.get(key), first.get(key))
        return next((v for v in found if isinstance(v, str) and v), None)

    low = stem.lower()
    mode = stated("mode") or next((m for p, m in _STEM_MODES if low.startswith(p)), "other")
    # upstream's inference when a summary lacks ``candidate_filter`` (spec §1.5)
    guessed = next((f for f in FILTERS[1:] if stem.endswith(f"_{f}")), "all_files")
    cfilter = stated("candidate_filter") or guessed
    short = stem.rsplit("/", 1)[-1]
    components = summary.get("components") or first.get("component_labels") or []
    family = summary.get("family")
    return RunMeta(
        mode=mode,
        candidate_filter=cfilter,
        method=short.removesuffix(f"_{cfilter}").removesuffix("_all_files") or short,
        components=tuple(str(c) for c in components) if isinstance(components, list) else (),
        family=family if isinstance(family, str) and family else None,
    )
