"""Corpus snapshots (spec §1.4, §3): manifest lookup, lazy chunk reading, cached file token counts.

A :class:`Corpus` never holds more than one snapshot's text at a time: chunk files are read
when asked for, and only the small per-file token table (FILES frame) is kept, in memory and
optionally on disk, so memory stays flat in the number of snapshots.
"""

from __future__ import annotations

import hashlib
import io
import mmap
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from arbwb.errors import InputError
from arbwb.jsonio import atomic_open, iter_jsonl
from arbwb.schemas import CHUNKS, FILES, validate
from arbwb.tokenize import CODE_TOKEN_PATTERN_RUST

MANIFEST_NAME = "corpus_manifest.jsonl"
_CHUNK_FIELDS: dict[str, type[pl.DataType]] = {
    "chunk_id": pl.String,
    "path": pl.String,
    "kind": pl.String,
    "symbol": pl.String,
    "start_line": pl.Int64,
    "end_line": pl.Int64,
    "text": pl.String,
}
_CACHE_VERSION = "files-v1"
_FILE_KIND = b'"kind": "file"'
_SYMBOL_KIND = b'"kind": "symbol"'


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
    """One ``ok`` manifest row and where it was read from (for error messages)."""

    repo: str
    commit: str
    chunks_path: str
    manifest: Path
    line: int


@dataclass
class Corpus:
    """A corpus directory: manifest rows plus lazily read, cached per-snapshot file tables."""

    root: Path
    entries: dict[str, SnapshotEntry]
    cache_dir: Path | None = None
    _files: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False)
    _token_counts: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)

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

        Token counts are computed once per (snapshot, path) and cached in memory and, when the
        corpus has a ``cache_dir``, on disk keyed by the chunk file's path, size and mtime.
        """
        cached = self._files.get(snapshot_id)
        if cached is not None:
            return cached
        path = self.chunk_path(snapshot_id)
        disk = self._disk_cache_path(path)
        if disk is not None and disk.is_file():
            frame = pl.read_parquet(disk)
        else:
            frame = _files_frame(path, snapshot_id, self._token_counts)
            if disk is not None:
                with atomic_open(disk, "wb") as handle:
                    frame.write_parquet(handle)
        self._files[snapshot_id] = frame
        return frame

    def _entry(self, snapshot_id: str) -> SnapshotEntry:
        entry = self.entries.get(snapshot_id)
        if entry is None:
            msg = f"snapshot {snapshot_id!r} is not in the corpus (check has() first)"
            raise InputError(msg, path=self.root / MANIFEST_NAME)
        return entry

    def _disk_cache_path(self, chunk_file: Path) -> Path | None:
        if self.cache_dir is None:
            return None
        stat = chunk_file.stat()
        key = f"{_CACHE_VERSION}\x1f{chunk_file.resolve()}\x1f{stat.st_size}\x1f{stat.st_mtime_ns}"
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        return self.cache_dir / f"{digest}.parquet"


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
        entries[key] = SnapshotEntry(row["repo"], row["base_commit"], chunks_path, path, line)
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


def _read_chunk_file(path: Path, columns: list[str], lines: bytes | None = None) -> pl.DataFrame:
    """Read selected chunk-file fields with Polars; on any problem, locate it line by line.

    ``lines`` is an optional pre-selected subset of the file's lines. A zero-byte chunk file
    is a snapshot without files (no rows), not an error.
    """
    schema = {name: _CHUNK_FIELDS[name] for name in columns}
    if path.stat().st_size == 0:
        return pl.DataFrame(schema=schema)
    try:
        frame = pl.read_ndjson(path if lines is None else io.BytesIO(lines), schema=schema)
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


def _file_row_lines(path: Path) -> bytes | None:
    """The ``kind=file`` lines of an upstream-serialised chunk file, without parsing the rest.

    Symbol rows (most of a chunk file's bytes) are skipped by locating the literal
    ``"kind": "file"`` (inside a JSON string a quote is always escaped, so the literal can only
    be the key and its value). Used only when the first line shows upstream serialisation;
    otherwise returns None and the caller parses everything. Lines skipped as symbol rows are
    not validated (BCY never reads them).
    """
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        first = data[: data.find(b"\n")]
        if _FILE_KIND not in first and _SYMBOL_KIND not in first:
            return None
        lines = []
        at = data.find(_FILE_KIND)
        while at != -1:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            end = len(data) if end == -1 else end
            lines.append(data[start:end])
            at = data.find(_FILE_KIND, end)
    return b"\n".join(lines) + b"\n"


def _files_frame(path: Path, snapshot_id: str, known: dict[tuple[int, int], int]) -> pl.DataFrame:
    """FILES rows from a chunk file: last ``kind=file`` row per path, tokens via Rust regex.

    ``known`` maps (64-bit text hash, UTF-8 length) to a token count, shared by the snapshots
    of a corpus, so text that recurs across snapshots is tokenised once.
    """
    columns = ["path", "kind", "end_line", "text"]
    selected = _file_row_lines(path) if path.stat().st_size else None
    rows = (
        _read_chunk_file(path, columns, selected)
        .filter(pl.col("kind") == "file")
        .unique(subset="path", keep="last", maintain_order=True)
        .with_columns(
            key=pl.col("text").hash(),
            n_bytes=pl.col("text").str.len_bytes().cast(pl.Int64),
        )
    )
    keys = list(zip(rows["key"].to_list(), rows["n_bytes"].to_list(), strict=True))
    new = rows.filter(pl.Series([k not in known for k in keys], dtype=pl.Boolean))
    counted = new.select(count_tokens_expr("text"))["text"].to_list()
    new_keys = zip(new["key"].to_list(), new["n_bytes"].to_list(), strict=True)
    known.update(zip(new_keys, counted, strict=True))
    frame = rows.select(
        pl.lit(snapshot_id).alias("snapshot_id"),
        "path",
        pl.Series("n_tokens", [known[k] for k in keys], dtype=pl.Int64),
        pl.col("end_line").alias("n_lines"),
        "n_bytes",
    )
    return validate(frame, FILES, name="files")
