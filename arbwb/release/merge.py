"""The merged selective corpus manifest (spec §1.4): the subset releases' manifests in release
order, one row per snapshot (upstream's rule, docs/data-layout.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbwb.errors import InputError
from arbwb.jsonio import atomic_open, iter_jsonl
from arbwb.release.download import CURRENT_RELEASES

MERGED_RELEASE = "v2_selective_mixed"


@dataclass(frozen=True)
class MergedManifest:
    """Deduplicated manifest rows sorted by (repo, base_commit), with input bookkeeping."""

    rows: list[dict[str, Any]]
    inputs: dict[str, int]  # release -> manifest rows read
    duplicates: int  # rows whose snapshot was already seen


def manifest_path(root: str | Path, release: str) -> Path:
    """``corpus/R/corpus_manifest.jsonl`` under a data root."""
    return Path(root) / "corpus" / release / "corpus_manifest.jsonl"


def manifest_key(row: dict[str, Any], path: Path, line: int) -> tuple[str, str]:
    """A manifest row's (repo, base_commit), each a non-empty string (else a located error)."""
    for field in ("repo", "base_commit"):
        value = row.get(field)
        if not isinstance(value, str) or not value.strip():
            msg = f"must be a non-empty string, got {value!r}"
            raise InputError(msg, path=path, line=line, field=field)
    return row["repo"], row["base_commit"]


def merge_manifests(
    root: str | Path, releases: tuple[str, ...] | list[str] = CURRENT_RELEASES
) -> MergedManifest:
    """Merge the corpus manifests of ``releases`` under ``root`` (upstream rule, spec §1.4)."""
    if not releases or len(set(releases)) != len(releases):
        msg = f"releases must be a non-empty list without repeats, got {list(releases)!r}"
        raise InputError(msg, field="releases")
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    inputs: dict[str, int] = {}
    duplicates = 0
    for release in releases:
        path = manifest_path(root, release)
        if not path.is_file():
            msg = f"missing corpus manifest of {release}; download it with `arbwb download --all`"
            raise InputError(msg, path=path)
        count = 0
        for line, row in iter_jsonl(path):
            key = manifest_key(row, path, line)
            count += 1
            earlier = kept.get(key)
            if earlier is None:
                kept[key] = row
                continue
            duplicates += 1
            if earlier.get("status") != "ok" and row.get("status") == "ok":
                kept[key] = row
        inputs[release] = count
    return MergedManifest([kept[k] for k in sorted(kept)], inputs, duplicates)


def write_merged_manifest(merged: MergedManifest, output: str | Path) -> None:
    """Write rows like upstream: original key order, raw non-ASCII, atomically."""
    with atomic_open(output, "w") as handle:
        for row in merged.rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
