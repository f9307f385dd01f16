"""Pieces every retriever shares: chunk documents, term matrices, chunk -> file ranking."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb import schemas
from arbwb.io.corpus import Corpus
from arbwb.io.pathclass import CandidateFilter, keep_path
from arbwb.metrics.chunks import ChunkTable
from arbwb.retrievers.strkeys import Needles, SortedVocab
from arbwb.tokenize import split_identifiers

if TYPE_CHECKING:  # scipy loads only for the methods that use it
    import scipy.sparse as sp

#: Chunk columns a retriever needs (the CHUNKS schema minus nothing; snapshot_id is optional).
CHUNK_COLUMNS = ("chunk_id", "path", "kind", "symbol", "start_line", "end_line", "text")

#: The token memo restarts when it would hold more rows than this many times a snapshot's chunks.
MEMO_FACTOR = 2


@dataclass(frozen=True)
class ChunkRanking:
    """One query's result: chunk rows best first and the distinct files in that order (full
    depth); extra details fields, grep's 8k-packing ``n_chars`` (§6.5) and own ``table``."""

    order: npt.NDArray[np.int64]
    scores: npt.NDArray[np.float64]
    files: list[str]
    file_scores: list[float]
    details: Mapping[str, Any] = field(default_factory=dict)
    n_chars: Sequence[int] | None = None
    table: ChunkTable | None = None


@dataclass(frozen=True)
class ColumnCounts:
    """Chunk x term counts in CSC layout, held without importing scipy (warm runs read columns)."""

    indptr: npt.NDArray[np.integer[Any]]
    indices: npt.NDArray[np.int32]
    data: npt.NDArray[np.integer[Any]]  # uint16 or int32 as stored (exact small integers)
    shape: tuple[int, int]

    def to_scipy(self) -> sp.csc_matrix:
        """The same counts as a scipy CSC matrix (no copy)."""
        import scipy.sparse as sp

        return sp.csc_matrix((self.data, self.indices, self.indptr), shape=self.shape)


@dataclass(frozen=True)
class TermMatrix:
    """§7.1 term counts of chunk documents (CSC), with tokens and distinct terms per document;
    ``vocab`` maps term -> column (a shared :class:`TermMemo` one may hold more terms)."""

    counts: sp.csc_matrix | ColumnCounts
    vocab: Mapping[str, int]
    doc_len: npt.NDArray[np.float64]
    n_unique: npt.NDArray[np.float64]
    df: npt.NDArray[np.int64]


def check_chunks(chunks: pl.DataFrame) -> pl.DataFrame:
    """Return the chunk columns retrievers use, failing clearly when one is missing."""
    missing = [c for c in CHUNK_COLUMNS if c not in chunks.columns]
    if missing:
        msg = f"chunks frame lacks columns {missing}; pass a CHUNKS frame ({list(schemas.CHUNKS)})"
        raise ValueError(msg)
    return chunks.select(CHUNK_COLUMNS)


#: The fields of a chunk's §7.2 document, in order (no §7.1 token spans two of them).
DOCUMENT_FIELDS = ("path", "symbol", "kind", "text")


def document_expr() -> pl.Expr:
    """Chunk document text (spec §7.2): non-empty ``path, symbol, kind, text`` joined by spaces."""
    parts = [pl.when(pl.col(c) == "").then(None).otherwise(pl.col(c)) for c in DOCUMENT_FIELDS]
    return pl.concat_str(parts, separator=" ", ignore_nulls=True)


def chunk_documents(chunks: pl.DataFrame) -> list[str]:
    """Document text of every chunk, in chunk order (spec §7.2; QUIRK: the kind word is indexed)."""
    return check_chunks(chunks).select(document_expr().alias("doc"))["doc"].to_list()


@dataclass
class TermMemo:
    """Term counts of recently seen chunk documents (``table``: document -> row of ``counts``),
    reused by the next snapshots; past ``MEMO_FACTOR`` x a snapshot's chunks it restarts."""

    vocab: dict[str, int] = field(default_factory=dict)
    table: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema={"doc": pl.String, "row": pl.Int64})
    )
    counts: sp.csr_matrix | None = None
    hits: int = 0
    misses: int = 0

    def stats(self) -> dict[str, Any]:
        """Documents reused vs tokenised so far."""
        return {"token_memo_hits": self.hits, "token_memo_misses": self.misses}


def _tokenize(docs: pl.Series, vocab: dict[str, int]) -> sp.csr_matrix:
    """§7.1 term counts of ``docs`` as CSR rows; new terms join ``vocab`` in sorted order."""
    import scipy.sparse as sp

    from arbwb.retrievers.terms import batches, count_terms

    if docs.is_empty():  # most snapshots bring no new text
        return sp.csr_matrix((0, len(vocab)))
    found = count_terms(batches(docs))
    mapping = {t: vocab.setdefault(t, len(vocab)) for t in sorted(found.terms)}
    ids = np.array([mapping[t] for t in found.terms], dtype=np.int32)
    local = found.counts
    data = local.data.astype(np.float64)
    return sp.csr_matrix((data, ids[local.indices], local.indptr), (len(docs), len(vocab)))


def term_matrix(chunks: pl.DataFrame, memo: TermMemo | None = None) -> TermMatrix:
    """Sparse §7.1 term counts of every chunk document (chunk order); only documents not in
    ``memo`` (one Polars join on the full text) are tokenised."""
    import scipy.sparse as sp

    memo = TermMemo() if memo is None else memo
    docs = check_chunks(chunks).select(document_expr().alias("doc"))
    found = docs.join(memo.table, on="doc", how="left", maintain_order="left").with_row_index("i")
    missing = found.filter(pl.col("row").is_null())
    fresh_docs = missing["doc"].unique(maintain_order=True)
    fresh = _tokenize(fresh_docs, memo.vocab)
    memo.misses += len(fresh_docs)
    memo.hits += docs.height - len(fresh_docs)
    rows = found["row"].fill_null(0).to_numpy().astype(np.int64)
    old = sp.csr_matrix((0, 0)) if memo.counts is None else memo.counts
    first = old.shape[0]
    fresh_rows = pl.DataFrame({"doc": fresh_docs, "row": np.arange(first, first + len(fresh_docs))})
    placed = missing.select("i", "doc").join(fresh_rows, on="doc", maintain_order="left")
    rows[placed["i"].to_numpy()] = placed["row"].to_numpy()
    old.resize(first, len(memo.vocab))  # the vocabulary may have grown: more columns
    stacked = sp.vstack([old, fresh], format="csr")
    counts = stacked[rows]
    if stacked.shape[0] <= MEMO_FACTOR * docs.height:
        memo.counts = stacked
        memo.table = pl.concat([memo.table, fresh_rows])
    else:
        memo.counts = counts
        rows_now = pl.Series("row", np.arange(docs.height))
        memo.table = docs.with_columns(rows_now).unique("doc", keep="first")
    matrix = counts.tocsc()
    doc_len = np.asarray(counts.sum(axis=1), dtype=np.float64).ravel()
    n_unique = np.diff(counts.indptr).astype(np.float64)
    df = np.diff(matrix.indptr).astype(np.int64)
    return TermMatrix(matrix, memo.vocab, doc_len, n_unique, df)


def query_terms(query_text: str) -> Counter[str]:
    """Distinct query terms with counts, in order of first occurrence (spec §7.2 ``n_q``)."""
    return Counter(split_identifiers(query_text))


def term_rows(
    matrix: TermMatrix, terms: Counter[str]
) -> Iterator[tuple[int, int, npt.NDArray[np.int32], npt.NDArray[Any]]]:
    """For each query term in the vocabulary: (column, n_q, chunk rows, exact integer counts)."""
    indptr, indices, data = matrix.counts.indptr, matrix.counts.indices, matrix.counts.data
    vocab, names = matrix.vocab, list(terms)
    cols = vocab.columns(names) if isinstance(vocab, SortedVocab) else [vocab.get(t) for t in names]
    for col, n_q in zip(cols, terms.values(), strict=True):
        if col is None or col >= len(matrix.df):  # the shared vocabulary may have grown since
            continue
        lo, hi = indptr[col], indptr[col + 1]
        yield col, n_q, indices[lo:hi], data[lo:hi]


def tiebreak_order(chunks: pl.DataFrame) -> npt.NDArray[np.int64]:
    """Chunk rows sorted by (path asc, chunk_id asc): the tie order of every chunk ranker."""
    frame = chunks.select("path", "chunk_id").with_row_index("row")
    return frame.sort("path", "chunk_id", maintain_order=True)["row"].to_numpy().astype(np.int64)


@dataclass(frozen=True)
class ChunkPaths:
    """Each chunk's path as an integer code into ``names`` (distinct paths, first-seen order)."""

    codes: npt.NDArray[np.int64]
    names: list[str]


def codes_of(values: pl.Series) -> tuple[npt.NDArray[np.int64], list[str]]:
    """Integer code per row and the distinct values, in first-seen order."""
    uniques = values.unique(maintain_order=True)
    lookup = pl.DataFrame({"v": uniques, "code": np.arange(len(uniques), dtype=np.int64)})
    codes = pl.DataFrame({"v": values}).join(lookup, on="v", how="left", maintain_order="left")
    return codes["code"].to_numpy().astype(np.int64), uniques.to_list()


def chunk_paths(chunks: pl.DataFrame) -> ChunkPaths:
    """Path codes of a chunk frame, built once per index."""
    return ChunkPaths(*codes_of(chunks["path"]))


@dataclass(frozen=True)
class BonusNeedles:
    """Lexical's bonus strings (spec §7.2) as one :class:`Needles`: lower-cased distinct paths,
    then their basenames, then the distinct symbols (code order)."""

    needles: Needles
    n_paths: int

    def hits(
        self, lowered: str
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """Hits per path, basename and (non-empty) symbol code in the lower-cased query."""
        hit = self.needles.contained(lowered)
        first_symbol = 2 * self.n_paths
        empty = self.needles.empty
        hit[empty[empty >= first_symbol]] = False  # an empty symbol earns no bonus
        return hit[: self.n_paths], hit[self.n_paths : first_symbol], hit[first_symbol:]


def bonus_text(paths: Sequence[str], symbols: Sequence[str]) -> Callable[[int], str]:
    """Bonus string i of :class:`BonusNeedles` (Python's ``str.lower``), computed when asked."""
    n = len(paths)

    def text_of(i: int) -> str:
        if i < n:
            return paths[i].lower()
        if i < 2 * n:
            return paths[i - n].rsplit("/", 1)[-1].lower()
        return symbols[i - 2 * n].lower()

    return text_of


def bonus_strings(paths: Sequence[str], symbols: Sequence[str]) -> list[str]:
    """Every string of :class:`BonusNeedles`, in order."""
    text_of = bonus_text(paths, symbols)
    return [text_of(i) for i in range(2 * len(paths) + len(symbols))]


def bonus_needles(paths: Sequence[str], symbols: Sequence[str]) -> BonusNeedles:
    """The bonus needles of distinct paths and symbols, held in memory."""
    return BonusNeedles(Needles.of(bonus_strings(paths, symbols)), len(paths))


@dataclass(frozen=True)
class ChunkKeys:
    """What the term rankers need of a snapshot's chunks besides their terms (``needles``: when
    read from the term cache)."""

    paths: ChunkPaths
    tiebreak: npt.NDArray[np.int64]
    symbol_codes: npt.NDArray[np.int64]
    symbols: Sequence[str]
    needles: BonusNeedles | None = None

    @property
    def n_chunks(self) -> int:
        """Number of chunks."""
        return len(self.paths.codes)

    def bonus(self) -> BonusNeedles:
        """The bonus needles (built from the distinct paths and symbols when not stored)."""
        return self.needles or bonus_needles(self.paths.names, self.symbols)


def chunk_keys(chunks: pl.DataFrame) -> ChunkKeys:
    """The :class:`ChunkKeys` of a chunk frame (``path``, ``symbol``, ``chunk_id`` columns)."""
    symbol_codes, symbols = codes_of(chunks["symbol"])
    return ChunkKeys(chunk_paths(chunks), tiebreak_order(chunks), symbol_codes, symbols)


def rank_chunks(
    scores: npt.NDArray[np.float64] | None, tiebreak: npt.NDArray[np.int64], paths: ChunkPaths
) -> ChunkRanking:
    """Chunks by (score desc, path, chunk_id), files by first appearance (§7.2, §7.5); no scores
    (a token-free lexical/BM25 query): corpus order, score 0."""
    if scores is None:
        n_chunks = len(paths.codes)
        return ranking_from_order(np.arange(n_chunks, dtype=np.int64), np.zeros(n_chunks), paths)
    ordered = tiebreak[np.argsort(-scores[tiebreak], kind="stable")]
    return ranking_from_order(ordered, scores[ordered], paths)


def ranking_from_order(
    order: npt.NDArray[np.int64], ordered_scores: npt.NDArray[np.float64], paths: ChunkPaths
) -> ChunkRanking:
    """Wrap a chunk order; files are distinct paths by first appearance with their first score."""
    codes = paths.codes[order]
    first = np.full(len(paths.names), len(order), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(order), dtype=np.int64))
    first = np.sort(first[first < len(order)])
    files = [paths.names[c] for c in codes[first].tolist()]
    return ChunkRanking(order, ordered_scores, files, ordered_scores[first].tolist())


@dataclass(frozen=True)
class RetrievalMethod:
    """A retriever as the runner drives it (made by :func:`arbwb.retrievers.interface.bind`;
    attributes and hooks: docs/retrievers.md#interface)."""

    name: str
    ranker: str
    build_index: Callable[[pl.DataFrame], Any]
    rank_sample: Callable[[Any, str], ChunkRanking]
    retriever: object = None
    model: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    gold_only: bool = False
    family: str | None = None

    def hook(self, name: str) -> Callable[..., Any] | None:
        """The retriever's optional hook ``name``, or None when it has none."""
        found = getattr(self.retriever, name, None)
        return found if callable(found) else None

    @property
    def index_ahead(self) -> int:
        """Snapshots the retriever wants indexed on worker threads ahead of ranking (0: none)."""
        return int(getattr(self.retriever, "index_ahead", 0) or 0)

    def stats(self) -> dict[str, Any]:
        """The retriever's summary extras (its ``stats()`` hook; none without one)."""
        found = self.hook("stats")
        return {} if found is None else dict(found())


def snapshot_index(
    method: RetrievalMethod, corpus: Corpus, snapshot: str, candidate_filter: CandidateFilter
) -> tuple[Any, pl.DataFrame | ChunkTable] | None:
    """A snapshot's index and the chunk frame (or table) its rankings index; None if empty."""
    whole = method.hook("index_snapshot")
    if whole is not None:
        return whole(corpus, snapshot, candidate_filter)  # type: ignore[no-any-return]
    chunks = candidate_chunks(corpus.chunks(snapshot), candidate_filter)
    return (method.build_index(chunks), chunks) if chunks.height else None


def rank_row(method: RetrievalMethod, index: Any, row: Mapping[str, Any]) -> ChunkRanking:
    """Rank one SAMPLES row: ``rank_record`` when the retriever has it, else its query text."""
    by_record = method.hook("rank_record")
    if by_record is not None:
        return by_record(index, row)  # type: ignore[no-any-return]
    return method.rank_sample(index, row["query_text"])


def candidate_chunks(chunks: pl.DataFrame, candidate_filter: CandidateFilter) -> pl.DataFrame:
    """Chunks whose path survives the candidate filter (spec §6.2), corpus order kept."""
    if candidate_filter == "all_files":
        return chunks
    paths = chunks["path"].unique().to_list()
    kept = [p for p in paths if keep_path(p, candidate_filter)]
    return chunks.filter(pl.col("path").is_in(kept))
