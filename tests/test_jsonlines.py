"""The line scan, the C module (:mod:`arbwb.native._jsonlines`) and its fallback (which declines
every
file) alike: lines and special marks as the general reading finds them, and a scan only where
Polars reads every field whole."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest

from arbwb.errors import InputError
from arbwb.native import fallback as native_fallback
from arbwb.native import select as _native_select
from arbwb.native.select import LineScanner
from arbwb.retrievers import grep

STRINGS = (b"chunk_id", b"path", b"kind", b"symbol", b"text")
INTS = (b"start_line", b"end_line")
ROW = {
    "base_commit": "a" * 40,
    "chunk_id": "c1",
    "end_line": 12,
    "kind": "file",
    "path": "src/a.py",
    "repo": "o/r",
    "start_line": 1,
    "symbol": "",
    "text": 'def f():\n    return "x\\\\y" \u00e9\u65e5 \U0001f600',
}
LINE = json.dumps(ROW, sort_keys=True)


@pytest.fixture
def c_scanner() -> LineScanner:
    """The C module (skips where it is not built)."""
    module: LineScanner = pytest.importorskip(
        "arbwb.native._jsonlines", reason="C module not built"
    )
    return module


@pytest.fixture(params=["c", "python"])
def scanner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> LineScanner:
    """Each implementation in turn, also as the one :func:`grep.line_index` uses."""
    module: LineScanner = native_fallback
    if request.param == "c":
        module = request.getfixturevalue("c_scanner")
    monkeypatch.setattr(_native_select, "jsonlines", module)
    return module


def clean(scanner: LineScanner, text: str) -> bool:
    return scanner.scan(text.encode(), STRINGS, INTS) is not None


def polars_reads_whole(text: str) -> bool:
    """Polars' own check of the same columns: no error and no null."""
    schema = {c.decode(): pl.String for c in STRINGS} | {c.decode(): pl.Int64 for c in INTS}
    try:
        frame = pl.read_ndjson(text.encode(), schema=schema)
    except Exception:
        return False
    return frame.height > 0 and frame.null_count().sum_horizontal().item() == 0


def test_upstream_rows_are_clean(c_scanner: LineScanner) -> None:
    escaped = json.dumps(ROW, sort_keys=True, ensure_ascii=False)
    text = LINE + "\n" + escaped + "\r\n" + json.dumps(ROW | {"extra": "x", "n": -25})
    assert clean(c_scanner, text) and clean(c_scanner, text + "\n")
    assert polars_reads_whole(text)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (LINE + "\n\n" + LINE, "a blank line"),
        (LINE.replace('"kind": "file"', '"kind": null'), "a null field"),
        (LINE.replace('"kind": "file", ', ""), "a missing field"),
        (LINE.replace('"start_line": 1', '"start_line": "1"'), "a mistyped integer"),
        (LINE.replace('"start_line": 1', '"start_line": 1.0'), "a fraction"),
        (LINE.replace('"start_line": 1', '"start_line": 1234567890123456789'), "19 digits"),
        (LINE.replace('"path": "src/a.py"', '"path": 5'), "a number for a string"),
        (LINE.replace('"kind"', '"\\u006bind"'), "an escaped key"),
        (LINE.replace('"kind": "file"', '"kind": "f\\ud83d"'), "a lone high surrogate"),
        (LINE.replace('"kind": "file"', '"kind": "f\\ude00"'), "a lone low surrogate"),
        (LINE.replace('"kind": "file"', '"kind": "\\ud83d\\u0041"'), "a high, then no low"),
        (LINE.replace("}", ', "kind": "x"}'), "a repeated field"),
        (LINE.replace("}", ', "n": [1, -2.5e3, {"a": null}]}'), "neither string nor integer"),
        (LINE.replace("}", ', "n": 01}'), "a leading zero"),
        (LINE.replace("}", ', "n": [1,]}'), "a trailing comma"),
        (LINE.replace('"kind": "file"', '"kind": "a\\x"'), "a bad escape"),
        (LINE.replace('"kind": "file"', '"kind": "a\tb"'), "a raw control character"),
        (LINE[:-1], "a truncated row"),
        (LINE + " x", "text after the row"),
        ("[" + LINE + "]", "an array"),
    ],
)
def test_anything_unusual_is_left_to_polars(scanner: LineScanner, line: str, why: str) -> None:
    assert not clean(scanner, line), why


def test_clean_means_polars_reads_every_field_on_mutated_rows(c_scanner: LineScanner) -> None:
    """Random byte edits of real-shaped rows: whenever the C check says clean, Polars reads
    every checked field with no error and no null (the check only ever skips a parse)."""
    rng = random.Random(5)
    alphabet = '{}[]":,\\ 0123456789-+.eEtrufalsn\tx\u00e9'
    n_clean = 0
    for _ in range(4000):
        chars = list(LINE)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(chars))
            edit = rng.randrange(3)
            if edit == 0:
                del chars[at]
            elif edit == 1:
                chars.insert(at, rng.choice(alphabet))
            else:
                chars[at] = rng.choice(alphabet)
        text = "".join(chars)
        if clean(c_scanner, text):
            n_clean += 1
            assert polars_reads_whole(text), text
    assert n_clean > 100  # the property was exercised on many accepted rows


def test_lines_and_special_marks_equal_the_general_reading(
    scanner: LineScanner, tmp_path: Path
) -> None:
    """Random texts full of backslashes, slashes, quotes, U+0130, other non-ASCII and emoji,
    written with and without ASCII escapes: the scan's lines are :func:`grep.read_lines`'s
    and its special lines the regex's (a raw \\u, \\/ or U+0130 anywhere on the line)."""
    rng = random.Random(9)
    alphabet = ["a", "u", "/", "\\", '"', "\n", " ", "\u0130", "\u00e9", "\U0001f600", "\x7f"]
    rows = [
        ROW | {"text": "".join(rng.choices(alphabet, k=rng.randrange(0, 90)))} for _ in range(400)
    ]
    path = tmp_path / "c.chunks.jsonl"
    text = "".join(json.dumps(r, ensure_ascii=bool(i % 2)) + "\n" for i, r in enumerate(rows))
    path.write_text(text, encoding="utf-8")
    index, lines = grep.line_index(path), grep.read_lines(path)
    assert index is not None and lines is not None
    fast = scanner.scan(path.read_bytes(), STRINGS, INTS) is not None
    assert fast is (scanner is not native_fallback)  # the C module takes the fast path
    assert index.lines.to_list() == lines.to_list() and index.rows == len(rows)
    regex = "|".join(grep._regex_literal(m) for m in grep.SPECIAL_MARKS)
    want = lines.str.contains(regex).to_list()
    assert index.special.to_list() == want
    assert 50 < sum(want) < 400  # both kinds of line are many


def test_invalid_utf8_is_left_to_the_general_reading(scanner: LineScanner) -> None:
    for raw in (b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82"):
        line = LINE.encode().replace(b"src/a.py", b"src/" + raw)
        assert scanner.scan(line, STRINGS, INTS) is None, raw


def test_a_clean_file_skips_the_parse_in_c_and_a_bad_one_is_still_located(
    scanner: LineScanner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good, bad = tmp_path / "good.chunks.jsonl", tmp_path / "bad.chunks.jsonl"
    good.write_text((LINE + "\n") * 3)
    bad.write_text(
        LINE + "\n" + LINE + "\n" + LINE.replace('"start_line": 1', '"start_line": "1"') + "\n"
    )
    scans: list[Path] = []
    real_scan = pl.scan_ndjson
    monkeypatch.setattr(pl, "scan_ndjson", lambda p, **kw: scans.append(p) or real_scan(p, **kw))
    index = grep.line_index(good)
    assert index is not None and index.lines.len() == 3
    assert scans == ([] if scanner is not native_fallback else [good])
    scans.clear()
    with pytest.raises(InputError) as raised:
        grep.line_index(bad)
    assert scans == [bad]
    assert (raised.value.line, raised.value.field) == (3, "start_line")
