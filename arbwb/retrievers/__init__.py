"""Baseline retrievers: lexical, BM25 (upstream and rank-bm25), grep, dense, RepoMap, RRF fusion.

One interface (:mod:`arbwb.retrievers.interface`), methods by name in
:mod:`arbwb.retrievers.registry`. This module stays import-free so the CLI starts fast.
"""

#: Every name ``arbwb rank --method`` accepts (the registry's names plus ``rrf``).
METHOD_NAMES: tuple[str, ...] = (
    "lexical",
    "bm25-arb",
    "bm25",
    "grep",
    "grep-expanded",
    "dense",
    "repomap",
    "rrf",
)
