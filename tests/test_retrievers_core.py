"""Lexical, BM25 (upstream and rank-bm25) and shared pieces: spec §7.1-7.3, TV2, TV6."""

from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
import polars as pl
import pytest
import rank_bm25

from arbwb.retrievers import METHOD_NAMES, bm25, lexical
from arbwb.retrievers.common import (
    MEMO_FACTOR,
    TermMatrix,
    TermMemo,
    chunk_documents,
    chunk_paths,
    rank_chunks,
    term_matrix,
    tiebreak_order,
)
from arbwb.retrievers.registry import METHODS, get_method
from arbwb.tokenize import split_identifiers

TOKEN = "def refresh_token(value):\n    return value"
TV6_QUERY = json.dumps(
    {"failure_excerpt": "refresh token failed in auth.py", "command": "pytest tests"},
    ensure_ascii=False,
    sort_keys=True,
)


def frame(rows: list[tuple[str, str, str, str, str]]) -> pl.DataFrame:
    """Chunks frame from (chunk_id, path, kind, symbol, text) rows."""
    return pl.DataFrame(
        {
            "chunk_id": [r[0] for r in rows],
            "path": [r[1] for r in rows],
            "kind": [r[2] for r in rows],
            "symbol": [r[3] for r in rows],
            "start_line": [1] * len(rows),
            "end_line": [max(1, r[4].count("\n") + 1) for r in rows],
            "text": [r[4] for r in rows],
        }
    )


TV6 = frame(
    [
        ("c1", "src/auth.py", "file", "", TOKEN),
        ("c2", "src/auth.py", "symbol", "refresh_token", TOKEN),
        ("c3", "src/session.py", "file", "", "class Session:\n    token = None"),
        (
            "c4",
            "tests/test_auth.py",
            "file",
            "",
            "from src.auth import refresh_token\ndef test_refresh():\n"
            "    assert refresh_token(1) == 1",
        ),
    ]
)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("getHTTPResponse v2Api snake_case", ["get", "httpresponse", "v2api", "snake", "case"]),
        ("FooBar.baz-qux_2", ["foo", "bar", "baz", "qux", "2"]),
        ("ABCdef aB", ["abcdef", "a", "b"]),
        ("é café", ["caf"]),
        (
            '{"pr_title": "Fix parseURL in src/app.py"}',
            ["pr", "title", "fix", "parse", "url", "in", "src", "app", "py"],
        ),
        (
            json.dumps({"failure_excerpt": "error here\nfoo failed\nFoo\tbar"}),
            ["failure", "excerpt", "error", "here", "nfoo", "failed", "n", "foo", "tbar"],
        ),
    ],
)
def test_tv2_polars_term_matrix_matches_splitter(text: str, tokens: list[str]) -> None:
    """TV2: the Polars tokenisation of a document gives exactly the §7.1 tokens."""
    matrix = term_matrix(frame([("x", "", "", "", text)]))
    dense = matrix.counts.toarray()[0]
    got = Counter({t: int(dense[c]) for t, c in matrix.vocab.items() if dense[c]})
    assert got == Counter(tokens)
    assert split_identifiers(text) == tokens
    assert matrix.doc_len[0] == len(tokens)
    assert matrix.n_unique[0] == len(set(tokens))


def test_chunk_document_indexes_kind_word() -> None:
    """§7.2 QUIRK: non-empty path, symbol, kind, text joined by spaces."""
    docs = chunk_documents(TV6)
    assert docs[1] == f"src/auth.py refresh_token symbol {TOKEN}"
    assert chunk_documents(frame([("x", "a.py", "file", "", "")])) == ["a.py file"]


def test_tv6_lexical_scores_order_and_files() -> None:
    ranking = lexical.rank_sample(lexical.build_index(TV6), TV6_QUERY)
    expected = [3.669384931184183, 3.669384931184183, 1.1817659593537717, 0.5239700176363428]
    assert ranking.order.tolist() == [0, 1, 3, 2]
    assert ranking.scores.tolist() == pytest.approx(expected, abs=1e-12, rel=0)
    assert ranking.files == ["src/auth.py", "tests/test_auth.py", "src/session.py"]
    assert ranking.file_scores[0] == ranking.scores[0]


def test_tv6_bm25_arb_scores_bit_exact() -> None:
    ranking = bm25.rank_sample(bm25.build_index(TV6), TV6_QUERY)
    assert ranking.order.tolist() == [3, 1, 0, 2]
    assert ranking.scores.tolist() == [
        2.1323996107112135,
        1.1307269963854905,
        1.0073298118011738,
        0.2497056961177021,
    ]
    assert ranking.files == ["tests/test_auth.py", "src/auth.py", "src/session.py"]


@pytest.mark.parametrize("name", ["lexical", "bm25-arb", "bm25"])
def test_token_free_query_keeps_corpus_order(name: str) -> None:
    """§7.2: a query without tokens returns chunks in corpus order with score 0."""
    chunks = frame([("z", "b.py", "file", "", "x"), ("a", "a.py", "file", "", "y")])
    method = get_method(name)
    ranking = method.rank_sample(method.build_index(chunks), "{}")
    assert ranking.order.tolist() == [0, 1]
    assert ranking.files == ["b.py", "a.py"]
    assert ranking.scores.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("name", ["lexical", "bm25-arb", "bm25"])
def test_ties_break_by_path_then_chunk_id(name: str) -> None:
    """Equal scores sort by path asc then chunk_id asc, not by corpus order."""
    chunks = frame(
        [
            ("c9", "z.py", "file", "", "alpha"),
            ("c2", "m.py", "file", "", "alpha"),
            ("c1", "m.py", "file", "", "alpha"),
            ("c0", "a.py", "file", "", "beta"),
            *[(f"d{i}", f"b{i}.py", "file", "", "beta") for i in range(4)],
        ]
    )
    method = get_method(name)
    ranking = method.rank_sample(method.build_index(chunks), '{"q": "alpha"}')
    assert ranking.order.tolist()[:3] == [2, 1, 0]
    assert ranking.files[:2] == ["m.py", "z.py"]


def random_corpus(seed: int, n: int = 60) -> tuple[pl.DataFrame, list[str]]:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "theta", "iota", "kappa", "mu"]
    rows = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 12)))
        kind = rng.choice(["file", "symbol"])
        rows.append((f"c{i:03d}", f"src/m{rng.randint(0, 9)}.py", kind, "", text))
    queries = [
        json.dumps({"q": " ".join(rng.choice(words) for _ in range(rng.randint(1, 6)))})
        for _ in range(8)
    ]
    return frame(rows), queries


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bm25_okapi_fast_scorer_equals_rank_bm25(seed: int) -> None:
    """``bm25`` reproduces rank-bm25's BM25Okapi.get_scores (incl. epsilon floor) to 1e-9."""
    chunks, queries = random_corpus(seed)
    docs = [split_identifiers(d) for d in chunk_documents(chunks)]
    reference = rank_bm25.BM25Okapi(docs)
    index = bm25.build_okapi_index(chunks)
    for term, col in index.terms.vocab.items():
        assert index.okapi_idf is not None
        assert index.okapi_idf[col] == pytest.approx(reference.idf[term], abs=1e-12)
    for query in queries:
        expected = reference.get_scores(split_identifiers(query))
        got = bm25.scores(index, query)
        assert got is not None
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)


def test_bm25_okapi_differs_from_upstream_idf() -> None:
    """The two BM25 runs differ: a term in > half the chunks gets the epsilon floor in rank-bm25."""
    rows = [
        (f"c{i}", f"f{i}.py", "file", "", "common rare" if i == 0 else "common") for i in range(5)
    ]
    chunks = frame(rows)
    okapi = bm25.build_okapi_index(chunks)
    arb = bm25.build_index(chunks)
    col = okapi.terms.vocab["common"]
    assert arb.okapi_idf is None
    assert bm25.upstream_idf(5, 5) == np.log(1 + (5 - 5 + 0.5) / (5 + 0.5))
    mean_idf = float(np.mean([np.log(5 - d + 0.5) - np.log(d + 0.5) for d in okapi.terms.df]))
    assert okapi.okapi_idf is not None
    assert okapi.okapi_idf[col] == pytest.approx(0.25 * mean_idf, abs=1e-12)


def test_registry_lists_methods_and_rejects_unknown() -> None:
    assert {"lexical", "bm25-arb", "bm25", "grep", "dense"} <= set(METHODS)
    assert "rrf" in METHOD_NAMES
    with pytest.raises(ValueError, match="unknown retrieval method 'bm99'"):
        get_method("bm99")


@pytest.mark.parametrize("name", ["lexical", "bm25-arb", "bm25"])
def test_token_memo_reuse_gives_identical_rankings(name: str) -> None:
    """A method instance reuses the previous snapshot's documents; results equal a fresh index."""
    first, queries = random_corpus(7)
    second, _ = random_corpus(8)
    second = pl.concat([first.head(40), second.head(25)])  # shares 40 chunk documents
    shared = get_method(name)
    shared.build_index(first)
    reused = shared.build_index(second)
    fresh_method = get_method(name)
    fresh = fresh_method.build_index(second)
    assert shared.stats()["token_memo_hits"] >= 40
    assert fresh_method.stats()["token_memo_hits"] == 0
    for query in [*queries, TV6_QUERY]:
        a, b = shared.rank_sample(reused, query), fresh_method.rank_sample(fresh, query)
        assert a.order.tolist() == b.order.tolist()
        # upstream IDF is per term (bit-equal); rank-bm25's mean IDF is summed in column order
        assert a.scores.tolist() == pytest.approx(b.scores.tolist(), abs=1e-12, rel=0)
        if name != "bm25":
            assert a.scores.tolist() == b.scores.tolist()


def row_terms(matrix: TermMatrix) -> list[dict[str, int]]:
    """Each row's {term: count}, independent of the vocabulary's id order."""
    names = {col: term for term, col in matrix.vocab.items()}
    csr = matrix.counts.tocsr()
    return [
        {names[c]: int(v) for c, v in zip(row.indices, row.data, strict=True)}
        for row in (csr[i] for i in range(csr.shape[0]))
    ]


def test_token_memo_accumulates_then_restarts() -> None:
    """The memo keeps older snapshots' documents until it exceeds MEMO_FACTOR x the latest
    snapshot's chunks, then restarts from that snapshot; matrices always equal a fresh build."""
    docs = {k: (k, f"{k}.py", "file", "", f"{k} word{k} shared") for k in ("a0", "a1", "a2", "a3")}
    docs["b0"] = ("b0", "b0.py", "symbol", "B0", "beta shared")
    memo = TermMemo()
    steps = [  # snapshot, memo rows after it (4 <= 2*4, 5 <= 2*3 grow; 5 > 2*2, 3 > 2*1 restart)
        (["a0", "a1", "a2", "a3"], 4),
        (["a0", "a1", "b0"], 5),
        (["a3", "a0"], 2),
        (["a1"], 1),
    ]
    for names, memo_rows in steps:
        chunks = frame([docs[k] for k in names])
        assert row_terms(term_matrix(chunks, memo)) == row_terms(term_matrix(chunks))
        assert memo.counts.shape[0] == memo_rows == memo.table.height
    assert MEMO_FACTOR == 2
    assert memo.stats() == {"token_memo_hits": 4, "token_memo_misses": 6}


def test_new_terms_get_sorted_ids_and_counts() -> None:
    """Ids of new terms follow sorted order (not Polars' group order); counts keep multiplicity;
    a document repeated within a snapshot is tokenised once."""
    text = "zeta alpha zeta Beta"
    memo = TermMemo()
    chunks = frame([("x", "", "", "", text), ("y", "", "", "", ""), ("z", "", "", "", text)])
    matrix = term_matrix(chunks, memo)
    assert matrix.vocab == {"alpha": 0, "beta": 1, "zeta": 2}
    assert matrix.counts.toarray().tolist() == [[1, 1, 2], [0, 0, 0], [1, 1, 2]]
    assert matrix.doc_len.tolist() == [4.0, 0.0, 4.0]
    assert matrix.n_unique.tolist() == [3.0, 0.0, 3.0]
    assert matrix.df.tolist() == [2, 2, 2]
    assert memo.stats() == {"token_memo_hits": 1, "token_memo_misses": 2}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rank_chunks_equals_sorted_literal(seed: int) -> None:
    """(score desc, path asc, chunk_id asc) with many ties; files by first appearance."""
    rng = random.Random(seed)
    n = 300
    chunks = frame(
        [
            (f"c{rng.randrange(10**6):06d}", f"p{rng.randrange(40)}.py", "file", "", "")
            for _ in range(n)
        ]
    )
    scores = np.array([rng.choice([0.0, 0.5, 1.25, 2.0, rng.random()]) for _ in range(n)])
    ranking = rank_chunks(scores, tiebreak_order(chunks), chunk_paths(chunks))
    rows = chunks.select("path", "chunk_id").rows()
    expected = sorted(range(n), key=lambda i: (-scores[i], rows[i][0], rows[i][1], i))
    assert ranking.order.tolist() == expected
    assert ranking.scores.tolist() == [scores[i] for i in expected]
    files = list(dict.fromkeys(rows[i][0] for i in expected))
    assert ranking.files == files
    best = {p: max(s for s, (q, _) in zip(scores, rows, strict=True) if q == p) for p in files}
    assert ranking.file_scores == [best[p] for p in files]
