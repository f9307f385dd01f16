"""Corpus scale and inferred languages: a hand-built two-subset corpus, counts checked literally."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from arbwb.analysis import overview as ov
from arbwb.analysis.corpus_scale import corpus_scale, scale_totals
from arbwb.io.corpus import open_corpus

C1, C2, C3, C4 = ("1" * 40, "2" * 40, "3" * 40, "4" * 40)


def _chunk(path: str, kind: str, text: str) -> dict[str, object]:
    return {"chunk_id": f"{path}:{kind}:{len(text)}", "path": path, "kind": kind,
            "symbol": "" if kind == "file" else "f", "start_line": 1, "end_line": 1,
            "text": text}  # fmt: skip


SNAPSHOTS = {  # repo, commit -> chunk rows (texts shared across and within snapshots)
    ("a/x", C1): [
        _chunk("src/main.go", "file", "package main\n"),
        _chunk("src/main.go", "symbol", "func main() {}"),
        _chunk("src/util.go", "file", "package util é\n"),
        _chunk("README.md", "file", "# x\n"),
        _chunk("docs/a.md", "file", "# x\n"),  # same text twice in one snapshot
    ],
    ("a/x", C2): [
        _chunk("src/main.go", "file", "package main\n"),  # seen in C1
        _chunk("src/main.go", "symbol", "func main() { run() }"),
        _chunk("src/run.py", "file", "def run(): pass\n"),
    ],
    ("b/y", C3): [
        _chunk("lib/a.py", "file", "x = 1\n"),
        _chunk("lib/b.py", "file", "y = 2\n"),
        _chunk("web/c.ts", "file", "let z = 3\n"),
    ],
}


def _corpus(root: Path) -> Path:
    """corpus/S1 (a/x, plus a missing and an unreadable row) and corpus/S2 (b/y)."""
    for subset, keys in (("S1", [("a/x", C1), ("a/x", C2)]), ("S2", [("b/y", C3)])):
        manifest = []
        for repo, commit in keys:
            rel = Path(subset) / repo.replace("/", "__") / f"{commit}.chunks.jsonl"
            path = root / "corpus" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            rows = [{"base_commit": commit, "repo": repo, **c} for c in SNAPSHOTS[(repo, commit)]]
            path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
            manifest.append({"repo": repo, "base_commit": commit, "status": "ok",
                             "chunks_path": str(rel), "chunk_count": len(rows)})  # fmt: skip
        if subset == "S1":
            manifest.append({"repo": "a/x", "base_commit": C3, "status": "missing_commit",
                             "chunk_count": 0})  # fmt: skip
            manifest.append({"repo": "c/z", "base_commit": C4, "status": "ok",
                             "chunks_path": "S1/c__z/gone.chunks.jsonl"})  # fmt: skip
        text = "".join(json.dumps(r) + "\n" for r in manifest)
        (root / "corpus" / subset / "corpus_manifest.jsonl").write_text(text, encoding="utf-8")
    return root


def test_scale_counts_and_duplicated_share(tmp_path: Path) -> None:
    corpus = open_corpus(_corpus(tmp_path), use_cache=False)
    scale = corpus_scale(corpus)
    frame = {r["snapshot_id"]: r for r in scale.snapshots.iter_rows(named=True)}
    assert frame[f"a/x@{C3}"]["status"] == "missing"
    assert frame[f"c/z@{C4}"]["status"] == "unreadable"
    assert len(scale.problems) == 1 and "c/z" in scale.problems[0]
    seen: set[str] = set()
    distinct_total = new_total = 0
    for (repo, commit), rows in sorted(SNAPSHOTS.items(), key=lambda kv: f"{kv[0][0]}@{kv[0][1]}"):
        got = frame[f"{repo}@{commit}"]
        texts = [str(r["text"]) for r in rows]
        assert got["status"] == "ok"
        assert got["chunks"] == len(rows)
        assert got["symbol_chunks"] == sum(r["kind"] == "symbol" for r in rows)
        assert got["files"] == len({r["path"] for r in rows if r["kind"] == "file"})
        assert got["text_bytes"] == sum(len(t.encode()) for t in texts)
        distinct = set(texts)
        assert got["distinct_text_bytes"] == sum(len(t.encode()) for t in distinct)
        new = distinct - seen
        assert got["new_text_bytes"] == sum(len(t.encode()) for t in new)
        seen |= distinct
        distinct_total += got["distinct_text_bytes"]
        new_total += got["new_text_bytes"]
    totals = scale_totals(scale)
    assert (totals["snapshots_ok"], totals["snapshots_missing"]) == (3, 1)
    assert totals["snapshots_unreadable"] == 1 and totals["snapshots"] == 5
    assert totals["duplicated_text_share"] == pytest.approx(1 - new_total / distinct_total)
    assert totals["duplicated_text_share"] > 0  # "package main\n" repeats in C2


def test_languages_inferred_from_code_extensions_and_labelled(tmp_path: Path) -> None:
    scale = corpus_scale(open_corpus(_corpus(tmp_path), use_cache=False))
    exts = {(r, e): n for r, e, n in scale.extensions.iter_rows()}
    assert exts[("a/x", ".go")] == 3 and exts[("a/x", ".md")] == 2  # two snapshots summed
    inferred = dict(ov.infer_languages(scale.extensions).iter_rows())
    # a/x: 3 Go files vs 1 Python (docs do not vote); b/y: 2 Python vs 1 TypeScript
    assert inferred == {"a/x": "Go (inferred)", "b/y": "Python (inferred)"}
    declared = pl.DataFrame({"repo": ["b/y", "a/x"], "language": ["Rust", "unknown"]})
    merged = dict(ov.fill_languages(declared, ov.infer_languages(scale.extensions)).iter_rows())
    assert merged == {"b/y": "Rust", "a/x": "Go (inferred)"}


def test_cached_counts_equal_a_fresh_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _corpus(tmp_path / "data")
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(tmp_path / "cache"))
    fresh = corpus_scale(open_corpus(root, use_cache=False))
    assert not (tmp_path / "cache").exists()  # an uncached corpus writes no entry
    saved = corpus_scale(open_corpus(root))
    entries = sorted((tmp_path / "cache" / "corpus-scale").glob("*.npz"))
    assert len(entries) == 3  # one per readable snapshot
    read = corpus_scale(open_corpus(root))
    for got in (saved, read):
        assert_frame_equal(got.snapshots, fresh.snapshots)
        assert_frame_equal(got.extensions, fresh.extensions)
        assert got.problems == fresh.problems


def _foreign_layout(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"stats": np.zeros(2, dtype=np.int64)}  # a foreign or older layout


def _unequal_lengths(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    arrays["size"] = arrays["size"][:-1]  # one text's size lost
    arrays["files"] = np.append(arrays["files"], 1)  # one extension count too many
    return arrays


@pytest.mark.parametrize("damage", [_foreign_layout, _unequal_lengths])
def test_a_damaged_entry_is_recomputed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: Any
) -> None:
    root = _corpus(tmp_path / "data")
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(tmp_path / "cache"))
    fresh = corpus_scale(open_corpus(root, use_cache=False))
    corpus_scale(open_corpus(root))  # writes the entries
    for entry in (tmp_path / "cache" / "corpus-scale").glob("*.npz"):
        with np.load(entry) as kept:
            arrays = {name: kept[name] for name in kept.files}
        np.savez(entry, **damage(arrays))
    again = corpus_scale(open_corpus(root))
    assert_frame_equal(again.snapshots, fresh.snapshots)
    assert_frame_equal(again.extensions, fresh.extensions)
