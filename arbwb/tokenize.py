"""ARB's tokenizers: regex_code_tokenizer_v1 (BCY, spec §5.7) and the identifier splitter (§7.1),
the latter also on UTF-8 bytes with numpy (:func:`identifier_token_bytes`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    #: Token starts, token lengths and token bytes of a scanned text buffer.
    TokenBytes = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.uint8]]

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


def identifier_token_bytes(raw: npt.NDArray[np.uint8], heads: npt.NDArray[np.int64]) -> TokenBytes:
    """§7.1 token starts, token lengths and the lower-cased token bytes of ``raw``, whose texts
    start at ``heads`` (then its end), with few temporaries, reused in place (``out=``)."""
    import numpy as np

    n = len(raw)
    scratch = np.empty(n, dtype=np.uint8)
    upper, lower, alnum = (np.empty(n, dtype=bool) for _ in range(3))
    # One comparison per class: bytes below the class's first wrap around to large values.
    np.less(np.subtract(raw, 65, out=scratch), 26, out=upper)
    np.less(np.subtract(raw, 97, out=scratch), 26, out=lower)
    np.less(np.subtract(raw, 48, out=scratch), 10, out=alnum)
    np.logical_or(alnum, upper, out=alnum)
    np.logical_or(alnum, lower, out=alnum)
    # cut[j]: a token cannot continue across position j (between bytes j - 1 and j): an end,
    # a text start, a byte that is no letter or digit on either side, or a camel pair.
    camel = np.logical_and(lower[:-1], upper[1:], out=lower[:-1])
    joined = np.logical_and(alnum[:-1], alnum[1:], out=upper[:-1])
    cut = np.empty(n + 1, dtype=bool)
    np.logical_or(np.logical_not(joined, out=joined), camel, out=cut[1:n])
    cut[heads] = True
    cut[0] = True
    begins = np.flatnonzero(np.logical_and(cut[:n], alnum, out=upper))
    lengths = np.flatnonzero(np.logical_and(cut[1:], alnum, out=upper))
    lengths += 1
    lengths -= begins
    data = np.compress(alnum, raw)  # (faster than raw[alnum], the same bytes)
    return begins, lengths, np.bitwise_or(data, 0x20, out=data)


def count_tokens_expr(column: str | pl.Expr) -> pl.Expr:
    """regex_code_tokenizer_v1 counts of a string column with Polars' Rust regex (spec §5.7),
    equal to Python ``re``'s for every string (property-tested in tests/test_tokenize.py)."""
    expr = pl.col(column) if isinstance(column, str) else column
    return expr.str.count_matches(CODE_TOKEN_PATTERN_RUST).fill_null(0).cast(pl.Int64)
