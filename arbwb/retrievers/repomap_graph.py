"""The RepoMap file graph W of one snapshot (arb-repomap.md §4): import, symbol-reference and
source-test edges as ``add(u, v, w)`` arrays (no set iterated: no ``PYTHONHASHSEED``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.retrievers import repomap_paths as rp

if TYPE_CHECKING:
    import scipy.sparse as sp

    from arbwb.retrievers.repomap_paths import TextMemo

SCAN_LIMIT = 3000
MAX_DEFINERS = 8
LONG_PART = 8
SOURCE_TEST_FANOUT = 20
IMPORT_WEIGHT, REFERENCE_WEIGHT, SOURCE_TEST_WEIGHT = 1.5, 1.0, 2.0
#: ``add(u, v, w)`` calls of one pass as arrays (u, v, w), in call order.
Edges = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]


def with_parts(symbols: pl.DataFrame) -> pl.DataFrame:
    """``symbols`` with their parts (§3.2: distinct non-generic tokens of ≥ 3 characters,
    ascending), by one explode over all symbols (a per-list expression costs a thread hand-off)."""
    tok = pl.col("tok")
    rows = symbols.with_row_index("row")
    parts = (
        rows.select("row", "tok")
        .explode("tok")
        .filter(~tok.is_in(list(rp.GENERIC)) & (tok.str.len_chars() >= 3))
        .unique()
        .sort("row", "tok")
        .group_by("row", maintain_order=True)
        .agg(tok.alias("parts"))
    )
    joined = rows.join(parts, on="row", how="left", maintain_order="left")
    return joined.with_columns(pl.col("parts").fill_null([])).drop("row")


def _edges(u: Any, v: Any, weight: float) -> Edges:
    """One pass's edges from node id sequences and its weight."""
    us = np.asarray(u, dtype=np.int64)
    return us, np.asarray(v, dtype=np.int64), np.full(len(us), weight, dtype=np.float64)


def import_edges(paths: list[str], texts: list[str], memo: TextMemo) -> Edges:
    """Import edges (§4.3): each spec occurrence to each target ≠ the importer, resolved once
    per distinct (spec, folder) in Polars (string sort = code-point order)."""
    specs = memo.import_specs(texts)
    counts = [len(s) for s in specs]
    if not any(counts):
        return _edges([], [], IMPORT_WEIGHT)
    n = len(paths)
    nodes = pl.DataFrame(
        {
            "i": np.arange(n, dtype=np.int64),
            "path": pl.Series(paths, dtype=pl.String),
            "folder": pl.Series([rp.parent(p) for p in paths], dtype=pl.String),
        }
    )
    uses = pl.DataFrame(
        {
            "i": np.repeat(np.arange(n, dtype=np.int64), counts),
            "spec": pl.Series([x for found in specs for x in found], dtype=pl.String),
        }
    ).join(nodes.select("i", "folder"), on="i", how="left")
    pairs = uses.select("spec", "folder").unique(maintain_order=True).with_row_index("pair")
    known = memo.spec_keys
    keys: list[tuple[str, ...]] = []
    for spec, folder in pairs.select("spec", "folder").iter_rows():
        found = known.get((spec, folder))
        if found is None:  # resolution reads the importer's folder only
            importer = f"{folder}/-" if folder else "-"
            found = known[(spec, folder)] = tuple(rp.spec_keys(spec, importer))
        keys.append(found)
    wanted = pl.DataFrame(
        {
            "pair": np.repeat(np.arange(pairs.height, dtype=np.uint32), [len(k) for k in keys]),
            "key": pl.Series([k for found in keys for k in found], dtype=pl.String),
        }
    )
    facts = [memo.path_facts(p)[1] for p in paths]
    index = pl.DataFrame(
        {
            "node": np.repeat(np.arange(n, dtype=np.int64), [len(k) for k in facts]),
            "key": pl.Series([k for found in facts for k in found], dtype=pl.String),
        }
    )
    targets = (
        wanted.join(index, on="key")
        .select("pair", "node")
        .unique()
        .join(nodes.select(pl.col("i").alias("node"), "path"), on="node")
        .sort("pair", "path")
        .group_by("pair", maintain_order=True)
        .head(rp.MAX_TARGETS)
        .select("pair", "node")
    )
    edges = (
        uses.join(pairs, on=["spec", "folder"])
        .join(targets, on="pair")
        .filter(pl.col("i") != pl.col("node"))
    )
    return _edges(edges["i"].to_numpy(), edges["node"].to_numpy(), IMPORT_WEIGHT)


def _rank_within(groups: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """0-based position of each element inside its run of equal values (``groups`` sorted)."""
    if not len(groups):
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], groups[1:] != groups[:-1]]))
    lengths = np.diff(np.append(starts, len(groups)))
    return np.arange(len(groups), dtype=np.int64) - np.repeat(starts, lengths)


def _gather(
    indptr: npt.NDArray[np.int64], data: npt.NDArray[np.int64], rows: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """``data[indptr[r]:indptr[r+1]]`` for each r of ``rows``, concatenated in that order."""
    lengths = indptr[rows + 1] - indptr[rows]
    starts = np.repeat(indptr[rows] - np.cumsum(lengths) + lengths, lengths)
    return data[starts + np.arange(int(lengths.sum()), dtype=np.int64)]


def reference_edges(
    paths: list[str],
    kinds: npt.NDArray[np.int8],
    symbols: pl.DataFrame,
    terms: sp.csc_matrix,
    n_terms: npt.NDArray[np.int64],
    vocab: list[str],
    cap: int,
) -> tuple[Edges, bool]:
    """Symbol-reference edges (§4.4) in the canonical order; returns (edges, scan skipped)."""
    import scipy.sparse as sp

    searchable = kinds != rp.KIND_OTHER
    if int(searchable.sum()) > SCAN_LIMIT:
        return _edges([], [], REFERENCE_WEIGHT), True
    if cap <= 0:
        return _edges([], [], REFERENCE_WEIGHT), False
    defs = with_parts(symbols.filter(pl.Series(searchable[symbols["node"].to_numpy()])))
    definers = defs.group_by("key").agg(pl.col("node").unique().alias("definers"))
    first_part_len = pl.col("parts").list.first().str.len_chars()
    n_parts = pl.col("parts").list.len()
    eligible = (
        defs.join(definers, on="key")
        .filter(
            pl.col("definers").list.len() <= MAX_DEFINERS,
            n_parts >= 1,
            ~((n_parts == 1) & (first_part_len < LONG_PART)),
        )
        .sort("node", "symbol")
    )
    if eligible.is_empty():
        return _edges([], [], REFERENCE_WEIGHT), False
    keys = (
        eligible.group_by("key", maintain_order=True)
        .agg(n_parts.last().alias("p_size"))  # P(k): the last eligible definition (canonical)
        .sort("key")
        .with_row_index("k")
        .join(definers, on="key", maintain_order="left")
    )
    p_size = keys["p_size"].to_numpy().astype(np.int64)
    # Definers of each key in ascending path order, as CSR rows.
    path_rank = np.empty(len(paths), dtype=np.int64)
    path_rank[np.argsort(np.array(paths, dtype=object), kind="stable")] = np.arange(len(paths))
    definer_rows = keys.select("k", pl.col("definers")).explode("definers")
    k_of = definer_rows["k"].to_numpy().astype(np.int64)
    node_of = definer_rows["definers"].to_numpy().astype(np.int64)
    order = np.lexsort((path_rank[node_of], k_of))
    target_nodes = node_of[order]
    target_ptr = np.concatenate([[0], np.cumsum(np.bincount(k_of, minlength=keys.height))])
    # U(k): union of eligible parts, as a vocabulary x key incidence matrix.
    token_id = {t: i for i, t in enumerate(vocab)}
    union = (
        eligible.select("key", "parts")
        .explode("parts")
        .unique()
        .join(keys.select("key", "k"), on="key")
    )
    part_ids = np.array([token_id[t] for t in union["parts"].to_list()], dtype=np.int64)
    incidence = sp.csr_matrix(
        (np.ones(len(part_ids), dtype=np.int64), (part_ids, union["k"].to_numpy())),
        shape=(len(vocab), keys.height),
    )
    scanned = np.flatnonzero(searchable & (n_terms > 0))
    has_term = terms.tocsr()[scanned]
    has_term.data = np.ones(len(has_term.data), dtype=np.int64)
    matched = (has_term @ incidence).tocsr()  # m(k) per scanned file: exact integer counts
    # Every scanned file's keys, m desc then key asc (§4.4.5), cut to the 4·cap window: one
    # int64 sort key (file row, max m - m, key id), all parts non-negative and distinct.
    rows = np.repeat(np.arange(len(scanned), dtype=np.int64), np.diff(matched.indptr))
    cols = matched.indices.astype(np.int64)
    counts = matched.data.astype(np.int64)
    top = int(counts.max()) if len(counts) else 0
    order = np.argsort((rows * (top + 1) + (top - counts)) * keys.height + cols)
    rows, cols, counts = rows[order], cols[order], counts[order]
    keep = (_rank_within(rows) < 4 * cap) & (counts >= p_size[cols])
    files, cols = scanned[rows[keep]], cols[keep]
    # Targets of each qualifying key in ascending path order; the first cap new ones per file.
    targets = _gather(target_ptr, target_nodes, cols)
    files = np.repeat(files, target_ptr[cols + 1] - target_ptr[cols])
    other = targets != files
    files, targets = files[other], targets[other]
    _, first = np.unique(files * len(paths) + targets, return_index=True)
    first = np.sort(first)
    files, targets = files[first], targets[first]
    linked = _rank_within(files) < cap
    return _edges(files[linked], targets[linked], REFERENCE_WEIGHT), False


def source_test_edges(paths: list[str], kinds: npt.NDArray[np.int8], memo: TextMemo) -> Edges:
    """Source-test edges (§4.5): first 20 sources x first 20 tests (node order) of every key."""
    keyed = [
        (i, kind, key)
        for i, (path, kind) in enumerate(zip(paths, kinds.tolist(), strict=True))
        if kind != rp.KIND_OTHER
        for key in memo.path_facts(path)[2]
    ]
    schema = {"node": pl.Int64, "kind": pl.Int8, "key": pl.String}
    found = pl.DataFrame(keyed, schema=schema, orient="row")
    first = found.group_by("kind", "key", maintain_order=True).head(SOURCE_TEST_FANOUT)
    test = pl.col("kind") == rp.KIND_TEST
    pairs = first.filter(~test).join(first.filter(test), on="key")  # W sums in any order
    return _edges(pairs["node"].to_numpy(), pairs["node_right"].to_numpy(), SOURCE_TEST_WEIGHT)


def weight_matrix(n: int, passes: Sequence[Edges]) -> sp.csr_matrix:
    """Symmetric W from ``add(u, v, w)`` calls (§4.1): self-loops dropped, repeats summed
    (sums of 1.5, 1.0 and 2.0: exact in any order)."""
    import scipy.sparse as sp

    u = np.concatenate([p[0] for p in passes])
    v = np.concatenate([p[1] for p in passes])
    w = np.concatenate([p[2] for p in passes])
    kept = u != v
    u, v, w = u[kept], v[kept], w[kept]
    both = sp.coo_matrix(
        (np.concatenate([w, w]), (np.concatenate([u, v]), np.concatenate([v, u]))), shape=(n, n)
    )
    matrix = both.tocsr()
    matrix.sum_duplicates()
    matrix.sort_indices()
    return matrix
