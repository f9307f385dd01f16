"""Chunk files are checked against their manifest rows (issue 22): a cut chunk file is an
error naming the file and both counts in every reader, or, with the opt-in, a missing
snapshot named on stderr."""

from __future__ import annotations

import json
import mmap
import shutil
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from arbwb.analysis.corpus_scale import corpus_scale
from arbwb.analysis.granularity import line_counts
from arbwb.cli import main
from arbwb.errors import InputError
from arbwb.io.chunkscan import TokenCounter, count_rows, row_count, scan_upstream
from arbwb.io.corpus import IncompleteSnapshotWarning, open_corpus
from arbwb.metrics.budget import MissingSnapshotWarning
from arbwb.retrievers.termcache import TermSource

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
#: The demo snapshot cut here: manifest line 9, 217 rows (23 file rows), 16 samples.
REPO, COMMIT = "arbdemo/tallyho", "866e5ee198bda5be5b2ad221370a11b4514f1380"
SID = f"{REPO}@{COMMIT}"
LINE, ROWS, FILE_ROWS, SAMPLES = 9, 217, 23, 16
FIX = (
    "rebuild the snapshot or pass --allow-incomplete-snapshots (score, rank) to count it as missing"
)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A copy of the demo release (samples, corpus, the stored lexical run)."""
    root = tmp_path / "data"
    shutil.copytree(DEMO / "benchmark", root / "benchmark")
    shutil.copytree(DEMO / "corpus", root / "corpus")
    (root / "eval" / "demo").mkdir(parents=True)
    shutil.copy(DEMO / "eval" / "demo" / "lexical_details.jsonl", root / "eval" / "demo")
    return root


def chunk_file(data: Path) -> Path:
    return data / "corpus" / "demo" / "arbdemo__tallyho" / f"{COMMIT}.chunks.jsonl"


def manifest(data: Path) -> Path:
    return data / "corpus" / "demo" / "corpus_manifest.jsonl"


def cut(data: Path, keep: int) -> Path:
    """Keep the first ``keep`` rows of the snapshot's chunk file (a cut at a line boundary)."""
    path = chunk_file(data)
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == ROWS
    path.write_bytes(b"".join(lines[:keep]))
    return path


def mismatch(data: Path, found: int, what: str = "rows", name: str = "chunk_count") -> str:
    want = ROWS if name == "chunk_count" else FILE_ROWS
    return (
        f"{chunk_file(data)}: chunk file has {found} {what} but its manifest row "
        f"({manifest(data)}:{LINE}, field {name!r}) promises {want}"
    )


def score(data: Path, *extra: str) -> int:
    run = str(data / "eval" / "demo" / "lexical_details.jsonl")
    samples = str(data / "benchmark" / "demo")
    args = ["score", run, "--samples", samples, "--corpus", str(data), "--metrics", "bcy@300"]
    return main([*args, "--format", "csv", *extra])


def rank(data: Path, method: str, out: Path, *extra: str) -> int:
    return main(["rank", "--method", method, "--data", str(data), "--out", str(out), *extra])


def test_demo_manifest_rows_carry_both_counts() -> None:
    """The check is live on the demo: every ok row has chunk_count and file_count, matching."""
    corpus = open_corpus(DEMO)
    for sid in corpus.snapshot_ids():
        entry = corpus.entries[sid]
        path = corpus.chunk_path(sid)
        kinds = pl.read_ndjson(path)["kind"]
        assert (entry.chunk_count, entry.file_count) == (len(kinds), (kinds == "file").sum())
        assert count_rows(path) == entry.chunk_count
    assert corpus.entries[SID].line == LINE
    assert (corpus.entries[SID].chunk_count, corpus.entries[SID].file_count) == (ROWS, FILE_ROWS)


@pytest.mark.parametrize("command", ["score", "lexical", "grep", "bm25", "repomap"])
def test_cut_chunk_file_exits_2_naming_file_and_counts(
    data: Path, tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cut(data, 40)
    out = tmp_path / "out" / f"{command}_details.jsonl"
    code = score(data) if command == "score" else rank(data, command, out)
    err = capsys.readouterr().err
    assert code == 2
    name = "score" if command == "score" else "rank"
    assert f"arbwb {name}: error: {mismatch(data, 40)}; {FIX}\n" in err
    assert not out.exists()


def test_opt_in_counts_the_snapshot_missing_and_names_it(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut(data, 40)
    warning = f"warning: snapshot {SID} counted as missing: {mismatch(data, 40)}\n"
    with pytest.warns(
        MissingSnapshotWarning, match=r"^14 samples with gold \(14 \(run, sample\) pairs\) rank"
    ):
        assert score(data, "--allow-incomplete-snapshots") == 0
    captured = capsys.readouterr()
    assert f"arbwb score: {warning}" in captured.err
    # two of the snapshot's samples have no gold, so only 14 count as missing_snapshot
    assert "run 'lexical': 14 samples rank a snapshot the corpus lacks" in captured.err
    assert captured.out.startswith("run,grouping,group,metric,n,value\n")
    out = tmp_path / "out" / "lexical_details.jsonl"
    assert rank(data, "lexical", out, "--allow-incomplete-snapshots") == 0
    assert f"arbwb rank: {warning}" in capsys.readouterr().err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    missing = [r for r in rows if r.get("error") == "missing_corpus"]
    samples = pl.read_ndjson(data / "benchmark" / "demo" / "samples.jsonl")
    ids = samples.filter((pl.col("repo") == REPO) & (pl.col("base_commit") == COMMIT))["id"]
    assert len(ids) == SAMPLES
    assert sorted(r["sample_id"] for r in missing) == sorted(ids.to_list())


def test_opt_in_library_warns_and_drops_only_the_incomplete_snapshot(data: Path) -> None:
    cut(data, 40)
    with pytest.warns(IncompleteSnapshotWarning, match="1 snapshots counted as missing") as seen:
        corpus = open_corpus(data, on_mismatch="missing")
    assert str(seen[0].message).endswith(f"{SID} ({mismatch(data, 40)})")
    assert corpus.incomplete == {SID: mismatch(data, 40)}
    assert not corpus.has(SID) and len(corpus.snapshot_ids()) == 9


def test_cut_keeping_every_file_row_is_caught_by_the_byte_scan(data: Path) -> None:
    """Dropping the last (symbol) row keeps ``file_count``: the fast BCY scan counts rows."""
    path = cut(data, ROWS - 1)
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        found = scan_upstream(m, REPO, None, TokenCounter({}), (FILE_ROWS, None))
        assert found is not None and len(found) == FILE_ROWS  # the file rows alone agree
        assert scan_upstream(m, REPO, None, TokenCounter({}), (FILE_ROWS, ROWS)) is None
    corpus = open_corpus(data, use_cache=False)
    with pytest.raises(InputError) as caught:
        corpus.file_costs({SID: ["tallyho/__init__.py"]})
    assert str(caught.value) == f"{mismatch(data, ROWS - 1)}; {FIX}"


def test_file_rows_are_checked_too(data: Path) -> None:
    """A row count that agrees while the file rows do not (a file row turned symbol row)."""
    path = chunk_file(data)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"kind": "file"', '"kind": "symbol"', 1), encoding="utf-8")
    corpus = open_corpus(data, use_cache=False)
    expected = f"{mismatch(data, FILE_ROWS - 1, 'file rows', 'file_count')}; {FIX}"
    with pytest.raises(InputError) as caught:
        corpus.chunks(SID)
    assert str(caught.value) == expected
    with pytest.raises(InputError) as caught:
        corpus.files(SID)
    assert str(caught.value) == expected


def test_cached_costs_and_terms_from_the_complete_file_do_not_hide_a_cut(
    data: Path, tmp_path: Path
) -> None:
    """Entries cached from the complete file are keyed by its identity: the cut file is read
    again, and its count checked."""
    costs, terms = tmp_path / "costs", TermSource(tmp_path / "terms")
    complete = open_corpus(data, cache_dir=costs)
    assert complete.files(SID).height == FILE_ROWS
    assert terms.load(complete, SID).counts.shape[0] == ROWS
    assert terms.misses == 1
    cut(data, 40)
    corpus = open_corpus(data, cache_dir=costs)
    for read in (lambda: corpus.files(SID), lambda: terms.load(corpus, SID)):
        with pytest.raises(InputError) as caught:
            read()
        assert str(caught.value) == f"{mismatch(data, 40)}; {FIX}"


def promise_rows(data: Path, rows: int) -> None:
    """Make the snapshot's manifest row promise ``rows`` rows (the chunk file unchanged)."""
    lines = manifest(data).read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(lines[LINE - 1])
    lines[LINE - 1] = json.dumps(row | {"chunk_count": rows}) + "\n"
    manifest(data).write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize("reader", ["files", "line_counts", "terms", "score", "repomap"])
def test_warm_entries_do_not_vouch_for_a_changed_manifest_row(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str
) -> None:
    """Entries are keyed by the counts the manifest row promised when they were checked: a
    row that now promises other counts misses every entry, so a warm run refuses it as a cold
    run does (the chunk file is unchanged)."""
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out" / "repomap_details.jsonl"
    reads: dict[str, Callable[[], object]] = {
        "files": lambda: open_corpus(data).files(SID),
        "line_counts": lambda: open_corpus(data).line_counts(SID, ["README.md"]),
        "terms": lambda: TermSource(tmp_path / "terms").load(open_corpus(data), SID),
        "score": lambda: score(data),
        "repomap": lambda: rank(data, "repomap", out),
    }
    warm = reads[reader]()  # fills the cache under the row's present counts
    assert warm == 0 if reader in ("score", "repomap") else warm is not None
    promise_rows(data, ROWS + 1)
    want = (
        f"{chunk_file(data)}: chunk file has {ROWS} rows but its manifest row "
        f"({manifest(data)}:{LINE}, field 'chunk_count') promises {ROWS + 1}; {FIX}"
    )
    if reader in ("score", "repomap"):
        assert reads[reader]() == 2
    else:
        with pytest.raises(InputError) as caught:
            reads[reader]()
        assert str(caught.value) == want


def test_granularity_and_corpus_scale_check_the_count(data: Path) -> None:
    cut(data, 40)
    corpus = open_corpus(data, use_cache=False)
    with pytest.raises(InputError) as caught:
        line_counts(corpus, {SID: ["README.md"]})
    assert str(caught.value) == f"{mismatch(data, 40)}; {FIX}"
    scale = corpus_scale(corpus)
    assert scale.problems == [mismatch(data, 40)]
    row = scale.snapshots.filter(pl.col("snapshot_id") == SID).row(0, named=True)
    assert (row["status"], row["chunks"]) == ("incomplete", 40)
    assert scale.snapshots.filter(pl.col("status") == "ok").height == 9


def test_emptied_chunk_file_is_checked(data: Path) -> None:
    cut(data, 0)
    corpus = open_corpus(data, use_cache=False)
    for read in (lambda: corpus.chunks(SID), lambda: corpus.files(SID)):
        with pytest.raises(InputError) as caught:
            read()
        assert str(caught.value) == f"{mismatch(data, 0)}; {FIX}"


def test_rows_without_counts_in_the_manifest_are_not_checked(data: Path) -> None:
    """Older manifests without chunk_count/file_count: nothing to check against."""
    rows = [json.loads(line) for line in manifest(data).read_text().splitlines()]
    for row in rows:
        row.pop("chunk_count")
        row.pop("file_count")
    manifest(data).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    cut(data, 40)
    corpus = open_corpus(data, use_cache=False, on_mismatch="missing")
    assert corpus.incomplete == {} and corpus.has(SID)
    assert corpus.chunks(SID).height == 40


def test_blank_lines_are_no_rows(data: Path, tmp_path: Path) -> None:
    """Blank lines (which every reader skips) do not count: a good file stays good."""
    path = chunk_file(data)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"\n" + b"".join(lines[:5]) + b"  \n" + b"".join(lines[5:]) + b"\n")
    corpus = open_corpus(data, use_cache=False, on_mismatch="missing")
    assert corpus.incomplete == {}
    assert corpus.chunks(SID).height == ROWS
    assert corpus.files(SID).height == FILE_ROWS
    assert rank(data, "grep", tmp_path / "grep_details.jsonl") == 0


@pytest.mark.parametrize(
    ("raw", "rows"),
    [
        (b'{"a": 1}\n{"a": 2}\n', 2),
        (b'{"a": 1}\n{"a": 2}', 2),  # no final line break
        (b'\n{"a": 1}\n\n \n{"a": 2}\r\n', 2),  # blank and whitespace lines
        (b'{"a": 1}\n\t{"a": 2}\n', 2),  # a row after whitespace
        (b"\n\n", 0),
    ],
)
def test_row_count_counts_non_blank_lines(tmp_path: Path, raw: bytes, rows: int) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(raw)
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert row_count(m) == rows
    assert count_rows(path) == rows
