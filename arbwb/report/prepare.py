"""What several report notebooks read from the corpus, computed once before they start.

Every snapshot's file token costs (BCY in notebooks 01, 02, 05 and 08), file line counts
(03), corpus-scale counts (00) and chunk file SHA-256 (the manifest) are written to the
on-disk cache by ``jobs`` processes, largest chunk file first, so the notebooks, which run
side by side, read cache entries instead of each scanning the whole corpus (arbwb-defined;
the numbers are those the notebooks compute on a cold cache). A snapshot that cannot be read
is left to the notebooks, which report it in their sections.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

from arbwb import cache
from arbwb.analysis import corpus_scale
from arbwb.io import costcache
from arbwb.io.chunkscan import read_chunk_file
from arbwb.io.corpus import MANIFEST_NAME, Corpus, open_corpus

IN_PROCESS_BYTES = 64 * 2**20  # less to read than this is read here: processes cost more


def warm_cache(data_dir: Path, *, jobs: int) -> None:
    """Fill the cache for every snapshot of ``data_dir``'s corpus that lacks an entry (no-op
    without a corpus or a writable cache)."""
    if not any((data_dir / "corpus").glob(f"*/{MANIFEST_NAME}")):
        return
    try:
        corpus = open_corpus(data_dir)
    except (OSError, ValueError):  # a bad manifest: the notebooks name its file, line and field
        return
    folder = cache.kind_dir(corpus_scale.KIND)
    if corpus.cache_dir is None or folder is None:  # nothing would be kept
        return
    sizes = {}
    for sid in corpus.snapshot_ids():
        try:
            if _missing(corpus, folder, sid):
                sizes[sid] = corpus.chunk_path(sid).stat().st_size
        except (OSError, ValueError):  # absent or unreadable: the notebooks say so
            continue
    ordered = sorted(sizes, key=lambda sid: (-sizes[sid], sid))
    shares = [ordered[i::jobs] for i in range(jobs) if ordered[i::jobs]]
    if len(shares) < 2 or sum(sizes.values()) < IN_PROCESS_BYTES:
        _warm(data_dir, ordered, corpus)
        return
    try:
        with ProcessPoolExecutor(len(shares), mp_context=get_context("spawn")) as pool:
            list(pool.map(_warm, [data_dir] * len(shares), shares))
    except (OSError, BrokenProcessPool):  # no processes, or one died: the notebooks read instead
        return


def _missing(corpus: Corpus, folder: Path, snapshot_id: str) -> bool:
    """Whether the snapshot lacks its complete costs or its corpus-scale entry (in ``folder``)."""
    assert corpus.cache_dir is not None
    source = corpus.source(snapshot_id)
    scale = cache.entry_path(folder, source[0], corpus_scale.VERSION, ".npz")
    costs = corpus.cache_dir
    return not (
        scale.is_file()
        and costcache.has_lines(costs, source)
        and costcache.has_complete(costs, source)
    )


def _warm(data_dir: Path, snapshot_ids: list[str], corpus: Corpus | None = None) -> None:
    """Cache the file costs and corpus-scale counts of these snapshots, one at a time (a pool
    process opens the corpus itself)."""
    corpus = open_corpus(data_dir) if corpus is None else corpus
    folder = cache.kind_dir(corpus_scale.KIND)
    for sid in snapshot_ids:
        try:
            path = corpus.chunk_path(sid)
            corpus.files(sid)  # a byte scan: only the file rows are decoded
            rows = read_chunk_file(path, [*corpus_scale.SCAN_COLUMNS, "end_line"])  # one parse
            corpus.line_counts(sid, (), rows=rows)
            corpus_scale.cached_scan(path, folder, rows)
            del rows
            cache.sha256_of(path)  # for the manifest, while the file is in the page cache
        except (OSError, ValueError):  # a bad chunk file fails in its notebooks, which name it
            continue
