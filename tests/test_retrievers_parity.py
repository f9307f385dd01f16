"""Parity: lexical and bm25-arb equal a literal, loop-by-loop reading of spec §7 on a corpus
built with ``arbwb snapshot build`` from a small git repository made here."""

from __future__ import annotations

import json
import math
import re
import subprocess
from collections import Counter
from typing import Any

import polars as pl
import pytest

from arbwb.io.corpus import open_corpus
from arbwb.metrics import chunks as cm
from arbwb.release.snapshot import build_snapshots
from arbwb.retrievers import bm25, lexical
from arbwb.retrievers import details as det
from arbwb.retrievers.common import chunk_documents
from arbwb.retrievers.registry import get_method

FILES = {
    "src/auth/tokens.py": (
        "import hashlib\n\n\ndef refresh_token(value):\n"
        "    return hashlib.sha1(value).hexdigest()\n"
        "\n\nclass TokenStore:\n    def get(self, key):\n        return self.cache.get(key)\n"
    ),
    "src/auth/session.py": (
        "class Session:\n    token = None\n\n    def refresh(self):\n        pass\n"
    ),
    "src/http/client.py": (
        "def parseURL(url):\n    return url.split('/')\n\n\ndef fetch(url, retries=3):\n"
        "    for attempt in range(retries):\n        print(attempt)\n"
    ),
    "tests/test_tokens.py": (
        "from src.auth.tokens import refresh_token\n\n\ndef test_refresh():\n"
        "    assert refresh_token(b'1')\n"
    ),
    "tests/test_client.py": "def test_parse():\n    assert parseURL('a/b') == ['a', 'b']\n",
    "README.md": "# Demo\nTokens and sessions. refresh token docs.\n",
    "docs/guide.md": "How to fetch a URL with retries.\n",
    "same_a.py": "alpha beta\n",
    "same_b.py": "alpha beta\n",
}
QUERIES = [
    {"failure_excerpt": "refresh token failed in tokens.py", "command": "pytest tests"},
    {"pr_title": "Fix parseURL retries", "pr_body": "fetch(url) should retry\nonce more"},
    {"review_comment": "alpha beta"},
    {"text": "TokenStore get cache miss in src/auth/tokens.py"},
    {},
    {"text": "zzz qqq"},
]


GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z",
    "PATH": "/usr/bin:/bin",
}
#: The second commit edits one file (new symbol) and adds another.
EDITS = {
    "src/auth/tokens.py": FILES["src/auth/tokens.py"]
    + "\n\ndef rotateToken(value):\n    return value\n",
    "src/auth/extra.py": "def refresh_all(tokens):\n    return [refresh_token(t) for t in ts]\n",
}


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> list[pl.DataFrame]:
    """Chunks of two commits (FILES, then FILES + EDITS) built with ``arbwb snapshot build``."""
    root = tmp_path_factory.mktemp("parity")
    repo = root / "repo"
    env = {**GIT_ENV, "HOME": str(root)}
    commits: list[str] = []
    for files in (FILES, EDITS):
        for path, text in files.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text, encoding="utf-8")
        if not commits:
            subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
        for args in (["add", "-A"], ["commit", "-qm", "change"]):
            subprocess.run(["git", *args], cwd=repo, check=True, env=env)
        commits.append(
            subprocess.run(
                ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
            ).stdout.strip()
        )
    build_snapshots(
        repo, "o/demo", commits, root / "corpus" / "R", stamp="2020-01-01T00:00:00+00:00"
    )
    corpus = open_corpus(root / "corpus" / "R")
    return [corpus.chunks(f"o/demo@{commit}") for commit in commits]


@pytest.fixture(scope="module")
def chunks(snapshots: list[pl.DataFrame]) -> pl.DataFrame:
    return snapshots[0]


def literal_tokens(text: str) -> list[str]:
    """Spec §7.1 as written."""
    return [
        t.lower() for t in re.findall(r"[A-Za-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text))
    ]


def literal_rank(rows: list[dict[str, Any]], q: str, method: str) -> list[tuple[float, str, str]]:
    """Spec §7.2 / §7.3 one chunk at a time; returns (score, path, chunk_id) sorted."""
    docs = [
        literal_tokens(" ".join(v for v in (r["path"], r["symbol"], r["kind"], r["text"]) if v))
        for r in rows
    ]
    q_tokens = literal_tokens(q)
    if not q_tokens:
        return [(0.0, r["path"], r["chunk_id"]) for r in rows]
    n = max(1, len(rows))
    df: Counter[str] = Counter()
    for d in docs:
        df.update(set(d))
    n_q = Counter(q_tokens)
    avgdl = sum(len(d) for d in docs) / len(docs)
    out = []
    for r, d in zip(rows, docs, strict=True):
        if method == "lexical":
            raw = 0.0
            for t, c in n_q.items():
                if t in set(d):
                    raw += (1 + math.log(c)) * math.log((n + 1) / (1 + df[t]) + 1)
            lq = q.lower()
            base = r["path"].rsplit("/", 1)[-1]
            raw += 25 if r["path"].lower() in lq else 0
            raw += 8 if base.lower() in lq else 0
            raw += 5 if r["symbol"] and r["symbol"].lower() in lq else 0
            score = raw / max(1, math.sqrt(len(set(d))))
        else:
            tf = Counter(d)
            score = 0.0
            for t, c in n_q.items():
                if tf[t] > 0:
                    idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                    norm = tf[t] + 1.5 * (1 - 0.75 + 0.75 * len(d) / avgdl)
                    score += c * idf * (tf[t] * 2.5 / norm)
        out.append((score, r["path"], r["chunk_id"]))
    return sorted(out, key=lambda x: (-x[0], x[1], x[2]))


@pytest.mark.parametrize("method", ["lexical", "bm25-arb"])
@pytest.mark.parametrize("query", QUERIES)
def test_rankings_and_metrics_equal_literal_spec(
    chunks: pl.DataFrame, method: str, query: dict[str, Any]
) -> None:
    text = json.dumps(query, ensure_ascii=False, sort_keys=True)
    module = lexical if method == "lexical" else bm25
    ranking = module.rank_sample(module.build_index(chunks), text)
    rows = chunks.to_dicts()
    expected = literal_rank(rows, text, method)
    got = [
        (s, rows[i]["path"], rows[i]["chunk_id"])
        for i, s in zip(ranking.order.tolist(), ranking.scores.tolist(), strict=True)
    ]
    assert [g[1:] for g in got] == [e[1:] for e in expected]
    assert [g[0] for g in got] == pytest.approx([e[0] for e in expected], abs=1e-12, rel=0)
    files = list(dict.fromkeys(e[1] for e in expected))
    assert ranking.files == files
    gold = ["src/auth/tokens.py", "tests/test_client.py"]
    target = det.SampleTarget("s", "trace2code", "o/demo", "c", gold, [], [], [], None, None, False)
    row = det.details_row(
        target,
        ranking,
        cm.chunk_table(chunks),
        candidate_filter="all_files",
        ranker=method,
        selective=False,
    )
    first = min(files.index(g) + 1 for g in gold)
    assert row["metrics"]["MRR"] == 1 / first
    assert row["gold_ranks"] == {g: files.index(g) + 1 for g in gold}
    for k in (5, 10, 20):
        assert row["metrics"][f"Recall@{k}"] == sum(g in files[:k] for g in gold) / 2


def test_empty_query_is_corpus_order(chunks: pl.DataFrame) -> None:
    ranking = lexical.rank_sample(lexical.build_index(chunks), "{}")
    assert ranking.order.tolist() == list(range(chunks.height))
    assert ranking.files == list(dict.fromkeys(chunks["path"].to_list()))


@pytest.mark.parametrize("method", ["lexical", "bm25-arb"])
def test_memo_across_snapshots_equals_literal_spec(
    snapshots: list[pl.DataFrame], method: str
) -> None:
    """One method instance (token memo shared) over both commits and back ranks every query
    exactly like the literal spec on each snapshot."""
    shared = get_method(method)
    for chunks in [*snapshots, snapshots[0]]:
        index = shared.build_index(chunks)
        rows = chunks.to_dicts()
        for query in QUERIES:
            text = json.dumps(query, ensure_ascii=False, sort_keys=True)
            ranking = shared.rank_sample(index, text)
            expected = literal_rank(rows, text, method)
            assert [(rows[i]["path"], rows[i]["chunk_id"]) for i in ranking.order] == [
                e[1:] for e in expected
            ]
            assert ranking.scores.tolist() == pytest.approx(
                [e[0] for e in expected], abs=1e-12, rel=0
            )
    distinct = set(chunk_documents(snapshots[0])) | set(chunk_documents(snapshots[1]))
    assert len(distinct) > len(set(chunk_documents(snapshots[0])))  # the commits differ
    assert shared.stats()["token_memo_misses"] == len(distinct)  # each text tokenised once
