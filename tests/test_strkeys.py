"""String keys of the warm lexical/BM25 path: every look-up equals the plain Python one."""

from __future__ import annotations

import random

import numpy as np
import pytest

from arbwb.retrievers import strkeys
from arbwb.retrievers.strkeys import (
    Needles,
    SortedVocab,
    StringTable,
    codepoints,
    keys_of,
    substring_keys,
)

ALPHABET = "ab/_.Xé日İ\u212a\n"


def words(rng: random.Random, n: int, longest: int = 6) -> list[str]:
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(longest))) for _ in range(n)]


def test_keys_of_equals_keys_of_each_substring() -> None:
    """A string's key equals the key of the same text found inside a longer text."""
    rng = random.Random(3)
    for _ in range(200):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 30)))
        lengths = np.arange(1, len(text) + 1, dtype=np.int64)
        windows = substring_keys(codepoints(text), lengths)
        expected = keys_of(
            [text[i : i + n] for n in lengths.tolist() for i in range(len(text) - n + 1)]
        )
        assert windows.tolist() == expected.tolist()


def test_string_table_round_trips_any_text() -> None:
    strings = ["", "a\nb", "日本", "x" * 70, "\u212a"]
    table = StringTable.of(strings)
    assert table.to_list() == strings
    assert [table[i] for i in range(len(strings))] == strings
    assert table[1:3] == strings[1:3]
    assert len(table) == len(strings)


def few_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys cut to 3 bits: most strings collide, so only the text comparison can tell."""
    whole, windows = strkeys.keys_of, strkeys.substring_keys
    monkeypatch.setattr(strkeys, "keys_of", lambda s: whole(s) & np.uint64(7))
    monkeypatch.setattr(strkeys, "substring_keys", lambda p, n: windows(p, n) & np.uint64(7))


def test_sorted_vocab_equals_dict_lookup() -> None:
    """Column of every term (present or not) as a dict gives it (any characters: UTF-8 byte
    order is ``str`` order)."""
    rng = random.Random(5)
    terms = sorted(set(words(rng, 300)))
    vocab = SortedVocab(StringTable.of(terms))
    plain = {t: i for i, t in enumerate(terms)}
    queries = terms[::3] + words(rng, 200) + ["", "zzz"]
    assert vocab.columns(queries) == [plain.get(q) for q in queries]
    assert vocab.get("zzz") is None and "zzz" not in vocab
    assert vocab[terms[7]] == 7 and list(vocab) == terms and len(vocab) == len(terms)
    with pytest.raises(KeyError):
        vocab["zzz"]


@pytest.mark.parametrize("collide", [False, True])
def test_needles_equal_python_in(monkeypatch: pytest.MonkeyPatch, collide: bool) -> None:
    """``contained`` = ``[s in text for s in needles]``: empty needles, needles longer than the
    text, non-ASCII and case-folded text; with colliding keys every candidate is confirmed."""
    if collide:
        few_keys(monkeypatch)
    rng = random.Random(11)
    needles = [*words(rng, 400, longest=5), "", "x" * 50]
    built = Needles.of(needles)
    for _ in range(60):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 40))).lower()
        assert built.contained(text).tolist() == [s in text for s in needles]
