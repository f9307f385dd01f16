"""Corpus snapshots (spec §1.4, §3): manifest lookup, lazy chunk reading, cached file token counts.

A :class:`Corpus` never holds more than a few snapshots' text at a time (a scan maps the chunk
file it reads plus the next ones): chunk files are read when asked for, and only the small
per-file token table (FILES frame) is kept, in memory and optionally on disk, so memory stays
flat in the number of snapshots.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import mmap
import re
import sys
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, cast

import numpy as np
import polars as pl

from arbwb.errors import InputError
from arbwb.jsonio import atomic_open, dumps_upstream, iter_jsonl
from arbwb.schemas import CHUNKS, FILES, validate
from arbwb.tokenize import CODE_TOKEN_PATTERN_RUST

MANIFEST_NAME = "corpus_manifest.jsonl"
#: Chunk-file row fields (spec §3.1) as typed in the CHUNKS frame, which adds snapshot_id.
_CHUNK_FIELDS = {name: dtype for name, dtype in CHUNKS.items() if name != "snapshot_id"}
_CACHE_VERSION = "files-v2"
_ROW_START = b'{"base_commit": "'
# An upstream file row (spec §3.1, §3.3: sorted keys, start_line 1, empty symbol) reads
# {..., "end_line": N, "kind": "file", "path": "P", "repo": "R", "start_line": 1, "symbol": "",
# "text": "T"}
_FILE_HEAD = b', "kind": "file", "path": "'
_FILE_TAIL = b'", "start_line": 1, "symbol": "", "text":'  # then ' "'
_END_LINE = b'"end_line": '
_JSON_INT = re.compile(rb"-?(?:0|[1-9][0-9]*)")
_PLAIN = re.compile(r'[^"\\\x00-\x1f]*')  # serialised as is inside a JSON string
_PLAIN_BYTES = re.compile(_PLAIN.pattern.encode())
_MADV_POPULATE_READ = 22  # Linux uapi asm-generic/mman-common.h; not in Python 3.11's mmap
_MAP_AHEAD = 2  # chunk files mapped and paged in ahead of the one scanned
_BATCH_BYTES = 64 * 2**20  # tokenise new texts in batches of about this many escaped bytes


def snapshot_id(repo: str, commit: str) -> str:
    """The snapshot key ``owner/name@commit`` used by every frame."""
    return f"{repo}@{commit}"


def repo_slug(repo: str) -> str:
    """``owner/name`` -> ``owner__name`` (spec §0), the corpus folder of a repository."""
    return repo.replace("/", "__")


def count_tokens_expr(column: str | pl.Expr) -> pl.Expr:
    """regex_code_tokenizer_v1 counts of a string column with Polars' Rust regex (spec §5.7).

    Uses ``CODE_TOKEN_PATTERN_RUST``, which equals Python ``re`` on the upstream pattern for
    every Unicode string (property-tested in tests/test_tokenize.py).
    """
    expr = pl.col(column) if isinstance(column, str) else column
    return expr.str.count_matches(CODE_TOKEN_PATTERN_RUST).fill_null(0).cast(pl.Int64)


@dataclass(frozen=True)
class SnapshotEntry:
    """One ``ok`` manifest row and where it was read from (for error messages).

    ``file_count`` (None when absent or not an integer) checks the fast file-row scan.
    """

    repo: str
    commit: str
    chunks_path: str
    manifest: Path
    line: int
    file_count: int | None = None


_Key = tuple[int, int]  # (hash, length) of a text as the chunk file escapes it
_Costs = tuple[int, int, int]  # n_tokens, n_lines, n_bytes of one file row


@dataclass
class _Known:
    """Token costs known for one snapshot: per path (None: no file row), and whether ``rows``
    holds every file row (then an unlisted path has none)."""

    complete: bool
    rows: dict[str, _Costs | None]


@dataclass
class Corpus:
    """A corpus directory: manifest rows plus lazily read, cached per-snapshot file token costs."""

    root: Path
    entries: dict[str, SnapshotEntry]
    cache_dir: Path | None = None
    _files: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False)
    _known: dict[str, _Known] = field(default_factory=dict, repr=False)
    _token_counts: dict[_Key, tuple[int, int]] = field(default_factory=dict, repr=False)

    def snapshot_ids(self) -> list[str]:
        """Snapshot ids of the usable (status ``ok`` or no status) manifest rows, sorted."""
        return sorted(self.entries)

    def has(self, snapshot_id: str) -> bool:
        """Whether the manifest lists the snapshot as usable."""
        return snapshot_id in self.entries

    def chunk_path(self, snapshot_id: str) -> Path:
        """Resolved chunk file of a snapshot (spec §1.4 lookup, tried in a fixed order).

        Tries ``chunks_path`` as given, relative to the data root's parent (upstream writes
        ``data/corpus/R/...``), relative to the corpus folder's parent (arbwb's builder
        writes ``R/OWNER__NAME/...``), and finally ``<corpus>/OWNER__NAME/<commit>.chunks.jsonl``.
        """
        entry = self._entry(snapshot_id)
        given = Path(entry.chunks_path)
        candidates = [given]
        if not given.is_absolute():
            candidates += [self.root.parent.parent.parent / given, self.root.parent / given]
        candidates.append(self.root / repo_slug(entry.repo) / f"{entry.commit}.chunks.jsonl")
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        tried = ", ".join(str(c) for c in candidates)
        msg = f"chunk file of {snapshot_id} not found (tried {tried}); rebuild it or fix the row"
        raise InputError(msg, path=entry.manifest, line=entry.line, field="chunks_path")

    def chunks(self, snapshot_id: str) -> pl.DataFrame:
        """All rows of a snapshot's chunk file as a CHUNKS frame, in file order."""
        path = self.chunk_path(snapshot_id)
        frame = _read_chunk_file(path, list(_CHUNK_FIELDS))
        return validate(
            frame.with_columns(pl.lit(snapshot_id).alias("snapshot_id")), CHUNKS, name="chunks"
        )

    def files(self, snapshot_id: str) -> pl.DataFrame:
        """FILES frame of a snapshot: one row per ``kind=file`` path (the last row wins).

        Rows are ordered by the position of each path's last file row. Token counts are
        computed once per (snapshot, path) and cached in memory and, with a ``cache_dir``, on
        disk keyed by the chunk file's path, size and mtime.
        """
        cached = self._files.get(snapshot_id)
        if cached is None:
            known = self._resolve({snapshot_id: None})[snapshot_id]
            cached = _files_frame({snapshot_id: known.rows})
            self._files[snapshot_id] = cached
        return cached

    def file_costs(self, wanted: Mapping[str, Iterable[str]]) -> pl.DataFrame:
        """FILES rows of just the ``wanted`` paths of each snapshot; paths without a file row
        are left out.

        Reads only what no cache holds: each chunk file is scanned once for its still unknown
        paths and only their texts are decoded and tokenised, the new texts of all snapshots
        in one Polars call per batch. Much cheaper than :meth:`files` when few paths are needed.
        """
        sets = {sid: set(paths) for sid, paths in wanted.items()}
        known = self._resolve(dict(sets))
        rows = {
            sid: {p: known[sid].rows.get(p) for p in sorted(paths)} for sid, paths in sets.items()
        }
        return _files_frame(rows)

    def _resolve(self, wanted: Mapping[str, set[str] | None]) -> dict[str, _Known]:
        """Known costs of each snapshot, covering its wanted paths (None: all file rows).

        Chunk files whose manifest row has a ``file_count`` are byte-scanned
        (:func:`_scan_upstream`), each paged in by a worker thread while the previous one is
        scanned (:func:`_mapped`); the others, and any scan that cannot vouch for its rows, get
        the full parse.
        """
        todo: dict[str, set[str] | None] = {}
        for sid, paths in wanted.items():
            known = self._load_known(sid)
            rest = None if paths is None else {p for p in paths if p not in known.rows}
            if not known.complete and rest != set():
                todo[sid] = rest
        files = {sid: self.chunk_path(sid) for sid in todo}
        counts = {sid: self.entries[sid].file_count for sid in todo}
        scan = {  # file count of each snapshot to byte-scan: one to check the scan by, some bytes
            sid: count
            for sid, count in counts.items()
            if count is not None and files[sid].stat().st_size > 0
        }
        counter = _TokenCounter(self._token_counts)
        scanned: dict[str, dict[str, tuple[int, _Key]]] = {}
        maps = _mapped([files[sid] for sid in scan])
        with closing(maps):
            for sid, paths in todo.items():
                found, count = None, scan.get(sid)
                if count is not None and (data := next(maps)) is not None:
                    found = _scan_upstream(data, self.entries[sid].repo, paths, counter, count)
                if found is None:
                    found = _parse_file_rows(files[sid], paths, counter)
                scanned[sid] = found
                if counter.pending_bytes > _BATCH_BYTES:
                    counter.flush()
        counter.flush()
        for sid, found in scanned.items():
            known, paths = self._known[sid], todo[sid]
            costs: dict[str, _Costs | None] = {}
            for path, (n_lines, key) in found.items():
                n_tokens, n_bytes = self._token_counts[key]
                costs[path] = (n_tokens, n_lines, n_bytes)
            if paths is None:
                known.complete, known.rows = True, dict(costs)
            else:
                known.rows.update({path: costs.get(path) for path in paths})
            self._save_known(sid, known)
        return {sid: self._known[sid] for sid in wanted}

    def _load_known(self, snapshot_id: str) -> _Known:
        """In-memory costs of a snapshot, else the disk cache's (complete, then partial)."""
        known = self._known.get(snapshot_id)
        if known is None:
            known = _Known(complete=False, rows={})
            complete, partial = self._disk_cache_paths(snapshot_id)
            if complete is not None and complete.is_file():
                known = _Known(complete=True, rows=_rows_from_frame(pl.read_parquet(complete)))
            elif partial is not None and partial.is_file():
                known = _Known(complete=False, rows=_rows_from_frame(pl.read_parquet(partial)))
            self._known[snapshot_id] = known
        return known

    def _save_known(self, snapshot_id: str, known: _Known) -> None:
        complete, partial = self._disk_cache_paths(snapshot_id)
        target = complete if known.complete else partial
        if target is None:
            return
        frame = _files_frame({snapshot_id: known.rows}, keep_absent=not known.complete)
        with atomic_open(target, "wb") as handle:
            frame.write_parquet(handle)

    def _entry(self, snapshot_id: str) -> SnapshotEntry:
        entry = self.entries.get(snapshot_id)
        if entry is None:
            msg = f"snapshot {snapshot_id!r} is not in the corpus (check has() first)"
            raise InputError(msg, path=self.root / MANIFEST_NAME)
        return entry

    def _disk_cache_paths(self, snapshot_id: str) -> tuple[Path | None, Path | None]:
        """Cache files (complete FILES table, partial lookups) for the current chunk file."""
        if self.cache_dir is None:
            return None, None
        chunk_file = self.chunk_path(snapshot_id)
        stat = chunk_file.stat()
        key = f"{_CACHE_VERSION}\x1f{chunk_file.resolve()}\x1f{stat.st_size}\x1f{stat.st_mtime_ns}"
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        return self.cache_dir / f"{digest}.parquet", self.cache_dir / f"{digest}.paths.parquet"


def open_corpus(
    path: str | Path, release: str | None = None, *, cache_dir: str | Path | None = None
) -> Corpus:
    """Open a corpus folder holding ``corpus_manifest.jsonl``, or a data root with ``corpus/R/``.

    With a data root, ``release`` picks ``corpus/<release>/``; it may be omitted when exactly one
    release has a manifest. ``cache_dir`` enables the on-disk token-count cache.
    """
    root = Path(path)
    if not (root / MANIFEST_NAME).is_file():
        root = _release_dir(root, release)
    entries = read_manifest(root / MANIFEST_NAME)
    return Corpus(
        root=root, entries=entries, cache_dir=None if cache_dir is None else Path(cache_dir)
    )


def read_manifest(path: Path) -> dict[str, SnapshotEntry]:
    """Usable manifest rows by snapshot id (spec §1.4: status ``ok`` or absent; later rows win)."""
    entries: dict[str, SnapshotEntry] = {}
    for line, row in iter_jsonl(path, allow_empty=True):
        for name in ("repo", "base_commit"):
            if not isinstance(row.get(name), str) or not row[name]:
                raise InputError("expected a non-empty string", path=path, line=line, field=name)
        status = row.get("status", "ok")
        key = snapshot_id(row["repo"], row["base_commit"])
        if status != "ok":
            entries.pop(key, None)
            continue
        chunks_path = row.get("chunks_path")
        if not isinstance(chunks_path, str) or not chunks_path:
            msg = f"an ok row needs the chunk file path, got {chunks_path!r}"
            raise InputError(msg, path=path, line=line, field="chunks_path")
        count = row.get("file_count")
        count = count if isinstance(count, int) and not isinstance(count, bool) else None
        entries[key] = SnapshotEntry(
            row["repo"], row["base_commit"], chunks_path, path, line, count
        )
    return entries


def _release_dir(root: Path, release: str | None) -> Path:
    corpus = root / "corpus"
    if release is not None:
        found = corpus / release
        if not (found / MANIFEST_NAME).is_file():
            msg = f"no {MANIFEST_NAME} in {found}; check the release id"
            raise InputError(msg, path=found)
        return found
    releases = sorted(p.parent for p in corpus.glob(f"*/{MANIFEST_NAME}"))
    if len(releases) != 1:
        names = [p.name for p in releases]
        msg = (
            f"expected {MANIFEST_NAME} here or exactly one corpus/<release>/ below, found {names}; "
            "pass the corpus folder or a release id"
        )
        raise InputError(msg, path=root)
    return releases[0]


def _read_chunk_file(path: Path, columns: list[str]) -> pl.DataFrame:
    """Read selected chunk-file fields with Polars; on any problem, locate it line by line.

    A zero-byte chunk file is a snapshot without files (no rows), not an error.
    """
    schema = {name: _CHUNK_FIELDS[name] for name in columns}
    if path.stat().st_size == 0:
        return pl.DataFrame(schema=schema)
    try:
        frame = pl.read_ndjson(path, schema=schema)
    except Exception:  # Polars' messages carry no line number: find the line ourselves
        _locate_problem(path, columns)
        raise InputError("chunk file could not be read as JSON lines", path=path) from None
    if frame.null_count().sum_horizontal().item() > 0:
        _locate_problem(path, columns)
    return frame


def _locate_problem(path: Path, columns: list[str]) -> None:
    """Raise a located InputError for the first line with a missing or mistyped field."""
    for line, row in iter_jsonl(path):
        for name in columns:
            want = str if _CHUNK_FIELDS[name] is pl.String else int
            value = row.get(name)
            if not isinstance(value, want) or isinstance(value, bool):
                msg = f"expected {want.__name__}, got {value!r}"
                raise InputError(msg, path=path, line=line, field=name)


class _TokenCounter:
    """Token and byte counts of file texts keyed by their escaped form; new texts are decoded
    as they are added and tokenised together by :meth:`flush` (one Polars call)."""

    def __init__(self, known: dict[_Key, tuple[int, int]]) -> None:
        self.known = known
        self.pending: dict[_Key, str] = {}
        self.pending_bytes = 0

    def add_escaped(self, raw: bytes) -> _Key:
        """Key of a JSON string body as the chunk file holds it (ValueError if it is not one).

        arbwb-defined: the key is Python's 64-bit hash plus the length of the escaped bytes, so
        equal texts of different snapshots are tokenised once.
        """
        key = (hash(raw), len(raw))
        if key not in self.known and key not in self.pending:
            self.pending[key] = _json_string(raw)
            self.pending_bytes += len(raw)
        return key

    def add_text(self, text: str) -> _Key:
        """Key of a decoded text: the same key as its upstream-escaped form."""
        return self.add_escaped(_escape(text))

    def flush(self) -> None:
        """Tokenise every pending text at once and record (n_tokens, n_bytes)."""
        if not self.pending:
            return
        texts = pl.Series("t", list(self.pending.values()), dtype=pl.String)
        counts = pl.select(n=count_tokens_expr(pl.lit(texts)), b=pl.lit(texts).str.len_bytes())
        pairs = zip(counts["n"].to_list(), counts["b"].to_list(), strict=True)
        self.known.update(zip(self.pending, pairs, strict=True))
        self.pending.clear()
        self.pending_bytes = 0


def _mapped(paths: Sequence[Path]) -> Generator[mmap.mmap | None, None, None]:
    """Each file mapped read-only with its pages in (None if it cannot be mapped), valid until
    the next is asked for; a worker thread pages the next file in meanwhile.

    Paging a chunk file in costs nearly as much as scanning it; done with the GIL released
    (:func:`_page_in`) it overlaps the scan on a second core and costs nothing extra without
    one. At most ``_MAP_AHEAD + 1`` files are mapped at once.
    """
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="arbwb-page-in") as pool:
        ahead = deque(_map_ahead(pool, path) for path in paths[:_MAP_AHEAD])
        try:
            for index in range(len(paths)):
                current = ahead.popleft().result()
                if index + _MAP_AHEAD < len(paths):
                    ahead.append(_map_ahead(pool, paths[index + _MAP_AHEAD]))
                try:
                    yield current
                finally:
                    if current is not None:
                        current.close()
        finally:  # closed early: unmap the files mapped ahead
            for future in ahead:
                mapped = future.result()
                if mapped is not None:
                    mapped.close()


def _map_ahead(pool: ThreadPoolExecutor, path: Path) -> Future[mmap.mmap | None]:
    """:func:`_map_file` submitted to ``pool``, returning once the worker has mapped the file.

    A worker merely handed the job could wait for the GIL, held by the scanning caller, for up
    to the interpreter's switch interval, and the paging in would not overlap the scan.
    """
    mapped = threading.Event()
    future = pool.submit(_map_file, path, mapped)
    mapped.wait()
    return future


def _map_file(path: Path, mapped: threading.Event) -> mmap.mmap | None:
    """``path`` mapped read-only and paged in (:func:`_page_in`); None if it cannot be mapped
    (vanished or emptied since listed: the full parse then reports it). Sets ``mapped`` once
    the mapping exists, before the paging in."""
    try:
        with path.open("rb") as handle:
            data = mmap.mmap(handle.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    except (OSError, ValueError):
        return None
    finally:
        mapped.set()
    _page_in(data)
    return data


def _page_in(data: mmap.mmap) -> None:
    """Map every page of ``data`` in with the GIL released: Linux ``madvise`` with
    MADV_POPULATE_READ (kernel 5.14+) through ctypes, as Python 3.11's ``mmap`` holds the GIL
    while it populates. Elsewhere, or if the call fails, the pages fault in during the scan
    instead, at about the same cost."""
    madvise = _libc_function("madvise", ctypes.c_int, ctypes.c_int)
    if madvise is not None:
        view = np.frombuffer(data, dtype=np.uint8)  # released on return, so data can close
        madvise(view.ctypes.data, len(data), _MADV_POPULATE_READ)


@cache
def _libc_function(name: str, restype: Any, *argtypes: Any) -> Callable[..., Any] | None:
    """libc's ``name`` on Linux, else None; ctypes releases the GIL while it runs. Its first
    two parameters are an address and a length; ``argtypes`` are the rest."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, *argtypes]
    function.restype = restype
    return cast("Callable[..., Any]", function)


def _parse_file_rows(
    path: Path, wanted: set[str] | None, counter: _TokenCounter
) -> dict[str, tuple[int, _Key]]:
    """(end_line, text key) of the last ``kind=file`` row per path (only ``wanted`` paths),
    from a full Polars parse that validates every row and locates any error."""
    if path.stat().st_size == 0:
        return {}
    rows = (
        _read_chunk_file(path, ["path", "kind", "end_line", "text"])
        .filter(pl.col("kind") == "file")
        .unique(subset="path", keep="last", maintain_order=True)
    )
    if wanted is not None:
        rows = rows.filter(pl.col("path").is_in(sorted(wanted)))
    return {
        p: (n_lines, counter.add_text(text))
        for p, n_lines, text in rows.select("path", "end_line", "text").iter_rows()
    }


def _scan_upstream(
    data: mmap.mmap, repo: str, wanted: set[str] | None, counter: _TokenCounter, file_count: int
) -> dict[str, tuple[int, _Key]] | None:
    """The file rows of an upstream-serialised chunk file found without parsing the rest.

    A file row alone contains ``", "repo": "R", "start_line": 1, "symbol": "", "text":``
    (spec §3.1, §3.3: sorted keys, ``", "``/``": "`` separators, start_line 1, empty symbol;
    a quote after a space cannot lie inside a JSON string, where quotes are escaped). One
    search (:func:`_searcher`) per file row skips the symbol rows (most of the bytes)
    unparsed; the repo makes the needle long, which searches skip through fastest. A row of a
    path not wanted costs a look at its path; wanted rows are read by :func:`_file_row`.
    Returns None, so the caller
    parses and validates everything, when the file does not start like an upstream row, a
    found row is not shaped as expected, or the rows found differ from the manifest's
    ``file_count`` (e.g. rows carrying another repo).
    """
    needle = b'", "repo": "' + _escape(repo) + _FILE_TAIL
    if data[: len(_ROW_START)] != _ROW_START:
        return None
    rows: dict[str, tuple[int, _Key]] = {}
    escaped = None if wanted is None else {_escape(p) for p in wanted}
    n_found = 0
    find, rfind, search = data.find, data.rfind, _searcher(data, needle)
    at = search(0)
    while at != -1:
        n_found += 1
        start = rfind(b"\n", 0, at) + 1
        head = find(_FILE_HEAD, start, at)
        if head == -1:
            return None
        name = data[head + len(_FILE_HEAD) : at]  # exact unless it has a backslash
        resume = at + len(needle)  # a text holds no needle: it has no unescaped quote
        if escaped is None or name in escaped or b"\\" in name:
            row = _file_row(data, start, head, name, resume, counter)
            if row is None:
                return None
            path, n_lines, key, resume = row
            if wanted is None or path in wanted:
                rows.pop(path, None)  # the last row of a path wins, at its position
                rows[path] = (n_lines, key)
        at = search(resume)
    return rows if n_found == file_count else None


def _searcher(data: mmap.mmap, needle: bytes) -> Callable[[int], int]:
    """``lambda start: data.find(needle, start)``, through libc ``memmem`` where there is one:
    about a quarter faster on chunk files, and it releases the GIL, so the paging-in thread is
    not kept waiting. Valid while ``data`` is open."""
    memmem = _libc_function("memmem", ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t)
    if memmem is None:
        return lambda start: data.find(needle, start)
    base, size = np.frombuffer(data, dtype=np.uint8).ctypes.data, len(data)  # view released

    def search(start: int) -> int:
        hit: int | None = memmem(base + start, size - start, needle, len(needle))
        return -1 if hit is None else hit - base

    return search


def _file_row(
    data: mmap.mmap, start: int, head: int, name: bytes, text: int, counter: _TokenCounter
) -> tuple[str, int, _Key, int] | None:
    """(path, end_line, text key, end offset) of the upstream file row at ``start`` whose
    ``kind`` key sits at ``head``, path bytes are ``name`` and text value starts after
    ``text``; None if it is not so shaped.

    The fields BCY reads are validated as JSON (path and text strings, end_line an integer);
    the text is decoded once per distinct text. The other keys (base_commit, chunk_id) are
    not read, like the symbol rows.
    """
    end = data.find(b"\n", text)
    end = len(data) if end == -1 else end
    number = data.rfind(_END_LINE, start, head)
    digits = data[number + len(_END_LINE) : head]
    if data[text : text + 2] != b' "' or data[end - 2 : end] != b'"}':
        return None
    if number == -1 or not _JSON_INT.fullmatch(digits):
        return None
    try:
        path = _json_string(name)
        key = counter.add_escaped(data[text + 2 : end - 2])
    except ValueError:  # bad UTF-8 or JSON: the full parse locates it
        return None
    return path, int(digits), key, end


def _json_string(body: bytes) -> str:
    """The string whose JSON form is ``"body"``; ValueError if that is not a JSON string."""
    if _PLAIN_BYTES.fullmatch(body):
        return body.decode("utf-8")
    value: str = json.loads('"' + body.decode("utf-8") + '"')  # a leading quote: a string
    return value


def _escape(text: str) -> bytes:
    """``text`` as upstream serialisation writes it inside a JSON string (spec §0).

    Lone surrogates, which no UTF-8 chunk file can hold, pass through, so such a path is
    simply not found.
    """
    if _PLAIN.fullmatch(text) is None:
        text = dumps_upstream(text)[1:-1]
    return text.encode("utf-8", "surrogatepass")


def _rows_from_frame(frame: pl.DataFrame) -> dict[str, _Costs | None]:
    """Cached FILES-style rows back to costs per path (null costs: no file row)."""
    return {
        path: None if n_tokens is None else (n_tokens, n_lines, n_bytes)
        for path, n_tokens, n_lines, n_bytes in frame.select(
            "path", "n_tokens", "n_lines", "n_bytes"
        ).iter_rows()
    }


def _files_frame(
    rows: Mapping[str, Mapping[str, _Costs | None]], *, keep_absent: bool = False
) -> pl.DataFrame:
    """A FILES frame from costs per snapshot and path; absent paths only with ``keep_absent``
    (as null costs, the partial disk cache's form)."""
    records = [
        (sid, path, *(costs or (None, None, None)))
        for sid, by_path in rows.items()
        for path, costs in by_path.items()
        if costs is not None or keep_absent
    ]
    frame = pl.DataFrame(records, schema=FILES, orient="row")
    return frame if keep_absent else validate(frame, FILES, name="files")
