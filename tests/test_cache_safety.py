"""The on-disk cache (issue 22): identity that metadata cannot fool, ``cache clear`` removing
only arbwb's entries, and a cache that cannot be written costing the cache, never the run."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from arbwb import cache, cli
from arbwb.io import chunkscan, costcache
from arbwb.io.corpus import open_corpus
from arbwb.paths import DEMO_DIR

LEXICAL_RUN = DEMO_DIR / "eval" / "demo" / "lexical_details.jsonl"
TEXT_START = b'"text": "'  # a chunk row's last field (sorted keys); the line ends '"}'
#: Stored demo numbers before any edit: BCY@300 of the lexical run, MRR of a fresh lexical run.
DEMO_BCY_300, DEMO_LEXICAL_MRR = 0.18243243243243243, 0.3034704379298973


@pytest.fixture
def release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the demo release (samples and corpus) with its own, empty cache folder."""
    root = tmp_path / "data"
    for part in ("benchmark", "corpus"):
        shutil.copytree(DEMO_DIR / part, root / part)
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "_WARNED", [])
    return root


def _chunk_files(root: Path) -> list[Path]:
    files = sorted(root.glob("corpus/*/*/*.chunks.jsonl"))
    assert len(files) == 10
    return files


def _text_spans(data: bytes) -> list[tuple[int, int]]:
    """Byte ranges of every row's JSON-escaped text (between ``"text": "`` and ``"}``)."""
    spans, at = [], 0
    for line in data.splitlines(keepends=True):
        start = line.index(TEXT_START) + len(TEXT_START)
        spans.append((at + start, at + line.rindex(b'"}')))
        at += len(line)
    return spans


def _join_words(data: bytes) -> bytes:
    """Every space inside a text becomes ``q``: words merge into new ones, so token counts fall
    and terms change; the size and the JSON stay valid."""
    out = bytearray(data)
    for start, end in _text_spans(data):
        out[start:end] = data[start:end].replace(b" ", b"q")
    return bytes(out)


def _rewrite_in_place(path: Path, edit: Callable[[bytes], bytes], *, changes: bool = True) -> None:
    """Rewrite ``path`` through its open inode (same size), then restore its mtime."""
    before = path.stat()
    data = edit(path.read_bytes())
    assert len(data) == before.st_size and (data != path.read_bytes() or not changes)
    with path.open("r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )


def _recreate(path: Path, edit: Callable[[bytes], bytes]) -> None:
    """Delete ``path`` and write a new file of the same size in its place, with its mtime."""
    before = path.stat()
    data = edit(path.read_bytes())
    path.unlink()
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def _bcy(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> float:
    """``arbwb score <demo lexical run> --metrics bcy@300`` on ``root``: the overall value."""
    argv = ["score", str(LEXICAL_RUN), "--samples", str(root / "benchmark" / "demo")]
    assert cli.main([*argv, "--corpus", str(root), "--metrics", "bcy@300", *extra]) == 0
    value: float = json.loads(capsys.readouterr().out)["runs"][0]["overall"]["bcy@300"]
    return value


def _lexical_mrr(root: Path, out: Path, *extra: str) -> float:
    """``arbwb rank --method lexical`` on ``root``: the run's MRR (from its summary)."""
    argv = ["rank", "--method", "lexical", "--data", str(root), "--out", str(out), *extra]
    assert cli.main(argv) == 0
    summary = json.loads(out.with_name("lexical_summary.json").read_text(encoding="utf-8"))
    value: float = summary["metrics"]["overall"]["MRR"]
    return value


@pytest.fixture(params=["racy", "stat"])
def window(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both halves of the key rule: ``racy`` (the fresh copy lies within the window, so its
    bytes are hashed) and ``stat`` (no window: the key's ctime alone must tell the edit)."""
    if request.param == "stat":
        monkeypatch.setattr(cache, "RACY_WINDOW_NS", 0)
    return str(request.param)


@pytest.mark.parametrize("change", [_rewrite_in_place, _recreate])
def test_score_bcy_after_same_size_edit_equals_no_cache(
    release: Path,
    window: str,
    change: Callable[[Path, Callable[[bytes], bytes]], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    old = _bcy(release, capsys)
    assert old == pytest.approx(DEMO_BCY_300)
    assert _bcy(release, capsys) == old  # warm: served from the entries just written
    for chunk_file in _chunk_files(release):
        change(chunk_file, _join_words)
    fresh = _bcy(release, capsys, "--no-cache")
    assert fresh != pytest.approx(old)
    assert _bcy(release, capsys) == fresh  # the cache sees the edit
    assert _bcy(release, capsys) == fresh  # and then serves the new entries


def test_rank_lexical_after_same_size_edit_equals_no_cache(
    release: Path, window: str, tmp_path: Path
) -> None:
    old = _lexical_mrr(release, tmp_path / "a" / "lexical_details.jsonl")
    assert old == pytest.approx(DEMO_LEXICAL_MRR)
    for chunk_file in _chunk_files(release):
        _rewrite_in_place(chunk_file, _join_words)
    fresh = _lexical_mrr(release, tmp_path / "b" / "lexical_details.jsonl", "--no-cache")
    assert fresh != pytest.approx(old)
    assert _lexical_mrr(release, tmp_path / "c" / "lexical_details.jsonl") == fresh


def test_racy_key_hashes_the_bytes_and_an_old_file_only_its_stat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's rule: with every stat field equal (a same-tick edit), a file changed within the
    window still gets a new key; a file older than the window is never read for its key."""
    path = tmp_path / "snap.chunks.jsonl"
    path.write_bytes(b'{"text": "abc"}\n')
    frozen = path.stat()
    monkeypatch.setattr(Path, "stat", lambda self, **kwargs: frozen)
    racy = cache.file_key(path, "v1")
    path.write_bytes(b'{"text": "abd"}\n')  # same size; the frozen stat hides the edit
    assert cache.file_key(path, "v1") != racy
    assert cache.file_key(path, "v1") != cache.file_key(path, "v2")

    def unread(source: Path) -> str:
        raise AssertionError(f"{source} was hashed")

    monkeypatch.setattr(cache, "content_digest", unread)
    later = max(frozen.st_mtime_ns, frozen.st_ctime_ns) + cache.RACY_WINDOW_NS + 1
    monkeypatch.setattr(cache.time, "time_ns", lambda: later)
    old = cache.file_key(path, "v1")
    assert old == cache.file_key(path, "v1") != racy


def test_future_mtime_counts_as_racy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "snap.chunks.jsonl"
    path.write_bytes(b"x\n")
    hour = 3600 * 10**9
    os.utime(path, ns=(time.time_ns() + hour, time.time_ns() + hour))
    hashed: list[Path] = []
    digest = cache.content_digest
    monkeypatch.setattr(cache, "content_digest", lambda p: hashed.append(p) or digest(p))
    now = path.stat().st_ctime_ns + hour // 2
    monkeypatch.setattr(cache.time, "time_ns", lambda: now)
    cache.file_key(path, "v1")  # ctime half an hour back, mtime half an hour ahead of "now"
    assert hashed == [path]


def test_entry_written_while_racy_is_served_once_the_file_settles(
    release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk file scored right after it was written: its entry is keyed with its bytes;
    once the file is older than the window, that entry moves to the stat key and is served
    without reading the chunk file."""
    corpus = open_corpus(release)
    sid = corpus.snapshot_ids()[0]
    first = corpus.files(sid)
    folder = cache.cache_root() / costcache.KIND
    (racy,) = (path for path in folder.iterdir() if path.suffix != cache.RACY_MARK)
    marks = {path.name for path in folder.glob(f"*{cache.RACY_MARK}")}  # complete + paths
    entry = racy.read_bytes()
    later = time.time_ns() + cache.RACY_WINDOW_NS + 10**9
    monkeypatch.setattr(cache.time, "time_ns", lambda: later)

    def unread(*args: Any) -> None:
        raise AssertionError("the chunk file was read")

    monkeypatch.setattr(chunkscan, "scan_upstream", unread)
    monkeypatch.setattr(chunkscan, "parse_file_rows", unread)
    assert_frame_equal(open_corpus(release).files(sid), first)
    chunk_file, promise = corpus.source(sid)  # entries are keyed by the manifest's counts too
    version = f"{costcache.VERSION}:{promise}"
    settled = cache.entry_path(folder, chunk_file, version, ".parquet")
    assert list(folder.iterdir()) == [settled]  # the racy mark is gone with the promotion
    assert settled.name != racy.name and settled.read_bytes() == entry
    assert settled.name + cache.RACY_MARK in marks


def test_a_settled_file_never_looked_up_while_racy_is_not_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release extracted minutes ago but first scored after the window (the benchmark's
    fresh corpus): its lookups are stat keys alone, with no read of the chunk bytes."""
    path = tmp_path / "snap.chunks.jsonl"
    path.write_bytes(b'{"text": "abc"}\n')
    later = max(path.stat().st_mtime_ns, path.stat().st_ctime_ns) + cache.RACY_WINDOW_NS + 1
    monkeypatch.setattr(cache.time, "time_ns", lambda: later)

    def unread(source: Path) -> str:
        raise AssertionError(f"{source} was hashed")

    monkeypatch.setattr(cache, "content_digest", unread)
    folder = tmp_path / "terms"
    folder.mkdir()
    entry = cache.entry_path(folder, path, "v1", ".npz")
    assert entry == folder / f"{cache.file_key(path, 'v1')}.npz"
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("lookup", ["files", "file_costs"])
def test_file_changed_while_read_is_not_saved_under_its_new_identity(
    release: Path, lookup: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chunk file changes after its costs were read and before they are saved: the entry
    keeps the identity the file had when looked up, so the edited file is never served them."""
    corpus = open_corpus(release, use_cache=False)
    sid = corpus.snapshot_ids()[0]
    chunk_file = corpus.chunk_path(sid)
    paths = corpus.files(sid)["path"].to_list()
    save = costcache.save

    def save_after_an_edit(*args: Any) -> None:
        if chunk_file.read_bytes() == original:
            _rewrite_in_place(chunk_file, _join_words)
        save(*args)

    original = chunk_file.read_bytes()
    monkeypatch.setattr(costcache, "save", save_after_an_edit)

    def costs(use_cache: bool) -> pl.DataFrame:
        opened = open_corpus(release, use_cache=use_cache)
        return opened.files(sid) if lookup == "files" else opened.file_costs({sid: paths})

    stale = costs(True)  # read before the edit
    assert chunk_file.read_bytes() != original
    fresh = costs(False)
    assert stale["n_tokens"].sum() > fresh["n_tokens"].sum()
    assert_frame_equal(costs(True), fresh)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_random_same_size_edits_never_serve_stale_costs(data: st.DataObject) -> None:
    """Random in-place byte edits inside texts (same size, mtime restored, JSON kept valid):
    the cached FILES table always equals the uncached one. Each example edits the original
    bytes; the examples share one cache folder, so earlier examples' entries could be served."""
    (snap,) = _PROPERTY
    n_edits = data.draw(st.integers(1, 4))
    at = data.draw(st.lists(st.sampled_from(snap.editable), min_size=n_edits, max_size=n_edits))
    to = data.draw(st.lists(st.sampled_from(b" aZ._("), min_size=n_edits, max_size=n_edits))
    edited = bytearray(snap.raw)
    for i, byte in zip(at, to, strict=True):
        edited[i] = byte
    _rewrite_in_place(snap.chunk_file, lambda _: bytes(edited), changes=False)
    uncached = open_corpus(snap.root, use_cache=False).files(snap.snapshot_id)
    for _ in ("cold or stale", "warm"):
        cached = open_corpus(snap.root, cache_dir=snap.cache).files(snap.snapshot_id)
        assert_frame_equal(cached, uncached)


@dataclass(frozen=True)
class _Snapshot:
    """The property test's chunk file, its original bytes and the positions it may edit."""

    root: Path
    snapshot_id: str
    chunk_file: Path
    raw: bytes
    editable: list[int]
    cache: Path


_PROPERTY: list[_Snapshot] = []


@pytest.fixture(autouse=True, scope="module")
def _property_release(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One small snapshot (the smallest demo chunk file) for the property test's examples,
    and the byte positions they may edit: letters and spaces inside texts, never within an
    escape (``\\n``, ``\\u00e9``)."""
    root = tmp_path_factory.mktemp("property") / "data"
    manifest = DEMO_DIR / "corpus" / "demo" / "corpus_manifest.jsonl"
    rows = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()]
    row = min(rows, key=lambda r: (DEMO_DIR / "corpus" / r["chunks_path"]).stat().st_size)
    target = root / "corpus" / "demo" / row["chunks_path"].removeprefix("demo/")
    target.parent.mkdir(parents=True)
    shutil.copyfile(DEMO_DIR / "corpus" / row["chunks_path"], target)
    (root / "corpus" / "demo" / "corpus_manifest.jsonl").write_text(json.dumps(row) + "\n")
    raw = target.read_bytes()
    editable = [
        i
        for start, end in _text_spans(raw)
        for i in range(start, end)
        if (raw[i : i + 1].isalpha() or raw[i] == ord(" ")) and b"\\" not in raw[i - 6 : i]
    ]
    sid = f"{row['repo']}@{row['base_commit']}"
    _PROPERTY[:] = [_Snapshot(root, sid, target, raw, editable, root.parent / "cache")]


# --- cache clear / info: only arbwb's entries -----------------------------------------------


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _cache(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(["cache", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def filled(release: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Path:
    """The cache root after a score and a lexical rank run, plus a user's own files in it."""
    _bcy(release, capsys)
    _lexical_mrr(release, tmp_path / "run" / "lexical_details.jsonl")
    capsys.readouterr()
    root = cache.cache_root()
    (root / "notes.txt").write_text("my notes\n")
    (root / "myproject").mkdir()
    (root / "myproject" / "results.csv").write_text("a,b\n1,2\n")
    (root / "terms" / "README.md").write_text("not an entry\n")
    return root


def test_first_write_tags_the_root(filled: Path) -> None:
    tag = (filled / cache.TAG_NAME).read_text(encoding="utf-8")
    assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55\n")
    assert "arbwb" in tag and cache.is_tagged(filled)


def test_clear_removes_only_entries_and_reports_what_it_left(
    filled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = cache.info(filled)
    assert before["kind"].to_list() == ["file-costs", "terms"]
    n_entries = int(before["entries"].sum())
    assert before.filter(kind="terms")["entries"].item() == 10  # one per chunk file
    code, out, _ = _cache(["clear"], capsys)
    assert code == 0
    assert out == (
        f"{filled}: removed {n_entries} files; left 3 files arbwb did not write: "
        "myproject/, notes.txt, terms/README.md\n"
    )
    assert _tree(filled) == {
        cache.TAG_NAME: (filled / cache.TAG_NAME).read_bytes(),
        "notes.txt": b"my notes\n",
        "myproject/results.csv": b"a,b\n1,2\n",
        "terms/README.md": b"not an entry\n",
    }


def test_clear_one_kind(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    costs = _tree(filled / "file-costs")
    code, out, _ = _cache(["clear", "--kind", "terms"], capsys)
    assert code == 0
    assert out.endswith("removed 10 files; left 1 file arbwb did not write: terms/README.md\n")
    assert _tree(filled / "file-costs") == costs
    assert sorted(_tree(filled / "terms")) == ["README.md"]


@pytest.mark.parametrize("kind", ["..", "/tmp/x", "myproject", "terms/.."])
def test_clear_refuses_unknown_kinds(
    filled: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tree(filled.parent)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["cache", "clear", "--kind", kind])
    assert exit_info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
    with pytest.raises(ValueError, match="known kinds: file-costs, terms, embeddings"):
        cache.clear(filled, kind)
    assert _tree(filled.parent) == before


def test_info_lists_known_kinds_and_counts_the_rest(
    filled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _cache(["info"], capsys)
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("| ") and "kind" not in line]
    assert [row.split("|")[1].strip() for row in rows] == ["file-costs", "terms"]
    assert "myproject" not in out
    assert out.splitlines()[-1] == "3 files arbwb did not write (cache clear leaves these)"


def test_clear_refuses_a_shared_untagged_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ARBWB_CACHE_DIR=~/.cache``-like: other tools' files and no arbwb tag: nothing goes,
    not even a file named like an arbwb entry."""
    shared = tmp_path / "dot-cache"
    (shared / "pip" / "http").mkdir(parents=True)
    (shared / "pip" / "http" / "x").write_text("pip\n")
    (shared / "terms").mkdir()
    (shared / "terms" / f"{'a' * 32}.npz").write_text("someone's\n")
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(shared))
    before = _tree(shared)
    code, _, err = _cache(["clear"], capsys)
    assert code == 2
    assert "no CACHEDIR.TAG written by arbwb" in err and "pip/" in err
    assert _tree(shared) == before
    assert cache.kind_dir("terms") == shared / "terms"
    assert not (shared / cache.TAG_NAME).exists()  # a shared folder is never claimed


def test_clear_an_untagged_folder_of_kinds_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cache from before the tag holds nothing but kind folders: cleared as before."""
    root = tmp_path / "old"
    (root / "checked").mkdir(parents=True)
    (root / "checked" / f"{'b' * 32}.ok").touch()
    (root / "embeddings" / ("c" * 16)).mkdir(parents=True)
    (root / "embeddings" / ("c" * 16) / "shard-12-000000.npz").write_bytes(b"npz")
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(root))
    code, out, _ = _cache(["clear"], capsys)
    assert (code, out) == (0, f"{root}: removed 2 files\n")
    assert sorted(os.listdir(root)) == []


# --- an unusable cache: one warning, the same numbers ---------------------------------------


def test_cache_dir_that_is_a_file_falls_back_with_one_warning(
    release: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file\n")
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(blocker))
    expected = _bcy(release, capsys, "--no-cache")
    argv = ["score", str(LEXICAL_RUN), "--samples", str(release / "benchmark" / "demo")]
    assert cli.main([*argv, "--corpus", str(release), "--metrics", "bcy@300"]) == 0
    out, err = capsys.readouterr()
    assert (
        json.loads(out)["runs"][0]["overall"]["bcy@300"] == expected == pytest.approx(DEMO_BCY_300)
    )
    assert err.count("\n") == 1
    assert err.startswith(f"arbwb: warning: cannot write the cache at {blocker}/file-costs")
    mrr = _lexical_mrr(release, tmp_path / "run" / "lexical_details.jsonl")
    assert mrr == pytest.approx(DEMO_LEXICAL_MRR)
    assert "warning" not in capsys.readouterr().err  # once per process
    assert blocker.read_text() == "a file\n"


def test_unwritable_entries_warn_once_and_report_false(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cache, "_WARNED", [])
    blocker = tmp_path / "file"
    blocker.write_text("x")
    frame = pl.DataFrame({"a": [1]})
    assert cache.write_frame(blocker / "e.parquet", frame) is False
    assert cache.write_arrays(blocker / "e.npz", {}) is False
    err = capsys.readouterr().err
    assert err.count("arbwb: warning: cannot write the cache") == 1
    assert cache.write_frame(tmp_path / "ok" / "e.parquet", frame) is True
    assert cache.read_frame(tmp_path / "ok" / "e.parquet") is not None


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_read_only_cache_folder_falls_back(
    release: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(locked))
    try:
        expected = _bcy(release, capsys, "--no-cache")
        assert _bcy(release, capsys) == expected
    finally:
        locked.chmod(0o755)


def test_array_entries_read_mapped_and_refuse_what_write_arrays_does_not_store(
    tmp_path: Path,
) -> None:
    import numpy as np

    arrays = {
        "counts": np.arange(7, dtype=np.uint16),
        "grid": np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)),
        "empty": np.zeros(0, dtype=np.int64),
        "text": np.frombuffer("naïve".encode(), dtype=np.uint8),
    }
    entry = tmp_path / "e.npz"
    assert cache.write_arrays(entry, arrays)
    found = cache.read_arrays(entry)
    assert found is not None and set(found) == set(arrays)
    for name, want in arrays.items():
        assert found[name].dtype == want.dtype and np.array_equal(found[name], want), name
        assert not found[name].flags.writeable  # views of the mapped file
    assert found["grid"].flags.f_contiguous and found["grid"][1, 2] == 5.0
    # a torn entry, a compressed one and a non-zip file are misses (recomputed), not errors
    entry.write_bytes(entry.read_bytes()[:-40])
    assert cache.read_arrays(entry) is None
    np.savez_compressed(tmp_path / "z.npz", **arrays)
    assert cache.read_arrays(tmp_path / "z.npz") is None
    (tmp_path / "x.npz").write_text("not a zip")
    assert cache.read_arrays(tmp_path / "x.npz") is None
    assert cache.read_arrays(tmp_path / "absent.npz") is None
