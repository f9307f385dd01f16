"""Vectorised §7.1 term counts: the identifier splitter run over UTF-8 bytes with numpy.

The splitter (spec §7.1: a space between ``[a-z][A-Z]``, then maximal ``[A-Za-z0-9]+`` runs,
lower-cased) is ASCII-only, so on UTF-8 bytes a token is a maximal run of ASCII letter/digit
bytes, cut where a lower-case letter meets an upper-case one; every other byte (punctuation,
whitespace, any byte of a non-ASCII character) separates tokens. Boundaries are found with a
few whole-array comparisons per batch of texts, the tokens' bytes are lower-cased into one
Arrow string array and hashed once (``dictionary_encode``), and per-text counts come from one
sort per batch. Exactly :func:`arbwb.tokenize.split_identifiers` (property-tested).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

#: Texts per batch: about a few MB of text, so the per-byte arrays stay in cache.
BATCH_ROWS = 2048


@dataclass(frozen=True)
class TermCounts:
    """Term counts of texts: ``counts[i, j]`` = occurrences of ``terms[j]`` in text i (CSR).

    ``terms`` is the local vocabulary in order of first occurrence.
    """

    counts: sp.csr_matrix
    terms: list[str]


def _byte_tokens(
    text: pa.LargeStringArray,
) -> tuple[npt.NDArray[np.int64], pa.LargeStringArray]:
    """Tokens per text (counts, in text order) and all tokens lower-cased, in order."""
    _, offsets_buf, data_buf = text.buffers()
    offsets = np.frombuffer(offsets_buf, np.int64, len(text) + 1, text.offset * 8)
    first = int(offsets[0])
    size = int(offsets[-1]) - first
    offsets = offsets - first
    if size == 0 or data_buf is None:
        empty = pa.array([], pa.large_string())
        return np.zeros(len(text), np.int64), empty
    data = np.frombuffer(data_buf, np.uint8, size, first)
    lower = (data - 97) < 26  # uint8 arithmetic wraps, so one comparison tests a range
    upper = (data - 65) < 26
    alnum = lower | upper
    alnum |= (data - 48) < 10
    edge = np.empty(size + 1, dtype=bool)  # a token boundary before byte i
    edge[0] = edge[size] = True
    np.not_equal(alnum[1:], alnum[:-1], out=edge[1:size])
    edge[1:size] |= lower[:-1] & upper[1:]  # camelCase cut
    edge[offsets] = True  # tokens never span two texts
    at = np.flatnonzero(edge)
    starts = at[:-1][alnum[at[:-1]]]
    ends = at[1:][alnum[at[1:] - 1]]
    lowered = data[alnum]
    lowered |= upper[alnum].view(np.uint8) << 5  # 'A'..'Z' + 32 = 'a'..'z'
    token_offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=token_offsets[1:])
    tokens = pa.LargeStringArray.from_buffers(
        len(starts), pa.py_buffer(token_offsets), pa.py_buffer(lowered)
    )
    per_text = np.diff(np.searchsorted(starts, offsets))
    return per_text, tokens


def count_terms(texts: pl.Series) -> TermCounts:
    """§7.1 term counts of every text (null counts as empty), as CSR over a local vocabulary."""
    arrow = texts.fill_null("").cast(pl.String).to_arrow()
    if arrow.type != pa.large_string():
        arrow = arrow.cast(pa.large_string())
    per_text: list[npt.NDArray[np.int64]] = []
    token_parts: list[pa.LargeStringArray] = []
    for start in range(0, len(arrow), BATCH_ROWS):
        counts, tokens = _byte_tokens(arrow.slice(start, BATCH_ROWS))
        per_text.append(counts)
        token_parts.append(tokens)
    n_texts = len(arrow)
    if not n_texts or not any(len(t) for t in token_parts):
        return TermCounts(sp.csr_matrix((n_texts, 0)), [])
    encoded = pc.dictionary_encode(pa.concat_arrays(token_parts))
    ids = np.asarray(encoded.indices, dtype=np.int64)
    terms: list[str] = encoded.dictionary.to_pylist()
    n_terms = len(terms)
    tokens_per_text = np.concatenate(per_text)
    rows = np.repeat(np.arange(n_texts, dtype=np.int64), tokens_per_text)
    keys = rows * n_terms + ids
    # one sort per batch of texts (rows ascend batch by batch, so the result stays sorted)
    bounds = np.concatenate([[0], np.cumsum([c.sum() for c in per_text])])
    uniq, freq = [], []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        u, f = np.unique(keys[lo:hi], return_counts=True)
        uniq.append(u)
        freq.append(f)
    key = np.concatenate(uniq)
    row_of = key // n_terms
    indptr = np.zeros(n_texts + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_of, minlength=n_texts), out=indptr[1:])
    matrix = sp.csr_matrix(
        (np.concatenate(freq).astype(np.float64), (key % n_terms).astype(np.int32), indptr),
        shape=(n_texts, n_terms),
    )
    return TermCounts(matrix, terms)
