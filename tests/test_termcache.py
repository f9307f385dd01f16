"""Vectorised §7.1 term counts and the streamed, disk-cached lexical/BM25 indexes (issue 10)."""

from __future__ import annotations

import json
import os
import random
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from arbwb.errors import InputError
from arbwb.io.corpus import open_corpus
from arbwb.io.pathclass import keep_path
from arbwb.metrics.chunks import chunk_table
from arbwb.retrievers import termcache
from arbwb.retrievers.common import (
    bonus_strings,
    candidate_chunks,
    chunk_paths,
    codes_of,
    rank_row,
    snapshot_index,
    tiebreak_order,
)
from arbwb.retrievers.registry import MethodOptions, get_method
from arbwb.retrievers.terms import batches, count_terms
from arbwb.tokenize import split_identifiers

REPO = "o/r"
COMMIT = "a" * 40
QUERIES = [
    '{"failure_excerpt": "refresh_token failed in src/auth/tokens.py"}',
    '{"pr_title": "parseUrl splits the HTTPClient url"}',
    '{"pr_title": "résumé ünïcode"}',
    "{}",
]


def counts_of(texts: list[str | None], batch: int = 3) -> list[Counter[str]]:
    found = count_terms(batches(pl.Series(texts, dtype=pl.String), batch))
    rows = []
    for i in range(len(texts)):
        row = found.counts.getrow(i)
        rows.append(
            Counter({found.terms[c]: int(v) for c, v in zip(row.indices, row.data, strict=True)})
        )
    return rows


def test_count_terms_hand_vector() -> None:
    """Spec §7.1's example plus camel cuts, digits, non-ASCII and underscores, by hand."""
    texts: list[str | None] = [
        "getHTTPResponse v2Api snake_case",
        "aB a1B ÀbC x\u212ay",  # a lone cut; a digit between keeps a run; non-ASCII separates
        None,
        "",
        "Get get GET",
    ]
    assert counts_of(texts) == [
        Counter(["get", "httpresponse", "v2api", "snake", "case"]),
        Counter(["a", "b", "a1b", "b", "c", "x", "y"]),
        Counter(),
        Counter(),
        Counter({"get": 3}),
    ]


def test_count_terms_equals_split_identifiers_on_random_text() -> None:
    rng = random.Random(7)
    alphabet = 'aAzZbB09_ -.\n\té€日\u0130\u212axyQ\\"'
    texts: list[str | None] = [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(40))) for _ in range(3000)
    ]
    got = counts_of(texts, batch=257)  # batches end mid-run of tokens and texts
    assert got == [Counter(split_identifiers(t or "")) for t in texts]


def write_corpus(root: Path, files: dict[str, str]) -> Path:
    """A one-snapshot corpus: a file row and a symbol row per file (spec §3.1 fields)."""
    rows = []
    for n, (path, text) in enumerate(sorted(files.items())):
        for kind, symbol in (("file", ""), ("symbol", f"sym{n}")):
            rows.append(
                {
                    "base_commit": COMMIT,
                    "chunk_id": f"{path}:{kind}",
                    "end_line": text.count("\n") + 1,
                    "kind": kind,
                    "path": path,
                    "repo": REPO,
                    "start_line": 1,
                    "symbol": symbol,
                    "text": text,
                }
            )
    chunk_file = root / "o__r" / f"{COMMIT}.chunks.jsonl"
    chunk_file.parent.mkdir(parents=True, exist_ok=True)
    chunk_file.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    manifest = {"base_commit": COMMIT, "chunks_path": "o__r/" + chunk_file.name, "repo": REPO}
    (root / "corpus_manifest.jsonl").write_text(json.dumps(manifest) + "\n")
    return chunk_file


FILES = {
    "src/auth/tokens.py": "def refresh_token(value):\n    return value  # résumé",
    "src/http/client.py": "class HTTPClient:\n    def parseUrl(self, url):\n        return url",
    "tests/test_tokens.py": "from src.auth.tokens import refresh_token\nrefresh_token(1)",
    "README.md": "Refresh tokens and parse URLs.",
}


def rankings(name: str, corpus_dir: Path, options: MethodOptions, filt: str) -> list[object]:
    """(chunk order, scores, files) per query of one method over the snapshot."""
    method = get_method(name, options)
    corpus = open_corpus(corpus_dir, use_cache=False)
    prepared = snapshot_index(method, corpus, f"{REPO}@{COMMIT}", filt)  # type: ignore[arg-type]
    assert prepared is not None
    index, chunks = prepared
    if isinstance(chunks, pl.DataFrame):
        ids = chunks["chunk_id"].to_list()
    else:  # a cached entry's details table
        ids = list(chunks.chunk_ids)
    out = []
    for query in QUERIES:
        ranking = rank_row(method, index, {"query_text": query})
        out.append(([ids[i] for i in ranking.order], ranking.scores.tolist(), ranking.files))
    return out


@pytest.mark.parametrize("name", ["lexical", "bm25-arb", "bm25"])
@pytest.mark.parametrize("filt", ["all_files", "code_only", "tests_only"])
def test_streamed_index_ranks_exactly_like_chunk_frames(
    tmp_path: Path, name: str, filt: str
) -> None:
    """Streaming from the chunk file (cold, then from the disk cache) = the chunk-frame path."""
    write_corpus(tmp_path / "c", FILES)
    expected = rankings(name, tmp_path / "c", MethodOptions(), filt)
    cache_dir = tmp_path / "terms"
    streamed = MethodOptions(stream_terms=True, term_cache_dir=cache_dir)
    assert rankings(name, tmp_path / "c", streamed, filt) == expected  # computed, saved
    assert len(list(cache_dir.glob("*.npz"))) == 1
    assert rankings(name, tmp_path / "c", streamed, filt) == expected  # from the entry
    uncached = MethodOptions(stream_terms=True)
    assert rankings(name, tmp_path / "c", uncached, filt) == expected


def test_term_cache_hits_and_never_serves_a_changed_chunk_file(tmp_path: Path) -> None:
    chunk_file = write_corpus(tmp_path / "c", FILES)
    corpus = open_corpus(tmp_path / "c", use_cache=False)
    sid = f"{REPO}@{COMMIT}"
    source = termcache.TermSource(tmp_path / "terms")
    first = source.load(corpus, sid)
    again = source.load(corpus, sid)
    assert source.stats() == {"term_cache_hits": 1, "term_cache_misses": 1}
    assert again.terms == first.terms
    assert again.chunks.equals(first.chunks)
    assert (again.counts.to_scipy() != first.counts.to_scipy()).nnz == 0
    assert "zebra" not in first.terms
    # the same file rewritten in place (same inode) with new text: a new key, recomputed
    before = chunk_file.stat()
    new_readme = "zebra crossing zebra crossing!"  # same length: same file size
    assert len(new_readme) == len(FILES["README.md"])
    write_corpus(tmp_path / "c", FILES | {"README.md": new_readme})
    assert chunk_file.stat().st_size == before.st_size
    assert chunk_file.stat().st_ino == before.st_ino
    os.utime(chunk_file, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    changed = source.load(corpus, sid)
    assert source.stats()["term_cache_misses"] == 2
    assert "zebra" in changed.terms
    # an unreadable entry is recomputed, not trusted
    for entry in (tmp_path / "terms").glob("*.npz"):
        entry.write_bytes(b"not a zip")
    assert "zebra" in source.load(corpus, sid).terms
    assert source.stats()["term_cache_misses"] == 3


def test_snapshot_terms_match_a_literal_reading(tmp_path: Path) -> None:
    """Counts, n_chars and chunk columns of the streamed entry, checked row by row."""
    chunk_file = write_corpus(tmp_path / "c", FILES)
    found = termcache.compute(chunk_file)
    rows = [json.loads(line) for line in chunk_file.read_text().splitlines()]
    assert found.chunks["chunk_id"].to_list() == [r["chunk_id"] for r in rows]
    assert found.chunks["n_chars"].to_list() == [len(r["text"]) for r in rows]
    dense = found.counts.to_scipy().toarray()
    for i, row in enumerate(rows):
        doc = " ".join(v for v in (row["path"], row["symbol"], row["kind"], row["text"]) if v)
        got = {found.terms[j]: int(n) for j, n in enumerate(dense[i]) if n}
        assert got == dict(Counter(split_identifiers(doc)))


def write_snapshots(root: Path, letters: str, vary: bool = True) -> tuple[Path, list[str]]:
    """A corpus (``root/c``) of one snapshot per commit letter; texts differ per snapshot
    if ``vary``. Returns the corpus folder and the snapshot ids."""
    commits = [c * 40 for c in letters]
    lines = []
    for k, commit in enumerate(commits):
        files = {p: f"{t} rev{k} " + "word " * k for p, t in FILES.items()} if vary else FILES
        chunk_file = write_corpus(root / "staging", files)
        target = root / "c" / "o__r" / f"{commit}.chunks.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(chunk_file.read_text().replace(COMMIT, commit))
        row = {"base_commit": commit, "chunks_path": f"o__r/{commit}.chunks.jsonl", "repo": REPO}
        lines.append(json.dumps(row))
    (root / "c" / "corpus_manifest.jsonl").write_text("\n".join(lines) + "\n")
    return root / "c", [f"{REPO}@{c}" for c in commits]


def test_many_blocks_and_one_count_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk file read in many blocks gives the same terms, counts and chunks as in one."""
    folder, ids = write_snapshots(tmp_path, "a")
    chunk_file = open_corpus(folder, use_cache=False).chunk_path(ids[0])
    whole = termcache.compute(chunk_file)
    monkeypatch.setattr(termcache, "BLOCK_BYTES", 64)  # a few lines per block
    split = termcache.compute(chunk_file)
    assert whole.terms == split.terms and whole.chunks.equals(split.chunks)
    assert whole.chunks.height == len(chunk_file.read_text().splitlines()) > 3
    assert (whole.counts.to_scipy() != split.counts.to_scipy()).nnz == 0
    assert whole.doc_len.tolist() == split.doc_len.tolist()
    assert whole.n_unique.tolist() == split.n_unique.tolist()


def test_torn_entry_is_recomputed(tmp_path: Path) -> None:
    """An entry cut short (or emptied) is not a readable ``.npz`` and is computed again."""
    write_corpus(tmp_path / "c", FILES)
    corpus = open_corpus(tmp_path / "c", use_cache=False)
    sid = f"{REPO}@{COMMIT}"
    source = termcache.TermSource(tmp_path / "terms")
    first = source.load(corpus, sid)
    (entry,) = (tmp_path / "terms").glob("*.npz")
    whole = entry.read_bytes()
    for torn in (whole[:-1], whole[: len(whole) // 2], b""):
        entry.write_bytes(torn)
        assert source.load(corpus, sid).terms == first.terms
    assert source.stats()["term_cache_misses"] == 4
    assert source.load(corpus, sid).terms == first.terms  # the rewritten entry is served
    assert source.stats()["term_cache_hits"] == 1


def stored_entry(tmp_path: Path) -> tuple[termcache.SnapshotTerms, termcache.StoredTerms]:
    """A snapshot computed from its chunk file, and the same snapshot read back from its entry."""
    files = FILES | {"src/Ünï/x.py": "def Résumé(): pass", "src/empty.py": ""}
    chunk_file = write_corpus(tmp_path / "c", files)
    corpus = open_corpus(tmp_path / "c", use_cache=False)
    source = termcache.TermSource(tmp_path / "terms")
    computed = source.load(corpus, f"{REPO}@{COMMIT}")
    stored = source.load(corpus, f"{REPO}@{COMMIT}")
    assert isinstance(stored, termcache.StoredTerms)
    assert computed.chunks.equals(termcache.compute(chunk_file).chunks)
    return computed, stored


def test_stored_pieces_equal_pieces_recomputed_from_the_frame(tmp_path: Path) -> None:
    """Codes, tie order, symbols, details table, vocabulary and needles read from an entry
    equal what the chunk-frame path builds (and a plain dict / Python ``in``)."""
    computed, stored = stored_entry(tmp_path)
    frame = computed.chunks
    keys = stored.keys
    paths = chunk_paths(frame)
    assert keys.paths.codes.tolist() == paths.codes.tolist()
    assert keys.paths.names == paths.names
    assert keys.tiebreak.tolist() == tiebreak_order(frame).tolist()
    codes, symbols = codes_of(frame["symbol"])
    assert keys.symbol_codes.tolist() == codes.tolist() and list(keys.symbols) == symbols
    expected = chunk_table(frame)
    for name in ("paths", "kinds", "symbols", "starts", "ends", "chunk_ids", "n_chars"):
        assert list(getattr(stored.table, name)) == list(getattr(expected, name)), name
    assert stored.chunks.equals(frame)
    assert stored.terms == computed.terms
    vocab = {t: i for i, t in enumerate(computed.terms)}
    probe = [*computed.terms, "zebra", "", "refresh_token"]
    assert stored.vocab.columns(probe) == [vocab.get(t) for t in probe]
    strings = bonus_strings(paths.names, symbols)
    for query in [*QUERIES, "SRC/ÜNÏ/X.PY and résumé", ""]:
        lowered = query.lower()
        hit_paths, hit_bases, hit_symbols = keys.bonus().hits(lowered)
        got = [*hit_paths.tolist(), *hit_bases.tolist(), *hit_symbols.tolist()]
        n_bonus_paths = 2 * len(paths.names)
        want = [s in lowered and (i < n_bonus_paths or s != "") for i, s in enumerate(strings)]
        assert got == want


@pytest.mark.parametrize("filt", ["code_only", "tests_only"])
def test_candidate_filter_on_a_stored_entry_keeps_exactly_the_kept_rows(
    tmp_path: Path, filt: str
) -> None:
    """The filtered counts, lengths, table and tie order equal those of the filtered frame
    (counts checked against scipy's row slicing)."""
    computed, stored = stored_entry(tmp_path)
    prepared = termcache.candidate_terms(stored, filt)  # type: ignore[arg-type]
    assert prepared is not None
    keys, table, matrix = prepared
    frame = candidate_chunks(computed.chunks, filt)  # type: ignore[arg-type]
    rows = [i for i, p in enumerate(computed.chunks["path"].to_list()) if keep_path(p, filt)]  # type: ignore[arg-type]
    assert 0 < len(rows) < computed.chunks.height
    assert list(table.chunk_ids) == frame["chunk_id"].to_list()
    assert list(table.paths) == frame["path"].to_list()
    assert list(table.n_chars) == frame["n_chars"].to_list()
    assert [keys.paths.names[c] for c in keys.paths.codes] == frame["path"].to_list()
    assert keys.tiebreak.tolist() == tiebreak_order(frame).tolist()
    expected = computed.counts.to_scipy()[rows]
    assert (matrix.counts.to_scipy().tocsr() != expected).nnz == 0
    assert matrix.df.tolist() == np.diff(expected.tocsc().indptr).tolist()
    assert matrix.doc_len.tolist() == computed.doc_len[rows].astype(float).tolist()
    assert matrix.n_unique.tolist() == computed.n_unique[rows].astype(float).tolist()


def test_a_snapshot_computed_here_is_indexed_from_the_entry_just_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a miss the entry written for the snapshot is reused for ranking, not derived again."""
    write_corpus(tmp_path / "c", FILES)
    corpus = open_corpus(tmp_path / "c", use_cache=False)
    computed = termcache.TermSource(tmp_path / "terms").load(corpus, f"{REPO}@{COMMIT}")
    calls = []
    real = termcache._to_arrays

    def counting(terms: termcache.SnapshotTerms) -> dict[str, np.ndarray]:
        calls.append(terms)
        return real(terms)

    monkeypatch.setattr(termcache, "_to_arrays", counting)
    assert termcache.candidate_terms(computed, "all_files") is not None
    assert calls == []
    uncached = termcache.compute(corpus.chunk_path(f"{REPO}@{COMMIT}"))
    assert termcache.candidate_terms(uncached, "all_files") is not None
    assert calls == [uncached]


DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"


def _same_terms(got: termcache.StoredTerms, want: termcache.StoredTerms) -> bool:
    return (
        got.terms == want.terms
        and got.chunks.equals(want.chunks)
        and (got.counts.to_scipy() != want.counts.to_scipy()).nnz == 0
    )


def test_prefetch_helper_saves_from_the_back_and_the_run_counts_it_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helper process takes the run's last snapshot first; what it saved is served as
    computed in this run, equal to a snapshot computed here; a warm run starts no helper."""
    monkeypatch.setattr(termcache, "_usable_cpus", lambda: 2)
    corpus = open_corpus(DEMO, use_cache=False)
    sids = corpus.snapshot_ids()
    assert len(sids) >= 3
    source = termcache.TermSource(tmp_path / "terms")
    source.prefetch(corpus, sids, "all_files")
    source._ahead[corpus.chunk_path(sids[-1])].result(timeout=300)  # saved by the helper
    loaded = [source.load(corpus, sid) for sid in sids]
    assert source.stats() == {"term_cache_hits": 0, "term_cache_misses": len(sids)}
    plain = termcache.TermSource(None)
    assert all(
        _same_terms(got, plain.load(corpus, sid)) for sid, got in zip(sids, loaded, strict=True)
    )
    warm = termcache.TermSource(tmp_path / "terms")
    warm.prefetch(corpus, sids, "all_files")
    assert warm._pool is None and not warm._ahead
    assert all(
        _same_terms(warm.load(corpus, sid), got) for sid, got in zip(sids, loaded, strict=True)
    )
    assert warm.stats() == {"term_cache_hits": len(sids), "term_cache_misses": 0}


def test_a_file_the_helper_cannot_read_fails_here_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(termcache, "_usable_cpus", lambda: 2)
    shutil.copytree(DEMO / "corpus", tmp_path / "corpus")
    shutil.copytree(DEMO / "benchmark", tmp_path / "benchmark")
    corpus = open_corpus(tmp_path, use_cache=False)
    sids = corpus.snapshot_ids()
    broken = corpus.chunk_path(sids[-1])
    lines = broken.read_text(encoding="utf-8").splitlines(keepends=True)
    broken.write_text("".join([*lines[:2], '{"chunk_id": \n', *lines[3:]]), encoding="utf-8")
    source = termcache.TermSource(tmp_path / "terms")
    source.prefetch(corpus, sids, "all_files")
    with pytest.raises(InputError):  # raised in the helper, handed back by its future
        source._ahead[broken].result(timeout=300)
    for sid in sids[:-1]:
        source.load(corpus, sid)
    with pytest.raises(InputError) as caught:
        source.load(corpus, sids[-1])
    assert caught.value.line == 3 and str(broken) in str(caught.value)
