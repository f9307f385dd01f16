"""Corpus snapshots (spec §1.4, §3): one view over every manifest of a root, chunk files read
when asked for (:mod:`arbwb.io.chunkscan`), and only the small per-file token table kept, in
memory and on disk (:mod:`arbwb.io.costcache`), so memory stays flat in the number of snapshots.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from arbwb import cache
from arbwb.errors import InputError
from arbwb.io import costcache
from arbwb.io.costcache import Costs, Known, files_frame
from arbwb.jsonio import iter_jsonl
from arbwb.paths import RELEASE_ORDER
from arbwb.schemas import CHUNKS, validate

if TYPE_CHECKING:  # the chunk reader (numpy) loads only when a file is read
    from arbwb.io.chunkscan import Key

MANIFEST_NAME = "corpus_manifest.jsonl"
#: What a chunk file whose rows differ from its manifest row's counts is: an error (default),
#: or a missing snapshot (``--allow-incomplete-snapshots``), named in a warning.
OnMismatch = Literal["error", "missing"]
#: The command-line flag that asks for ``on_mismatch="missing"`` (named in the error).
ALLOW_FLAG = "--allow-incomplete-snapshots"
_BATCH_BYTES = 64 * 2**20  # tokenise new texts in batches of about this many escaped bytes


def snapshot_id(repo: str, commit: str) -> str:
    """The snapshot key ``owner/name@commit`` used by every frame."""
    return f"{repo}@{commit}"


def repo_slug(repo: str) -> str:
    """``owner/name`` -> ``owner__name`` (spec §0), the corpus folder of a repository."""
    return repo.replace("/", "__")


@dataclass(frozen=True)
class SnapshotEntry:
    """One ``ok`` manifest row and where it was read from; its counts (None when absent or not
    an integer) are checked against the chunk file's rows (:meth:`Corpus.check_counts`)."""

    repo: str
    commit: str
    chunks_path: str
    manifest: Path
    line: int
    file_count: int | None = None
    chunk_count: int | None = None


@dataclass(frozen=True)
class ManifestRow:
    """A manifest row of any status, for coverage tables (ok and missing snapshots)."""

    snapshot_id: str
    status: str
    manifest: Path
    line: int


class IncompleteSnapshotWarning(UserWarning):
    """Snapshots counted as missing because their chunk files differ from their manifest rows."""


@dataclass
class Corpus:
    """One view over a root's corpus manifests: snapshots plus lazily read, cached token costs."""

    root: Path  # the corpus folder or data root opened
    entries: dict[str, SnapshotEntry]
    manifests: list[Path]  # in priority order
    cache_dir: Path | None = None  # the on-disk cost cache (None: memory only)
    incomplete: dict[str, str] = field(default_factory=dict)  # left out as missing: why
    _files: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False)
    _known: dict[str, Known] = field(default_factory=dict, repr=False)
    _token_counts: dict[Key, tuple[int, int]] = field(default_factory=dict, repr=False)

    def snapshot_ids(self) -> list[str]:
        """Snapshot ids of the usable (status ``ok`` or no status) manifest rows, sorted."""
        return sorted(self.entries)

    def has(self, snapshot_id: str) -> bool:
        """Whether the manifest lists the snapshot as usable."""
        return snapshot_id in self.entries

    def chunk_path(self, snapshot_id: str) -> Path:
        """Resolved chunk file of a snapshot, tried in docs/data-layout.md's order (spec §1.4)."""
        entry = self._entry(snapshot_id)
        folder = entry.manifest.parent
        given = Path(entry.chunks_path)
        candidates = [given]
        if not given.is_absolute():
            candidates += [folder.parent.parent.parent / given, folder.parent / given]
        candidates.append(folder / repo_slug(entry.repo) / f"{entry.commit}.chunks.jsonl")
        if found := next((c for c in candidates if c.is_file()), None):
            return found
        tried = ", ".join(str(c) for c in candidates)
        msg = f"chunk file of {snapshot_id} not found (tried {tried}); rebuild it or fix the row"
        raise InputError(msg, path=entry.manifest, line=entry.line, field="chunks_path")

    def source(self, snapshot_id: str) -> costcache.Source:
        """The chunk file and the row counts its manifest row promises: what cache entries of
        the file are keyed by, so an entry checked against other counts is never a hit (a warm
        run refuses a contradicting manifest row as a cold one does)."""
        entry = self._entry(snapshot_id)
        return self.chunk_path(snapshot_id), f"rows={entry.chunk_count}:files={entry.file_count}"

    def count_mismatch(
        self, snapshot_id: str, rows: int, file_rows: int | None = None
    ) -> str | None:
        """How the rows read from a snapshot's chunk file (``file_rows``: kind ``file``, None:
        not counted) differ from its manifest row's counts; None when they agree."""
        entry = self._entry(snapshot_id)
        for name, want, found, what in (
            ("chunk_count", entry.chunk_count, rows, "rows"),
            ("file_count", entry.file_count, file_rows, "file rows"),
        ):
            if want is not None and found is not None and found != want:
                return (
                    f"chunk file has {found} {what} but its manifest row ({entry.manifest}:"
                    f"{entry.line}, field {name!r}) promises {want}"
                )
        return None

    def check_counts(
        self, snapshot_id: str, path: Path, rows: int, file_rows: int | None = None
    ) -> None:
        """InputError naming ``path`` and both counts on a :meth:`count_mismatch`; every reader
        calls it with the rows it read, so a cut or padded chunk file never yields numbers."""
        problem = self.count_mismatch(snapshot_id, rows, file_rows)
        if problem is not None:
            fix = f"rebuild the snapshot or pass {ALLOW_FLAG} (score, rank) to count it as missing"
            msg = f"{problem}; {fix}"
            raise InputError(msg, path=path)

    def chunks(self, snapshot_id: str) -> pl.DataFrame:
        """All rows of a snapshot's chunk file as a CHUNKS frame, in file order (counts checked)."""
        from arbwb.io.chunkscan import CHUNK_FIELDS, read_chunk_file

        path = self.chunk_path(snapshot_id)
        frame = read_chunk_file(path, list(CHUNK_FIELDS))
        n_files = int((frame["kind"] == "file").sum())
        self.check_counts(snapshot_id, path, frame.height, n_files)
        return validate(
            frame.with_columns(pl.lit(snapshot_id).alias("snapshot_id")), CHUNKS, name="chunks"
        )

    def line_counts(
        self, snapshot_id: str, paths: Iterable[str], *, rows: pl.DataFrame | None = None
    ) -> pl.DataFrame:
        """``path, file_lines`` (largest ``end_line`` over the path's chunk rows: the full physical
        line count, spec §11) of the wanted paths that have rows (row count checked); every
        path's count is kept in the cost cache (:func:`arbwb.io.costcache.load_lines`). ``rows``:
        the chunk file's rows (with ``path`` and ``end_line``) when the caller already read them."""
        source = self.source(snapshot_id)
        path = source[0]
        lines = costcache.load_lines(self.cache_dir, source)
        if lines is None:
            from arbwb.io.chunkscan import read_chunk_file

            if rows is None:
                rows = read_chunk_file(path, ["path", "end_line"])
            self.check_counts(snapshot_id, path, rows.height)
            lines = rows.group_by("path").agg(file_lines=pl.col("end_line").max())
            costcache.save_lines(self.cache_dir, source, lines)
        wanted = pl.Series(sorted(set(paths)), dtype=pl.String).implode()
        return lines.filter(pl.col("path").is_in(wanted)).sort("path")

    def files(self, snapshot_id: str) -> pl.DataFrame:
        """FILES frame of a snapshot: one row per ``kind=file`` path (the last row wins, at its
        position), token counts cached in memory and on disk (:func:`arbwb.cache.file_key`)."""
        cached = self._files.get(snapshot_id)
        if cached is None:
            known = self._resolve({snapshot_id: None})[snapshot_id]
            cached = files_frame({snapshot_id: known.rows})
            self._files[snapshot_id] = cached
        return cached

    def file_costs(self, wanted: Mapping[str, Iterable[str]]) -> pl.DataFrame:
        """FILES rows of just the ``wanted`` paths of each snapshot (paths without a file row left
        out); only uncached paths' texts are decoded and tokenised, so few paths cost little."""
        sets = {sid: set(paths) for sid, paths in wanted.items()}
        known = self._resolve(dict(sets))
        rows = {
            sid: {p: known[sid].rows.get(p) for p in sorted(paths)} for sid, paths in sets.items()
        }
        return files_frame(rows)

    def _resolve(self, wanted: Mapping[str, set[str] | None]) -> dict[str, Known]:
        """Known costs of each snapshot, covering its wanted paths (None: all file rows): chunk
        files with a ``file_count`` are byte-scanned through a memory map (:func:`scan_upstream`);
        the rest, and scans that cannot vouch for their rows, get the checked full parse."""
        unread = {sid: self.source(sid) for sid in wanted if sid not in self._known}
        self._known |= costcache.load_many(self.cache_dir, unread)
        todo: dict[str, set[str] | None] = {}
        for sid, paths in wanted.items():
            known = self._known[sid]
            rest = None if paths is None else {p for p in paths if p not in known.rows}
            if not known.complete and rest != set():
                todo[sid] = rest
        if not todo:
            return {sid: self._known[sid] for sid in wanted}
        from arbwb.io.chunkscan import TokenCounter, mapped_files, parse_file_rows, scan_upstream

        files = {sid: self.chunk_path(sid) for sid in todo}
        scan: dict[str, tuple[int, int | None]] = {}  # byte-scanned: a file count, some bytes
        for sid in todo:
            entry = self.entries[sid]
            if entry.file_count is not None and files[sid].stat().st_size > 0:
                scan[sid] = (entry.file_count, entry.chunk_count)
        counter = TokenCounter(self._token_counts)
        scanned: dict[str, dict[str, tuple[int, Key]]] = {}
        maps = mapped_files([files[sid] for sid in scan])
        with closing(maps):
            for sid, paths in todo.items():
                found, counts = None, scan.get(sid)
                if counts is not None and (data := next(maps)) is not None:
                    found = scan_upstream(data, self.entries[sid].repo, paths, counter, counts)
                if found is None:
                    found, read = parse_file_rows(files[sid], paths, counter)
                    self.check_counts(sid, files[sid], read.rows, read.file_rows)
                scanned[sid] = found
                if counter.pending_bytes > _BATCH_BYTES:
                    counter.flush()
        counter.flush()
        for sid, found in scanned.items():
            known, paths, tokens = self._known[sid], todo[sid], self._token_counts
            costs: dict[str, Costs | None]
            costs = {p: (tokens[k][0], n, tokens[k][1]) for p, (n, k) in found.items()}
            if paths is None:
                known.complete, known.rows = True, costs
            else:
                known.rows.update({path: costs.get(path) for path in paths})
            costcache.save(self.cache_dir, self.source(sid), sid, known)
        together = {sid: (self.source(sid), self._known[sid]) for sid in wanted}
        costcache.save_bundle(self.cache_dir, together)
        return {sid: self._known[sid] for sid in wanted}

    def _entry(self, snapshot_id: str) -> SnapshotEntry:
        entry = self.entries.get(snapshot_id)
        if entry is None:
            msg = f"snapshot {snapshot_id!r} is not in the corpus (check has() first)"
            raise InputError(msg, path=self.manifests[0] if self.manifests else self.root)
        return entry


def open_corpus(
    path: str | Path,
    release: str | None = None,
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    on_mismatch: OnMismatch = "error",
) -> Corpus:
    """Open a corpus folder holding ``corpus_manifest.jsonl``, or a data root with ``corpus/R/``
    (one view over its manifests, merged as docs/data-layout.md says; only ``release``'s when
    given). ``on_mismatch="missing"`` leaves out incomplete snapshots now (:func:`drop_incomplete`).
    """
    root = Path(path)
    manifests = [root / MANIFEST_NAME] if (root / MANIFEST_NAME).is_file() else []
    if not manifests:
        manifests = corpus_manifests(root, release)
    entries: dict[str, SnapshotEntry] = {}
    for manifest in manifests:
        for key, entry in read_manifest(manifest).items():
            entries.setdefault(key, entry)
    if cache_dir is None and use_cache:
        cache_dir = cache.kind_dir(costcache.KIND)  # None (uncached) when it cannot be made
    folder = None if cache_dir is None or not use_cache else Path(cache_dir)
    corpus = Corpus(root=root, entries=entries, manifests=manifests, cache_dir=folder)
    if on_mismatch == "missing":  # else each incomplete snapshot is an error when read
        drop_incomplete(corpus)
    return corpus


def drop_incomplete(corpus: Corpus) -> None:
    """Leave out (as missing, in one :class:`IncompleteSnapshotWarning`) the snapshots whose
    chunk files' rows, counted without parsing, differ from their rows' ``chunk_count``; a bad
    ``file_count`` or a missing file is still an error when read."""
    from arbwb.io.chunkscan import count_rows

    for sid, entry in sorted(corpus.entries.items()):
        if entry.chunk_count is None:
            continue
        try:
            path = corpus.chunk_path(sid)
        except InputError:  # not found: reported when it is read
            continue
        problem = corpus.count_mismatch(sid, count_rows(path))
        if problem is not None:
            corpus.incomplete[sid] = f"{path}: {problem}"
    for sid in corpus.incomplete:
        del corpus.entries[sid]
    if corpus.incomplete:
        named = "; ".join(f"{sid} ({why})" for sid, why in corpus.incomplete.items())
        msg = f"{len(corpus.incomplete)} snapshots counted as missing (incomplete): {named}"
        warnings.warn(msg, IncompleteSnapshotWarning, stacklevel=3)


def corpus_manifests(root: Path, release: str | None = None) -> list[Path]:
    """The manifests under ``root/corpus/`` in merge order (only ``release``'s when given)."""
    corpus = root / "corpus" if (root / "corpus").is_dir() else root  # a root, or corpus/ itself
    if release is not None:
        found = corpus / release / MANIFEST_NAME
        if not found.is_file():
            msg = f"no {MANIFEST_NAME} in {found.parent}; check the release id"
            raise InputError(msg, path=found.parent)
        return [found]
    rank = {name: i for i, name in enumerate(RELEASE_ORDER)}
    found_all = sorted(
        corpus.glob(f"*/{MANIFEST_NAME}"),
        key=lambda p: (rank.get(p.parent.name, len(rank)), p.parent.name),
    )
    if not found_all:
        msg = f"no {MANIFEST_NAME} here nor in any corpus/<release>/ below; pass a corpus folder"
        raise InputError(msg, path=root)
    return found_all


def manifest_rows(manifests: Iterable[Path]) -> list[ManifestRow]:
    """Every row of the manifests (any status), for ok/missing counts per snapshot."""
    return [
        ManifestRow(key, str(row.get("status", "ok")), manifest, line)
        for manifest in manifests
        for line, row, key in _manifest_lines(manifest)
    ]


def _manifest_lines(path: Path) -> Iterator[tuple[int, dict[str, Any], str]]:
    """``(line, row, snapshot id)`` of each manifest row (``repo``, ``base_commit`` checked)."""
    for line, row in iter_jsonl(path, allow_empty=True):
        for name in ("repo", "base_commit"):
            value = row.get(name)
            if not isinstance(value, str) or not value:
                raise InputError("expected a non-empty string", path=path, line=line, field=name)
        yield line, row, snapshot_id(row["repo"], row["base_commit"])


def read_manifest(path: Path) -> dict[str, SnapshotEntry]:
    """Usable manifest rows by snapshot id (spec §1.4: status ``ok`` or absent; later rows win)."""
    entries: dict[str, SnapshotEntry] = {}
    for line, row, key in _manifest_lines(path):
        if row.get("status", "ok") != "ok":
            entries.pop(key, None)
            continue
        chunks_path = row.get("chunks_path")
        if not isinstance(chunks_path, str) or not chunks_path:
            msg = f"an ok row needs the chunk file path, got {chunks_path!r}"
            raise InputError(msg, path=path, line=line, field="chunks_path")
        file_count, chunk_count = (_count(row, name) for name in ("file_count", "chunk_count"))
        entries[key] = SnapshotEntry(
            row["repo"], row["base_commit"], chunks_path, path, line, file_count, chunk_count
        )
    return entries


def _count(row: Mapping[str, object], name: str) -> int | None:
    """A manifest row's count field, or None when absent or not an integer (not checked)."""
    value = row.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
