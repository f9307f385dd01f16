"""RepoMap index of one snapshot (arb-repomap.md §3-§4): file nodes, token sets, IDF, file graph.

Built once per snapshot from **all** chunk rows (the candidate filter never touches it) and
saved to / loaded from a single ``.npz`` file (:func:`save_index`, :func:`load_index`; no
pickle, atomic write). Tokens are found on the texts' UTF-8 bytes with numpy
(:mod:`arbwb.retrievers.bytetokens`); the import-spec scan runs in Polars (the import pattern
matches alike in Rust and Python; texts where it might not go to Python). Building is split in
two (arbwb-defined): :func:`gather` reads nodes and texts and tokenises the new texts (reading
the memo only, so the next snapshot's may run on a second thread, its tokens on a third),
:func:`assemble` does the rest, symbols on a helper thread while this one does the path
passes. The symbol-reference scan is one sparse product
(matched parts per file and key, exact integers) plus a few numpy calls per file, in the
canonical order of §4.4.5: keys by matched-part count descending, then key ascending, and P(k)
from the last eligible definition in (node order, symbol ascending). Nothing iterates a Python
set, so the graph is the same under every ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Callable, Container, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.jsonio import atomic_open
from arbwb.retrievers import repomap_paths as rp
from arbwb.retrievers.bytetokens import distinct_text_tokens, distinct_tokens, token_lists

if TYPE_CHECKING:
    import scipy.sparse as sp

#: Bump when the saved arrays or any rule behind them change; old cache files are then ignored.
FORMAT_VERSION = "repomap-index-v4"
#: Python's ``str.strip()`` whitespace (Rust's differs on U+001C-U+001F), for Polars.
PY_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
CONTENT_PREFIX = 20000
SCAN_LIMIT = 3000
MAX_DEFINERS = 8
LONG_PART = 8
SOURCE_TEST_FANOUT = 20
IMPORT_WEIGHT, REFERENCE_WEIGHT, SOURCE_TEST_WEIGHT = 1.5, 1.0, 2.0
#: Query-score factor of a token by where the node has it (§5): path, symbol, content only.
PATH_FACTOR, SYMBOL_FACTOR, CONTENT_FACTOR = 3.0, 2.0, 1.0
#: ``add(u, v, w)`` calls of one pass as arrays (u, v, w), in call order.
Edges = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]
#: Texts :func:`import_specs_frame` leaves to Python: a ``str.splitlines`` line boundary other
#: than ``\n``, or U+001F (whitespace to Python's ``\s`` and ``str.strip``, not to Rust's ``\s``).
_PYTHON_ONLY = "[\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029]"


@dataclass(frozen=True)
class RepoMapIndex:
    """Everything ranking needs from one snapshot, nodes in node order (§3.1).

    ``terms[f, t]`` is the query-score factor of token t in node f (3.0 path token, 2.0 symbol
    token, 1.0 content token; absent = not in TS(f)); ``n_terms`` = |TS(f)|; ``graph`` = the
    symmetric weights W (CSR, ascending columns); ``stats`` = §4.6. ``chunk_chars`` is the
    length in code points of each node's pseudo-chunk text (§9: the node text, or its path
    when that is empty), all the details rows need of the texts.
    """

    paths: list[str]
    chunk_chars: npt.NDArray[np.int64]
    kinds: npt.NDArray[np.int8]
    vocab: list[str]
    terms: sp.csc_matrix
    n_terms: npt.NDArray[np.int64]
    idf: npt.NDArray[np.float64]
    graph: sp.csr_matrix
    stats: dict[str, Any]


def content_tokens_of(texts: list[str]) -> pl.Series:
    """Content tokens of each text (§3.4): its distinct identifier-splitter tokens of the first
    20,000 characters, in order of first appearance (found on the bytes, :mod:`bytetokens`)."""
    prefixes = [t[:CONTENT_PREFIX] for t in texts]  # code points, as the spec counts
    return distinct_text_tokens(prefixes)


def import_specs_frame(texts: pl.DataFrame) -> pl.DataFrame:
    """(i, specs) of (i, text) rows with only ``\\n`` breaks and no U+001F (§4.3.1 in Polars).

    Same steps as :func:`rp.import_specs`: first 2,000 lines, lines holding an import word,
    stripped, comment prefixes skipped, every match of the import pattern in order (Rust's
    leftmost-first = Python's), its first non-empty group, first 200 per text. Rows without
    specs are absent.
    """
    line = pl.col("line")
    groups = pl.col("m").str.extract_groups(rp.IMPORT_RE.pattern)
    return (
        texts.select("i", pl.col("text").str.split("\n").list.head(rp.MAX_SCAN_LINES).alias("line"))
        .explode("line")
        .filter(line.str.contains(rp.IMPORT_WORDS))
        .with_columns(line.str.strip_chars(PY_WHITESPACE))
        .filter(
            ~(line.str.starts_with("//") | line.str.starts_with("# ") | line.str.starts_with("*"))
        )
        .select("i", line.str.extract_all(rp.IMPORT_RE.pattern).alias("m"))
        .explode("m")
        .drop_nulls("m")
        .select("i", pl.coalesce(groups.struct[k] for k in range(7)).alias("spec"))
        .group_by("i", maintain_order=True)
        .agg(pl.col("spec").head(rp.MAX_SPECS))
    )


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
    texts = [""] * n
    for node, text in first.iter_rows():
        texts[node] = text
    return texts


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


def with_parts(symbols: pl.DataFrame) -> pl.DataFrame:
    """``symbols`` with each symbol's parts (§3.2) from its ``tok`` list: distinct non-generic
    tokens of ≥ 3 characters, ascending (only the symbol-reference scan needs them).

    By one explode, filter and sort over all symbols (a per-list expression costs Polars a
    thread hand-off per list).
    """
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


#: Texts not memoised yet and their distinct content tokens (:meth:`TextMemo.tokenise`).
Tokenised = tuple[list[str], pl.Series]
#: What :meth:`TextMemo.path_facts` knows of a path: kind, path-index keys, source-test keys.
PathFacts = tuple[int, tuple[str, ...], tuple[str, ...]]


@dataclass
class TextMemo:
    """Text-level results reused by the next snapshots of a run (arbwb-defined speed-up).

    ``table`` is ``words`` as a (tok, id) frame for :meth:`series_ids`.
    ARB snapshots of a repository share most file texts, so each distinct text is tokenised
    and scanned for import specs once: ``content`` maps a text to its distinct content-token
    ids, ``specs`` to its import specs. Both depend on the text alone, so reuse cannot change
    an index. Token ids index ``words`` (run-wide, append-only); the text tables restart once
    they hold more than ``limit`` texts, which bounds memory. ``facts`` keeps each node path's
    kind and keys (:meth:`path_facts`) the same way, ``spec_keys`` the keys of an import spec
    from a directory (§4.3.2), as tuples (all-string tuples leave the cyclic GC's view, so
    its full collections stay cheap). Stateful on purpose.
    """

    words: list[str] = field(default_factory=list)
    content: dict[str, npt.NDArray[np.int64]] = field(default_factory=dict)
    specs: dict[str, list[str]] = field(default_factory=dict)
    facts: dict[str, PathFacts] = field(default_factory=dict)
    spec_keys: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    table: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema={"tok": pl.String, "id": pl.Int64})
    )
    limit: int = 20000

    def path_facts(self, path: str) -> PathFacts:
        """Kind, path-index keys and source-test keys of a node path (§3.1, §4.2, §4.5)."""
        found = self.facts.get(path)
        if found is None:
            if len(self.facts) > 4 * self.limit:
                self.facts.clear()
            found = self.facts[path] = (
                rp.node_kind(path),
                tuple(rp.path_index_keys(path)),
                tuple(rp.source_test_keys(path)),
            )
        return found

    def series_ids(self, tokens: pl.Series) -> npt.NDArray[np.int64]:
        """Run-wide ids of a token column, adding new ones in order of first appearance.

        One join against the known tokens; only the new ones are numbered and joined again.
        """
        frame = tokens.alias("tok").to_frame()
        found = frame.join(self.table, on="tok", how="left", maintain_order="left")["id"]
        ids = found.fill_null(-1).to_numpy().astype(np.int64)
        new_rows = found.is_null()
        if new_rows.any():
            new = frame.filter(new_rows)
            start = len(self.words)
            added = new.unique(maintain_order=True).with_row_index("id", offset=start)
            added = added.select("tok", pl.col("id").cast(pl.Int64))
            self.words.extend(added["tok"].to_list())
            self.table = pl.concat([self.table, added], rechunk=False)
            numbered = new.join(added, on="tok", how="left", maintain_order="left")["id"]
            ids[new_rows.to_numpy()] = numbered.to_numpy()
        return ids

    def trim(self) -> None:
        """Restart the text tables once they hold more than ``limit`` texts."""
        if len(self.content) > self.limit:
            self.content.clear()
            self.specs.clear()
            self.spec_keys.clear()

    def tokenise(self, texts: list[str], known: Container[str] = ()) -> Tokenised:
        """The texts neither memoised nor ``known`` and their distinct content tokens.

        Reads the memo only, so it may run on a second thread while the caller uses it
        (:meth:`content_tokens` tokenises any text found missing later).
        """
        content = self.content
        fresh = [t for t in dict.fromkeys(texts) if t not in content and t not in known]
        return fresh, content_tokens_of(fresh)

    def content_tokens(
        self, texts: list[str], tokenised: Tokenised | None = None, then: pl.Series | None = None
    ) -> tuple[list[npt.NDArray[np.int64]], npt.NDArray[np.int64]]:
        """Distinct content-token ids of each text (first 20,000 characters, §3.4), and the ids
        of the tokens ``then`` (numbered after the content tokens, in one join).

        ``tokenised`` is :meth:`tokenise` of ``texts``, when already done.
        """
        if tokenised is None:
            self.trim()
            tokenised = self.tokenise(texts)
        fresh, column = tokenised
        then = pl.Series("tok", [], dtype=pl.String) if then is None else then
        flat = column.explode().drop_nulls() if fresh else pl.Series("tok", [], dtype=pl.String)
        ids = self.series_ids(pl.concat([flat.alias("tok"), then.alias("tok")]))
        if fresh:
            ends = np.cumsum(column.list.len().to_numpy().astype(np.int64))
            for text, found in zip(fresh, np.split(ids[: len(flat)], ends[:-1]), strict=True):
                self.content[text] = found
        content = self.content
        missing = [t for t in texts if t not in content]  # left out as known, trimmed since
        if missing:
            self.content_tokens(missing, self.tokenise(missing))
        return [content[t] for t in texts], ids[len(flat) :]

    def import_specs(self, texts: list[str]) -> list[list[str]]:
        """The import specs of each text (§4.3.1), memoised; fresh texts scanned in one batch.

        A text whose only line break is ``\\n`` has ``splitlines`` lines = ``split("\\n")``
        pieces (an extra trailing "" holds no spec), and without U+001F in it Rust's ``\\s``
        = Python's, so :func:`import_specs_frame` scans it in Polars; any other text takes
        :func:`rp.import_specs`.
        """
        fresh = [t for t in dict.fromkeys(texts) if t and t not in self.specs]
        if fresh:
            self.specs.update(zip(fresh, scan_import_specs(fresh), strict=True))
        return [self.specs[t] if t else [] for t in texts]


def scan_import_specs(texts: list[str]) -> list[list[str]]:
    """The import specs of each text (§4.3.1), the Polars-safe ones in one batch (see
    :meth:`TextMemo.import_specs`); touches no shared state."""
    if not texts:
        return []
    frame = pl.DataFrame({"text": texts}, schema={"text": pl.String})
    other = frame["text"].str.contains(_PYTHON_ONLY).to_list()
    found: list[list[str]] = [[] for _ in texts]
    specs = import_specs_frame(frame.with_row_index("i").filter(~pl.Series(other)))
    for i, spec in specs.iter_rows():
        found[i] = spec
    return [
        rp.import_specs(text) if python else found[i]
        for i, (text, python) in enumerate(zip(texts, other, strict=True))
    ]


def _terms(
    paths: list[str],
    texts: list[str],
    symbols: pl.DataFrame,
    memo: TextMemo,
    tokenised: Tokenised | None = None,
) -> tuple[list[str], sp.csc_matrix, npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Vocabulary, factor matrix, |TS| per node and IDF (§3.4-3.5, ``math.log`` per token).

    TS(f) = path, symbol and content tokens; a token's factor is the highest place it has
    (path 3.0 > symbol 2.0 > content 1.0, the §5 if/elif). Columns follow run-wide token ids.
    """
    import scipy.sparse as sp

    n = len(paths)
    path_tok = (
        pl.DataFrame(
            {
                "node": np.arange(n, dtype=np.int64),
                "tok": distinct_tokens(pl.Series("path", paths, dtype=pl.String)),
            }
        )
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


def _edges(u: Any, v: Any, weight: float) -> Edges:
    """One pass's edges from node id sequences and its weight."""
    us = np.asarray(u, dtype=np.int64)
    return us, np.asarray(v, dtype=np.int64), np.full(len(us), weight, dtype=np.float64)


def _import_edges(paths: list[str], texts: list[str], memo: TextMemo) -> Edges:
    """Import edges (§4.3): for every spec of every node, each of its targets ≠ the importer
    (weight 1.5, one edge per spec occurrence; W sums them, so their order is immaterial).

    The targets of a spec depend on the spec and the importer's folder only: per distinct
    (spec, folder), the union of the path-index entries of its keys, ascending, first 8.
    Keys of a (spec, folder) come from the memo (Python, :func:`rp.spec_keys`); the joins,
    the union and the first 8 run in Polars (string sort = code-point order).
    """
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


def _reference_edges(
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


def _source_test_edges(paths: list[str], kinds: npt.NDArray[np.int8], memo: TextMemo) -> Edges:
    """Source-test edges (§4.5): first 20 sources x first 20 tests of every shared key."""
    sources: dict[str, list[int]] = {}
    tests: dict[str, list[int]] = {}
    for i, (path, kind) in enumerate(zip(paths, kinds.tolist(), strict=True)):
        if kind == rp.KIND_OTHER:
            continue
        bucket = tests if kind == rp.KIND_TEST else sources
        for key in memo.path_facts(path)[2]:
            bucket.setdefault(key, []).append(i)
    us: list[int] = []
    vs: list[int] = []
    for key, test_nodes in tests.items():
        for s in sources.get(key, [])[:SOURCE_TEST_FANOUT]:
            us.extend([s] * len(test_nodes[:SOURCE_TEST_FANOUT]))
            vs.extend(test_nodes[:SOURCE_TEST_FANOUT])
    return _edges(us, vs, SOURCE_TEST_WEIGHT)


def weight_matrix(n: int, passes: Sequence[Edges]) -> sp.csr_matrix:
    """Symmetric W from ``add(u, v, w)`` calls (§4.1): self-loops dropped, repeats summed.

    Every weight is a sum of 1.5, 1.0 and 2.0, so the sums are exact in any order.
    """
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


@dataclass(frozen=True)
class Gathered:
    """What :func:`gather` did of one snapshot's index (arbwb-defined split); ``tokenised`` may
    still be running elsewhere until :func:`assemble` needs it."""

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
    (texts that an earlier snapshot, still being assembled, memoises).

    Only reads the memo, so the next snapshot's may run on a second thread while this one
    is assembled; its Polars calls release the GIL. ``tokenise`` schedules the last step
    elsewhere (deciding what is known itself); by default it runs here.
    """
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
        imports = _import_edges(paths, texts, memo)
        source_test = _source_test_edges(paths, kinds, memo)
        symbols = symbolising.result()
    tokenised = gathered.tokenised.result()  # the last step that needs it
    vocab, terms, n_terms, idf = _terms(paths, texts, symbols, memo, tokenised)
    refs, skipped = _reference_edges(paths, kinds, symbols, terms, n_terms, vocab, cap)
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
    """The RepoMap index of one snapshot's chunk rows (§3-§4); ``cap`` = refs per file.

    ``memo`` carries text-level work over from earlier snapshots of the run.
    """
    memo = TextMemo() if memo is None else memo
    memo.trim()
    return assemble(gather(chunks, memo), cap, memo)


def save_index(index: RepoMapIndex, path: Path) -> None:
    """Write the index to ``path`` as one ``.npz`` (strings as a JSON blob), atomically (not
    fsynced: a lost or torn file is unreadable and rebuilt, :func:`load_index`)."""
    meta = {
        "version": FORMAT_VERSION,
        "paths": index.paths,
        "vocab": index.vocab,
        "stats": index.stats,
    }
    blob = np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)
    with atomic_open(path, "wb", durable=False) as handle:  # a cache entry: rebuilt if lost
        np.savez(
            handle,
            meta=blob,
            chunk_chars=index.chunk_chars,
            kinds=index.kinds,
            terms_data=index.terms.data,
            terms_indices=index.terms.indices,
            terms_indptr=index.terms.indptr,
            n_terms=index.n_terms,
            idf=index.idf,
            graph_data=index.graph.data,
            graph_indices=index.graph.indices,
            graph_indptr=index.graph.indptr,
        )


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
    terms = sp.csc_matrix(
        (arrays["terms_data"], arrays["terms_indices"], arrays["terms_indptr"]), shape=(n, n_vocab)
    )
    graph = sp.csr_matrix(
        (arrays["graph_data"], arrays["graph_indices"], arrays["graph_indptr"]), shape=(n, n)
    )
    return RepoMapIndex(
        meta["paths"],
        arrays["chunk_chars"],
        arrays["kinds"],
        meta["vocab"],
        terms,
        arrays["n_terms"],
        arrays["idf"],
        graph,
        meta["stats"],
    )
