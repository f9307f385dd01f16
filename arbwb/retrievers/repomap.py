"""RepoMap baseline, exact (arb-repomap.md §5-§8, every float operation in the spec's order);
PageRank's left-to-right sums are one CSR mat-vec against ``[1.0]`` per step."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb import cache
from arbwb.io.pathclass import CandidateFilter, keep_path
from arbwb.io.samples import given_files
from arbwb.retrievers import repomap_paths as rp
from arbwb.retrievers.common import ChunkRanking, RetrievalMethod
from arbwb.retrievers.interface import bind
from arbwb.retrievers.repomap_index import (
    FORMAT_VERSION,
    Gathered,
    RepoMapIndex,
    assemble,
    build_index,
    gather,
    load_index,
    save_index,
)
from arbwb.retrievers.repomap_paths import TextMemo, Tokenised
from arbwb.tokenize import split_identifiers

if TYPE_CHECKING:
    import scipy.sparse as sp

    from arbwb.io.corpus import Corpus

MODEL = "aider-style-repomap"
DAMPING = 0.85
ITERATIONS = 24
DEFAULT_CAP = 80
TOP_FILES = 20
PATH_BONUS, NAME_BONUS = 20.0, 7.0
MENTION, NEIGHBOUR = 0.4, 1.0
GIVEN_PENALTY, GIVEN_NEIGHBOUR = 1.0, 0.8
TRACE_SOURCE, TRACE_TEST = 0.5, 0.2
_EXPLICIT_KEYS = ("changed_file", "given_file", "path")
_EXPLICIT_LISTS = ("implementation_files", "changed_files")


@dataclass(frozen=True)
class Weights:
    """Combination weights wq, wp, wa (§1 defaults; written to the summary as passed)."""

    query: float = 0.65
    pagerank: float = 0.25
    affinity: float = 0.10


@dataclass(frozen=True)
class Flow:
    """PageRank operator: row v of ``sums`` holds [teleport(v), dangling(v), share(u)·W(u,v)
    for u in node order]; ``slots`` are the neighbour terms' data positions."""

    sums: sp.csr_matrix
    first: npt.NDArray[np.int64]
    slots: npt.NDArray[np.int64]
    weights: npt.NDArray[np.float64]
    sources: npt.NDArray[np.int64]
    out: npt.NDArray[np.float64]
    dangling: npt.NDArray[np.int64]


@dataclass(frozen=True)
class Prepared:
    """A snapshot ready to rank: its index, derived lookups and the candidate nodes (§8.1)."""

    index: RepoMapIndex
    token_id: dict[str, int]
    lower_paths: list[str]
    lower_names: list[str]
    path_rank: npt.NDArray[np.int64]
    flow: Flow
    candidates: npt.NDArray[np.int64]


def flow(graph: sp.csr_matrix) -> Flow:
    """Precompute the PageRank operator of W (rows with ascending columns = node order of u)."""
    import scipy.sparse as sp

    n = graph.shape[0]
    indptr = graph.indptr.astype(np.int64)
    first = indptr[:-1] + 2 * np.arange(n, dtype=np.int64)
    sums_ptr = np.append(first, indptr[-1] + 2 * n)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    slots = np.arange(len(graph.indices), dtype=np.int64) + 2 * (rows + 1)
    size = int(sums_ptr[-1])
    sums = sp.csr_matrix((np.zeros(size), np.zeros(size, dtype=np.int32), sums_ptr), shape=(n, 1))
    out = np.asarray(graph.sum(axis=1), dtype=np.float64).ravel()  # exact: multiples of 0.5
    weights, sources = graph.data.astype(np.float64), graph.indices.astype(np.int64)
    return Flow(sums, first, slots, weights, sources, out, np.flatnonzero(out == 0))


def _sequential_sum(values: npt.NDArray[np.float64]) -> float:
    """Σ from 0 in array order, one addition at a time (``cumsum`` is a sequential scan)."""
    return float(np.cumsum(values)[-1]) if len(values) else 0.0


def personalized_pagerank(
    op: Flow, seeds: npt.NDArray[np.float64], iterations: int = ITERATIONS
) -> npt.NDArray[np.float64]:
    """PageRank of §7 from raw seeds (negatives clipped; Z ≤ 0 gives the uniform vector)."""
    n = len(seeds)
    clipped = np.maximum(0.0, seeds)
    total = _sequential_sum(clipped)
    base = clipped / total if total > 0 else np.full(n, 1.0 / n)
    data = op.sums.data
    data[op.first] = (1.0 - DAMPING) * base
    safe_out = np.where(op.out > 0, op.out, 1.0)
    ones = np.ones(1)
    r = base
    for _ in range(iterations):
        dangling = _sequential_sum(r[op.dangling])
        data[op.first + 1] = (DAMPING * dangling) * base if dangling != 0 else 0.0
        share = (DAMPING * r) / safe_out  # only non-dangling u have terms
        data[op.slots] = share[op.sources] * op.weights
        r = np.asarray(op.sums @ ones, dtype=np.float64).ravel()
    return r


def prepare(index: RepoMapIndex, candidate_filter: CandidateFilter = "all_files") -> Prepared:
    """Derived lookups of an index and the nodes the filter keeps, in node order (§8.1)."""
    paths = index.paths
    candidates = np.array(
        [i for i, p in enumerate(paths) if keep_path(p, candidate_filter)], dtype=np.int64
    )
    path_rank = np.empty(len(paths), dtype=np.int64)
    path_rank[np.argsort(np.array(paths, dtype=object), kind="stable")] = np.arange(len(paths))
    token_id = {token: i for i, token in enumerate(index.vocab)}
    lowered = [p.lower() for p in paths], [rp.name(p).lower() for p in paths]
    return Prepared(index, token_id, *lowered, path_rank, flow(index.graph), candidates)


def query_scores(prep: Prepared, q: str) -> tuple[npt.NDArray[np.float64], int]:
    """rawQ of every node (§5) and how many distinct query tokens occur in the snapshot."""
    index = prep.index
    n = len(index.paths)
    score = np.zeros(n, dtype=np.float64)
    tokens = Counter(split_identifiers(q))  # distinct tokens in order of first occurrence
    if not tokens:
        return score, 0
    terms, matched = index.terms, 0
    for token, count in tokens.items():
        col = prep.token_id.get(token)
        if col is None:
            continue
        matched += 1
        lo, hi = terms.indptr[col], terms.indptr[col + 1]
        rows = terms.indices[lo:hi]
        weight = index.idf[col] * terms.data[lo:hi]  # w = idf·3.0 | idf·2.0 | idf (x1.0 exact)
        score[rows] = score[rows] + (1.0 + math.log(count)) * weight
    lowered = q.lower()
    score[[i for i, p in enumerate(prep.lower_paths) if p in lowered]] += PATH_BONUS
    score[[i for i, p in enumerate(prep.lower_names) if p in lowered]] += NAME_BONUS
    return score / np.maximum(1.0, np.sqrt(index.n_terms.astype(np.float64))), matched


def mentioned(prep: Prepared, query: Mapping[str, Any], q: str) -> list[int]:
    """M of §6, in node order: explicit query paths that are nodes, and nodes named in q."""
    explicit = {query[k] for k in _EXPLICIT_KEYS if isinstance(query.get(k), str)}
    for key in _EXPLICIT_LISTS:
        values = query.get(key)
        if isinstance(values, list):
            explicit.update(str(v) for v in values if v)
    lowered = q.lower()
    return [
        i
        for i, (p, lp) in enumerate(zip(prep.index.paths, prep.lower_paths, strict=True))
        if p in explicit or lp in lowered
    ]


def neighbours(graph: sp.csr_matrix, node: int) -> npt.NDArray[np.int64]:
    """Nodes linked to ``node`` (distinct)."""
    return np.asarray(graph.indices[graph.indptr[node] : graph.indptr[node + 1]], dtype=np.int64)


def task_affinity(
    prep: Prepared, mentions: Sequence[int], task: str, given: Sequence[str]
) -> npt.NDArray[np.float64]:
    """aff of §6: mentions and their neighbours, then the task rule."""
    index = prep.index
    aff = np.zeros(len(index.paths), dtype=np.float64)
    for m in mentions:
        aff[m] += MENTION
        nbrs = neighbours(index.graph, m)
        aff[nbrs] = aff[nbrs] + NEIGHBOUR
    if task == "code2test":
        aff[index.kinds == rp.KIND_TEST] += 1.0
    elif task == "comment2context":
        node_of = {p: i for i, p in enumerate(index.paths)}
        for path in given:
            g = node_of.get(path)
            if g is None:
                continue
            aff[g] -= GIVEN_PENALTY
            nbrs = neighbours(index.graph, g)
            aff[nbrs] = aff[nbrs] + GIVEN_NEIGHBOUR
    elif task == "trace2code":
        aff[index.kinds == rp.KIND_SOURCE] += TRACE_SOURCE
        aff[index.kinds == rp.KIND_TEST] -= TRACE_TEST
    return aff


def seed_scores(
    raw_q: npt.NDArray[np.float64], aff: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """s(f) = max(0, rawQ) + max(0, aff); all 1.0 when none is positive (§7)."""
    seeds = np.maximum(0.0, raw_q) + np.maximum(0.0, aff)
    return seeds if bool((seeds > 0).any()) else np.ones(len(seeds))


def _max_or_one(values: npt.NDArray[np.float64]) -> float:
    top = float(values.max()) if len(values) else 0.0
    return top if top != 0 else 1.0


@dataclass(frozen=True)
class Components:
    """Per-node raw values of one sample: rawQ, affinity, PageRank (all nodes)."""

    raw_q: npt.NDArray[np.float64]
    aff: npt.NDArray[np.float64]
    pr: npt.NDArray[np.float64]
    matched_terms: int


def components(
    prep: Prepared, q: str, query: Mapping[str, Any], task: str, given: Sequence[str]
) -> Components:
    """rawQ, aff and pr of every node for one sample (§5-§7)."""
    raw_q, matched = query_scores(prep, q)
    aff = task_affinity(prep, mentioned(prep, query, q), task, given)
    pr = personalized_pagerank(prep.flow, seed_scores(raw_q, aff))
    return Components(raw_q, aff, pr, matched)


def rank_query(
    prep: Prepared,
    q: str,
    *,
    query: Mapping[str, Any] | None = None,
    task: str = "",
    given: Sequence[str] = (),
    weights: Weights = Weights(),
) -> ChunkRanking:
    """The candidates of ``prep`` for one sample, normalised by the all-node maxima, combined and
    sorted (§8.2-8.3); ``query`` defaults to ``json.loads(q)``."""
    parts = components(prep, q, _json_object(q) if query is None else query, task, given)
    cand = prep.candidates
    qc = parts.raw_q[cand] / _max_or_one(parts.raw_q)
    pc = parts.pr[cand] / _max_or_one(parts.pr)
    ac = parts.aff[cand] / _max_or_one(np.abs(parts.aff))
    final = (weights.query * qc + weights.pagerank * pc) + weights.affinity * ac
    order = np.lexsort((prep.path_rank[cand], -final)).astype(np.int64)
    paths = [prep.index.paths[i] for i in cand[order].tolist()]
    top = order[:TOP_FILES]
    columns = {"affinity": ac[top], "pagerank": pc[top], "path": paths[:TOP_FILES]}
    scores = pl.DataFrame(columns | {"query": qc[top], "score": final[top]})
    details = {
        "top_file_scores": scores.to_dicts(),
        "repo_map_stats": dict(prep.index.stats),
        "query_terms_matched": parts.matched_terms,
    }
    return ChunkRanking(order, final[order], paths, final[order].tolist(), details)


def _json_object(text: str | None) -> dict[str, Any]:
    value = json.loads(text) if text else {}
    return value if isinstance(value, dict) else {}


def pseudo_chunks(prep: Prepared) -> pl.DataFrame:
    """One ``file`` chunk per candidate (§9), no lines; ``n_chars`` stands for its text."""
    cand = prep.candidates
    found = pl.DataFrame(
        {"path": [prep.index.paths[i] for i in cand.tolist()], "n": prep.index.chunk_chars[cand]},
        schema={"path": pl.String, "n": pl.Int64},
    )
    return found.select(
        chunk_id=pl.lit(""),
        path="path",
        kind=pl.lit("file"),
        symbol=pl.lit(""),
        start_line=pl.lit(0, pl.Int64),
        end_line=pl.lit(0, pl.Int64),
        n_chars="n",
    )


def index_cache_file(cache_dir: Path, corpus: Corpus, snapshot: str, cap: int) -> Path:
    """Cache file of a snapshot's index, keyed by format, cap, the chunk file's identity and
    the row counts its manifest row promises (:meth:`Corpus.source`)."""
    chunk_file, promise = corpus.source(snapshot)
    return cache.entry_path(cache_dir, chunk_file, f"{FORMAT_VERSION}:cap={cap}:{promise}", ".npz")


def fetch(
    corpus: Corpus,
    snapshot: str,
    *,
    cap: int,
    cache_dir: Path | None,
    memo: TextMemo,
    tokenise: Callable[[list[str]], Future[Tokenised]] | None = None,
) -> tuple[RepoMapIndex | Gathered, Path | None]:
    """The snapshot's cached index, else its chunks read and gathered (:func:`gather` reads
    the memo only, so it may run ahead on a second thread); and the cache file to fill."""
    if cache_dir is None:
        return gather(corpus.chunks(snapshot), memo, tokenise=tokenise), None
    target = index_cache_file(cache_dir, corpus, snapshot, cap)
    return load_index(target) or gather(corpus.chunks(snapshot), memo, tokenise=tokenise), target


class RepoMap:
    """The ``repomap`` retriever: whole-snapshot index (cached in ``cache_dir``); the next
    snapshot is read, tokenised and fresh indexes written on three helper threads."""

    name = "repomap"
    ranker = "repomap"
    model = MODEL

    def __init__(
        self, weights: Weights = Weights(), *, cap: int = DEFAULT_CAP, cache_dir: Path | None = None
    ) -> None:
        self.weights, self.cap, self.cache_dir = weights, cap, cache_dir
        self.params = {"weights": dataclasses.asdict(weights), "max_symbol_refs_per_file": cap}
        self.counts = {"index_cache_hits": 0, "index_builds": 0, "no_matching_term_samples": 0}
        self.memo = TextMemo()
        self.saver = ThreadPoolExecutor(1, thread_name_prefix="arbwb-repomap-save")
        self.saving: list[Future[bool]] = []
        self.following: dict[str, str] = {}
        self.reader = ThreadPoolExecutor(1, thread_name_prefix="arbwb-repomap-read")
        self.ahead: dict[str, Future[tuple[RepoMapIndex | Gathered, Path | None]]] = {}
        self.tokeniser = ThreadPoolExecutor(1, thread_name_prefix="arbwb-repomap-tokens")
        self.latest: list[Future[Tokenised]] = []
        self.order = threading.Lock()

    def _tokenise_later(self, texts: list[str]) -> Future[Tokenised]:
        # The texts the previous snapshot memoises when assembled count as known: not
        # tokenised twice (a text known but not memoised is tokenised when assembled).
        with self.order:
            before = self.latest[0] if self.latest else None

            def job() -> Tokenised:
                known = set(before.result()[0]) if before is not None else set()
                return self.memo.tokenise(texts, known)

            self.latest[:] = [self.tokeniser.submit(job)]
            return self.latest[0]

    def _fetch_ahead(self, corpus: Corpus, snapshot: str) -> None:
        """Start reading ``snapshot`` on the reader thread unless it already is."""
        if snapshot not in self.ahead:
            memo, tokenise = self.memo, self._tokenise_later
            read = functools.partial(fetch, cap=self.cap, cache_dir=self.cache_dir, memo=memo)
            self.ahead[snapshot] = self.reader.submit(read, corpus, snapshot, tokenise=tokenise)

    def prefetch(
        self, corpus: Corpus, snapshots: Sequence[str], candidate_filter: CandidateFilter
    ) -> None:
        """Learn the run's snapshot order and start reading the first."""
        del candidate_filter  # the index holds every file; the filter applies when ranking
        self.following.clear()
        self.following.update(pairwise(snapshots))
        if snapshots:
            self._fetch_ahead(corpus, snapshots[0])
        import scipy.sparse  # noqa: F401  (needed next; loads while the first snapshot is read)

    def index_snapshot(
        self, corpus: Corpus, snapshot: str, candidate_filter: CandidateFilter
    ) -> tuple[Prepared, pl.DataFrame] | None:
        """The snapshot's prepared index and pseudo-chunks; None without candidate files."""
        self._fetch_ahead(corpus, snapshot)
        found, target = self.ahead.pop(snapshot).result()
        upcoming = self.following.get(snapshot)
        if upcoming is not None:
            self._fetch_ahead(corpus, upcoming)
        hit = isinstance(found, RepoMapIndex)
        index = found if isinstance(found, RepoMapIndex) else assemble(found, self.cap, self.memo)
        self.counts["index_cache_hits" if hit else "index_builds"] += 1
        if not hit and target is not None and self.cache_dir is not None:
            now = index_cache_file(self.cache_dir, corpus, snapshot, self.cap)
            if now == target:  # the chunk file did not change while read: never a stale index
                self.saving.append(self.saver.submit(save_index, index, target))
        prep = prepare(index, candidate_filter)
        return (prep, pseudo_chunks(prep)) if len(prep.candidates) else None

    def index(self, chunks: pl.DataFrame) -> Prepared:
        """The prepared index of a chunk frame (all files candidates)."""
        return prepare(build_index(chunks, self.cap, self.memo))

    def _counted(self, ranking: ChunkRanking) -> ChunkRanking:
        if ranking.details.get("query_terms_matched") == 0:
            self.counts["no_matching_term_samples"] += 1
        return ranking

    def rank(self, prep: Prepared, query: str) -> ChunkRanking:
        """A query text's ranking without task rule or given files."""
        return self._counted(rank_query(prep, query, weights=self.weights))

    def rank_record(self, prep: Prepared, row: Mapping[str, Any]) -> ChunkRanking:
        """A SAMPLES row's ranking: its query object, task rule and given files."""
        query = _json_object(row.get("query"))
        task = str(row.get("task") or "")
        record = {"task_type": task, "query": query, "gold": _json_object(row.get("gold"))}
        ranking = rank_query(
            prep,
            row["query_text"],
            query=query,
            task=task,
            given=given_files(record),
            weights=self.weights,
        )
        return self._counted(ranking)

    def stats(self) -> dict[str, Any]:
        """Weights, cap and index/sample counts, once every index write has finished."""
        while self.saving:
            self.saving.pop(0).result()
        return dict(self.params) | self.counts


def method(
    weights: Weights = Weights(), *, cap: int = DEFAULT_CAP, cache_dir: Path | None = None
) -> RetrievalMethod:
    """The bound :class:`RepoMap` retriever."""
    return bind(RepoMap(weights, cap=cap, cache_dir=cache_dir))
