"""Your own retriever in arbwb: the public protocol, how a method is named, and the adapter.

A plug-in is a factory ``make(**options) -> retriever``. The retriever has optional ``name``
and ``family`` attributes and either

- ``index(chunks) -> Any``, called once per snapshot with that snapshot's candidate chunk rows
  (spec §6.2 filter applied) in chunk-file order, as a Polars frame with at least the columns
  ``chunk_id, path, kind, symbol, start_line, end_line, text``; and
- ``score(index, query) -> Sequence[float]``, one score per chunk row of that frame, where
  ``query`` is ARB's evaluation text (``json.dumps(query, sort_keys=True)``, spec §2.9);

or, instead of ``score``, ``rank_files(index, query) -> Sequence[str]`` returning file paths
best first. arbwb turns chunk scores into the file ranking as the built-in retrievers do
(chunks by score desc, ties by path then chunk_id; each file placed at its best chunk,
spec §7.2), keeps only candidate files, and writes ARB details + summary through the same
resumable runner (:func:`arbwb.retrievers.runner.run_method`). An exception inside the
plug-in makes that sample an error row (``status: "error"``, ``error: "plugin_error"``,
``error_message`` naming the sample; zero metrics, counted in the summary's ``errors``) and
the first traceback is printed once on stderr. Nothing the plug-in computes is cached.

A method is named by a built-in name (``lexical``, ``bm25``, ...), by ``package.module:factory``
(importable from ``PYTHONPATH`` or the current folder), or by the name of an installed
package's ``arbwb.retrievers`` entry point (``[project.entry-points."arbwb.retrievers"]``).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.errors import InputError
from arbwb.retrievers.common import (
    ChunkPaths,
    ChunkRanking,
    RetrievalMethod,
    chunk_paths,
    rank_chunks,
    tiebreak_order,
)

#: The entry-point group installed packages declare their retriever factories in.
ENTRY_POINT_GROUP = "arbwb.retrievers"
#: The error reason of a sample whose plug-in call raised (summary ``errors`` key).
PLUGIN_ERROR = "plugin_error"


class Retriever(Protocol):
    """A chunk retriever: ``index`` once per snapshot, then ``score`` per query (see module)."""

    def index(self, chunks: pl.DataFrame) -> Any:
        """Whatever ``score`` needs about one snapshot's candidate chunks."""
        ...

    def score(self, index: Any, query: str) -> Sequence[float]:
        """One score per chunk row given to ``index`` (higher is better)."""
        ...


class FileRetriever(Protocol):
    """A retriever that ranks files itself: ``rank_files`` replaces ``score``."""

    def index(self, chunks: pl.DataFrame) -> Any:
        """Whatever ``rank_files`` needs about one snapshot's candidate chunks."""
        ...

    def rank_files(self, index: Any, query: str) -> Sequence[str]:
        """File paths, best first (repeats and non-candidate paths are dropped)."""
        ...


#: A plug-in factory: keyword options in, retriever out.
Factory = Callable[..., Retriever | FileRetriever]


@dataclass(frozen=True)
class MethodSpec:
    """Where a method name leads: ``builtin``, an ``entry point`` (its dist) or a ``module``."""

    name: str
    source: str
    target: str  # "module:factory" for plug-ins, the name for built-ins


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``key=value`` strings as factory options; a value is JSON when it parses, else a string."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            msg = f"expected key=value, got {pair!r}"
            raise InputError(msg, field="--option")
        try:
            options[key] = json.loads(text)
        except ValueError:
            options[key] = text
    return options


def entry_points() -> dict[str, MethodSpec]:
    """Retriever factories installed packages declare (group ``arbwb.retrievers``), by name."""
    found: dict[str, MethodSpec] = {}
    for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = point.dist.name if point.dist is not None else "unknown distribution"
        found.setdefault(point.name, MethodSpec(point.name, f"entry point ({dist})", point.value))
    return found


def available() -> list[MethodSpec]:
    """Every method name ``arbwb rank --method`` accepts now: built-ins first, then entry points."""
    from arbwb.retrievers import METHOD_NAMES

    builtins = [MethodSpec(n, "built-in", n) for n in METHOD_NAMES]
    taken = {s.name for s in builtins}
    return builtins + [s for n, s in sorted(entry_points().items()) if n not in taken]


def resolve(name: str) -> MethodSpec:
    """The :class:`MethodSpec` of a ``--method`` value; unknown names list the available ones."""
    if ":" in name:
        return MethodSpec(name, "module", name)
    known = {s.name: s for s in available()}
    if name not in known:
        names = ", ".join(known)
        msg = (
            f"unknown method {name!r}; choose one of {names}, or name your own retriever "
            "as package.module:factory"
        )
        raise InputError(msg, field="--method")
    return known[name]


def load_factory(target: str) -> Factory:
    """Import ``package.module:factory`` (the current folder is importable too)."""
    module_name, _, attr = target.partition(":")
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)  # the current folder, after everything installed
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        msg = f"cannot import {module_name!r} ({exc}); put its folder on PYTHONPATH or run here"
        raise InputError(msg, field="--method") from None
    factory = getattr(module, attr, None) if attr else None
    if not callable(factory):
        msg = f"{module_name!r} has no callable {attr!r}; expected package.module:factory"
        raise InputError(msg, field="--method")
    return factory  # type: ignore[no-any-return]


def build(spec: MethodSpec, options: Mapping[str, Any]) -> RetrievalMethod:
    """The :class:`RetrievalMethod` of a plug-in spec, its factory called with ``options``."""
    factory = load_factory(spec.target)
    try:
        retriever = factory(**options)
    except TypeError as exc:
        msg = f"{spec.target} rejected the options {sorted(options)}: {exc}"
        raise InputError(msg, field="--option") from None
    default = spec.name if spec.source != "module" else spec.target.partition(":")[0]
    params = {"factory": spec.target, "options": dict(options), "source_sha256": _source(factory)}
    return adapt(retriever, default.rsplit(".", 1)[-1], params)


def _source(factory: Factory) -> str | None:
    """SHA-256 of the file defining ``factory``: a changed plug-in is never resumed or reused."""
    try:
        found = inspect.getsourcefile(factory)
    except TypeError:
        return None
    if found is None:
        return None
    with open(found, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@dataclass
class _Snapshot:
    """A plug-in's index of one snapshot with what arbwb needs to rank its chunks."""

    index: Any
    paths: ChunkPaths
    tiebreak: npt.NDArray[np.int64]
    error: BaseException | None = None


@dataclass
class _Adapter:
    """Calls a protocol object and turns its answers (or its exceptions) into rankings."""

    retriever: Any
    label: str
    reported: bool = False  # the first failure's traceback was printed

    def build_index(self, chunks: pl.DataFrame) -> _Snapshot:
        """The plug-in's index of a snapshot; a raising ``index`` fails the snapshot's samples."""
        paths, tiebreak = chunk_paths(chunks), tiebreak_order(chunks)
        try:
            return _Snapshot(self.retriever.index(chunks), paths, tiebreak)
        except Exception as exc:  # the plug-in's failure becomes its samples' error rows
            return _Snapshot(None, paths, tiebreak, exc)

    def rank_record(self, snapshot: _Snapshot, row: Mapping[str, Any]) -> ChunkRanking:
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
                print(f"{self.label} raised on {message}\n{''.join(lines)}", file=sys.stderr)
            self.reported = True
            return _error_ranking(message)

    def rank_query(self, snapshot: _Snapshot, query: str) -> ChunkRanking:
        """A query's ranking outside a sample (library use); errors name no sample."""
        return self.rank_record(snapshot, {"sample_id": "(no id)", "query_text": query})

    def _rank(self, snapshot: _Snapshot, query: str) -> ChunkRanking:
        if hasattr(self.retriever, "score"):
            raw = self.retriever.score(snapshot.index, query)
            scores = np.asarray(raw, dtype=np.float64)
            n_chunks = len(snapshot.paths.codes)
            if scores.shape != (n_chunks,):
                msg = f"score() returned {scores.shape[0] if scores.ndim else 0} scores for "
                msg += f"{n_chunks} chunks; return one score per chunk row"
                raise ValueError(msg)
            if not np.isfinite(scores).all():
                msg = "score() returned NaN or infinite scores; return finite numbers"
                raise ValueError(msg)
            return rank_chunks(scores, snapshot.tiebreak, snapshot.paths)
        return file_ranking(self.retriever.rank_files(snapshot.index, query), snapshot.paths)


def file_ranking(files: Sequence[str], paths: ChunkPaths) -> ChunkRanking:
    """A ``rank_files`` answer as a ranking: candidate paths only, first occurrence kept.

    The file at rank r scores 1/r; its chunks follow in chunk-file order with that score,
    so the 8k packing and line metrics read the ranked files' chunks best file first.
    """
    known = {name: code for code, name in enumerate(paths.names)}
    ranked = [p for p in dict.fromkeys(files) if p in known]
    file_scores = [1.0 / r for r in range(1, len(ranked) + 1)]
    codes = pl.DataFrame({"code": paths.codes}).with_row_index("row")
    place = pl.DataFrame({"code": [known[p] for p in ranked], "place": range(len(ranked))})
    ordered = codes.join(place, on="code").sort("place", "row")
    order = ordered["row"].to_numpy().astype(np.int64)
    scores = np.asarray([file_scores[p] for p in ordered["place"].to_list()], dtype=np.float64)
    return ChunkRanking(order, scores, ranked, file_scores)


def _error_ranking(message: str) -> ChunkRanking:
    """An empty ranking whose details row says ``status: error`` (zero metrics, counted)."""
    return ChunkRanking(
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=np.float64),
        [],
        [],
        details={"status": "error", "error": PLUGIN_ERROR, "error_message": message},
    )


def adapt(
    retriever: Any, default_name: str, params: Mapping[str, Any] | None = None
) -> RetrievalMethod:
    """The :class:`RetrievalMethod` for a protocol object, so the runner is reused unchanged.

    ``name`` defaults to ``default_name``; ``params`` (the factory and its options) go into
    the resume fingerprint.
    """
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
    family = getattr(retriever, "family", None)
    adapter = _Adapter(retriever, name)
    return RetrievalMethod(
        name=name,
        ranker=name,
        build_index=adapter.build_index,
        rank_sample=adapter.rank_query,
        rank_record=adapter.rank_record,
        params=dict(params or {}),
        family=None if family is None else str(family),
    )


def method_for(
    name: str, options: Mapping[str, Any], builtin: Callable[[], RetrievalMethod]
) -> RetrievalMethod:
    """The :class:`RetrievalMethod` a ``--method`` value names; ``builtin()`` makes a built-in."""
    spec = resolve(name)
    if spec.source == "built-in":
        if options:
            msg = f"--option applies to plug-in retrievers, not the built-in {name!r}"
            raise InputError(msg, field="--option")
        return builtin()
    return build(spec, options)
