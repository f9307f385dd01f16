"""Dense passages encoded on Ray actors (one per GPU, else per CPU) in the single-process batches,
into the driver's embedding cache; ranking is then the normal dense path (Ray: optional)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from arbwb.errors import InputError
from arbwb.io.corpus import Corpus
from arbwb.io.pathclass import CandidateFilter
from arbwb.io.samples import SampleSet
from arbwb.retrievers import dense
from arbwb.retrievers.common import RetrievalMethod

INSTALL_HINT = "needs Ray: pip install 'arbwb[ray]'"
#: The single-process cache's batch size: each such batch is cut as sentence-transformers cuts it.
BATCH = 256
#: sentence-transformers' own encode batch (its default), the texts of one actor call.
MINI = 32
#: Texts per prefetch group (``EmbeddingCache.prefetch``'s default): one call, one shard.
GROUP = 4096


def import_ray() -> Any:
    """The ``ray`` module, or the one-line install hint (exit 2) when the extra is missing."""
    try:
        import ray
    except ImportError:
        raise InputError(INSTALL_HINT, field="--ray") from None
    return ray


class EncoderActor:
    """The body of one Ray actor: one model on one device, encoding passage batches."""

    def __init__(self, model: str, device: str) -> None:
        import torch

        torch.set_num_threads(1)  # one thread per actor: the actors share the node's cores
        self._encode, _ = dense.sentence_transformer_encoder(model, device=device)

    def encode(self, texts: list[str]) -> npt.NDArray[np.floating]:
        """Raw passage vectors (the driver's cache normalises them, as in one process)."""
        return self._encode(texts, False)


class PoolEncoder:
    """A dense ``Encoder`` mapping mini-batches over an ``ActorPool`` made on first use (a fully
    cached run starts none); counts the texts it sent.

    Each ``batch_size`` batch is ordered longest first and cut into ``MINI`` texts, exactly the
    model batches ``SentenceTransformer.encode`` forms from it in one process (non-flattened
    inputs, as on CPU), so every text meets the same companions and padding: identical vectors,
    while small calls keep all actors busy."""

    def __init__(self, make_pool: Callable[[], Any], batch_size: int = BATCH) -> None:
        self.make_pool = make_pool
        self.batch_size = batch_size
        self.encoded = 0
        self._pool: Any = None

    def __call__(self, texts: Sequence[str], is_query: bool) -> npt.NDArray[np.floating]:
        del is_query  # passages only: queries are encoded by the driver's own model
        if self._pool is None:
            self._pool = self.make_pool()
        order: list[int] = []
        for start in range(0, len(texts), self.batch_size):
            lengths = [-len(t) for t in texts[start : start + self.batch_size]]
            order.extend(start + int(i) for i in np.argsort(lengths))  # st's sort, st's argsort
        minis = [[texts[i] for i in order[k : k + MINI]] for k in range(0, len(order), MINI)]
        parts = list(self._pool.map(lambda actor, batch: actor.encode.remote(batch), minis))
        self.encoded += len(texts)
        if not parts:
            return np.zeros((0, 0), dtype=np.float32)
        stacked = np.concatenate(parts)
        vectors = np.empty_like(stacked)
        vectors[order] = stacked  # back to the caller's order
        return vectors


@dataclass(frozen=True)
class RayEncoding:
    """What the Ray step did: its actors, the texts they encoded, the vectors now cached."""

    actors: int
    device: str
    encoded: int
    cached: int
    seconds: float


def encode(
    address: str,
    corpus: Corpus,
    snapshot_ids: Sequence[str],
    candidate_filter: CandidateFilter,
    *,
    model: str,
    directory: Path,
) -> RayEncoding:
    """Encode on Ray every distinct candidate passage of ``snapshot_ids`` not in ``directory``."""
    ray = import_ray()
    start = time.perf_counter()
    joined = not ray.is_initialized()  # else join the cluster at address (auto: here or new)
    if joined:
        ray.init(address=None if address == "auto" else address, log_to_driver=False)
    try:
        found = ray.cluster_resources()  # one actor per GPU if any, else one per CPU
        gpus = int(found.get("GPU", 0))
        actors, device = (gpus, "cuda") if gpus else (max(1, int(found.get("CPU", 1))), "cpu")
        actor = ray.remote(num_cpus=1, **({"num_gpus": 1} if gpus else {}))(EncoderActor)
        encoder = PoolEncoder(
            lambda: ray.util.ActorPool([actor.remote(model, device) for _ in range(actors)])
        )
        cache = dense.EmbeddingCache(encoder, directory, batch_size=GROUP)
        if cache.directory is None:
            msg = f"needs a writable embedding cache ({directory}); set ARBWB_CACHE_DIR"
            raise InputError(msg, field="--ray")
        try:
            dense.prefetch(cache, corpus, snapshot_ids, candidate_filter)
        except ray.exceptions.RayError as exc:
            reason = str(exc).strip().splitlines()[-1]
            msg = f"encoding failed ({reason}); every node needs arbwb[dense] and {model}"
            raise InputError(msg, field="--ray") from None
    finally:
        if joined:
            ray.shutdown()
    return RayEncoding(
        actors, device, encoder.encoded, len(cache.vectors), time.perf_counter() - start
    )


def method(
    address: str,
    corpus: Corpus,
    sample_set: SampleSet,
    candidate_filter: CandidateFilter,
    *,
    model: str | None,
    cache_dir: Path | str | None,
) -> RetrievalMethod:
    """The dense method of ``arbwb rank --ray``: model loaded here (queries), passages encoded
    on Ray into the cache, then :func:`dense.method` over it."""
    import_ray()
    if cache_dir is None:
        msg = "needs a writable embedding cache; set ARBWB_CACHE_DIR or pass --cache-dir"
        raise InputError(msg, field="--ray")
    encoder, label = dense.sentence_transformer_encoder(model)
    snapshots = sample_set.samples["snapshot_id"].unique().sort().to_list()
    present = [s for s in snapshots if corpus.has(s)]
    directory = dense.cache_folder(cache_dir, label)
    report = encode(address, corpus, present, candidate_filter, model=label, directory=directory)
    line = f"ray: {report.actors} {report.device} actor(s) encoded {report.encoded} passages in "
    print(f"{line}{report.seconds:.1f}s; {report.cached} vectors cached", file=sys.stderr)
    return dense.method(label, encoder=encoder, cache_dir=cache_dir)
