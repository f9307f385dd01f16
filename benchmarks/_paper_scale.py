"""A generated release shaped like ARB's published one (issue 27): five subsets, ~270 snapshots,
7-8M chunk rows at ``fraction=1``; ``fraction`` scales snapshots and samples.

Corpus. Text is real code (this interpreter's standard library, ``_arb_shape._pool``), split
once per pool file into a file row (``truncate(content, 8000)``) and symbol rows: a piece at
every def/class line and at every paragraph (a line after a blank one) inside a symbol, named
after the enclosing def/class, so rows are as small and as many as upstream's. Repositories come
in a fixed cycle of size classes: small (40-70 files, ~1 MB chunk files), medium (400-800 files,
~15 MB) and large (2400-3600 files, 60-120 MB). Consecutive snapshots of one repository keep
20-35% of the files unchanged and give every other file a new revision; each chunk text ends in
``# r<repo>.<revision>``, so text recurs only within a repository (20-40% of a snapshot's rows
have their text in another snapshot of it). Rows are written as upstream serialises them
(sorted keys, default separators) from pre-escaped strings, by two processes, one snapshot each.

Samples. 106 code2test, 80 comment2context, 101 trace2code, 58 edit2ripple positives and 82
abstention samples (50 natural, 32 counterfactual wrong-repo) at ``fraction=1``, each subset
with its own ``benchmark/<R>``, ``corpus/<R>`` and ``eval/<R>`` (``R = v2_<task>``; at other
fractions ``v2_<task>_f<permille>``, so ``arbwb validate`` does not expect the published counts).
Gold spans and blocks name real symbol rows. Runs: the paper's twelve methods per positive
subset (top-20 lists, gold ranks varying with a per-method skill, upstream-consistent MRR and
recall, summaries) and three selective runs with confidences over the abstention samples plus
as many positives in ``eval/v2_selective_retrieval_balanced``.

Same seed and fraction, same bytes (``--digest``). Usage:
    python benchmarks/_paper_scale.py --out DIR [--fraction F] [--seed S] [--digest]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing
import os
import random
import re
import shutil
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from json.encoder import encode_basestring as _escape  # json.dumps(s, ensure_ascii=False)
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _arb_shape import _pool, truncate

from arbwb.io.samples import query_has_leakage

STAMP = "2026-01-01T00:00:00+00:00"
SNAPSHOTS = 270
#: (task, release stem, positives or (natural, counterfactual)) of the published release
POSITIVE = (("code2test", 106), ("comment2context", 80), ("trace2code", 101), ("edit2ripple", 58))
NATURAL, COUNTERFACTUAL = 50, 32
#: size classes: (files per snapshot range, snapshots per repository)
CLASSES = {"small": ((40, 70), 5), "medium": ((400, 800), 4), "large": ((2400, 3600), 4)}
CYCLE = ("small", "medium", "small", "large", "small", "small", "medium", "small")
METHODS = (  # stem, skill (share of gold files ranked in the top 20)
    ("lexical_all_files", 0.55),
    ("bm25_all_files", 0.6),
    ("repomap_all_files", 0.5),
    ("grep_strict", 0.35),
    ("Qwen3-Embedding-4B", 0.68),
    ("Qwen3-Embedding-8B", 0.72),
    ("pplx-embed-v1-4b", 0.66),
    ("jina-code-embeddings-0.5b", 0.58),
    ("nomic-embed-code", 0.62),
    ("rrf_qwen8b_repomap", 0.74),
    ("rrf_qwen4b_repomap", 0.71),
    ("rrf_qwen8b_qwen4b_repomap", 0.76),
)
SELECTIVE = ("lexical", "bm25", "Qwen3-Embedding-8B")
BALANCED = "v2_selective_retrieval_balanced"
NATURAL_REASONS = ("flaky_ci", "upstream_dependency", "external_service", "user_error")
_SYMBOL = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(|^\s*class\s+(\w+)")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_ROW = (
    '{"base_commit": "%s", "chunk_id": "%s", "end_line": %d, "kind": "%s", "path": %s, '
    '"repo": "%s", "start_line": %d, "symbol": %s, "text": %s\\n# r%d.%d"}\n'
)


@dataclass(frozen=True)
class Piece:
    """One chunk row of a pool file: kind, symbol, line range and JSON text without its quote."""

    kind: str
    symbol: str
    start: int
    end: int
    text: str  # json.dumps(text)[:-1]: the row appends the revision tag and the closing quote


@dataclass(frozen=True)
class PoolFile:
    """A pool file split into rows once, reused by every repository that holds it."""

    path: str
    lines: int
    pieces: tuple[Piece, ...]
    words: tuple[str, ...]


@dataclass(frozen=True)
class Snapshot:
    """One generated snapshot: its repository, commit, release and files (pool index, rev)."""

    repo: str
    repo_index: int
    commit: str
    release: str
    files: tuple[tuple[str, int, int], ...]  # (path, pool index, revision), sorted by path


_RAW: list[tuple[str, str]] = []
_SPLIT: dict[int, PoolFile] = {}  # pool index -> its rows
_HEADS = ("def", "async", "class")


def _split(path: str, text: str) -> PoolFile:
    """Spec §3.3-style rows of one file: the file row, then def/class and paragraph pieces."""
    content = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = content.splitlines()
    starts: list[tuple[int, str]] = []
    name = ""
    after_blank = False
    for i, line in enumerate(lines, start=1):
        head = line.lstrip()
        match = _SYMBOL.match(line) if head.startswith(_HEADS) else None
        if match:
            name = match.group(1) or match.group(2)
            starts.append((i, name))
        elif name and head and after_blank:
            starts.append((i, name))
        after_blank = not head
    pieces = [Piece("file", "", 1, len(lines), _escape(truncate(content))[:-1])]
    for k, (start, symbol) in enumerate(starts):
        end = max(start, starts[k + 1][0] - 1) if k + 1 < len(starts) else max(start, len(lines))
        body = truncate("\n".join(lines[start - 1 : end]))
        if body:
            pieces.append(Piece("symbol", symbol, start, end, _escape(body)[:-1]))
    words = tuple(sorted(set(_WORD.findall(content[:4000])))[:200]) or ("value",)
    return PoolFile(path, len(lines), tuple(pieces), words)


def load_pool(seed: int) -> list[tuple[str, str]]:
    """The (path, text) pool in a seeded order, read once per process."""
    if not _RAW:
        raw = _pool()
        random.Random(seed).shuffle(raw)
        _RAW.extend(raw)
    return _RAW


def split_used(snaps: Sequence[Snapshot]) -> None:
    """Split every pool file the snapshots hold (before the writers fork, so once)."""
    for index in sorted({i for s in snaps for _, i, _ in s.files} - set(_SPLIT)):
        _SPLIT[index] = _split(*_RAW[index])


def stable_id(*parts: object) -> str:
    """Upstream id (spec §0): first 24 hex chars of SHA-256 of the parts joined by U+001F."""
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:24]


def release_name(task: str, fraction: float) -> str:
    """``v2_<task>`` at full scale, else ``v2_<task>_f<permille>`` (no expected counts)."""
    return f"v2_{task}" if fraction == 1.0 else f"v2_{task}_f{round(fraction * 1000):04d}"


def _counts(fraction: float) -> dict[str, int]:
    """Samples per task at ``fraction`` (abstention split into natural/counterfactual)."""
    out = {task: max(2, round(n * fraction)) for task, n in POSITIVE}
    out["natural"] = max(5, round(NATURAL * fraction))
    out["counterfactual"] = max(3, round(COUNTERFACTUAL * fraction))
    return out


def plan(fraction: float, seed: int) -> list[Snapshot]:
    """Repositories in the size-class cycle until the snapshots are placed; releases dealt out
    in proportion to their samples, interleaved so each subset gets every size class."""
    pool = load_pool(seed)
    rng = random.Random(seed)
    total = max(10, round(SNAPSHOTS * fraction))
    counts = _counts(fraction)
    weights = {task: counts[task] for task, _ in POSITIVE}
    weights["abstention"] = counts["natural"] + counts["counterfactual"]
    share = {t: max(2, round(total * w / sum(weights.values()))) for t, w in weights.items()}
    deck = [t for t, n in share.items() for _ in range(n)]
    rng.shuffle(deck)
    out: list[Snapshot] = []
    offset = 0
    index = 0
    while len(out) < len(deck):
        kind = CYCLE[index % len(CYCLE)]
        (low, high), n_snapshots = CLASSES[kind]
        n_files = rng.randint(low, high)
        members: dict[str, int] = {}
        while len(members) < n_files:
            members.setdefault(pool[offset % len(pool)][0], offset % len(pool))
            offset += 1
        repo = f"paper/{kind}{index:03d}"
        keep = rng.uniform(0.2, 0.35)
        revision = dict.fromkeys(members, 0)
        for k in range(min(n_snapshots, len(deck) - len(out))):
            if k:
                revision = {p: r if rng.random() < keep else k for p, r in revision.items()}
            commit = hashlib.sha1(f"{seed}:{repo}:{k}".encode()).hexdigest()
            files = tuple((p, members[p], revision[p]) for p in sorted(members))
            task = deck[len(out)]
            out.append(Snapshot(repo, index, commit, release_name(task, fraction), files))
        index += 1
    return out


def write_chunks(snapshot: Snapshot, target: Path) -> dict[str, Any]:
    """Write one chunk file from the pool's pre-escaped pieces; return its manifest row."""
    pool = _SPLIT
    repo, commit = snapshot.repo, snapshot.commit
    n_rows = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8") as handle:
        for path, index, rev in snapshot.files:
            item = pool[index]
            path_json = json.dumps(path, ensure_ascii=False)
            prefix = f"{repo}\x1f{commit}\x1f{path}\x1f"
            rows = [
                _ROW
                % (
                    commit,
                    hashlib.sha256(
                        f"{prefix}{p.kind}\x1f{p.symbol}\x1f{p.start}\x1f{p.end}".encode()
                    ).hexdigest()[:24],
                    p.end,
                    p.kind,
                    path_json,
                    repo,
                    p.start,
                    json.dumps(p.symbol, ensure_ascii=False),
                    p.text,
                    snapshot.repo_index,
                    rev,
                )
                for p in item.pieces
            ]
            n_rows += len(rows)
            handle.write("".join(rows))
    return {
        "base_commit": commit,
        "chunk_count": n_rows,
        "file_count": len(snapshot.files),
        "generated_at": STAMP,
        "repo": repo,
        "skipped_large": 0,
        "status": "ok",
        "symbol_count": n_rows - len(snapshot.files),
    }


def _write_one(job: tuple[Snapshot, str]) -> dict[str, Any]:
    return write_chunks(job[0], Path(job[1]))


def _jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")


def _json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")


class SampleMaker:
    """Sample records of every task over the planned snapshots (templates of the demo's)."""

    def __init__(self, rng: random.Random, pool: dict[int, PoolFile]) -> None:
        self.rng = rng
        self.pool = pool

    def _symbolic(self, snap: Snapshot, n: int, avoid: Sequence[str] = ()) -> list[str]:
        """``n`` distinct paths of ``snap`` that have symbol rows (tests preferred first)."""
        paths = [p for p, i, _ in snap.files if len(self.pool[i].pieces) > 1 and p not in avoid]
        return self.rng.sample(paths, min(n, len(paths)))

    def _piece(self, snap: Snapshot, path: str) -> Piece:
        index = next(i for p, i, _ in snap.files if p == path)
        pieces = self.pool[index].pieces[1:]
        return pieces[self.rng.randrange(len(pieces))]

    def _words(self, snap: Snapshot, path: str, n: int) -> str:
        index = next(i for p, i, _ in snap.files if p == path)
        words = self.pool[index].words
        return " ".join(self.rng.choice(words) for _ in range(n))

    def _spans(self, snap: Snapshot, paths: Sequence[str]) -> dict[str, Any]:
        """Gold spans (one symbol piece per gold file) and the blocks of those pieces."""
        spans, blocks = [], []
        for path in paths:
            piece = self._piece(snap, path)
            spans.append(
                {
                    "end_line": piece.end,
                    "path": path,
                    "reason": "generated",
                    "start_line": piece.start,
                }
            )
            chunk = stable_id(
                snap.repo, snap.commit, path, "symbol", piece.symbol, piece.start, piece.end
            )
            blocks.append(
                {
                    "chunk_id": chunk,
                    "end_line": piece.end,
                    "kind": "symbol",
                    "path": path,
                    "reason": "generated",
                    "source": "corpus_symbol_overlap",
                    "start_line": piece.start,
                    "symbol": piece.symbol,
                }
            )
        return {"gold_blocks": blocks, "gold_spans": spans}

    def positive(self, task: str, snap: Snapshot, number: int) -> dict[str, Any]:
        """One positive sample of ``task`` on ``snap`` (1-3 gold files, spans on each)."""
        fix = hashlib.sha1(f"fix:{snap.commit}:{task}:{number}".encode()).hexdigest()
        n_gold = self.rng.choice((1, 1, 1, 2, 2, 3))
        picked = self._symbolic(snap, n_gold + 1)
        given, gold = picked[0], picked[1:] or picked[:1]
        symbol = self._piece(snap, gold[0]).symbol
        words = self._words(snap, gold[0], 12)
        signals = ["symbol_or_path_overlap", "explicit_behavior_or_api_dependency"]
        meta: dict[str, Any] = {"evidence": {"signals": signals, "source": "generated"}}
        base: dict[str, Any] = {
            "fix_commit": fix,
            "negative_distractors": [],
            "supporting_files": [],
        }
        query: dict[str, Any]
        gold_map: dict[str, Any]
        if task == "code2test":
            gold_map = base | {
                "related_tests": gold,
                "root_cause_files": [given],
                "root_cause_symbols": [],
            }
            query = {
                "changed_file_summary": "1 implementation files changed.",
                "implementation_file_count": 1,
                "implementation_files": [given],
                "pr_body": f"Changes {symbol}: {words}",
                "pr_title": f"Update {symbol}",
            }
        elif task == "comment2context":
            must = [{"evidence": signals, "path": p} for p in gold]
            gold_map = base | {
                "given_files": [given],
                "must_context_files": must,
                "related_tests": [],
                "root_cause_files": gold,
            }
            query = {
                "diff_hunk_context": f"    {self._piece(snap, given).symbol}(value)",
                "given_file": given,
                "line": 1,
                "path": given,
                "pr_title": f"Tidy {symbol}",
                "review_comment": f"This duplicates {symbol}; {words}",
            }
        elif task == "trace2code":
            gold_map = base | {
                "related_tests": [given],
                "root_cause_files": gold,
                "root_cause_symbols": [],
            }
            query = {
                "command": "pytest -x tests",
                "failure_excerpt": f"{symbol} failed: {words}",
                "run_strategy": "local_reproduction",
                "source_type": "reproduced_failure",
            }
        else:
            gold_map = {"files": gold, "given_files": [given]}
            anchor = self._piece(snap, given).symbol
            query = {
                "anchor_diff": f"-def {anchor}(value):\n+def {anchor}_v2(value):",
                "anchor_file": given,
                "intent": f"Rename {anchor} and update its callers.",
            }
            meta |= {
                "changed_files": [given, *gold],
                "fix_commit": fix,
                "ripple_relation": "caller_update",
            }
        record = {
            "base_commit": snap.commit,
            "candidate_corpus": {"base_commit": snap.commit, "type": "repo_at_base_commit"},
            "gold": gold_map,
            "id": stable_id("paper", task, snap.release, number),
            "metadata": meta,
            "query": query,
            "repo": snap.repo,
            "task_type": task,
            "version": 2,
        } | self._spans(snap, gold)
        if task == "edit2ripple" and query_has_leakage(record):
            return self.positive(task, snap, number)  # a gold name in the query: draw again
        return record

    def abstention(self, snap: Snapshot, number: int, source: Snapshot | None) -> dict[str, Any]:
        """A natural no-gold sample, or a counterfactual one asking ``source``'s question."""
        path = self._symbolic(snap, 1)[0] if source is None else self._symbolic(source, 1)[0]
        words = self._words(snap if source is None else source, path, 14)
        if source is None:
            reason = NATURAL_REASONS[number % len(NATURAL_REASONS)]
            query = {"source": ("ci_log", "issue")[number % 2], "text": f"Issue: {words}"}
            meta: dict[str, Any] = {"organic": True, "evidence_summary": reason}
        else:
            reason = "counterfactual_wrong_repo"
            query = {"source": reason, "text": f"Pr Title: {words}"}
            meta = {"organic": False, "source_repo": source.repo, "evidence_summary": reason}
        return {
            "audit": {"notes": "generated", "verdict": "valid_no_gold"},
            "base_commit": snap.commit,
            "candidate_corpus": {"base_commit": snap.commit, "type": "repo_at_base_commit"},
            "gold": {"files": [], "no_gold": True, "reason": reason},
            "id": stable_id("paper", "abstention", snap.release, number),
            "metadata": meta,
            "query": query,
            "repo": snap.repo,
            "task_type": "abstention",
            "version": 2,
        }


def gold_files(record: dict[str, Any]) -> list[str]:
    """Target gold files of a generated record (what its runs are scored on)."""
    gold = record["gold"]
    if record["task_type"] == "code2test":
        return list(gold["related_tests"])
    if record["task_type"] == "comment2context":
        return [m["path"] for m in gold["must_context_files"]]
    return list(gold.get("root_cause_files") or gold.get("files") or [])


def details_row(
    rng: random.Random, record: dict[str, Any], paths: Sequence[str], skill: float
) -> dict[str, Any]:
    """One details row: 20 distinct paths with each gold file in the top 20 with probability
    ``skill`` (rank ~ 1 + exponential), else deeper or unranked; MRR/recall/precision agree."""
    gold = gold_files(record)
    ranks: dict[str, int | None] = {}
    for path in gold:
        if rng.random() < skill:
            ranks[path] = min(20, 1 + int(rng.expovariate(0.3)))
        elif rng.random() < 0.7:
            deep = rng.randint(21, max(21, len(paths)))
            while deep in ranks.values():
                deep += 1
            ranks[path] = deep
        else:
            ranks[path] = None
    others = [p for p in rng.sample(list(paths), min(len(paths), 26)) if p not in ranks][:20]
    top: list[str | None] = [None] * 20
    for path, rank in sorted(ranks.items(), key=lambda kv: (kv[1] or 99, kv[0])):
        if rank is not None and rank <= 20:
            free = [i for i in range(20) if top[i] is None]
            slot = next((i for i in free if i >= rank - 1), free[-1])
            top[slot] = path
            ranks[path] = slot + 1
    filler = iter(others)
    listed = [p if p is not None else next(filler) for p in top]
    found = [r for r in ranks.values() if r is not None]
    metrics: dict[str, float] = {"MRR": 1.0 / min(found) if found else 0.0}
    for k in (5, 10, 20):
        hits = sum(1 for r in found if r <= k)
        metrics[f"Recall@{k}"] = hits / len(gold) if gold else 0.0
        metrics[f"Precision@{k}"] = hits / k
    return {
        "base_commit": record["base_commit"],
        "candidate_filter": "all_files",
        "gold_files": gold,
        "gold_ranks": ranks,
        "metrics": metrics,
        "repo": record["repo"],
        "sample_id": record["id"],
        "task_type": record["task_type"],
        "top_files": listed,
    }


def summary(stem: str, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A run summary (spec §4.8): per-task means of the stored metrics."""
    tasks: dict[str, list[dict[str, float]]] = {}
    for row in rows:
        tasks.setdefault(row["task_type"], []).append(row["metrics"])
    means = {
        task: {k: math.fsum(m[k] for m in found) / len(found) for k in found[0]}
        | {"samples": len(found)}
        for task, found in sorted(tasks.items())
    }
    return {
        "candidate_filter": "all_files",
        "errors": {},
        "evaluated": len(rows),
        "method": stem,
        "metrics": means,
        "runtime": {},
    }


def _samples(snaps: list[Snapshot], fraction: float, seed: int) -> dict[str, list[dict[str, Any]]]:
    """Sample records per release, dealt round robin over each release's snapshots."""
    maker = SampleMaker(random.Random(seed + 1), _SPLIT)
    counts = _counts(fraction)
    out: dict[str, list[dict[str, Any]]] = {}
    for task, _ in POSITIVE:
        name = release_name(task, fraction)
        mine = [s for s in snaps if s.release == name]
        out[name] = [maker.positive(task, mine[i % len(mine)], i) for i in range(counts[task])]
    name = release_name("abstention", fraction)
    mine = [s for s in snaps if s.release == name]
    others = [s for s in snaps if s.release != name]
    records = [maker.abstention(mine[i % len(mine)], i, None) for i in range(counts["natural"])]
    for i in range(counts["counterfactual"]):
        snap = mine[i % len(mine)]
        source = next(s for s in others[i % len(others) :] + others if s.repo != snap.repo)
        records.append(maker.abstention(snap, counts["natural"] + i, source))
    out[name] = records
    return out


def _runs(
    root: Path, snaps: list[Snapshot], samples: dict[str, list[dict[str, Any]]], seed: int
) -> None:
    """Twelve methods per positive release; selective runs over abstention + as many positives."""
    paths = {(s.repo, s.commit): [p for p, _, _ in s.files] for s in snaps}
    positives: list[dict[str, Any]] = []
    for release, records in samples.items():
        if records[0]["task_type"] == "abstention":
            continue
        positives += records
        for k, (stem, skill) in enumerate(METHODS):
            rng = random.Random(f"{seed}:{release}:{k}")
            rows = [
                details_row(rng, r, paths[(r["repo"], r["base_commit"])], skill) for r in records
            ]
            _jsonl(root / "eval" / release / f"{stem}_details.jsonl", rows)
            _json(root / "eval" / release / f"{stem}_summary.json", summary(stem, rows))
    no_gold = next(r for r in samples.values() if r[0]["task_type"] == "abstention")
    chosen = random.Random(seed + 2).sample(positives, min(len(positives), len(no_gold)))
    for k, ranker in enumerate(SELECTIVE):
        rng = random.Random(f"{seed}:selective:{k}")
        rows = []
        for record in sorted(chosen + no_gold, key=lambda r: str(r["id"])):
            row = details_row(rng, record, paths[(record["repo"], record["base_commit"])], 0.6)
            positive = record["task_type"] != "abstention"
            confidence = rng.gauss(1.0 if positive else 0.0, 0.8) + 0.3 * k
            row |= {
                "confidence": confidence,
                "label": "positive" if positive else "no_gold",
                "no_gold_reason": None if positive else record["gold"]["reason"],
                "ranker": ranker,
                "top_score": confidence,
            }
            rows.append(row)
        stem = f"{BALANCED}_all_files_selective_{ranker}"
        _jsonl(root / "eval" / BALANCED / f"{stem}_details.jsonl", rows)
        _json(root / "eval" / BALANCED / f"{stem}_summary.json", summary(stem, rows))


def paper_release(root: str | Path, *, fraction: float = 1.0, seed: int = 0) -> Path:
    """Write the paper-scale release under ``root`` (which must not exist or be empty)."""
    root = Path(root)
    if root.exists() and any(root.iterdir()):
        msg = f"{root} is not empty; pass a new --out folder or remove it"
        raise ValueError(msg)
    if not 0.0 < fraction <= 1.0:
        msg = f"fraction must lie in (0, 1], got {fraction}; pass e.g. 0.125"
        raise ValueError(msg)
    snaps = plan(fraction, seed)
    split_used(snaps)
    jobs = [
        (
            s,
            str(
                root / "corpus" / s.release / s.repo.replace("/", "__") / f"{s.commit}.chunks.jsonl"
            ),
        )
        for s in snaps
    ]
    fork = multiprocessing.get_context("fork")  # the writers inherit the split pool
    with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1), mp_context=fork) as workers:
        manifests = list(workers.map(_write_one, jobs, chunksize=1))
    by_release: dict[str, list[dict[str, Any]]] = {}
    for (snap, path), row in zip(jobs, manifests, strict=True):
        chunks_path = str(Path(path).relative_to(root / "corpus"))
        by_release.setdefault(snap.release, []).append(row | {"chunks_path": chunks_path})
    for release, rows in sorted(by_release.items()):
        rows.sort(key=lambda r: (str(r["repo"]), str(r["base_commit"])))
        _jsonl(root / "corpus" / release / "corpus_manifest.jsonl", rows)
    samples = _samples(snaps, fraction, seed)
    for release, records in samples.items():
        task = records[0]["task_type"]
        _jsonl(root / "benchmark" / release / f"{task}.jsonl", records)
        _json(
            root / "benchmark" / release / "manifest.json",
            {
                "counts_by_task": {task: len(records)},
                "tasks": [task],
                "total": len(records),
                "outputs": {task: f"benchmark/{release}/{task}.jsonl"},
            },
        )
    _runs(root, snaps, samples, seed)
    repos = sorted({s.repo for s in snaps})
    _jsonl(
        root / "repo_manifest.jsonl",
        [
            {
                "default_branch": "main",
                "language": "Python",
                "license": "PSF-2.0",
                "n_commits": sum(1 for s in snaps if s.repo == r),
                "repo": r,
            }
            for r in repos
        ],
    )
    return root


def describe(root: Path, snaps: Sequence[Snapshot] | None = None) -> str:
    """Chunk files, rows, sizes and (from the plan) the share of rows whose text recurs."""
    files = sorted((root / "corpus").rglob("*.chunks.jsonl"))
    sizes = sorted(p.stat().st_size for p in files)
    rows = sum(
        json.loads(line)["chunk_count"]
        for m in (root / "corpus").glob("*/corpus_manifest.jsonl")
        for line in m.open(encoding="utf-8")
    )
    samples = sum(1 for m in (root / "benchmark").glob("*/*.jsonl") for _ in m.open())
    runs = len(list((root / "eval").glob("*/*_details.jsonl")))
    text = (
        f"{len(files)} chunk files, {rows:,} rows, {sum(sizes) / 2**30:.2f} GiB (median "
        f"{sizes[len(sizes) // 2] / 2**20:.1f} MiB, largest {sizes[-1] / 2**20:.0f} MiB, "
        f"{sum(1 for s in sizes if s >= 50 * 2**20)} files >= 50 MiB); {samples} samples; "
        f"{runs} stored runs"
    )
    if snaps:
        text += f"; rows with text repeated in another snapshot of the repo: {repeated(snaps):.0%}"
    return text


def repeated(snaps: Sequence[Snapshot]) -> float:
    """Share of chunk rows whose (path, revision) also occurs in another snapshot of the repo."""
    seen: dict[tuple[str, str, int], int] = {}
    for snap in snaps:
        for path, _, rev in snap.files:
            key = (snap.repo, path, rev)
            seen[key] = seen.get(key, 0) + 1
    split_used(snaps)
    pool = _SPLIT
    total = again = 0
    for snap in snaps:
        for path, index, rev in snap.files:
            n = len(pool[index].pieces)
            total += n
            again += n if seen[(snap.repo, path, rev)] > 1 else 0
    return again / total if total else 0.0


def digest(root: Path) -> str:
    """SHA-256 over every file's relative path and bytes, in path order."""
    out = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        out.update(str(path.relative_to(root)).encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                out.update(block)
    return out.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="release root to create")
    parser.add_argument("--fraction", type=float, default=1.0, help="1/8, 1/4, 1/2 or 1")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--digest", action="store_true", help="print the sha256 of the root")
    parser.add_argument("--force", action="store_true", help="remove --out first")
    args = parser.parse_args()
    if args.force:
        shutil.rmtree(args.out, ignore_errors=True)
    start = time.perf_counter()
    paper_release(args.out, fraction=args.fraction, seed=args.seed)
    seconds = time.perf_counter() - start
    print(f"{args.out}: {describe(args.out, plan(args.fraction, args.seed))}")
    print(f"generated in {seconds:.1f} s")
    if args.digest:
        print(f"sha256 {digest(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
