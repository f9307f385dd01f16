"""The one retriever interface (``index`` and ``score``, ``rank_files`` or ``rank``) and
:func:`bind`, which reads a retriever once for the runner (docs/retrievers.md#interface)."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.errors import InputError
from arbwb.retrievers import common

#: The error reason of a sample whose plug-in call raised (summary ``errors`` key).
PLUGIN_ERROR = "plugin_error"


class Retriever(Protocol):
    """``index`` once per snapshot, then one score per chunk row per query (higher is better)."""

    def index(self, chunks: pl.DataFrame) -> Any: ...

    def score(self, index: Any, query: str) -> Sequence[float]: ...


class FileRetriever(Protocol):
    """A retriever whose ``rank_files`` (paths best first) replaces ``score``."""

    def index(self, chunks: pl.DataFrame) -> Any: ...

    def rank_files(self, index: Any, query: str) -> Sequence[str]: ...


class RankingRetriever(Protocol):
    """A retriever that returns the full chunk ranking itself (the built-ins)."""

    def index(self, chunks: pl.DataFrame) -> Any: ...

    def rank(self, index: Any, query: str) -> common.ChunkRanking: ...


@dataclass
class _Snapshot:
    """A plug-in's index of one snapshot with what arbwb needs to rank its chunks."""

    index: Any
    paths: common.ChunkPaths
    tiebreak: npt.NDArray[np.int64]
    error: BaseException | None = None


@dataclass
class _Guarded:
    """A ``score``/``rank_files`` retriever behind ``rank``: exceptions become error rows."""

    retriever: Any
    name: str
    family: object  # bind names it as a string
    params: Mapping[str, Any]
    prefetch: Callable[..., None] | None = None  # the plug-in's own hooks, passed on
    stats: Callable[[], Mapping[str, Any]] | None = None
    reported: bool = False  # the first failure's traceback was printed

    def index(self, chunks: pl.DataFrame) -> _Snapshot:
        """The plug-in's index of a snapshot; a raising ``index`` fails the snapshot's samples."""
        paths, tiebreak = common.chunk_paths(chunks), common.tiebreak_order(chunks)
        try:
            return _Snapshot(self.retriever.index(chunks), paths, tiebreak)
        except Exception as exc:  # the plug-in's failure becomes its samples' error rows
            return _Snapshot(None, paths, tiebreak, exc)

    def rank_record(self, snapshot: _Snapshot, row: Mapping[str, Any]) -> common.ChunkRanking:
        """One sample's ranking, or an empty error ranking naming the sample when it raised."""
        sample_id, query = str(row["sample_id"]), str(row["query_text"])
        try:
            if snapshot.error is not None:
                raise snapshot.error
            return self._rank(snapshot, query)
        except Exception as exc:  # never lose the sample: it becomes an error row
            message = f"sample {sample_id}: {type(exc).__name__}: {exc}"
            if not self.reported:
                lines = traceback.format_exception(exc)
                print(f"{self.name} raised on {message}\n{''.join(lines)}", file=sys.stderr)
            self.reported = True
            empty = np.zeros(0, dtype=np.int64)  # details say status: error (zero metrics)
            details = {"status": "error", "error": PLUGIN_ERROR, "error_message": message}
            return common.ChunkRanking(empty, empty.astype(np.float64), [], [], details=details)

    def rank(self, snapshot: _Snapshot, query: str) -> common.ChunkRanking:
        """A query's ranking outside a sample (library use); errors name no sample."""
        return self.rank_record(snapshot, {"sample_id": "(no id)", "query_text": query})

    def _rank(self, snapshot: _Snapshot, query: str) -> common.ChunkRanking:
        if hasattr(self.retriever, "score"):
            scores = np.asarray(self.retriever.score(snapshot.index, query), dtype=np.float64)
            n_chunks = len(snapshot.paths.codes)
            if scores.shape != (n_chunks,):
                msg = f"score() returned {scores.shape[0] if scores.ndim else 0} scores for "
                msg += f"{n_chunks} chunks; return one score per chunk row"
                raise ValueError(msg)
            if not np.isfinite(scores).all():
                msg = "score() returned NaN or infinite scores; return finite numbers"
                raise ValueError(msg)
            return common.rank_chunks(scores, snapshot.tiebreak, snapshot.paths)
        return file_ranking(self.retriever.rank_files(snapshot.index, query), snapshot.paths)


def file_ranking(files: Sequence[str], paths: common.ChunkPaths) -> common.ChunkRanking:
    """A ``rank_files`` answer as a ranking: candidate paths, first occurrence kept, rank r
    scoring 1/r; each file's chunks follow in chunk-file order."""
    known = {name: code for code, name in enumerate(paths.names)}
    ranked = [p for p in dict.fromkeys(files) if p in known]
    file_scores = [1.0 / r for r in range(1, len(ranked) + 1)]
    codes = pl.DataFrame({"code": paths.codes}).with_row_index("row")
    place = pl.DataFrame({"code": [known[p] for p in ranked], "place": range(len(ranked))})
    ordered = codes.join(place, on="code").sort("place", "row")
    order = ordered["row"].to_numpy().astype(np.int64)
    scores = np.asarray([file_scores[p] for p in ordered["place"].to_list()], dtype=np.float64)
    return common.ChunkRanking(order, scores, ranked, file_scores)


def guard(retriever: Any, default_name: str, params: Mapping[str, Any] | None = None) -> _Guarded:
    """A ``score`` or ``rank_files`` retriever behind the plug-in guard (``params``: the
    factory and its options, for the resume fingerprint)."""
    if not callable(getattr(retriever, "index", None)) or not (
        callable(getattr(retriever, "score", None))
        or callable(getattr(retriever, "rank_files", None))
    ):
        msg = (
            f"{type(retriever).__name__} is not a retriever: it needs index(chunks) and "
            "score(index, query) or rank_files(index, query)"
        )
        raise InputError(msg, field="--method")
    name = str(getattr(retriever, "name", None) or default_name)
    found = params if params is not None else getattr(retriever, "params", None)
    family, prefetch, stats = (getattr(retriever, a, None) for a in ("family", "prefetch", "stats"))
    return _Guarded(retriever, name, family, dict(found or {}), prefetch, stats)


def bind(retriever: Any, default_name: str = "") -> common.RetrievalMethod:
    """The :class:`RetrievalMethod` the runner drives for ``retriever`` (attributes read once)."""
    if not callable(getattr(retriever, "rank", None)):
        retriever = guard(retriever, default_name)  # checks index and score or rank_files
    elif not callable(getattr(retriever, "index", None)):
        msg = f"{type(retriever).__name__} has rank() but no index(chunks); add index"
        raise InputError(msg, field="--method")
    name = str(getattr(retriever, "name", None) or default_name)
    model = getattr(retriever, "model", None)
    family = getattr(retriever, "family", None)
    return common.RetrievalMethod(
        name=name,
        ranker=str(getattr(retriever, "ranker", None) or name),
        build_index=retriever.index,
        rank_sample=retriever.rank,
        retriever=retriever,
        model=None if model is None else str(model),
        params=dict(getattr(retriever, "params", None) or {}),
        gold_only=bool(getattr(retriever, "gold_only", False)),
        family=None if family is None else str(family),
    )
