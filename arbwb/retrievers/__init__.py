"""Baseline retrievers (lexical, BM25, grep, dense, RepoMap, RRF fusion) behind one interface;
this module stays import-free so the CLI starts fast."""

#: Every name ``arbwb rank --method`` accepts (the registry's names plus ``rrf``).
METHOD_NAMES = ("lexical", "bm25-arb", "bm25", "grep", "grep-expanded", "dense", "repomap", "rrf")
