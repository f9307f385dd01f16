"""Baseline retrievers: lexical, BM25 (upstream and rank-bm25), grep, dense, RepoMap, RRF fusion.

Every chunk retriever, built-in or plug-in, implements the one interface of
:mod:`arbwb.retrievers.interface` (``index(chunks)`` once per snapshot, then ``score``,
``rank_files`` or ``rank`` per query, plus optional attributes and runner hooks) and is bound
into the runner's :class:`~arbwb.retrievers.common.RetrievalMethod` (by name:
:func:`arbwb.retrievers.registry.get_method`). ``rrf`` fuses stored runs instead
(:mod:`arbwb.retrievers.fusion`). This module stays import-free so the CLI starts fast.
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
