"""``rank --resume`` resumes only what is unchanged (issue 22): the checkpoint holds every read
chunk file's identity, a changed one refuses the resume naming it, and a checkpoint line that
is no entry is a located error."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from arbwb.cli import main
from arbwb.io.corpus import open_corpus
from arbwb.io.samples import release_samples
from arbwb.retrievers.registry import get_method
from arbwb.retrievers.runner import checkpoint_path, run_method

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
COMMIT = "866e5ee198bda5be5b2ad221370a11b4514f1380"  # arbdemo/tallyho, 16 samples
N_SNAPSHOTS, DONE, N_ROWS = 10, 3, 95  # snapshots, samples checkpointed, details rows
FIX = "rerun without --resume to start over"


class Crash(RuntimeError):
    pass


@pytest.fixture
def data(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    shutil.copytree(DEMO / "benchmark", root / "benchmark")
    shutil.copytree(DEMO / "corpus", root / "corpus")
    return root


def chunk_file(data: Path) -> Path:
    return data / "corpus" / "demo" / "arbdemo__tallyho" / f"{COMMIT}.chunks.jsonl"


def interrupted(data: Path, out: Path) -> Path:
    """A lexical run over ``data`` stopped after ``DONE`` samples; its checkpoint."""

    def crash(i: int) -> None:
        del i
        if len(checkpoint_path(out).read_text().splitlines()) == 1 + DONE:
            raise Crash

    with pytest.raises(Crash):
        run_method(
            get_method("lexical"),
            release_samples(data, None),
            open_corpus(data),
            out,
            on_sample=crash,
        )
    return checkpoint_path(out)


def resume(data: Path, out: Path) -> int:
    args = ["rank", "--method", "lexical", "--data", str(data), "--out", str(out), "--resume"]
    return main(args)


def test_checkpoint_holds_each_chunk_file_identity_the_summary_none(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "lexical_details.jsonl"
    ckpt = interrupted(data, out)
    header = json.loads(ckpt.read_text().splitlines()[0])["fingerprint"]
    files = header["chunk_files"]
    assert len(files) == N_SNAPSHOTS
    st = chunk_file(data).stat()
    assert files[str(chunk_file(data))] == {
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "ino": st.st_ino,
        "dev": st.st_dev,
    }
    assert resume(data, out) == 0
    summary = json.loads(out.with_name("lexical_summary.json").read_text())["fingerprint"]
    assert summary == {k: v for k, v in header.items() if k != "chunk_files"}  # local: left out


def test_unchanged_corpus_resumes_byte_identically(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "resumed" / "lexical_details.jsonl"
    interrupted(data, out)
    assert resume(data, out) == 0
    fresh = tmp_path / "fresh" / "lexical_details.jsonl"
    assert main(["rank", "--method", "lexical", "--data", str(data), "--out", str(fresh)]) == 0
    assert out.read_bytes() == fresh.read_bytes()
    assert len(out.read_text().splitlines()) == N_ROWS and not checkpoint_path(out).exists()


def test_same_size_edit_with_mtime_restored_refuses_the_resume(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "lexical_details.jsonl"
    ckpt = interrupted(data, out)
    capsys.readouterr()  # the interrupted run's progress bar
    path = chunk_file(data)
    before = path.stat()
    raw = path.read_bytes()
    at = raw.index(b'"text": "') + len(b'"text": "')
    path.write_bytes(raw[:at] + (b"X" if raw[at : at + 1] != b"X" else b"Y") + raw[at + 1 :])
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert after.st_ctime_ns != before.st_ctime_ns
    assert resume(data, out) == 2
    err = capsys.readouterr().err
    change = f"{path} (ctime_ns {before.st_ctime_ns} -> {after.st_ctime_ns})"
    assert err == (
        f"arbwb rank: error: {ckpt}:1: field 'fingerprint': refusing to resume: chunk files "
        f"changed since the checkpoint: {change}; {FIX}\n"
    )
    assert not out.exists()


def test_cut_chunk_file_is_named_with_its_sizes(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "lexical_details.jsonl"
    interrupted(data, out)
    path = chunk_file(data)
    size = path.stat().st_size
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:40]))
    assert resume(data, out) == 2
    err = capsys.readouterr().err
    assert f"changed since the checkpoint: {path} (size {size} -> {path.stat().st_size}, " in err


def test_many_changed_files_name_three_and_count_the_rest(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "lexical_details.jsonl"
    interrupted(data, out)
    files = sorted(str(p) for p in (data / "corpus" / "demo").glob("*/*.chunks.jsonl"))
    assert len(files) == N_SNAPSHOTS
    for name in files:
        os.utime(name, ns=(0, 10**18))
    assert resume(data, out) == 2
    err = capsys.readouterr().err
    named = [f"{name} (mtime_ns " for name in files[:3]]
    assert all(part in err for part in named)
    assert files[3] not in err
    assert f"; and {N_SNAPSHOTS - 3} more; {FIX}\n" in err


def test_other_inputs_still_refused_by_name(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "lexical_details.jsonl"
    interrupted(data, out)
    args = ["rank", "--method", "bm25", "--data", str(data), "--out", str(out), "--resume"]
    assert main(args) == 2
    assert "different inputs (['method']); rerun without --resume" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("line", "field", "reason"),
    [
        ('{"x": 1}', "i", f"checkpoint line lacks this field; {FIX}"),
        (
            '{"i": "3", "row": null, "skip": "no_gold", "seconds": 0.0}',
            "i",
            f"checkpoint line has unexpected '3'; {FIX}",
        ),
        (
            '{"i": 3, "row": null, "skip": null}',
            "seconds",
            f"checkpoint line lacks this field; {FIX}",
        ),
        ("[1]", None, f"corrupt checkpoint line (not a JSON object); {FIX}"),
        ("{", None, f"corrupt checkpoint line (not a JSON object); {FIX}"),
    ],
)
def test_bad_checkpoint_line_is_located(
    data: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    line: str,
    field: str | None,
    reason: str,
) -> None:
    out = tmp_path / "lexical_details.jsonl"
    ckpt = interrupted(data, out)
    capsys.readouterr()  # the interrupted run's progress bar
    with ckpt.open("a") as handle:
        handle.write(line + "\n")
    assert resume(data, out) == 2
    where = f"{ckpt}:{DONE + 2}" + (f": field {field!r}" if field else "")
    assert capsys.readouterr().err == f"arbwb rank: error: {where}: {reason}\n"
