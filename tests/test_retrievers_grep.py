"""Grep baseline (spec §7.6) and its arbwb-defined precise rules."""

from __future__ import annotations

import json
import math

import pytest
from test_retrievers_core import frame

from arbwb.retrievers import grep


def q(**fields: str) -> str:
    return json.dumps(fields, ensure_ascii=False, sort_keys=True)


def test_pattern_extraction_kinds_weights_and_order() -> None:
    text = q(
        failure_excerpt=(
            "TypeError in `cache_store.lookup`\nsee src/cache/store.py --verbose parseURL"
        ),
        command="pytest tests/test_cache.py",
    )
    got = [(p.term, p.kind, p.weight) for p in grep.extract_patterns(text)]
    assert got == [
        ("cache_store.lookup", "code", 12.0),
        ("tests/test_cache.py", "file_path", 18.0),
        ("src/cache/store.py", "file_path", 18.0),
        ("--verbose", "flag", 10.0),
        ("TypeError", "error", 7.0),
        ("parseURL", "identifier", 7.0),
    ]


def test_stop_terms_short_terms_and_dedupe() -> None:
    """JSON keys are stop terms; 1-char terms dropped; one pattern per lower-cased term."""
    text = q(failure_excerpt="x `a` HTTP_ERROR http_error `README.md` README.md")
    got = [(p.term, p.kind) for p in grep.extract_patterns(text)]
    assert got == [("README.md", "file_path"), ("HTTP_ERROR", "identifier")]


def test_expanded_adds_tokens_of_length_four() -> None:
    strict = grep.extract_patterns(q(text="fetch the widget"), "strict")
    expanded = grep.extract_patterns(q(text="fetch the widget"), "expanded")
    assert strict == []
    assert [(p.term, p.kind, p.weight) for p in expanded] == [
        ("fetch", "token", 1.0),
        ("widget", "token", 1.0),
    ]
    with pytest.raises(ValueError, match="'strict' or 'expanded'"):
        grep.extract_patterns("{}", "loose")  # type: ignore[arg-type]


def test_scores_only_matched_files_with_hand_computed_values() -> None:
    chunks = frame(
        [
            ("a", "src/cache/store.py", "file", "", "raise TypeError"),
            ("b", "src/cache/store.py", "symbol", "lookup", "TypeError here"),
            ("c", "tests/test_cache.py", "file", "", "import store"),
            ("d", "README.md", "file", "", "nothing"),
        ]
    )
    text = q(failure_excerpt="TypeError at src/cache/store.py")
    result = grep.search(grep.build_index(chunks), text)
    # the pattern must be a substring of the place: the full path hits only the path (x2.0);
    # chunk a = 18*2.0 + TypeError in text 7*1.0 = 43; chunk b ties (symbol 'lookup' no hit)
    assert result.ranking.files == ["src/cache/store.py"]
    row = result.file_rows[0]
    assert row["best_chunk_score"] == 43.0
    assert row["hit_chunks"] == 2
    assert row["matched_patterns"] == ["src/cache/store.py", "TypeError"]
    assert row["score"] == 36.0 + 7.0 + min(2.0, 0.25 * math.log(1 + 2))
    assert result.ranking.order.tolist() == [0]  # first best chunk represents the file
    # a basename pattern hits path (x2.0) and basename (x1.1); a symbol hit weighs 1.2
    by_base = grep.search(grep.build_index(chunks), q(text="store.py lookup_x cache_store"))
    assert by_base.file_rows[0]["best_chunk_score"] == pytest.approx(18 * (2.0 + 1.1), abs=1e-12)
    by_symbol = grep.search(grep.build_index(chunks), q(text="look_up lookup()"))
    assert [r["path"] for r in by_symbol.file_rows] == []
    symbol_chunks = frame([("s", "m.py", "symbol", "parse_url", "def parse_url(): pass")])
    hit = grep.search(grep.build_index(symbol_chunks), q(text="parse_url"))
    assert hit.file_rows[0]["best_chunk_score"] == pytest.approx(7 * (1.2 + 1.0), abs=1e-12)


def test_token_patterns_need_word_boundary() -> None:
    chunks = frame(
        [("a", "x.py", "file", "", "prefetching"), ("b", "y.py", "file", "", "fetch it")]
    )
    result = grep.search(grep.build_index(chunks, "expanded"), q(text="fetch"))
    assert result.ranking.files == ["y.py"]


def test_file_ties_sort_by_patterns_then_best_chunk_then_path() -> None:
    chunks = frame([("a", "b.py", "file", "", "FooBar"), ("b", "a.py", "file", "", "FooBar")])
    result = grep.search(grep.build_index(chunks), q(text="FooBar"))
    assert result.ranking.files == ["a.py", "b.py"]
    assert result.ranking.details["pattern_mode"] == "strict"
    assert result.ranking.details["patterns"] == [
        {"term": "FooBar", "kind": "identifier", "weight": 7.0}
    ]
