"""RepoMap index of one snapshot from all its chunk rows (arb-repomap.md §3-§4), cached as one
``.npz``; :func:`gather` only reads the memo, so it may run ahead on another thread."""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Callable, Container
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb import cache
from arbwb.retrievers import repomap_paths as rp
from arbwb.retrievers.repomap_graph import (
    import_edges,
    reference_edges,
    source_test_edges,
    weight_matrix,
)
from arbwb.retrievers.repomap_paths import PY_WHITESPACE, TextMemo, Tokenised
from arbwb.tokenize import token_lists

if TYPE_CHECKING:
    import scipy.sparse as sp

#: Bump when the saved arrays or any rule behind them change; old cache files are then ignored.
FORMAT_VERSION = "repomap-index-v4"
#: Query-score factor of a token by where the node has it (§5): path, symbol, content only.
PATH_FACTOR, SYMBOL_FACTOR, CONTENT_FACTOR = 3.0, 2.0, 1.0


@dataclass(frozen=True)
class RepoMapIndex:
    """Everything ranking needs from one snapshot, in node order (§3.1): ``terms[f, t]`` the §5
    factor of token t in node f, ``graph`` symmetric W, ``chunk_chars`` pseudo-chunk lengths."""

    paths: list[str]
    chunk_chars: npt.NDArray[np.int64]
    kinds: npt.NDArray[np.int8]
    vocab: list[str]
    terms: sp.csc_matrix
    n_terms: npt.NDArray[np.int64]
    idf: npt.NDArray[np.float64]
    graph: sp.csr_matrix
    stats: dict[str, Any]


def _nodes(chunks: pl.DataFrame) -> tuple[list[str], pl.DataFrame]:
    """Node paths in order of first appearance and the rows with their node id (§3.1)."""
    rows = chunks.select("path", "kind", "symbol", "text").filter(pl.col("path") != "")
    paths = rows["path"].unique(maintain_order=True)
    ids = pl.DataFrame({"path": paths, "node": np.arange(len(paths), dtype=np.int64)})
    return paths.to_list(), rows.join(ids, on="path", how="left", maintain_order="left")


def _texts(rows: pl.DataFrame, n: int) -> list[str]:
    """Node text: the first non-empty file-row text of the path, else ""."""
    first = (
        rows.filter(pl.col("kind") == "file", pl.col("text") != "")
        .group_by("node", maintain_order=True)
        .agg(pl.col("text").first())
    )
    nodes = pl.DataFrame({"node": np.arange(n, dtype=np.int64)})
    joined = nodes.join(first, on="node", how="left", maintain_order="left")
    return joined["text"].fill_null("").to_list()


def _symbols(rows: pl.DataFrame) -> pl.DataFrame:
    """Distinct informative (node, symbol) pairs with tokens and key (§3.2-3.3)."""
    generic = list(rp.GENERIC)
    pairs = (
        rows.select("node", pl.col("symbol").str.strip_chars(PY_WHITESPACE).alias("s"))
        .filter(pl.col("s") != "")
        .unique(["node", "s"], maintain_order=True)
    )
    key = pl.col("tok").list.join("").alias("key")
    informative = (
        (pl.col("key").str.len_chars() >= 4)
        & ~pl.col("key").is_in(generic)
        & ~pl.col("key").str.contains(r"^[0-9]+$")
    )
    return (
        pairs.with_columns(token_lists(pairs["s"]).alias("tok"))
        .with_columns(key)
        .filter(informative)
        .select("node", pl.col("s").alias("symbol"), "tok", "key")
    )


def _terms(
    paths: list[str],
    texts: list[str],
    symbols: pl.DataFrame,
    memo: TextMemo,
    tokenised: Tokenised | None = None,
) -> tuple[list[str], sp.csc_matrix, npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Vocabulary, factor matrix (a token's best place: path > symbol > content, §5), |TS| per
    node and IDF (§3.4-3.5); columns follow run-wide token ids."""
    import scipy.sparse as sp

    n = len(paths)
    distinct = token_lists(pl.Series(paths, dtype=pl.String)).list.unique(maintain_order=True)
    path_tok = (
        pl.DataFrame({"node": np.arange(n, dtype=np.int64), "tok": distinct})
        .explode("tok")
        .drop_nulls("tok")
    )
    sym = symbols.select("node", "tok").explode("tok").drop_nulls("tok")
    # Ids in the order content, path, symbol tokens (one join; the order numbers new tokens).
    content, ids = memo.content_tokens(texts, tokenised, pl.concat([path_tok["tok"], sym["tok"]]))
    path_ids, sym_ids = ids[: path_tok.height], ids[path_tok.height :]
    node = np.concatenate(
        [
            path_tok["node"].to_numpy().astype(np.int64),
            sym["node"].to_numpy().astype(np.int64),
            np.repeat(np.arange(n, dtype=np.int64), [len(x) for x in content]),
        ]
    )
    # One sort of (token, node, place) keys, place 0 path, 1 symbol, 2 content (the factor's
    # rank, best first): per (node, token) the first key has the highest factor, and the kept
    # keys come in CSC order (column = token id ascending, then node). Built in place.
    big = max(1, n)
    key = np.concatenate([path_ids, sym_ids, *content])
    key *= big
    key += node
    key *= 4
    key[len(path_ids) : len(path_ids) + len(sym_ids)] += 1
    key[len(path_ids) + len(sym_ids) :] += 2
    key.sort()
    cell = key >> 2
    first = np.empty(len(key), dtype=bool)
    first[:1] = True
    np.not_equal(cell[1:], cell[:-1], out=first[1:])
    factor = np.array([PATH_FACTOR, SYMBOL_FACTOR, CONTENT_FACTOR])[key[first] & 3]
    token, node = np.divmod(cell[first], big)
    starts = np.flatnonzero(np.concatenate([[True], token[1:] != token[:-1]])[: len(token)])
    used = token[starts]
    indptr = np.append(starts, len(token))
    matrix = sp.csc_matrix(
        (factor, node.astype(np.int32), indptr.astype(np.int32)), shape=(n, len(used))
    )
    n_terms = np.bincount(node, minlength=n).astype(np.int64)
    df, df_of = np.unique(np.diff(indptr), return_inverse=True)
    # idf(t) = ln((N + 1)/(df + 1)) + 1.0 with the C library log, token by token (§3.5).
    # Computed once per distinct df, then spread: the same doubles.
    per_df = np.array([math.log((big + 1) / (d + 1)) + 1.0 for d in df.tolist()])
    idf = per_df[df_of].astype(np.float64)
    return list(map(memo.words.__getitem__, used.tolist())), matrix, n_terms, idf


@dataclass(frozen=True)
class Gathered:
    """What :func:`gather` did of one snapshot's index (``tokenised`` may still be running)."""

    paths: list[str]
    texts: list[str]
    rows: pl.DataFrame
    tokenised: Future[Tokenised]


def gather(
    chunks: pl.DataFrame,
    memo: TextMemo,
    known: Container[str] = (),
    *,
    tokenise: Callable[[list[str]], Future[Tokenised]] | None = None,
) -> Gathered:
    """Nodes, texts, and the content tokens of the texts neither in the memo nor ``known``
    (``tokenise``: run that step elsewhere). Only reads the memo."""
    paths, rows = _nodes(chunks)
    texts = _texts(rows, len(paths))
    if tokenise is None:
        tokenised: Future[Tokenised] = Future()
        tokenised.set_result(memo.tokenise(texts, known))
    else:
        tokenised = tokenise(texts)
    return Gathered(paths, texts, rows.select("node", "symbol"), tokenised)


def assemble(gathered: Gathered, cap: int, memo: TextMemo) -> RepoMapIndex:
    """The index from a snapshot's :func:`gather` (§3-§4): symbols, path passes, terms, graph."""
    from concurrent.futures import ThreadPoolExecutor

    memo.trim()
    paths, texts = gathered.paths, gathered.texts
    n = len(paths)
    # Symbols (Polars) on a helper thread while this one does the path passes.
    with ThreadPoolExecutor(1, thread_name_prefix="arbwb-repomap-symbols") as helper:
        symbolising = helper.submit(_symbols, gathered.rows)
        kinds = np.array([memo.path_facts(p)[0] for p in paths], dtype=np.int8)
        imports = import_edges(paths, texts, memo)
        source_test = source_test_edges(paths, kinds, memo)
        symbols = symbolising.result()
    tokenised = gathered.tokenised.result()  # the last step that needs it
    vocab, terms, n_terms, idf = _terms(paths, texts, symbols, memo, tokenised)
    refs, skipped = reference_edges(paths, kinds, symbols, terms, n_terms, vocab, cap)
    graph = weight_matrix(n, [imports, refs, source_test])
    stats = {
        "file_count": n,
        "symbol_count": symbols.height,
        "edge_count": int(graph.nnz),
        "source_count": int((kinds == rp.KIND_SOURCE).sum()),
        "test_count": int((kinds == rp.KIND_TEST).sum()),
        "symbol_reference_scan_skipped": skipped,
    }
    chunk_chars = np.array([len(t or p) for p, t in zip(paths, texts, strict=True)], dtype=np.int64)
    return RepoMapIndex(paths, chunk_chars, kinds, vocab, terms, n_terms, idf, graph, stats)


def build_index(chunks: pl.DataFrame, cap: int = 80, memo: TextMemo | None = None) -> RepoMapIndex:
    """The RepoMap index of one snapshot's chunk rows (§3-§4); ``cap`` = refs per file."""
    memo = TextMemo() if memo is None else memo
    memo.trim()
    return assemble(gather(chunks, memo), cap, memo)


#: The index's arrays and sparse matrices as saved (a matrix as its three CSR/CSC arrays).
_ARRAYS = ("chunk_chars", "kinds", "n_terms", "idf")
_MATRICES, _PARTS = ("terms", "graph"), ("data", "indices", "indptr")


def save_index(index: RepoMapIndex, path: Path) -> bool:
    """Write the index to ``path`` as one ``.npz`` cache entry (strings as a JSON blob),
    atomically; False when the cache cannot be written (warned once, :func:`cache.store`)."""
    meta = {"version": FORMAT_VERSION} | {k: getattr(index, k) for k in ("paths", "vocab", "stats")}
    blob = np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)
    arrays = {"meta": blob} | {k: getattr(index, k) for k in _ARRAYS}
    for name in _MATRICES:
        arrays |= {f"{name}_{p}": getattr(getattr(index, name), p) for p in _PARTS}
    return cache.write_arrays(path, arrays)


def load_index(path: Path) -> RepoMapIndex | None:
    """The index saved at ``path``, or None when it is absent, unreadable or another format."""
    import scipy.sparse as sp

    try:
        with np.load(path, allow_pickle=False) as saved:
            arrays = {name: saved[name] for name in saved.files}
        meta = json.loads(arrays["meta"].tobytes().decode("utf-8"))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if not isinstance(meta, dict) or meta.get("version") != FORMAT_VERSION:
        return None
    n, n_vocab = len(meta["paths"]), len(meta["vocab"])
    terms, graph = (tuple(arrays[f"{name}_{p}"] for p in _PARTS) for name in _MATRICES)
    return RepoMapIndex(
        terms=sp.csc_matrix(terms, shape=(n, n_vocab)),
        graph=sp.csr_matrix(graph, shape=(n, n)),
        **{k: meta[k] for k in ("paths", "vocab", "stats")},
        **{k: arrays[k] for k in _ARRAYS},
    )
