"""Grep's strict fast path (unparsed lines, a case-insensitive prefilter, exact matching of the
candidates) gives exactly what matching every parsed row gives (arb-grep §5-§6).

The reference below parses the whole chunk file with Polars and matches every row
(:func:`grep.build_index` + :func:`grep.search`, itself checked against GV1-GV16).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb import cache
from arbwb.errors import InputError
from arbwb.io import chunkscan
from arbwb.io.chunkscan import read_chunk_file
from arbwb.metrics import chunks as cm
from arbwb.retrievers import details as det
from arbwb.retrievers import grep
from arbwb.retrievers.common import CHUNK_COLUMNS

# Words whose lower-cases collide across scripts and escapes: Kelvin sign, dotted capital I,
# final sigma, sharp s, quotes and backslashes (escaped in JSON), tabs, ESC (a \\u escape).
WORDS = [
    "UserCache",
    "load_user",
    "KeyError",
    "Exception",
    "src/app.py",
    "app.py",
    "mod.rs",
    "--no-cache",
    "getValue",
    "HTTPServer",
    "\u212aelvin",
    "kelvin",
    "İstanbul",
    "istanbul",
    "i\u0307stanbul",
    "ΣΟΦΟΣ",
    "σοφος",
    "σοφοσ",
    "Straße",
    "STRASSE",
    "straße",
    "naïve",
    'say "hi"',
    "C:\\path\\n",
    "a\\b",
    "tab\there",
    "esc\x1b[31m",
    "e.g",
    "x",
    "ünïcode_name",
    "émoji🎉",
    "New\nLine",
    "CamelCase",
    "snake_case_id",
    "__init__",
    "ValueError",
    "\u0130D",
]
PATHS = [
    "src/app.py",
    "src/cache.py",
    "tests/test_app.py",
    "İ/ü.py",
    "lib/mod.rs",
    "docs/usage.md",
    "a/\u212a.py",
    'odd/"q".py',
    "odd/back\\slash.py",
    "",
]


#: Words that make a line special (always a candidate): U+0130 and ESC (a ``\u`` escape).
SPECIAL = {"İstanbul", "\u0130D", "esc\x1b[31m", "İ/ü.py"}


def chunk_rows(rng: random.Random, n: int, *, plain: bool = False) -> list[dict[str, Any]]:
    """Random upstream-shaped chunk rows (sorted keys) mixing the tricky words; ``plain``:
    none of the words that make a line special, so the prefilter alone decides."""
    words = [w for w in WORDS if not (plain and w in SPECIAL)]
    paths = [p for p in PATHS if not (plain and p in SPECIAL)]
    rows = []
    for i in range(n):
        path = rng.choice(paths)
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        rows.append(
            {
                "base_commit": "c1",
                "chunk_id": f"k{i}",
                "end_line": rng.randint(1, 50),
                "kind": rng.choice(["file", "symbol"]),
                "path": path,
                "repo": "o/r",
                "start_line": 1,
                "symbol": rng.choice(["", "UserCache", "load_user", "Σοφος", "\u212a", "get"]),
                "text": text,
            }
        )
    return rows


def write_chunks(
    path: Path, rows: list[dict[str, Any]], rng: random.Random, *, plain: bool = False
) -> None:
    """Upstream serialisation, with blank lines, CRLF and (unless ``plain``) some rows with
    ``\\u`` or ``\\/`` escapes."""
    lines = []
    odd = 0.0 if plain else 0.15
    for row in rows:
        line = json.dumps(row, ensure_ascii=rng.random() < odd, sort_keys=True)
        if rng.random() < odd:
            line = line.replace("/", "\\/")
        lines.append(line + ("\r\n" if rng.random() < 0.1 else "\n"))
        if rng.random() < 0.05:
            lines.append("\n")
    path.write_bytes("".join(lines).encode("utf-8"))


def query(rng: random.Random) -> str:
    """Evaluation text T (arb-spec §2.9) of a random query object."""
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
    spans = [f"`{rng.choice(WORDS)}`" for _ in range(rng.randint(0, 2))]
    value = {"failure_excerpt": " ".join(words + spans), "pr_title": rng.choice(WORDS)}
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def details(ranking: Any, table: cm.ChunkTable, gold: list[str]) -> dict[str, Any]:
    target = det.SampleTarget("s", "trace2code", "o/r", "c1", gold, [], [], [], None, None, False)
    return det.details_row(
        target, ranking, table, candidate_filter="all_files", ranker="grep", selective=False
    )


@pytest.mark.parametrize("seed", range(8))
def test_fast_path_equals_matching_every_parsed_row(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "c1.chunks.jsonl"
    plain = seed % 2 == 0
    write_chunks(path, chunk_rows(rng, 120, plain=plain), rng, plain=plain)
    chunks = read_chunk_file(path, list(CHUNK_COLUMNS))
    full = grep.build_index(chunks, "strict")
    lines = grep.line_index(path)
    assert lines is not None
    for _ in range(40):
        text = query(rng)
        want = grep.search(full, text).ranking
        got = grep.rank_sample(lines, text)
        grep.prepare_queries(lines, [text])  # as the runner's indexing thread does
        prepared = grep.rank_sample(lines, text)
        assert prepared.order.tolist() == got.order.tolist() and prepared.details == got.details
        assert got.table is not None or not got.files
        assert (got.files, got.file_scores, got.details) == (
            want.files,
            want.file_scores,
            want.details,
        )
        gold = [rng.choice(PATHS)]
        assert details(got, cm.EMPTY_TABLE, gold) == details(want, cm.chunk_table(chunks), gold)


def test_prefilter_matches_every_python_lower_case() -> None:
    """The premise of :func:`grep.prefilter_regex`: a character's Python lower-case, JSON
    escaped and matched with Unicode ``(?i)``, finds the character as upstream JSON writes it
    (all characters that change, final sigma, every character up to U+024F, quote and
    backslash); U+0130 lower-cases to two characters and marks its line special instead."""
    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000]
    changed = [c for c in chars if c.lower() != c]
    pairs = [(c, c.lower()) for c in changed + [chr(c) for c in range(0x20, 0x250)]]
    pairs = [(c, low) for c, low in pairs if c != "\u0130"]
    pairs += [("Σ", "ς"), ("ΑΣ", "ας")]
    frame = pl.DataFrame(
        {
            "written": [json.dumps(c, ensure_ascii=False)[1:-1] for c, _ in pairs],
            "regex": [grep.prefilter_regex(low) for _, low in pairs],
        }
    )
    found = frame.select(pl.col("written").str.contains(pl.col("regex"))).to_series()
    assert found.all(), frame.filter(~found).head()
    assert len("\u0130".lower()) == 2 and "\u0130" in grep.SPECIAL_MARKS
    assert grep.prefilter_regex("a\x1bb") is None


def test_control_character_term_makes_every_line_a_candidate(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    rows = [dict(chunk_rows(random.Random(1), 1)[0], text="x\x1by", path="p.py")]
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    index = grep.line_index(path)
    assert index is not None
    mask = grep.candidates(index, [grep.Pattern("x\x1by", "code", 12.0)])
    assert mask.to_list() == [True]


def test_lines_that_are_not_json_objects_take_the_full_parse(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"path": "a"}\nnot json\n')
    assert grep.read_lines(path) is None
    path.write_bytes(b'{"path": "\xff"}\n')
    assert grep.read_lines(path) is None
    path.write_text("\n\r\n")
    assert grep.read_lines(path) is None
    path.write_text("")
    assert grep.line_index(path) is None


@pytest.mark.parametrize("text", ["UserCache here", "nothing a query names"])
@pytest.mark.parametrize(
    ("spoil", "field"),
    [
        (lambda row: row.pop("symbol"), "symbol"),  # missing
        (lambda row: row.update(start_line="1"), "start_line"),  # mistyped
        (lambda row: row.pop("text"), "text"),  # the longest field, missing
    ],
)
def test_a_malformed_row_is_located_when_indexed(
    tmp_path: Path, text: str, spoil: Callable[[dict[str, Any]], object], field: str
) -> None:
    """Every row is checked, also one that no pattern could match (it is never a candidate)."""
    path = tmp_path / "c.jsonl"
    good = chunk_rows(random.Random(2), 3)
    bad = dict(good[0], text=text)
    spoil(bad)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in [*good, bad]))
    with pytest.raises(InputError) as caught:
        grep.line_index(path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 4, field)


def test_a_row_that_is_not_json_is_located_when_indexed(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    rows = [json.dumps(r, sort_keys=True) for r in chunk_rows(random.Random(2), 3)]
    rows.insert(1, rows[0][:-1] + ', "x": }')  # shaped like an object, but not JSON
    path.write_text("".join(r + "\n" for r in rows))
    with pytest.raises(InputError) as caught:
        grep.line_index(path)
    assert (caught.value.path, caught.value.line) == (str(path), 2)


def test_a_checked_file_is_marked_and_checked_again_only_once_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mark of a file whose rows passed the general check spares the next run that check;
    a rewritten file (other size, mtime or inode) is checked again and its bad row located; a
    file that fails leaves no mark."""
    path, marks = tmp_path / "c.jsonl", tmp_path / "checked"
    good = chunk_rows(random.Random(2), 3)
    # a blank line: the C line scan leaves the file to the general reading and its check
    path.write_text("\n" + "".join(json.dumps(r, sort_keys=True) + "\n" for r in good))
    scans: list[Path] = []
    real = chunkscan._checked

    def counted(path: Path, columns: list[str], read: Callable[[], pl.DataFrame]) -> pl.DataFrame:
        scans.append(path)
        return real(path, columns, read)

    monkeypatch.setattr(chunkscan, "_checked", counted)
    assert grep.line_index(path, marks) is not None
    assert grep.line_index(path, marks) is not None
    assert scans == [path]  # the second index trusted the mark
    assert len(_entries(marks)) == 1
    bad = dict(good[0], symbol=None)
    path.write_text("\n" + "".join(json.dumps(r, sort_keys=True) + "\n" for r in [*good, bad]))
    for _ in range(2):  # no mark is left for a failing file: it is checked every time
        with pytest.raises(InputError) as caught:
            grep.line_index(path, marks)
        assert (caught.value.line, caught.value.field) == (5, "symbol")
    assert scans == [path, path, path]
    assert len(_entries(marks)) == 1  # only the old version's mark


def _entries(folder: Path) -> list[Path]:
    """The cache entries in ``folder``, without the racy marks of files written just now."""
    return [path for path in folder.iterdir() if path.suffix != cache.RACY_MARK]


def test_a_term_holding_another_is_not_scanned(tmp_path: Path) -> None:
    """``src/app.py`` holds ``app.py``: every line with the first has the second, so only
    ``app.py`` is matched and the candidates are the lines of either."""
    path = tmp_path / "c.jsonl"
    rows = [dict(r, path="x.txt", text="no") for r in chunk_rows(random.Random(3), 4, plain=True)]
    rows[1]["text"], rows[2]["path"] = "see SRC/App.py", "lib/app.py"
    path.write_text("".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows))
    index = grep.line_index(path)
    assert index is not None
    patterns = [
        grep.Pattern("src/app.py", "file_path", 18.0),
        grep.Pattern("app.py", "file_path", 18.0),
    ]
    mask = grep.candidates(index, patterns)
    assert list(index.memo) == [r"(?i)(?:app\x{2e}py)"]
    assert mask.to_list() == [False, True, True, False]


def test_term_groups_keep_first_characters_distinct() -> None:
    terms = ["select", "sqlite_master", "create", "into", "dump.py", "table_info", "table_name"]
    groups = grep.term_groups(terms)
    assert sorted(t for g in groups for t in g) == sorted(terms)
    for group in groups:
        assert len(group) <= grep.GROUP_SIZE
        assert len({t[0] for t in group}) == len(group)
