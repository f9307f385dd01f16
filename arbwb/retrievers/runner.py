"""The evaluation loop of spec §4.1 for one chunk retriever; a per-sample checkpoint makes a run
resumable with byte-identical output (docs/retrievers.md#evaluation-loop)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import polars as pl
from tqdm import tqdm

from arbwb import __version__, jsonio
from arbwb.errors import InputError
from arbwb.io.corpus import Corpus
from arbwb.io.pathclass import CandidateFilter
from arbwb.io.samples import SampleSet, query_has_leakage
from arbwb.metrics.chunks import ChunkTable, chunk_table
from arbwb.retrievers import details as det
from arbwb.retrievers.common import RetrievalMethod, rank_row, snapshot_index

#: The checkpoint is flushed per sample but fsynced at most this often (measured: an fsync per
#: sample cost more than ranking it; a crash loses at most this many seconds).
SYNC_SECONDS = 1.0

#: Summary ``mode`` per details ``ranker`` (spec §4.8).
MODES = dict.fromkeys(("lexical", "bm25", "bm25-okapi"), "corpus")
MODES |= {m: m for m in ("grep", "repomap", "embedding")}


@dataclass(frozen=True)
class Outcome:
    """Sample ``i``'s result: a details row, or the skip reason (spec §4.1), and wall time."""

    i: int
    row: dict[str, Any] | None
    skip: str | None
    seconds: float


def gold_only(target: det.SampleTarget) -> det.SampleTarget:
    """The target without hard negatives, spans or blocks (methods scored on gold files only)."""
    return dataclasses.replace(target, hard_negatives=[], spans=[], blocks=[])


def checkpoint_path(out: Path) -> Path:
    """The resume checkpoint kept beside ``out`` while a run is in progress."""
    return out.with_name(out.name + ".checkpoint.jsonl")


#: The ``os.stat`` fields that identify a chunk file's contents for a resume: any write,
#: truncation, replacement or ``touch`` changes one (ctime even when mtime is set back).
IDENTITY_FIELDS = ("size", "mtime_ns", "ctime_ns", "ino", "dev")
#: Changed chunk files a refused resume names (the rest are counted).
NAMED_CHANGES = 3
_ABSENT = object()  # a field a checkpoint line lacks
#: The checkpoint line's fields and their types (``row`` and ``skip`` may be null).
ENTRY_FIELDS: dict[str, tuple[type, ...]] = {
    "i": (int,),
    "row": (dict, type(None)),
    "skip": (str, type(None)),
    "seconds": (int, float),
}


def chunk_file_identity(path: Path) -> dict[str, int]:
    """``IDENTITY_FIELDS`` of a chunk file from ``os.stat``, kept apart so a refused resume
    can say which changed."""
    st = path.stat()
    return {k: getattr(st, f"st_{k}") for k in IDENTITY_FIELDS}


def fingerprint(
    method: RetrievalMethod,
    sample_set: SampleSet,
    corpus: Corpus,
    candidate_filter: str,
    tasks: list[str] | None,
) -> dict[str, Any]:
    """What a resume must agree on: method, options, filter, tasks, samples, manifest SHA-256
    and the identity of every chunk file the run reads."""
    sources = sorted(set(sample_set.samples["source"].to_list()))
    digest = hashlib.sha256("".join(jsonio.sha256_file(s) for s in sources).encode("ascii"))
    snapshots = sorted(s for s in set(sample_set.samples["snapshot_id"].to_list()) if corpus.has(s))
    paths = sorted({str(corpus.chunk_path(s)) for s in snapshots})
    return {
        "method": method.name,
        "model": method.model,
        "candidate_filter": candidate_filter,
        "tasks": tasks,
        "samples_sha256": digest.hexdigest(),
        "corpus_manifest_sha256": ",".join(jsonio.sha256_file(m) for m in corpus.manifests),
        "chunk_files": {path: chunk_file_identity(Path(path)) for path in paths},
        "arbwb": __version__,
    } | ({"params": dict(method.params)} if method.params else {})


def changed_chunk_files(found: Mapping[str, Any], expected: Mapping[str, Any]) -> list[str]:
    """Each chunk file whose identity changed since the checkpoint, with what changed."""
    changes = []
    for path in sorted(set(found) | set(expected)):
        old, new = found.get(path), expected.get(path)
        if old == new:
            continue
        if not isinstance(old, dict):
            changes.append(f"{path} (not read by the checkpointed run)")
        elif new is None:
            changes.append(f"{path} (no longer read)")
        else:
            diff = [
                f"{k} {old.get(k)} -> {new[k]}" for k in IDENTITY_FIELDS if old.get(k) != new[k]
            ]
            changes.append(f"{path} ({', '.join(diff)})")
    return changes


def _read_checkpoint(path: Path, expected: Mapping[str, Any]) -> dict[int, Outcome]:
    """Completed outcomes of a checkpoint whose fingerprint equals ``expected`` (a torn last
    line is recomputed; any other bad line is a located InputError)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    complete = lines[:-1]  # the text after the last newline is empty or a torn line
    if not complete:
        return {}
    found = _checkpoint_line(path, 1, complete[0]).get("fingerprint")
    found = found if isinstance(found, dict) else {}
    changed = sorted(k for k in set(found) | set(expected) if found.get(k) != expected.get(k))
    why = f"the checkpoint was made with different inputs ({changed})" if changed else None
    files = found.get("chunk_files")
    if changed == ["chunk_files"] and isinstance(files, dict):  # only the corpus changed
        listed = changed_chunk_files(files, expected["chunk_files"])
        more = len(listed) - NAMED_CHANGES
        named = "; ".join(listed[:NAMED_CHANGES]) + (f"; and {more} more" if more > 0 else "")
        why = f"chunk files changed since the checkpoint: {named}"
    if why is not None:
        msg = f"refusing to resume: {why}; rerun without --resume to start over"
        raise InputError(msg, path=path, line=1, field="fingerprint")
    done: dict[int, Outcome] = {}
    for number, text in enumerate(complete[1:], start=2):
        entry = _checkpoint_line(path, number, text)
        for name, types in ENTRY_FIELDS.items():
            value = entry.get(name, _ABSENT)
            if value is _ABSENT or not isinstance(value, types) or isinstance(value, bool):
                what = "lacks this field" if value is _ABSENT else f"has unexpected {value!r}"
                msg = f"checkpoint line {what}; rerun without --resume to start over"
                raise InputError(msg, path=path, line=number, field=name)
        done[entry["i"]] = Outcome(**{name: entry[name] for name in ENTRY_FIELDS})
    return done


def _checkpoint_line(path: Path, number: int, text: str) -> dict[str, Any]:
    """Line ``number`` of a checkpoint as a JSON object, else a located InputError."""
    try:
        entry = jsonio.loads_strict(text)
    except ValueError:
        entry = None
    if not isinstance(entry, dict):
        msg = "corrupt checkpoint line (not a JSON object); rerun without --resume to start over"
        raise InputError(msg, path=path, line=number)
    return entry


def _pre_skip(
    target: det.SampleTarget, frame_row: Mapping[str, Any], selective: bool
) -> str | None:
    """Skip reasons decided before ranking: empty target, then query leakage (spec §4.1, §4.7)."""
    if not target.gold and not target.no_gold:
        return "no_gold_unlabeled" if selective else "no_gold"
    fields = {k: jsonio.loads_strict(frame_row[k]) for k in ("query", "gold", "metadata")}
    if query_has_leakage({"task_type": frame_row["task"]} | fields):  # spec §2.10
        return "query_leakage"
    return None


def run_method(
    method: RetrievalMethod,
    sample_set: SampleSet,
    corpus: Corpus,
    out: Path,
    *,
    candidate_filter: CandidateFilter = "all_files",
    tasks: list[str] | None = None,
    resume: bool = False,
    on_sample: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Rank every sample, write details JSONL and summary JSON, return the summary (a missing
    snapshot: a ``missing_corpus`` error row); ``on_sample(i)`` runs once i is checkpointed."""
    samples = sample_set.samples
    targets = det.sample_targets(samples, sample_set.labels, sample_set.spans)
    selective = bool((samples["stratum"] != "positive").any())
    expected = fingerprint(method, sample_set, corpus, candidate_filter, tasks)
    ckpt = checkpoint_path(out)
    done = _read_checkpoint(ckpt, expected) if resume and ckpt.is_file() else {}
    out.parent.mkdir(parents=True, exist_ok=True)
    frame_rows = samples.to_dicts()
    index_seconds = 0.0
    synced = [time.monotonic()]
    with (
        _open_checkpoint(ckpt, expected, done) as handle,
        tqdm(
            total=len(targets), initial=len(done), desc=f"rank {method.name}", file=sys.stderr
        ) as bar,
    ):
        groups = _by_snapshot(samples, done)
        prefetch = method.hook("prefetch")
        if prefetch is not None:
            prefetch(corpus, [s for s, _ in groups if corpus.has(s)], candidate_filter)
        queries = [str(r["query_text"]) for r in frame_rows]
        indexes = _indexes(method, corpus, groups, candidate_filter, queries)
        for snapshot, members, prepared in indexes:
            start = time.perf_counter()
            present = corpus.has(snapshot)
            index, chunks = (None, None) if prepared is None else prepared
            table = chunk_table(chunks) if isinstance(chunks, pl.DataFrame) else chunks
            index_seconds += time.perf_counter() - start
            for i in members:
                start = time.perf_counter()
                target = gold_only(targets[i]) if method.gold_only else targets[i]
                skip = _pre_skip(target, frame_rows[i], selective)
                if skip is None and present and index is None:
                    skip = "empty_corpus"
                row = None
                if skip is None:  # a missing snapshot: an error row (arbwb-defined)
                    ranking = rank_row(method, index, frame_rows[i]) if present else None
                    row = det.details_row(
                        target,
                        ranking,
                        table,
                        candidate_filter=candidate_filter,
                        ranker=method.ranker,
                        selective=selective,
                        error=None if present else "missing_corpus",
                    )
                outcome = Outcome(i, row, skip, time.perf_counter() - start)
                done[i] = outcome
                _append(handle, outcome, synced)
                bar.update(1)
                if on_sample is not None:
                    on_sample(i)
            prepared = index = table = chunks = None  # free this snapshot before the next is read
    outcomes = [done[i] for i in range(len(targets))]
    rows = [o.row for o in outcomes if o.row is not None]
    skipped = dict(Counter(o.skip for o in outcomes if o.skip is not None))
    row_stats = method.hook("row_stats")  # summary extras the retriever computes from the rows
    # without the chunk files' local identities: a rebuilt release stays byte-identical
    fingerprint_kept = {k: v for k, v in expected.items() if k != "chunk_files"}
    runtime = det.runtime_stats([o.seconds for o in outcomes if o.row is not None])
    runtime |= {"index_s": index_seconds}
    summary = det.summarize(
        rows,
        mode=f"selective_{method.ranker}" if selective else MODES.get(method.ranker, "other"),
        ranker=method.ranker,
        model=method.model,
        candidate_filter=candidate_filter,
        skipped=skipped,
        runtime=runtime,
        extras={"method": method.name, "fingerprint": fingerprint_kept}
        | ({"family": method.family} if method.family else {})
        | method.stats()
        | ({} if row_stats is None else dict(row_stats(rows))),
    )
    jsonio.write_jsonl(out, rows)
    jsonio.write_json(det.summary_path(out), summary)
    ckpt.unlink(missing_ok=True)
    return summary


def _indexes(
    method: RetrievalMethod,
    corpus: Corpus,
    groups: list[tuple[str, list[int]]],
    candidate_filter: CandidateFilter,
    queries: list[str],
) -> Iterator[tuple[str, list[int], tuple[Any, pl.DataFrame | ChunkTable] | None]]:
    """Each group with its snapshot's index (None: missing or nothing ranked), in order; the
    next ``index_ahead`` snapshots are indexed (and queries prepared) on worker threads."""
    prepare_queries = method.hook("prepare_queries")

    def prepare(snapshot: str, members: list[int]) -> tuple[Any, pl.DataFrame | ChunkTable] | None:
        if not corpus.has(snapshot):
            return None
        prepared = snapshot_index(method, corpus, snapshot, candidate_filter)
        if prepared is not None and prepare_queries is not None:
            prepare_queries(prepared[0], [queries[i] for i in members])
        return prepared

    depth = method.index_ahead
    if depth <= 0:
        for snapshot, members in groups:
            yield snapshot, members, prepare(snapshot, members)
        return
    with ThreadPoolExecutor(depth, thread_name_prefix="arbwb-index") as pool:
        upcoming = [pool.submit(prepare, *group) for group in groups[:depth]]
        for k, (snapshot, members) in enumerate(groups):
            prepared = upcoming.pop(0).result()
            if k + depth < len(groups):
                upcoming.append(pool.submit(prepare, *groups[k + depth]))
            yield snapshot, members, prepared
            prepared = None  # free this snapshot before a later one is read


def _by_snapshot(samples: pl.DataFrame, done: Mapping[int, Outcome]) -> list[tuple[str, list[int]]]:
    """Pending sample indices grouped by snapshot, sorted by id (a repository's snapshots
    adjacent, so memos reuse the previous snapshot's text)."""
    groups: dict[str, list[int]] = {}
    for i, snapshot in enumerate(samples["snapshot_id"].to_list()):
        if i not in done:
            groups.setdefault(snapshot, []).append(i)
    return sorted(groups.items())


@contextlib.contextmanager
def _open_checkpoint(
    path: Path, expected: Mapping[str, Any], done: Mapping[int, Outcome]
) -> Iterator[IO[str]]:
    """Rewrite the checkpoint (fingerprint + kept outcomes) atomically, then append to it."""
    with jsonio.atomic_open(path, "w") as handle:
        handle.write(json.dumps({"fingerprint": dict(expected)}, sort_keys=True) + "\n")
        for outcome in sorted(done.values(), key=lambda o: o.i):
            handle.write(_entry(outcome))
    with path.open("a", encoding="utf-8") as handle:
        yield handle


def _entry(outcome: Outcome) -> str:
    return jsonio.dumps_upstream(vars(outcome)) + "\n"


def _append(handle: IO[str], outcome: Outcome, synced: list[float]) -> None:
    """Append one outcome and flush it; fsync when ``SYNC_SECONDS`` passed since ``synced[0]``."""
    handle.write(_entry(outcome))
    handle.flush()
    now = time.monotonic()
    if now - synced[0] >= SYNC_SECONDS:
        os.fsync(handle.fileno())
        synced[0] = now
