"""Located errors, upstream serialisation and atomic writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arbwb.errors import InputError
from arbwb.jsonio import (
    atomic_open,
    dumps_upstream,
    iter_jsonl,
    read_json,
    sha256_file,
    write_json,
    write_jsonl,
)


def test_iter_jsonl_skips_blank_lines_and_numbers_lines(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"a": 1}\n\n   \n{"a": 2}\n', encoding="utf-8")
    assert list(iter_jsonl(path)) == [(1, {"a": 1}), (4, {"a": 2})]


@pytest.mark.parametrize(
    ("content", "line", "needle"),
    [
        (b'{"a": 1}\n{"a": \n', 2, "malformed JSON"),
        (b'{"a": 1}\n[1, 2]\n', 2, "expected a JSON object"),
        (b'{"a": NaN}\n', 1, "NaN"),
        (b'{"a": "\xff"}\n', 1, "UTF-8"),
    ],
)
def test_iter_jsonl_names_file_and_line(
    tmp_path: Path, content: bytes, line: int, needle: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        list(iter_jsonl(path))
    assert info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert needle in str(info.value)


def test_empty_file_is_an_error_unless_allowed(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    with pytest.raises(InputError, match="empty file"):
        list(iter_jsonl(path))
    assert list(iter_jsonl(path, allow_empty=True)) == []


def test_missing_file_and_bad_json_document(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_json(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "a": 1,\n}\n')
    with pytest.raises(InputError) as info:
        read_json(bad)
    assert info.value.line == 3


def test_input_error_message_names_field() -> None:
    err = InputError("must be a string", path="s.jsonl", line=7, field="repo")
    assert str(err) == "s.jsonl:7: field 'repo': must be a string"


def test_dumps_upstream_matches_python_sorted_raw() -> None:
    obj = {"b": [1.5, None, True], "a": "x/y\\z", "é": "“q”\t\n"}
    assert dumps_upstream(obj) == '{"a": "x/y\\\\z", "b": [1.5, null, true], "é": "“q”\\t\\n"}'


def test_writes_are_upstream_formatted_and_atomic(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "s.json"
    write_json(out, {"b": 1, "a": 0.1})
    assert out.read_text() == '{\n  "a": 0.1,\n  "b": 1\n}\n'
    rows = tmp_path / "r.jsonl"
    write_jsonl(rows, [{"z": 1, "a": "é"}])
    assert rows.read_text(encoding="utf-8") == '{"a": "é", "z": 1}\n'
    assert len(sha256_file(rows)) == 64

    target = tmp_path / "keep.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_open(target) as handle:
        handle.write("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".keep")] == []
    assert json.loads(out.read_text()) == {"a": 0.1, "b": 1}
