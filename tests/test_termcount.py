"""The term counter, the C module (:mod:`arbwb.native._termcount`) and its pure-Python fallback
alike,
against the §7.1 splitter and Arrow's numbering."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from arbwb.native import fallback as native_fallback
from arbwb.native.select import TermCounter
from arbwb.tokenize import split_identifiers


@pytest.fixture(params=["c", "python"])
def counter(request: pytest.FixtureRequest) -> TermCounter:
    """Each implementation in turn (the C one skips where it is not built)."""
    if request.param == "python":
        return native_fallback
    module: TermCounter = pytest.importorskip(
        "arbwb.native._termcount", reason="C module not built"
    )
    return module


def column(texts: list[str]) -> list[object]:
    """A column's (data, offsets) arguments."""
    encoded = [t.encode() for t in texts]
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return [b"".join(encoded), offsets]


def run(
    counter: TermCounter, *columns: list[str]
) -> tuple[list[Counter[str]], list[int], list[str]]:
    """Per-text counts, tokens per text and the vocabulary in id order, decoded."""
    found = counter.count(*(arg for texts in columns for arg in column(texts)))
    nnz, cols, freq, tokens, vocab_offsets, vocab_bytes = found
    ends = np.frombuffer(vocab_offsets, np.int64)
    vocab = [vocab_bytes[a:b].decode() for a, b in itertools.pairwise(ends)]
    ids, counts = np.frombuffer(cols, np.int32), np.frombuffer(freq, np.int32)
    bounds = np.concatenate([[0], np.cumsum(np.frombuffer(nnz, np.int64))])
    rows = [
        Counter({vocab[ids[k]]: int(counts[k]) for k in range(a, b)})
        for a, b in itertools.pairwise(bounds)
    ]
    return rows, np.frombuffer(tokens, np.int64).tolist(), vocab


def test_hand_vector_counts_and_first_appearance_ids(counter: TermCounter) -> None:
    rows, tokens, vocab = run(counter, ["getHTTPResponse get", "", "snake_case GET x\u212ay ÀbC"])
    assert rows == [
        Counter({"get": 2, "httpresponse": 1}),
        Counter(),
        Counter({"snake": 1, "case": 1, "get": 1, "x": 1, "y": 1, "b": 1, "c": 1}),
    ]
    assert tokens == [3, 0, 7]
    assert vocab == ["get", "httpresponse", "snake", "case", "x", "y", "b", "c"]


def test_long_tokens_and_a_growing_vocabulary_match_the_splitter_and_arrow(
    counter: TermCounter,
) -> None:
    """Tokens of 1-40 bytes (the hash takes 8 bytes at a time) and 20,000 distinct ones (the
    table grows many times): counts as the splitter's, ids as ``dictionary_encode``'s."""
    rng = random.Random(11)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    words = ["".join(rng.choices(letters, k=rng.randrange(1, 41))) for _ in range(20_000)]
    texts = [" ".join(rng.choices(words, k=rng.randrange(0, 60))) for _ in range(1500)]
    rows, tokens, vocab = run(counter, texts)
    split = [split_identifiers(t) for t in texts]
    assert rows == [Counter(s) for s in split]
    assert tokens == [len(s) for s in split]
    flat = pa.array([token for s in split for token in s], pa.large_binary())
    assert vocab == [v.decode() for v in pc.dictionary_encode(flat).dictionary.to_pylist()]


def test_offsets_outside_the_data_are_refused(counter: TermCounter) -> None:
    with pytest.raises(ValueError, match=r"column 0, offsets\[1\]"):
        counter.count(b"abc", np.array([0, 2, 9], dtype=np.int64))
    with pytest.raises(ValueError, match="column 0: expected one more offset"):
        counter.count(b"abc", np.zeros(0, dtype=np.int64))
    two = np.array([0, 1, 3], dtype=np.int64)
    with pytest.raises(ValueError, match="column 1: expected one more offset"):
        counter.count(b"abc", two, b"abc", np.array([0, 3], dtype=np.int64))
    with pytest.raises(TypeError, match="1 to 8 pairs"):
        counter.count(b"abc")


def test_columns_count_as_their_texts_joined_by_spaces(counter: TermCounter) -> None:
    """Several columns: row i's tokens are those of its texts one after the other (the §7.2
    document of path, symbol, kind and text without joining them)."""
    rng = random.Random(4)
    columns = [
        ["".join(rng.choices("aZ9_ .é", k=rng.randrange(0, 30))) for _ in range(300)]
        for _ in range(4)
    ]
    joined = [" ".join(texts) for texts in zip(*columns, strict=True)]
    assert run(counter, *columns) == run(
        counter, joined
    )  # counts, tokens and first-appearance ids alike


def test_every_text_length_around_the_64_byte_words(counter: TermCounter) -> None:
    """Tokens are found 64 bytes at a time: texts of 0-200 bytes, whose tokens and camel cuts
    fall on, before and after every word boundary (and the text's end), as the splitter."""
    rng = random.Random(3)
    texts = ["".join(rng.choices("aZ9_ é", k=n)) for n in range(201) for _ in range(5)]
    texts += ["a" * 64, "a" * 63 + "B", "a" * 64 + "B", "A" * 128, "x" * 127 + "Y"]
    rows, tokens, _ = run(counter, texts)
    split = [split_identifiers(t) for t in texts]
    assert rows == [Counter(s) for s in split]
    assert tokens == [len(s) for s in split]


def test_the_fallback_gives_the_c_modules_bytes() -> None:
    """Random bytes (non-ASCII, invalid UTF-8, camel pairs) in 1 to 8 columns, texts that
    start past the data's start, empty texts and empty batches: the same six results."""
    c_module = pytest.importorskip("arbwb.native._termcount", reason="C module not built")
    rng = random.Random(8)
    alphabet = b"aAzZ09_ .\x80\xc3\xa9\xff"
    for n_cols, n_texts in itertools.product(range(1, 9), [0, 1, 3, 40]):
        args: list[object] = []
        for _ in range(n_cols):
            skip = rng.randrange(3)
            lengths = [rng.choice([0, 1, 5, 70]) for _ in range(n_texts)]
            data = bytes(rng.choices(alphabet, k=skip + sum(lengths) + rng.randrange(3)))
            offsets = np.zeros(n_texts + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            args += [data, offsets + skip]
        assert native_fallback.count(*args) == c_module.count(*args), (n_cols, n_texts)
