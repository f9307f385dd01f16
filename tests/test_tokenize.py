"""regex_code_tokenizer_v1 (spec §5.7, TV1) and the Polars/Rust twin used for speed."""

from __future__ import annotations

import re

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbwb.tokenize import (
    CODE_TOKEN_PATTERN,
    count_code_tokens,
    count_tokens_expr,
    split_identifiers,
)

TV1 = [
    ("alpha beta\ngamma", 3),
    ("### gold.py\n", 6),
    ("def foo_bar(x1, 42):", 8),
    ("a+=b->c", 7),
    ("café 123abc", 4),
    ("...[truncated]", 6),
    ("### src/a_b.py\n", 8),
    ("", 0),
    ("   \n\t", 0),
    ("x.y_z=0x1F;", 7),
    ("日本語 ok", 4),
]


def polars_counts(texts: list[str]) -> list[int]:
    return (
        pl.DataFrame({"t": texts}, schema={"t": pl.String})
        .select(count_tokens_expr("t"))["t"]
        .to_list()
    )


@pytest.mark.parametrize(("text", "expected"), TV1)
def test_tv1_python(text: str, expected: int) -> None:
    assert count_code_tokens(text) == expected


def test_tv1_polars() -> None:
    assert polars_counts([t for t, _ in TV1]) == [n for _, n in TV1]


def test_tv1_token_split() -> None:
    assert re.findall(CODE_TOKEN_PATTERN, "café 123abc") == ["caf", "é", "123", "abc"]
    assert re.findall(CODE_TOKEN_PATTERN, "x.y_z=0x1F;") == ["x", ".", "y_z", "=", "0", "x1F", ";"]


def test_rust_whitespace_difference_is_handled() -> None:
    """U+001C-U+001F are whitespace for Python's \\s but not Rust's: they must not count."""
    texts = ["a\x1cb", "\x1d\x1e\x1f", "\x85x\u2028y\u3000z", "\xa0", "\u180e\u200b"]
    assert polars_counts(texts) == [count_code_tokens(t) for t in texts] == [2, 0, 3, 0, 2]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(), min_size=1, max_size=20))
def test_polars_equals_python_on_any_unicode(texts: list[str]) -> None:
    assert polars_counts(texts) == [count_code_tokens(t) for t in texts]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(max_codepoint=0x3100)), min_size=1, max_size=20))
def test_polars_equals_python_on_dense_low_planes(texts: list[str]) -> None:
    assert polars_counts(texts) == [count_code_tokens(t) for t in texts]


def test_every_code_point_alone() -> None:
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    assert polars_counts(chars) == [count_code_tokens(c) for c in chars]


def test_tv2_identifier_splitter() -> None:
    assert split_identifiers("getHTTPResponse v2Api snake_case") == [
        "get",
        "httpresponse",
        "v2api",
        "snake",
        "case",
    ]
    assert split_identifiers("FooBar.baz-qux_2") == ["foo", "bar", "baz", "qux", "2"]
    assert split_identifiers("ABCdef aB") == ["abcdef", "a", "b"]
    assert split_identifiers("é café") == ["caf"]
