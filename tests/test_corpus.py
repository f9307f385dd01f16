"""Corpus access (spec §1.4): manifest rules, chunk_path resolution, lazy reads, caches, errors."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbwb.errors import InputError
from arbwb.io.chunkscan import _escape, _json_string, mapped_files
from arbwb.io.corpus import open_corpus
from arbwb.jsonio import dumps_upstream, write_jsonl

COMMIT = "c" * 40


def chunk_rows(repo: str, commit: str) -> list[dict[str, object]]:
    base = {"repo": repo, "base_commit": commit, "symbol": "", "start_line": 1}
    return [
        {
            **base,
            "chunk_id": "1",
            "path": "a.py",
            "kind": "file",
            "end_line": 40,
            "text": "def a(): pass",
        },
        {
            **base,
            "chunk_id": "2",
            "path": "a.py",
            "kind": "symbol",
            "symbol": "a",
            "end_line": 1,
            "text": "def a(): pass",
        },
        {
            **base,
            "chunk_id": "3",
            "path": "b.md",
            "kind": "file",
            "end_line": 2,
            "text": "old text here",
        },
        {**base, "chunk_id": "4", "path": "é.txt", "kind": "file", "end_line": 1, "text": "naïve"},
        {**base, "chunk_id": "5", "path": "b.md", "kind": "file", "end_line": 3, "text": ""},
    ]


def make_release(root: Path, chunks_path: str) -> Path:
    """data root ``root`` with corpus/R/: chunk file in its standard place, manifest naming it."""
    corpus = root / "corpus" / "R"
    write_jsonl(corpus / "o__r" / f"{COMMIT}.chunks.jsonl", chunk_rows("o/r", COMMIT))
    write_jsonl(
        corpus / "corpus_manifest.jsonl",
        [
            {"repo": "o/r", "base_commit": COMMIT, "status": "ok", "chunks_path": chunks_path},
            {"repo": "o/gone", "base_commit": COMMIT, "status": "missing_commit", "chunk_count": 0},
        ],
    )
    return corpus


@pytest.mark.parametrize(
    "chunks_path",
    [
        f"data/corpus/R/o__r/{COMMIT}.chunks.jsonl",  # upstream: relative to the data root's parent
        f"R/o__r/{COMMIT}.chunks.jsonl",  # arbwb builder: relative to the corpus folder's parent
        f"elsewhere/o__r/{COMMIT}.chunks.jsonl",  # stale: falls back to corpus/R/OWNER__NAME/
    ],
)
def test_chunks_path_resolution(tmp_path: Path, chunks_path: str) -> None:
    corpus_dir = make_release(tmp_path / "data", chunks_path)
    corpus = open_corpus(tmp_path / "data")  # data root with one release
    assert corpus.manifests == [corpus_dir / "corpus_manifest.jsonl"]
    assert corpus.chunk_path(f"o/r@{COMMIT}") == corpus_dir / "o__r" / f"{COMMIT}.chunks.jsonl"


def test_absolute_chunks_path(tmp_path: Path) -> None:
    target = tmp_path / "x" / "chunks.jsonl"
    write_jsonl(target, chunk_rows("o/r", COMMIT))
    make_release(tmp_path / "data", str(target))
    assert open_corpus(tmp_path / "data", "R").chunk_path(f"o/r@{COMMIT}") == target


def test_manifest_rules(tmp_path: Path) -> None:
    corpus = open_corpus(make_release(tmp_path / "data", f"R/o__r/{COMMIT}.chunks.jsonl"))
    assert corpus.snapshot_ids() == [f"o/r@{COMMIT}"]
    assert not corpus.has(f"o/gone@{COMMIT}")
    with pytest.raises(InputError, match="not in the corpus"):
        corpus.files(f"o/gone@{COMMIT}")


def test_later_row_wins_and_status_may_be_absent(tmp_path: Path) -> None:
    corpus_dir = make_release(tmp_path / "data", "nowhere")
    with (corpus_dir / "corpus_manifest.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(
            json.dumps({"repo": "o/gone", "base_commit": COMMIT, "chunks_path": "g"}) + "\n"
        )
        handle.write(
            json.dumps({"repo": "o/r", "base_commit": COMMIT, "status": "missing_commit"}) + "\n"
        )
    assert open_corpus(corpus_dir).snapshot_ids() == [f"o/gone@{COMMIT}"]


def test_files_frame_last_file_row_wins(tmp_path: Path) -> None:
    corpus = open_corpus(make_release(tmp_path / "data", "x"))
    files = corpus.files(f"o/r@{COMMIT}")
    # Ordered by the position of the surviving (last) file row of each path.
    assert files.rows() == [
        (f"o/r@{COMMIT}", "a.py", 6, 40, 13),
        (f"o/r@{COMMIT}", "é.txt", 3, 1, 6),
        (f"o/r@{COMMIT}", "b.md", 0, 3, 0),
    ]
    assert corpus.files(f"o/r@{COMMIT}") is files  # cached in memory
    chunks = corpus.chunks(f"o/r@{COMMIT}")
    assert chunks.height == 5 and chunks["chunk_id"].to_list() == ["1", "2", "3", "4", "5"]
    assert chunks.columns[0] == "snapshot_id"


def test_disk_cache_is_reused_and_invalidated(tmp_path: Path) -> None:
    corpus_dir = make_release(tmp_path / "data", "x")
    cache = tmp_path / "cache"
    first = open_corpus(corpus_dir, cache_dir=cache).files(f"o/r@{COMMIT}")
    (entry,) = cache.glob("*.parquet")
    assert pl.read_parquet(entry).equals(first)
    # A cached table is used as is: prove it by editing the cache file.
    pl.read_parquet(entry).with_columns(n_tokens=pl.lit(99, pl.Int64)).write_parquet(entry)
    again = open_corpus(corpus_dir, cache_dir=cache).files(f"o/r@{COMMIT}")
    assert set(again["n_tokens"]) == {99}
    # Rewriting the chunk file changes its size/mtime, so the stale entry is not used.
    write_jsonl(corpus_dir / "o__r" / f"{COMMIT}.chunks.jsonl", chunk_rows("o/r", COMMIT)[:1])
    fresh = open_corpus(corpus_dir, cache_dir=cache).files(f"o/r@{COMMIT}")
    assert fresh["n_tokens"].to_list() == [6]


def test_malformed_chunk_line_is_located(tmp_path: Path) -> None:
    corpus_dir = make_release(tmp_path / "data", "x")
    path = corpus_dir / "o__r" / f"{COMMIT}.chunks.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:-5]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"chunks\.jsonl:3: malformed JSON"):
        open_corpus(corpus_dir).files(f"o/r@{COMMIT}")


def test_missing_field_is_located(tmp_path: Path) -> None:
    corpus_dir = make_release(tmp_path / "data", "x")
    rows = chunk_rows("o/r", COMMIT)
    del rows[3]["text"]
    write_jsonl(corpus_dir / "o__r" / f"{COMMIT}.chunks.jsonl", rows)
    with pytest.raises(InputError, match=r"chunks\.jsonl:4: field 'text'"):
        open_corpus(corpus_dir).files(f"o/r@{COMMIT}")


def test_manifest_naming_missing_file(tmp_path: Path) -> None:
    corpus_dir = tmp_path / "corpus" / "R"
    write_jsonl(
        corpus_dir / "corpus_manifest.jsonl",
        [{"repo": "o/r", "base_commit": COMMIT, "status": "ok", "chunks_path": "R/o__r/x.jsonl"}],
    )
    corpus = open_corpus(corpus_dir)
    assert corpus.has(f"o/r@{COMMIT}")
    with pytest.raises(
        InputError, match=r"corpus_manifest\.jsonl:1: field 'chunks_path': chunk file"
    ):
        corpus.files(f"o/r@{COMMIT}")


def test_bad_manifest_rows(tmp_path: Path) -> None:
    corpus_dir = tmp_path / "c"
    write_jsonl(corpus_dir / "corpus_manifest.jsonl", [{"repo": "o/r", "status": "ok"}])
    with pytest.raises(InputError, match=r":1: field 'base_commit'"):
        open_corpus(corpus_dir)
    write_jsonl(corpus_dir / "corpus_manifest.jsonl", [{"repo": "o/r", "base_commit": "x"}])
    with pytest.raises(InputError, match=r":1: field 'chunks_path'"):
        open_corpus(corpus_dir)


def test_release_root_is_one_view_over_every_corpus(tmp_path: Path) -> None:
    """Spec §1.4 merge rule across corpus/*/: first ok row wins, in release order, then name."""
    other = "d" * 40
    for release, rows in {
        # v2_code2test comes first by RELEASE_ORDER although "v2_trace2code" < "zz" by name
        "v2_code2test": [
            {"repo": "o/r", "base_commit": COMMIT, "status": "missing_commit"},
            {"repo": "o/s", "base_commit": other, "status": "ok", "chunks_path": "x"},
        ],
        "v2_trace2code": [
            {"repo": "o/r", "base_commit": COMMIT, "status": "ok", "chunks_path": "x"},
            {"repo": "o/s", "base_commit": other, "status": "ok", "chunks_path": "y"},
        ],
        "aa_extra": [{"repo": "o/t", "base_commit": other, "status": "ok", "chunks_path": "z"}],
    }.items():
        folder = tmp_path / "corpus" / release
        write_jsonl(folder / "corpus_manifest.jsonl", rows)
        for row in rows:
            slug = str(row["repo"]).replace("/", "__")
            write_jsonl(folder / slug / f"{row['base_commit']}.chunks.jsonl", [])
    corpus = open_corpus(tmp_path)
    assert [m.parent.name for m in corpus.manifests] == [
        "v2_code2test",
        "v2_trace2code",
        "aa_extra",
    ]
    assert corpus.snapshot_ids() == [f"o/r@{COMMIT}", f"o/s@{other}", f"o/t@{other}"]
    # a later ok row replaces an earlier non-ok one; otherwise the first ok row wins
    assert corpus.entries[f"o/r@{COMMIT}"].manifest.parent.name == "v2_trace2code"
    assert corpus.entries[f"o/s@{other}"].chunks_path == "x"
    # chunk files resolve relative to the manifest that listed the snapshot
    assert corpus.chunk_path(f"o/t@{other}").parent.parent.name == "aa_extra"
    assert open_corpus(tmp_path, "v2_trace2code").manifests == [
        tmp_path / "corpus" / "v2_trace2code" / "corpus_manifest.jsonl"
    ]
    with pytest.raises(InputError, match="release id"):
        open_corpus(tmp_path, "R3")
    with pytest.raises(InputError, match=r"no corpus_manifest\.jsonl here"):
        open_corpus(tmp_path / "corpus" / "v2_code2test" / "o__r")


def test_empty_chunk_file_is_a_snapshot_without_files(tmp_path: Path) -> None:
    corpus_dir = make_release(tmp_path / "data", "x")
    (corpus_dir / "o__r" / f"{COMMIT}.chunks.jsonl").write_bytes(b"")
    assert open_corpus(corpus_dir).files(f"o/r@{COMMIT}").height == 0


def builder_release(root: Path, *, file_count: int | None) -> Path:
    """Like make_release, with builder-style rows (unique paths) and optionally file_count."""
    rows = chunk_rows("o/r", COMMIT)[:4]  # a.py, its symbol, b.md, é.txt
    base = {"repo": "o/r", "base_commit": COMMIT, "symbol": "", "start_line": 1, "kind": "file"}
    rows.append({**base, "chunk_id": "6", "path": 'q"t\\x.py', "end_line": 7, "text": "x\tyé"})
    corpus = root / "corpus" / "R"
    write_jsonl(corpus / "o__r" / f"{COMMIT}.chunks.jsonl", rows)
    manifest: dict[str, object] = {"repo": "o/r", "base_commit": COMMIT, "chunks_path": "x"}
    if file_count is not None:
        manifest["file_count"] = file_count
    write_jsonl(corpus / "corpus_manifest.jsonl", [manifest])
    return corpus


EXPECTED_FILES = [
    (f"o/r@{COMMIT}", "a.py", 6, 40, 13),
    (f"o/r@{COMMIT}", "b.md", 3, 2, 13),
    (f"o/r@{COMMIT}", "é.txt", 3, 1, 6),
    (f"o/r@{COMMIT}", 'q"t\\x.py', 3, 7, 5),  # x, y, é; the tab is escaped in the file
]


def corrupt_symbol_row(corpus_dir: Path) -> None:
    """Cut line 2 (a symbol row): only a full parse notices."""
    path = corpus_dir / "o__r" / f"{COMMIT}.chunks.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][:-5]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_fast_scan_equals_full_parse(tmp_path: Path) -> None:
    slow = open_corpus(builder_release(tmp_path / "slow", file_count=None))
    fast_dir = builder_release(tmp_path / "fast", file_count=4)
    assert slow.files(f"o/r@{COMMIT}").rows() == EXPECTED_FILES
    assert open_corpus(fast_dir).files(f"o/r@{COMMIT}").rows() == EXPECTED_FILES
    # Proof that the byte scan ran: it skips symbol rows, so a broken one goes unnoticed there,
    # while the full parse (no file_count to check the scan against) locates it.
    corrupt_symbol_row(fast_dir)
    assert open_corpus(fast_dir).files(f"o/r@{COMMIT}").rows() == EXPECTED_FILES
    corrupt_symbol_row(slow.root)
    with pytest.raises(InputError, match=r"chunks\.jsonl:2: malformed JSON"):
        open_corpus(slow.root).files(f"o/r@{COMMIT}")


def test_fast_scan_distrusted_when_file_count_differs(tmp_path: Path) -> None:
    corpus_dir = builder_release(tmp_path, file_count=5)
    corrupt_symbol_row(corpus_dir)
    with pytest.raises(InputError, match=r"chunks\.jsonl:2: malformed JSON"):
        open_corpus(corpus_dir).files(f"o/r@{COMMIT}")


def test_file_row_without_text_is_located_despite_file_count(tmp_path: Path) -> None:
    corpus_dir = builder_release(tmp_path, file_count=4)
    rows = [json.loads(line) for line in (corpus_dir / "o__r" / f"{COMMIT}.chunks.jsonl").open()]
    del rows[2]["text"]  # the b.md file row: the scan no longer finds 4 rows
    write_jsonl(corpus_dir / "o__r" / f"{COMMIT}.chunks.jsonl", rows)
    with pytest.raises(InputError, match=r"chunks\.jsonl:3: field 'text'"):
        open_corpus(corpus_dir).files(f"o/r@{COMMIT}")


def test_file_costs_reads_only_wanted_paths_and_caches_lookups(tmp_path: Path) -> None:
    corpus_dir = builder_release(tmp_path / "data", file_count=4)
    cache = tmp_path / "cache"
    sid = f"o/r@{COMMIT}"
    wanted = {sid: ["é.txt", 'q"t\\x.py', "gone.py", "é.txt"]}
    costs = open_corpus(corpus_dir, cache_dir=cache).file_costs(wanted)
    assert costs.rows() == [EXPECTED_FILES[3], EXPECTED_FILES[2]]  # sorted by path
    (entry,) = cache.glob("*.paths.parquet")  # a partial lookup table, not a FILES table
    partial = pl.read_parquet(entry).sort("path")
    assert partial["path"].to_list() == ["gone.py", 'q"t\\x.py', "é.txt"]
    assert partial["n_tokens"].to_list() == [None, 3, 3]
    # Known paths (also the absent one) come from the cache: prove it by editing the entry.
    partial.with_columns(n_tokens=pl.col("n_tokens") * 10).write_parquet(entry)
    again = open_corpus(corpus_dir, cache_dir=cache)
    assert again.file_costs(wanted)["n_tokens"].to_list() == [30, 30]
    # A new path is scanned for and merged into the same partial entry.
    assert again.file_costs({sid: ["a.py"]}).rows() == [EXPECTED_FILES[0]]
    assert pl.read_parquet(entry).height == 4
    # files() scans everything afresh and writes the complete table, used from then on.
    assert again.files(sid).rows() == EXPECTED_FILES
    assert len(list(cache.glob("*.parquet"))) == 2
    fresh = open_corpus(corpus_dir, cache_dir=cache)
    assert fresh.file_costs({sid: ["b.md", "gone.py"]}).rows() == [EXPECTED_FILES[1]]


def test_file_costs_of_unknown_snapshot(tmp_path: Path) -> None:
    corpus = open_corpus(builder_release(tmp_path, file_count=4))
    with pytest.raises(InputError, match="not in the corpus"):
        corpus.file_costs({f"o/gone@{COMMIT}": ["a.py"]})


def chunk_file(corpus_dir: Path) -> Path:
    return corpus_dir / "o__r" / f"{COMMIT}.chunks.jsonl"


def edit_line(corpus_dir: Path, index: int, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in line ``index`` (0-based) of the chunk file, byte for byte."""
    lines = chunk_file(corpus_dir).read_text(encoding="utf-8").splitlines()
    assert old in lines[index]
    lines[index] = lines[index].replace(old, new)
    chunk_file(corpus_dir).write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_fast_scan_needs_the_manifest_repo(tmp_path: Path) -> None:
    corpus_dir = builder_release(tmp_path, file_count=4)
    rows = [json.loads(line) for line in chunk_file(corpus_dir).open(encoding="utf-8")]
    write_jsonl(chunk_file(corpus_dir), [{**row, "repo": "o/other"} for row in rows])
    # Rows of another repo are not found by the scan (0 != 4), so the full parse reads them...
    assert open_corpus(corpus_dir).files(f"o/r@{COMMIT}").rows() == EXPECTED_FILES
    corrupt_symbol_row(corpus_dir)  # ...which the located error of a broken symbol row proves
    with pytest.raises(InputError, match=r"chunks\.jsonl:2: malformed JSON"):
        open_corpus(corpus_dir).files(f"o/r@{COMMIT}")


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        ('"end_line": 2,', '"end_line": 2.0,', r":3: field 'end_line': expected int, got 2.0"),
        ('"end_line": 2,', '"end_line": 02,', r":3: malformed JSON"),
        ('"path": "b.md"', '"path": "b\\x.md"', r":3: malformed JSON"),
        ('"text": "old', '"text": "\\q', r":3: malformed JSON"),
    ],
)
def test_fast_scan_hands_malformed_wanted_rows_to_the_full_parse(
    tmp_path: Path, old: str, new: str, error: str
) -> None:
    corpus_dir = builder_release(tmp_path, file_count=4)
    edit_line(corpus_dir, 2, old, new)  # the b.md file row
    with pytest.raises(InputError, match=error):
        open_corpus(corpus_dir).file_costs({f"o/r@{COMMIT}": ["b.md"]})


def test_fast_scan_skips_unwanted_rows_unread(tmp_path: Path) -> None:
    corpus_dir = builder_release(tmp_path, file_count=4)
    edit_line(corpus_dir, 2, '"end_line": 2,', '"end_line": 2.0,')  # b.md, not asked for
    costs = open_corpus(corpus_dir).file_costs({f"o/r@{COMMIT}": ["a.py", "gone.py"]})
    assert costs.rows() == [EXPECTED_FILES[0]]


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(blacklist_categories=["Cs"]), max_size=12))
def test_escape_is_the_upstream_serialisation(text: str) -> None:
    assert _escape(text) == dumps_upstream(text)[1:-1].encode("utf-8")
    assert _json_string(_escape(text)) == text


def test_path_with_a_lone_surrogate_is_simply_absent(tmp_path: Path) -> None:
    corpus = open_corpus(builder_release(tmp_path, file_count=4))
    assert corpus.file_costs({f"o/r@{COMMIT}": ["a\ud800.py", "a.py"]}).rows() == [
        EXPECTED_FILES[0]
    ]


def test_error_in_one_of_several_snapshots_is_located(tmp_path: Path) -> None:
    corpus_dir = tmp_path / "corpus" / "R"
    rows = chunk_rows("o/r", COMMIT)[:4]
    commits = ["a" * 40, "b" * 40, "d" * 40]
    for commit in commits:
        write_jsonl(corpus_dir / "o__r" / f"{commit}.chunks.jsonl", rows)
    manifest = [
        {"repo": "o/r", "base_commit": c, "chunks_path": "x", "file_count": 3} for c in commits
    ]
    write_jsonl(corpus_dir / "corpus_manifest.jsonl", manifest)
    bad = corpus_dir / "o__r" / f"{commits[1]}.chunks.jsonl"
    bad.write_text(bad.read_text(encoding="utf-8").replace('"end_line": 2,', '"end_line": 2.5,'))
    corpus = open_corpus(corpus_dir)
    with pytest.raises(InputError, match=r"b{40}\.chunks\.jsonl:3: field 'end_line'"):
        corpus.file_costs({f"o/r@{c}": ["b.md"] for c in commits})
    # The good snapshots scan fine on their own (the error is not a scan artefact).
    good = corpus.file_costs({f"o/r@{c}": ["b.md"] for c in commits[::2]})
    assert good["n_lines"].to_list() == [2, 2]


def test_mapped_files_are_unmapped_when_the_next_is_asked_for_or_the_caller_stops(
    tmp_path: Path,
) -> None:
    paths = [tmp_path / name for name in ("a", "b", "c", "d")]
    for path in paths:
        path.write_bytes(path.name.encode() * 5000)
    maps = mapped_files([*paths[:2], tmp_path / "missing", *paths[2:]])
    first = next(maps)
    assert first is not None and first[:3] == b"aaa"
    second = next(maps)
    assert first.closed and second is not None and second[-1:] == b"b"
    assert next(maps) is None  # cannot be mapped: the caller parses it instead
    third = next(maps)
    assert third is not None and third[:1] == b"c"
    maps.close()
    assert second.closed and third.closed
