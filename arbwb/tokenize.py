"""ARB's tokenizers: regex_code_tokenizer_v1 (BCY, spec §5.7) and the identifier splitter (§7.1),
the latter also over a Polars column (:func:`token_lists`)."""

from __future__ import annotations

import re

import polars as pl

#: The exact upstream pattern (Python ``re``, Unicode ``str``).
CODE_TOKEN_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^A-Za-z0-9_\s]"
#: The same token set for Rust's regex engine (Polars): Rust's ``\s`` lacks U+001C-U+001F,
#: which Python's ``\s`` includes, so they are excluded explicitly.
CODE_TOKEN_PATTERN_RUST = r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^A-Za-z0-9_\s\x1c-\x1f]"

_CODE_TOKEN_RE = re.compile(CODE_TOKEN_PATTERN)
_CAMEL_RE = re.compile(r"([a-z])([A-Z])")
_ALNUM_RE = re.compile(r"[A-Za-z0-9]+")


def count_code_tokens(text: str) -> int:
    """Number of regex_code_tokenizer_v1 tokens in ``text`` (0 for empty text)."""
    if not text:
        return 0
    return sum(1 for _ in _CODE_TOKEN_RE.finditer(text))


def split_identifiers(text: str) -> list[str]:
    """Identifier splitter of spec §7.1: split camelCase, keep ASCII alnum runs, lower-case.

    ``"getHTTPResponse v2Api snake_case"`` -> ``[get, httpresponse, v2api, snake, case]``.
    """
    return [m.lower() for m in _ALNUM_RE.findall(_CAMEL_RE.sub(r"\1 \2", text))]


def token_lists(texts: pl.Series) -> pl.Series:
    """Each text's §7.1 tokens in order (repeats kept; a null text has none), the steps of
    :func:`split_identifiers` in Polars (property-tested against it and the C counter)."""
    camel_split = texts.fill_null("").str.replace_all(_CAMEL_RE.pattern, "${1} ${2}")
    runs = camel_split.str.extract_all(_ALNUM_RE.pattern)
    return runs.list.eval(pl.element().str.to_lowercase())


def count_tokens_expr(column: str | pl.Expr) -> pl.Expr:
    """regex_code_tokenizer_v1 counts of a string column with Polars' Rust regex (spec §5.7),
    equal to Python ``re``'s for every string (property-tested in tests/test_tokenize.py)."""
    expr = pl.col(column) if isinstance(column, str) else column
    return expr.str.count_matches(CODE_TOKEN_PATTERN_RUST).fill_null(0).cast(pl.Int64)
