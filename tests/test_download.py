"""Download, verify and extract releases from a local mirror laid out like the hub."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
import zstandard

from arbwb import cli
from arbwb.errors import InputError
from arbwb.release import download as dl

REV = "0123456789abcdef0123456789abcdef01234567"
RELEASE = "v2_edit2ripple"
FILES = {
    f"benchmark/{RELEASE}/samples.jsonl": b'{"id": "a"}\n{"id": "b"}\n',
    f"benchmark/{RELEASE}/manifest.json": b'{"total": 2}\n',
    f"corpus/{RELEASE}/corpus_manifest.jsonl": b'{"repo": "o/n", "base_commit": "c"}\n',
    f"eval/{RELEASE}/lexical_summary.json": b"{}\n",
}


def tar_bytes(files: dict[str, bytes], extra: list[tarfile.TarInfo] | None = None) -> bytes:
    """An uncompressed tar with directory entries, the given files and extra raw members."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for kind in ("benchmark", "corpus", "eval"):
            info = tarfile.TarInfo(f"{kind}/{RELEASE}")
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info in extra or []:
            tar.addfile(info)
    return buf.getvalue()


def publish(mirror: Path, archive: bytes, *, digest: str | None = None) -> Path:
    """Put an archive and its checksum file at MIRROR/REV/releases/R/ like the hub."""
    rel = dl.archive_path(RELEASE)
    target = mirror / REV / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(archive)
    digest = digest or hashlib.sha256(archive).hexdigest()
    (mirror / REV / f"{rel}.sha256").write_text(f"{digest.upper()}  {rel}\n")
    return target


def zst(data: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(data)


def assert_no_release(root: Path) -> None:
    """Nothing that looks like an extracted release, and no staging leftovers."""
    for kind in dl.RELEASE_KINDS:
        assert not (root / kind / RELEASE).exists()
    assert not list(root.glob(".arbwb-extract-*"))
    assert dl.read_receipt(root, RELEASE) is None


def fetch(mirror: Path) -> dl.FolderFetcher:
    return dl.FolderFetcher(mirror)


def test_archive_naming() -> None:
    assert dl.archive_path("v2_code2test") == (
        "releases/v2_code2test/agent_retrieval_bench_v2_code2test.tar.zst"
    )
    assert dl.archive_stem("agent_retrieval_bench") == "agent_retrieval_bench"


def test_download_extracts_and_writes_receipt(tmp_path: Path) -> None:
    archive = zst(tar_bytes(FILES))
    publish(tmp_path / "hub", archive)
    root = tmp_path / "data"
    receipt = dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert receipt["archive_sha256"] == hashlib.sha256(archive).hexdigest()
    assert receipt["file_count"] == 4
    assert receipt["bytes"] == sum(len(v) for v in FILES.values())
    assert receipt["revision"] == REV
    assert receipt["extracted"] == [f"benchmark/{RELEASE}", f"corpus/{RELEASE}", f"eval/{RELEASE}"]
    for name, data in FILES.items():
        assert (root / name).read_bytes() == data
    on_disk = json.loads(dl.receipt_path(root, RELEASE).read_text())
    assert on_disk == receipt
    assert not list(root.glob(".arbwb-extract-*"))
    assert not list(root.rglob("*.incomplete"))


def test_existing_release_refused_unless_forced(tmp_path: Path) -> None:
    publish(tmp_path / "hub", zst(tar_bytes(FILES)))
    root = tmp_path / "data"
    dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    (root / "reports" / RELEASE).mkdir(parents=True)
    with pytest.raises(InputError, match="--force"):
        dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    dl.download_release(
        RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"), force=True
    )
    assert not (root / "reports" / RELEASE).exists()  # forced: old folders replaced
    assert (root / f"benchmark/{RELEASE}/samples.jsonl").read_bytes() == FILES[
        f"benchmark/{RELEASE}/samples.jsonl"
    ]


def test_wrong_checksum_fails_and_removes_archive(tmp_path: Path) -> None:
    publish(tmp_path / "hub", zst(tar_bytes(FILES)), digest="ab" * 32)
    root = tmp_path / "data"
    with pytest.raises(InputError, match="SHA-256 mismatch") as err:
        dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert err.value.path is not None and err.value.path.endswith(".tar.zst")
    assert not (root / dl.archive_path(RELEASE)).exists()
    assert_no_release(root)


def test_corrupted_archive_fails_cleanly(tmp_path: Path) -> None:
    good = zst(tar_bytes(FILES))
    corrupt = good[: len(good) // 2] + bytes(b ^ 0xFF for b in good[len(good) // 2 :])
    publish(tmp_path / "hub", corrupt)  # checksum published for the corrupt bytes
    root = tmp_path / "data"
    with pytest.raises(InputError, match="corrupt or truncated"):
        dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert_no_release(root)


def test_truncated_tar_fails_cleanly(tmp_path: Path) -> None:
    raw = tar_bytes(FILES)
    publish(tmp_path / "hub", zst(raw[: 512 * 4 + 10]))  # cut inside the first file
    root = tmp_path / "data"
    with pytest.raises(InputError, match="corrupt or truncated"):
        dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert_no_release(root)


def test_truncated_compressed_stream_fails_cleanly(tmp_path: Path) -> None:
    archive = zst(tar_bytes(FILES))
    publish(tmp_path / "hub", archive[:-6])  # zstandard's stream_reader would hide this cut
    root = tmp_path / "data"
    with pytest.raises(InputError, match="ends inside a zstd frame"):
        dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert_no_release(root)


def test_multi_frame_archive_extracts(tmp_path: Path) -> None:
    raw = tar_bytes(FILES)
    publish(tmp_path / "hub", zst(raw[:1000]) + zst(raw[1000:]))
    root = tmp_path / "data"
    receipt = dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert receipt["file_count"] == 4


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info


@pytest.mark.parametrize(
    ("member", "message"),
    [
        (_member(f"benchmark/{RELEASE}/../../escape.txt"), "unsafe member name"),
        (_member("/etc/evil"), "unsafe member name"),
        (_member(f"benchmark/{RELEASE}/ln", tarfile.SYMTYPE, "../../../x"), "points outside"),
        (_member(f"benchmark/{RELEASE}/ln", tarfile.SYMTYPE, "/etc/passwd"), "points outside"),
        (_member(f"benchmark/{RELEASE}/hl", tarfile.LNKTYPE, "../outside"), "points outside"),
        (_member(f"benchmark/{RELEASE}/dev", tarfile.CHRTYPE), "device file"),
        (_member(f"benchmark/{RELEASE}/fifo", tarfile.FIFOTYPE), "device file"),
        (_member("benchmark/other_release/x.jsonl"), "lies outside"),
        (_member("README.md"), "lies outside"),
    ],
)
def test_unsafe_members_refused(tmp_path: Path, member: tarfile.TarInfo, message: str) -> None:
    publish(tmp_path / "hub", zst(tar_bytes(FILES, [member])))
    root = tmp_path / "data"
    with pytest.raises(InputError, match=message) as err:
        dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert err.value.field == member.name
    assert_no_release(root)
    assert not (tmp_path / "escape.txt").exists()


def test_link_inside_release_is_kept(tmp_path: Path) -> None:
    link = _member(f"benchmark/{RELEASE}/all.jsonl", tarfile.SYMTYPE, "samples.jsonl")
    publish(tmp_path / "hub", zst(tar_bytes(FILES, [link])))
    root = tmp_path / "data"
    dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert (root / f"benchmark/{RELEASE}/all.jsonl").read_bytes() == b'{"id": "a"}\n{"id": "b"}\n'


def test_interrupted_extraction_leaves_nothing_and_rerun_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish(tmp_path / "hub", zst(tar_bytes(FILES)))
    root = tmp_path / "data"
    real = tarfile.TarFile.extract
    calls = []

    def interrupted(tar: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, **kw: Any) -> None:
        calls.append(member.name)
        if len(calls) == 5:
            raise KeyboardInterrupt
        real(tar, member, dest, **kw)

    monkeypatch.setattr(tarfile.TarFile, "extract", interrupted)
    with pytest.raises(KeyboardInterrupt):
        dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert_no_release(root)
    monkeypatch.setattr(tarfile.TarFile, "extract", real)
    receipt = dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert receipt["file_count"] == 4


def test_killed_extraction_leftovers_are_cleared_on_rerun(tmp_path: Path) -> None:
    publish(tmp_path / "hub", zst(tar_bytes(FILES)))
    root = tmp_path / "data"
    stale = root / f".arbwb-extract-{RELEASE}-dead" / "benchmark" / RELEASE
    stale.mkdir(parents=True)
    dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert not stale.parent.parent.exists()


def test_interrupted_download_resumes(tmp_path: Path) -> None:
    archive = zst(tar_bytes(FILES))
    publish(tmp_path / "hub", archive)
    root = tmp_path / "data"
    partial = root / (dl.archive_path(RELEASE) + ".incomplete")
    partial.parent.mkdir(parents=True)
    partial.write_bytes(archive[:40])  # what an interrupted copy leaves behind
    assert dl.read_receipt(root, RELEASE) is None
    receipt = dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert (root / dl.archive_path(RELEASE)).read_bytes() == archive
    assert receipt["archive_sha256"] == hashlib.sha256(archive).hexdigest()
    assert not partial.exists()


def test_garbage_partial_download_is_caught_then_rerun_succeeds(tmp_path: Path) -> None:
    archive = zst(tar_bytes(FILES))
    publish(tmp_path / "hub", archive)
    root = tmp_path / "data"
    partial = root / (dl.archive_path(RELEASE) + ".incomplete")
    partial.parent.mkdir(parents=True)
    partial.write_bytes(b"\0" * 40)  # resumed onto bytes that were never the archive
    with pytest.raises(InputError, match="SHA-256 mismatch"):
        dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert_no_release(root)
    receipt = dl.download_release(RELEASE, root=root, revision=REV, fetcher=fetch(tmp_path / "hub"))
    assert receipt["file_count"] == 4


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "first line must be"),
        ("deadbeef releases/x", "not a hex SHA-256"),
        ("a" * 64 + "  releases/other/file.tar.zst", "checksum names"),
    ],
)
def test_bad_checksum_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "x.sha256"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        dl.parse_checksum(path, expected_archive=dl.archive_path(RELEASE))


def test_missing_revision_in_mirror(tmp_path: Path) -> None:
    publish(tmp_path / "hub", zst(tar_bytes(FILES)))
    with pytest.raises(InputError, match="no such file in the mirror"):
        dl.download_release(
            RELEASE, root=tmp_path / "d", revision="v9", fetcher=fetch(tmp_path / "hub")
        )


def test_cli_download_from_mirror(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    publish(tmp_path / "hub", zst(tar_bytes(FILES)))
    root = tmp_path / "data"
    argv = ["download", "--release", RELEASE, "--revision", REV, "--dir", str(root)]
    assert cli.main([*argv, "--mirror", str(tmp_path / "hub")]) == 0
    assert "4 files" in capsys.readouterr().out
    assert dl.read_receipt(root, RELEASE) is not None
    assert cli.main([*argv, "--mirror", str(tmp_path / "hub")]) == 2
    assert "--force" in capsys.readouterr().err


def test_hub_fetcher_turns_hub_errors_into_input_error(tmp_path: Path) -> None:
    pytest.importorskip("huggingface_hub")
    with (
        pytest.MonkeyPatch.context() as mp,
        pytest.raises(InputError, match="could not fetch") as err,
    ):
        mp.setenv("HF_HUB_OFFLINE", "1")
        dl.HubFetcher()("releases/nope/x.sha256", revision=REV, local_dir=tmp_path)
    assert err.value.path == "releases/nope/x.sha256"
