"""The RepoMap index's fast text paths equal their literal Python definitions (arbwb-defined)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb.retrievers import repomap as rm
from arbwb.retrievers import repomap_paths as rp
from arbwb.retrievers.repomap_index import (
    RepoMapIndex,
    assemble,
    build_index,
    gather,
    load_index,
    save_index,
)
from arbwb.retrievers.repomap_paths import CONTENT_PREFIX, TextMemo, content_tokens_of
from arbwb.tokenize import split_identifiers, token_lists

TRICKY = [
    "",
    "getHTTPResponse v2Api snake_case",
    "\u212aelvin caf\u00e9Bar \u0130stanbul aB\u00e9Cd x\u00dfY",  # Kelvin sign, dotted I, sharp s
    "fooé\u0301Bar\u2028bazQux\x1cquux",
    "a" * (CONTENT_PREFIX - 2) + "bCdE tail",  # a token cut at the 20,000-character prefix
]


def _random_texts(n: int) -> list[str]:
    rng = random.Random(7)
    alphabet = "aAzZ09 _\n.\u212a\u0130\u00e9\u00df\u2028K"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randrange(60))) for _ in range(n)]


@pytest.mark.parametrize("count", [0, 1, 3, 4000])
def test_byte_content_tokens_are_the_identifier_splitter(count: int) -> None:
    texts = (TRICKY + _random_texts(count))[:count]
    got = content_tokens_of(texts).to_list()
    assert got == [list(dict.fromkeys(split_identifiers(t[:CONTENT_PREFIX]))) for t in texts]


def test_byte_content_tokens_split_at_text_camel_and_non_ascii_boundaries() -> None:
    texts = ["fooB", "Ar", "", "\u00e9", "xY", "Z9", "a\u00e9B", "ab\x00cD", "\U0001f600qQq", "\n"]
    want = [["foo", "b"], ["ar"], [], [], ["x", "y"], ["z9"], ["a", "b"], ["ab", "c", "d"]]
    assert content_tokens_of(texts).to_list() == [*want, ["q", "qq"], []]


def test_content_token_ids_follow_first_appearance() -> None:
    memo = TextMemo()
    texts = ["zeta alpha", "beta alpha", "", "gammaDelta zeta"]
    ids, then = memo.content_tokens(texts, then=pl.Series(["zeta", "omega", "omega"]))
    # Literal: ids assigned token by token over each text's distinct tokens in text order.
    literal: dict[str, int] = {}
    want = []
    for text in texts:
        tokens = list(dict.fromkeys(split_identifiers(text)))
        want.append([literal.setdefault(t, len(literal)) for t in tokens])
    assert [list(x) for x in ids] == want
    assert then.tolist() == [literal["zeta"], len(literal), len(literal)]
    literal["omega"] = len(literal)
    assert memo.words == list(literal)
    got = memo.series_ids(pl.Series(["beta", "new", "zeta", "new", "newer"])).tolist()
    assert got == [literal["beta"], len(literal), literal["zeta"], len(literal), len(literal) + 1]
    assert memo.words == [*literal, "new", "newer"]
    assert memo.table.rows() == [(w, i) for i, w in enumerate(memo.words)]


def test_batch_import_specs_equal_per_text_scan() -> None:
    texts = [
        "",
        "import os\nfrom a.b import c\n\n# import hidden\n  use crate::x::y;\n",
        "import a\r\nimport b\x0bimport c\x1cfrom d import e\u2028require('f')\x85import g",
        "x\n" * 1999 + "import last\nimport beyond",
        "import many\n" * 300,
        "\n\nimport 'z'\n",
        'const q = require( "lib/q" )\n#include <stdio.h>\n * import doc\n',
    ]
    memo = TextMemo()
    got = memo.import_specs(texts + texts[:2])
    assert got == [rp.import_specs(t) for t in texts + texts[:2]]
    assert got[3] == ["last"] and len(got[4]) == rp.MAX_SPECS
    assert got[2] == ["a", "b", "c", "d", "f", "g"]


def test_pseudo_chunk_lengths_round_trip_with_non_ascii_and_empty(tmp_path: Path) -> None:
    rows = [
        ("a.py", "file", "", "caf\u00e9 \U0001f600 import b\n"),
        ("b.py", "file", "", ""),
        ("c.md", "function", "Sym", "x"),
        ("d/\u00e9.py", "file", "", "\u2028\x00\u212a"),
    ]
    chunks = pl.DataFrame(rows, schema=["path", "kind", "symbol", "text"], orient="row")
    for frame in (chunks, chunks.clear()):
        index = build_index(frame)
        save_index(index, tmp_path / "i.npz")
        loaded = load_index(tmp_path / "i.npz")
        assert loaded is not None
        assert loaded.paths == index.paths
        assert loaded.chunk_chars.tolist() == index.chunk_chars.tolist()
    # §9: the node text's length in code points (Python len), the path's when it is empty;
    # c.md has only a symbol row, so no text
    want = [len(rows[0][3]), len("b.py"), len("c.md"), len(rows[3][3])]
    assert build_index(chunks).chunk_chars.tolist() == want == [16, 4, 4, 3]


def test_batch_import_specs_equal_per_text_scan_on_random_texts() -> None:
    rng = random.Random(3)
    pieces = ["import ", "from ", "require(", "'", '"', ")", "use ", "crate::", "super::"]
    pieces += ["#include ", "<", ">", "a.b", "x/y", "::", "\n", " ", "\t", "\xa0", "\u3000"]
    pieces += ["//", "# ", "*", "-", ":", ".", "\u00e9", "\x1f", "z", "\u2028", "\r"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(40))) for _ in range(3000)]
    assert TextMemo().import_specs(texts) == [rp.import_specs(t) for t in texts]


def test_token_lists_are_the_identifier_splitter_in_order() -> None:
    texts = [*TRICKY, None, *_random_texts(400)]
    got = token_lists(pl.Series(texts, dtype=pl.String)).to_list()
    assert got == [split_identifiers(t or "") for t in texts]
    assert token_lists(pl.Series([], dtype=pl.String)).to_list() == []
    assert token_lists(pl.Series(["", None], dtype=pl.String)).to_list() == [[], []]


def _snapshot(texts: dict[str, str]) -> pl.DataFrame:
    rows = [(p, "file", "", t) for p, t in texts.items()]
    rows += [(p, "function", f"fn{p.split('/')[-1].split('.')[0]}Helper", "") for p in texts]
    return pl.DataFrame(rows, schema=["path", "kind", "symbol", "text"], orient="row")


def _same(a: RepoMapIndex, b: RepoMapIndex) -> None:
    assert (a.paths, a.stats, a.chunk_chars.tolist(), a.kinds.tolist()) == (
        b.paths,
        b.stats,
        b.chunk_chars.tolist(),
        b.kinds.tolist(),
    )
    # token ids may differ between memos: compare per node {token: factor} and idf by token
    for index in (a, b):
        assert index.terms.shape[1] == len(index.vocab)

    def by_token(index: RepoMapIndex) -> list[dict[str, tuple[float, float]]]:
        csr = index.terms.tocsr()
        return [
            {
                index.vocab[c]: (float(x), float(index.idf[c]))
                for c, x in zip(
                    csr.indices[csr.indptr[f] : csr.indptr[f + 1]],
                    csr.data[csr.indptr[f] : csr.indptr[f + 1]],
                    strict=True,
                )
            }
            for f in range(len(index.paths))
        ]

    assert by_token(a) == by_token(b)
    assert a.n_terms.tolist() == b.n_terms.tolist()
    assert (a.graph != b.graph).nnz == 0


@pytest.mark.parametrize("limit", [1, 20000])
def test_gathered_ahead_with_known_texts_equals_fresh_builds(limit: int) -> None:
    """A snapshot gathered while the previous one is not assembled yet (its fresh texts passed
    as ``known``), even when the memo is trimmed in between, indexes like a fresh build."""
    rng = random.Random(5)
    words = ["alphaBeta", "gamma_delta", "import pkg.mod", "from . import util", "Zeta9", "x"]
    base = {f"pkg/m{i}.py": " ".join(rng.choice(words) for _ in range(12)) for i in range(8)}
    first = _snapshot(base)
    second = _snapshot(base | {"pkg/m1.py": "changed textOnly", "pkg/new.py": "import pkg.m2"})
    memo = TextMemo(limit=limit)
    gathered_first = gather(first, memo)
    gathered_second = gather(second, memo, known=set(gathered_first.tokenised.result()[0]))
    assert len(gathered_second.tokenised.result()[0]) == 2  # only the changed and the new text
    got_first = assemble(gathered_first, 80, memo)
    got_second = assemble(gathered_second, 80, memo)
    _same(got_first, build_index(first))
    _same(got_second, build_index(second))


def test_method_read_ahead_indexes_like_fresh_builds() -> None:
    """Snapshots indexed through the method (the next one read while one is assembled, content
    tokens on their own thread, texts shared between snapshots) equal fresh builds."""
    rng = random.Random(11)
    words = ["alphaBeta", "gamma_delta", "import pkg.m1", "from . import m2", "Zeta9", "x"]
    base = {f"pkg/m{i}.py": " ".join(rng.choice(words) for _ in range(12)) for i in range(10)}
    versions = [
        base,
        base | {"pkg/m1.py": "changed textOnly"},
        base | {"pkg/m2.py": "import pkg.m1", "pkg/new.py": "import pkg.new"},
        {path: text for path, text in base.items() if path != "pkg/m3.py"},
    ]
    frames = {f"s{k}": _snapshot(texts) for k, texts in enumerate(versions)}

    class Snapshots:
        def chunks(self, snapshot: str) -> pl.DataFrame:
            return frames[snapshot]

    retriever = rm.RepoMap()
    corpus: Any = Snapshots()
    retriever.prefetch(corpus, list(frames), "all_files")
    for name, chunks in frames.items():
        prepared = retriever.index_snapshot(corpus, name, "all_files")
        assert prepared is not None
        _same(prepared[0].index, build_index(chunks))
