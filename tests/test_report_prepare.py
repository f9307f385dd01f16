"""The report's cache warm-up: one read per snapshot fills the entries every notebook reads."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

from arbwb import cache
from arbwb.analysis import corpus_scale
from arbwb.errors import InputError
from arbwb.io import costcache
from arbwb.io.corpus import open_corpus
from arbwb.paths import DEMO_DIR
from arbwb.report import prepare


@pytest.mark.parametrize("in_process_bytes", [prepare.IN_PROCESS_BYTES, 0])
def test_every_snapshot_gets_its_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_process_bytes: int
) -> None:
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(prepare, "IN_PROCESS_BYTES", in_process_bytes)  # 0: two processes
    prepare.warm_cache(DEMO_DIR, jobs=2)
    corpus = open_corpus(DEMO_DIR)
    folder = cache.kind_dir(corpus_scale.KIND)
    assert corpus.cache_dir is not None and folder is not None
    for sid in corpus.snapshot_ids():
        source = corpus.source(sid)
        assert costcache.has_complete(corpus.cache_dir, source), sid
        assert cache.entry_path(folder, source[0], corpus_scale.VERSION, ".npz").is_file(), sid
    fresh = open_corpus(DEMO_DIR, use_cache=False)
    assert_frame_equal(
        corpus_scale.corpus_scale(corpus).snapshots, corpus_scale.corpus_scale(fresh).snapshots
    )
    for sid in corpus.snapshot_ids():
        assert_frame_equal(corpus.files(sid), fresh.files(sid))
        assert costcache.load_lines(corpus.cache_dir, corpus.source(sid)) is not None
        paths = [*fresh.files(sid)["path"].to_list()[::2], "not/there.py"]
        assert_frame_equal(corpus.line_counts(sid, paths), fresh.line_counts(sid, paths))


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the demo release, with the cache under ``tmp_path / "cache"``."""
    shutil.copytree(DEMO_DIR, tmp_path / "data")
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "data"


def test_a_broken_chunk_file_is_left_to_the_notebooks(data: Path) -> None:
    corpus = open_corpus(data)
    broken, *rest = corpus.snapshot_ids()
    corpus.chunk_path(broken).write_text('{"not": "a chunk row"\n', encoding="utf-8")
    prepare.warm_cache(data, jobs=1)  # no error: the notebooks report it in their sections
    assert corpus.cache_dir is not None
    assert not costcache.has_complete(corpus.cache_dir, corpus.source(broken))
    assert all(costcache.has_complete(corpus.cache_dir, corpus.source(s)) for s in rest)


def test_input_digests_are_kept_until_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "chunks.jsonl"
    source.write_text("one\n", encoding="utf-8")
    first = cache.sha256_of(source)
    assert first == hashlib.sha256(b"one\n").hexdigest()
    monkeypatch.setattr(cache, "sha256_file", lambda path: pytest.fail("read again"))
    assert cache.sha256_of(source) == first  # from its entry
    monkeypatch.undo()
    monkeypatch.setenv("ARBWB_CACHE_DIR", str(tmp_path / "cache"))
    source.write_text("two\n", encoding="utf-8")  # same size, same second: the digest differs
    assert cache.sha256_of(source) == hashlib.sha256(b"two\n").hexdigest()


def test_processes_that_cannot_start_leave_the_work_to_the_notebooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_processes(*args: object, **kwargs: object) -> None:
        raise OSError("no semaphores here")

    monkeypatch.setenv("ARBWB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(prepare, "IN_PROCESS_BYTES", 0)
    monkeypatch.setattr(prepare, "ProcessPoolExecutor", no_processes)
    prepare.warm_cache(DEMO_DIR, jobs=2)  # no error, nothing cached
    corpus = open_corpus(DEMO_DIR)
    assert corpus.cache_dir is not None
    assert not any(
        costcache.has_complete(corpus.cache_dir, corpus.source(s)) for s in corpus.snapshot_ids()
    )


def test_a_bad_manifest_is_left_to_the_notebooks(data: Path) -> None:
    manifest = next((data / "corpus").glob("*/corpus_manifest.jsonl"))
    manifest.write_text(manifest.read_text(encoding="utf-8") + '{"repo": ""}\n', encoding="utf-8")
    with pytest.raises(InputError):  # what each corpus notebook reports, located
        open_corpus(data)
    prepare.warm_cache(data, jobs=1)  # no error, so the report goes on to its notebooks
    assert not (data.parent / "cache" / corpus_scale.KIND).exists()
