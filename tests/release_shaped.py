"""A release-shaped data root built from data/demo: two self-contained subsets A and B.

Repositories are split between the subsets (each with its own ``benchmark/R``, ``corpus/R``
and ``eval/R``, as the published release, spec §1.1-1.5). Every demo run is split by sample;
``lexical`` keeps its stem in ``eval/A`` and is renamed ``lexical_all_files`` in ``eval/B``
(one method, two stems), and one details row of B's lexical run is dropped so that a method
has a missing prediction; ``grep-expanded`` is stored in ``eval/A`` only (a run one subset
lacks). No ``repo_manifest.jsonl``: languages must come from the corpus.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from arbwb.paths import DEMO_DIR

SUBSETS = ("A", "B")
RENAMED = {("B", "lexical"): "lexical_all_files"}
ONLY_IN = {"grep-expanded": "A"}  # stem -> the one subset that stores it
METHODS_CSV = """# test method table
release,stem,method,family
A,lexical,Lexical,lexical
B,lexical_all_files,Lexical,lexical
*,dense_hash,Hash embedding,embedding
"""


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def subset_repos() -> dict[str, list[str]]:
    """Demo repositories per subset: the first half (at least one) in A, the rest in B."""
    repos = sorted({r["repo"] for r in _rows(DEMO_DIR / "benchmark/demo/samples.jsonl")})
    half = max(1, len(repos) // 2)
    return {"A": repos[:half], "B": repos[half:]}


def dropped_sample(root: Path) -> str:
    """The sample id whose row was left out of ``eval/B/lexical_all_files_details.jsonl``."""
    return (root / "dropped_sample.txt").read_text(encoding="utf-8").strip()


def build(root: Path, *, benchmark: bool = True) -> Path:
    """Write the release-shaped root under ``root`` and ``root/methods.csv``; returns ``root``."""
    repos = subset_repos()
    samples = _rows(DEMO_DIR / "benchmark/demo/samples.jsonl")
    manifest = _rows(DEMO_DIR / "corpus/demo/corpus_manifest.jsonl")
    runs = sorted((DEMO_DIR / "eval/demo").glob("*_details.jsonl"))
    dropped = ""
    for subset in SUBSETS:
        mine = set(repos[subset])
        if benchmark:
            own = [r for r in samples if r["repo"] in mine]
            _write(root / "benchmark" / subset / "samples.jsonl", own)
        rows = []
        for row in manifest:
            if row["repo"] in mine:
                source = DEMO_DIR / "corpus" / row["chunks_path"]
                rel = Path(subset) / Path(row["chunks_path"]).relative_to("demo")
                (root / "corpus" / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, root / "corpus" / rel)
                rows.append({**row, "chunks_path": str(rel)})
        _write(root / "corpus" / subset / "corpus_manifest.jsonl", rows)
        for details in runs:
            stem = details.name.removesuffix("_details.jsonl")
            if ONLY_IN.get(stem, subset) != subset:
                continue
            new = RENAMED.get((subset, stem), stem)
            kept = [r for r in _rows(details) if r["repo"] in mine]
            if (subset, stem) in RENAMED:
                dropped = kept.pop(0)["sample_id"]
            _write(root / "eval" / subset / f"{new}_details.jsonl", kept)
            summary = details.with_name(f"{stem}_summary.json")
            if summary.is_file():
                shutil.copyfile(summary, root / "eval" / subset / f"{new}_summary.json")
    shutil.copytree(DEMO_DIR / "eval/demo_selective", root / "eval/demo_selective")
    if (DEMO_DIR / "contextbench").is_dir():
        shutil.copytree(DEMO_DIR / "contextbench", root / "contextbench")
    (root / "methods.csv").write_text(METHODS_CSV, encoding="utf-8")
    (root / "dropped_sample.txt").write_text(dropped + "\n", encoding="utf-8")
    return root


def lexical_reference(root: Path) -> dict[str, dict[str, float]]:
    """Per sample of both subsets: R@5/10/20 and MRR of the joined lexical method, in plain
    Python from the details files (gold from the bm25 runs, which rank every sample; a sample
    the lexical runs lack scores 0; gold_ranks give MRR past the stored prefix, spec §5.1).
    """
    gold: dict[str, set[str]] = {}
    ranked: dict[str, dict[str, Any]] = {}
    for subset in SUBSETS:
        for row in _rows(root / "eval" / subset / "bm25_details.jsonl"):
            if row["gold_files"]:
                gold[row["sample_id"]] = set(row["gold_files"])
        stem = RENAMED.get((subset, "lexical"), "lexical")
        for row in _rows(root / "eval" / subset / f"{stem}_details.jsonl"):
            ranked[row["sample_id"]] = row
    out = {}
    for sid, paths in gold.items():
        row = ranked.get(sid, {"top_files": []})
        top = list(dict.fromkeys(row["top_files"]))
        ranks = [i + 1 for i, p in enumerate(top) if p in paths]
        ranks += [r for r in (row.get("gold_ranks") or {}).values() if r]
        values = {f"recall@{k}": len(paths & set(top[:k])) / len(paths) for k in (5, 10, 20)}
        values["mrr"] = 1 / min(ranks) if ranks else 0.0
        out[sid] = values
    return out
