"""Method table: reading data/methods.csv, defaults from stems, run -> method precedence."""

from __future__ import annotations

import csv
from pathlib import Path

import polars as pl
import pytest

from arbwb.errors import InputError
from arbwb.io import method_table as mt
from arbwb.io.release import load_release
from arbwb.paths import DEMO_DIR

UPSTREAM_V2 = {  # spec §13.1: v2 positive leaderboard methods and families
    "Qwen3-Embedding-4B": "embedding",
    "Qwen3-Embedding-8B": "embedding",
    "pplx-embed-v1-4b": "embedding",
    "jina-code-embeddings-0.5b": "embedding",
    "nomic-embed-code": "embedding",
    "RepoMap": "structure",
    "Lexical": "lexical",
    "BM25": "lexical",
}
CORE_STEMS = {  # spec §1.5: 287-sample core stems in v1_3_reviewed, edit2ripple stems
    "v1_3_reviewed": [
        "Qwen3-Embedding-4B", "Qwen3-Embedding-8B", "pplx-embed-v1-4b",
        "jina-code-embeddings-0.5b", "nomic-embed-code", "repomap_all_files",
        "lexical_all_files", "bm25_all_files",
    ],
    "v2_edit2ripple": [
        "qwen3-4b", "qwen3-8b", "pplx-4b", "jina-code-embeddings-0.5b", "nomic", "repomap",
        "lexical", "bm25",
    ],
}  # fmt: skip


def _plain_rows(path: Path) -> list[dict[str, str]]:
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if not ln.startswith("#")]
    return list(csv.DictReader(lines))


def test_shipped_table_has_upstream_labels_stems_and_families() -> None:
    table = mt.read_methods()
    assert table.height == len(_plain_rows(mt.METHODS_FILE))
    for release, stems in CORE_STEMS.items():
        rows = table.filter(pl.col("release") == release)
        assert sorted(rows["stem"]) == sorted(stems)
        got = dict(zip(rows["method"], rows["family"], strict=True))
        assert got == UPSTREAM_V2  # both subsets map onto the same eight methods
    grep = table.filter(pl.col("stem") == "v1_3_grep_strict").row(0, named=True)
    assert (grep["release"], grep["family"]) == ("v1_4", "grep")
    assert set(table.filter(pl.col("stem").str.starts_with("rrf_"))["family"]) == {"rank fusion"}


@pytest.mark.parametrize(
    ("stem", "family"),
    [
        ("lexical_code_only", "lexical"),
        ("bm25-arb", "lexical"),
        ("bm25_all_files", "lexical"),
        ("grep_strict_tests_only", "grep"),
        ("repomap", "structure"),
        ("rrf_qwen8b_repomap", "rank fusion"),  # a fusion with RepoMap is a fusion
        ("dense_hash", "other"),  # nothing in the stem says embedding: no guess
        ("Qwen-Qwen3-Embedding-4B", "other"),
    ],
)
def test_default_family_from_stem(stem: str, family: str) -> None:
    assert mt.default_family(stem) == family


@pytest.mark.parametrize(
    ("family", "mode", "expected"),
    [
        ("learned sparse", "embedding", "learned sparse"),  # the plug-in's own word wins
        (None, "embedding", "embedding"),
        (None, "corpus", "lexical"),
        (None, "selective_bm25", "lexical"),
        (None, "rank_fusion", "rank fusion"),
        (None, "other", "other"),
    ],
)
def test_default_family_from_summary_family_then_mode(
    family: str | None, mode: str, expected: str
) -> None:
    assert mt.default_family("my_run", family=family, mode=mode) == expected


def test_run_methods_prefers_the_release_row_then_star_then_default(tmp_path: Path) -> None:
    table = tmp_path / "m.csv"
    table.write_text(
        "release,stem,method,family\n"
        "demo,lexical,Lexical (demo),lexical\n"
        "*,lexical,Lexical anywhere,lexical\n"
        "*,dense_hash,Hash,embedding\n"
        "other,bm25,BM25 elsewhere,lexical\n",
        encoding="utf-8",
    )
    release = load_release(DEMO_DIR)
    got = mt.run_methods(release, mt.read_methods(table))
    rows = {r["run"]: r for r in got.iter_rows(named=True)}
    assert list(rows) == list(release.runs)
    assert rows["lexical"]["method"] == "Lexical (demo)"
    assert rows["dense_hash"]["method"] == "Hash" and rows["dense_hash"]["source"] == "table"
    assert rows["bm25"]["method"] == "bm25" and rows["bm25"]["source"] == "default"
    assert rows["bm25"]["family"] == "lexical"
    assert {r["group"] for r in rows.values()} == {"demo"}
    assert mt.method_groups(got) == {r["method"]: "demo" for r in rows.values()}


def test_method_groups_join_folders_and_families() -> None:
    frame = pl.DataFrame(
        {
            "run": ["A/x", "B/y", "z"],
            "group": ["B", "A", "A"],
            "stem": ["x", "y", "z"],
            "method": ["M", "M", "Z"],
            "family": ["lexical", "grep", "embedding"],
            "source": ["table", "table", "default"],
        }
    )
    assert mt.method_groups(frame) == {"M": "A+B", "Z": "A"}
    assert mt.families(frame) == {"M": "lexical/grep", "Z": "embedding"}


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ("release,stem,method\n", 1, None),
        ("release,stem,method,family\n*,a,A\n", 2, None),
        ("# note\nrelease,stem,method,family\n*,a,,lexical\n", 3, "method"),
        ("release,stem,method,family\n*,a,A,x\n*,a,B,y\n", 3, "stem"),
    ],
)
def test_bad_tables_name_line_and_field(
    tmp_path: Path, text: str, line: int, field: str | None
) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        mt.read_methods(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)


def test_missing_table_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        mt.read_methods(tmp_path / "absent.csv")
