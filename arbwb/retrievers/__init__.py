"""Baseline retrievers: lexical, BM25 (upstream and rank-bm25), grep, dense, RepoMap, RRF fusion.

Chunk retrievers are :class:`~arbwb.retrievers.common.RetrievalMethod` values:
``build_index(chunks)`` once per snapshot, then ``rank_sample(index, query_text)`` per sample
(by name: :func:`arbwb.retrievers.registry.get_method`). ``rrf`` fuses stored runs instead
(:mod:`arbwb.retrievers.fusion`). Your own retriever follows the public protocol of
:mod:`arbwb.retrievers.plugin` (``index(chunks)``, ``score(index, query)``), which adapts it to a
``RetrievalMethod``. This module stays import-free so the CLI starts fast.
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
