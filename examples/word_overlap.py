"""A tiny arbwb retriever: a chunk's score is how many distinct query words it contains.

Run it over a release (from the repository root, so ``examples`` is importable):

    arbwb rank --method examples.word_overlap:make --data data/demo --out runs/wo_details.jsonl
    arbwb report --data data/demo --method examples.word_overlap:make --out reports/wo

``--option min_length=4`` passes ``min_length`` to :func:`make`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def words(text: str, min_length: int) -> set[str]:
    """Lower-cased identifier-like words of at least ``min_length`` characters."""
    return {w.lower() for w in WORD.findall(text) if len(w) >= min_length}


class WordOverlap:
    """Scores chunks by the number of distinct query words found in their path and text."""

    name = "word_overlap"
    family = "lexical"

    def __init__(self, min_length: int = 3) -> None:
        self.min_length = min_length

    def index(self, chunks: pl.DataFrame) -> list[set[str]]:
        """Each chunk's word set (path and text), in chunk order."""
        paths, texts = chunks["path"].to_list(), chunks["text"].to_list()
        return [words(f"{p} {t}", self.min_length) for p, t in zip(paths, texts, strict=True)]

    def score(self, index: list[set[str]], query: str) -> Sequence[float]:
        """One score per chunk: distinct query words it contains."""
        wanted = words(query, self.min_length)
        return [float(len(wanted & chunk)) for chunk in index]


def make(min_length: int = 3) -> WordOverlap:
    """The factory ``arbwb rank --method examples.word_overlap:make`` calls."""
    return WordOverlap(min_length)
