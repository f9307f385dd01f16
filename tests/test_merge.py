"""Merged selective corpus manifest (spec §1.4) on hand-made subset manifests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arbwb import cli
from arbwb.errors import InputError
from arbwb.release.download import CURRENT_RELEASES
from arbwb.release.merge import (
    MERGED_RELEASE,
    manifest_path,
    merge_manifests,
    write_merged_manifest,
)

C1, C2, C3 = "1" * 40, "2" * 40, "3" * 40


def row(repo: str, commit: str, release: str, status: str = "ok", **extra: Any) -> dict[str, Any]:
    """A manifest row with deliberately unsorted keys (status before repo)."""
    path = f"data/corpus/{release}/{repo.replace('/', '__')}/{commit}.chunks.jsonl"
    return {"status": status, "repo": repo, "base_commit": commit, "chunks_path": path, **extra}


def write_manifests(root: Path, rows: dict[str, list[dict[str, Any]]]) -> None:
    for release, items in rows.items():
        path = manifest_path(root, release)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items))


def fixture_rows() -> dict[str, list[dict[str, Any]]]:
    code2test, comment, trace, edit, abst = CURRENT_RELEASES
    return {
        code2test: [row("z/last", C1, code2test), row("a/first", C2, code2test, "missing_commit")],
        comment: [row("a/first", C1, comment), row("a/first", C2, comment)],  # C2 ok replaces
        trace: [row("z/last", C1, trace, note="café")],  # later ok never replaces an ok row
        edit: [row("m/mid", C3, edit, "missing_commit")],
        abst: [row("m/mid", C3, abst, "missing_commit"), row("a/first", C2, abst)],
    }


def test_merge_rule_order_and_counts(tmp_path: Path) -> None:
    write_manifests(tmp_path, fixture_rows())
    merged = merge_manifests(tmp_path)
    keys = [(r["repo"], r["base_commit"], r["status"]) for r in merged.rows]
    assert keys == [
        ("a/first", C1, "ok"),
        ("a/first", C2, "ok"),
        ("m/mid", C3, "missing_commit"),
        ("z/last", C1, "ok"),
    ]
    assert merged.rows[1]["chunks_path"].startswith("data/corpus/v2_comment2context/")
    assert merged.rows[3]["chunks_path"].startswith("data/corpus/v2_code2test/")
    assert merged.inputs == dict(zip(CURRENT_RELEASES, [2, 2, 1, 1, 2], strict=True))
    assert merged.duplicates == 4


def test_written_rows_keep_key_order_and_raw_text(tmp_path: Path) -> None:
    rows = fixture_rows()
    rows["v2_code2test"][0]["note"] = "café"
    write_manifests(tmp_path, rows)
    out = manifest_path(tmp_path, MERGED_RELEASE)
    write_merged_manifest(merge_manifests(tmp_path), out)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4
    assert lines[3] == (
        '{"status": "ok", "repo": "z/last", "base_commit": "' + C1 + '", "chunks_path": '
        '"data/corpus/v2_code2test/z__last/' + C1 + '.chunks.jsonl", "note": "café"}'
    )


def test_missing_manifest_names_release(tmp_path: Path) -> None:
    rows = fixture_rows()
    del rows["v2_edit2ripple"]
    write_manifests(tmp_path, rows)
    with pytest.raises(InputError, match="missing corpus manifest of v2_edit2ripple"):
        merge_manifests(tmp_path)


@pytest.mark.parametrize(("field", "value"), [("repo", ""), ("base_commit", None), ("repo", 7)])
def test_bad_row_names_file_line_field(tmp_path: Path, field: str, value: Any) -> None:
    rows = fixture_rows()
    rows["v2_trace2code"].append({**row("q/q", C2, "v2_trace2code"), field: value})
    write_manifests(tmp_path, rows)
    with pytest.raises(InputError) as err:
        merge_manifests(tmp_path)
    assert err.value.path == str(manifest_path(tmp_path, "v2_trace2code"))
    assert (err.value.line, err.value.field) == (2, field)


def test_repeated_release_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="without repeats"):
        merge_manifests(tmp_path, ["v2_code2test", "v2_code2test"])


def test_cli_merge_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_manifests(tmp_path, fixture_rows())
    assert cli.main(["merge-corpus", "--dir", str(tmp_path)]) == 0
    assert "4 unique snapshots from 8 manifest rows (4 duplicates)" in capsys.readouterr().out
    out = manifest_path(tmp_path, MERGED_RELEASE)
    assert len(out.read_text().splitlines()) == 4
    assert cli.main(["merge-corpus", "--dir", str(tmp_path / "nowhere")]) == 2
    assert "corpus_manifest.jsonl" in capsys.readouterr().err
