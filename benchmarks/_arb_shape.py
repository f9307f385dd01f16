"""A generated release shaped like real ARB corpora, built once and cached under /tmp.

Shape (what issue 10 measured on real v0_1 data): 24 snapshots of 6 repositories, two of them
large (~85 MB chunk files), the rest ~1-2 MB; each snapshot appears in two subset corpora
(``v2_code2test`` and ``v2_trace2code``, copied byte for byte as upstream builds them
separately), except two, giving 46 chunk files of about 800 MB in all. Chunk files follow spec
§3: a file row (``truncate(content, 8000)``) then symbol rows (``def``/``class`` lines, spec
§3.5 patterns 1-2), upstream-serialised with a ``file_count`` in the manifest. Text is real
code (this interpreter's standard library and site-packages). Consecutive snapshots of one
repository keep some files unchanged and edit the others (every def/class line touched), so
about 20-40% of a snapshot's chunk rows recur in another snapshot of its repository.

Samples (2 per snapshot: trace2code and code2test) carry queries naming a symbol, a file and
words of its text; four stored runs (top-20 details rows of every sample) feed BCY.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
ROOT = Path(os.environ.get("ARBWB_BENCH_DIR", "/tmp/arbwb-bench"))
VERSION = "arb_shape_v2"
SUBSETS = ("v2_code2test", "v2_trace2code")
STAMP = "2026-01-01T00:00:00+00:00"
MAX_CHARS = 8000
#: (repository, number of snapshots, files per snapshot, share of files a snapshot keeps
#: unchanged from the previous one: a middle snapshot of five shares text with both neighbours)
REPOS = (
    ("bench/bigpy", 2, 3900, 0.3),
    ("bench/bigsite", 2, 3900, 0.3),
    ("bench/alpha", 5, 60, 0.18),
    ("bench/beta", 5, 80, 0.18),
    ("bench/gamma", 5, 60, 0.18),
    ("bench/delta", 5, 70, 0.18),
)
RUNS = ("stored-a", "stored-b", "stored-c", "stored-d")
_SYMBOL = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(|^\s*class\s+(\w+)")
_DEF_NAME = re.compile(r"\b(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")
_DEF_LINE = re.compile(r"^(\s*(?:async\s+)?(?:def|class)\s.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Shape:
    """Paths of the generated release."""

    data: Path  # release root: benchmark/bench/*.jsonl, corpus/<subset>/...
    runs: list[Path]  # stored details files of the four runs
    chunk_files: list[Path]  # every chunk file (both subsets)


def truncate(value: str, limit: int = MAX_CHARS) -> str:
    """Spec §3.4."""
    value = value.replace("\r\n", "\n").replace("\r", "\n").strip()
    if len(value) <= limit:
        return value
    return value[:limit].rstrip() + "\n...[truncated]"


def _stable_id(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:24]


def _pool() -> list[tuple[str, str]]:
    """(path, text) of real Python sources, sorted by path, without NULs or huge files."""
    out = []
    for path in sorted(SOURCE.rglob("*.py")):
        try:
            if not 300 <= path.stat().st_size <= 400_000:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data:
            continue
        rel = str(path.relative_to(SOURCE)).removeprefix("site-packages/")
        out.append((rel, data.decode("utf-8", errors="replace")))
    return out


def _edit(text: str, rng: random.Random, tag: int) -> str:
    """An edited version of ``text``: some defined names renamed, every def/class line
    annotated (so each of its chunks changes), a helper inserted."""
    names = sorted(set(_DEF_NAME.findall(text)))
    chosen = rng.sample(names, min(len(names), 6))
    for name in chosen:
        text = re.sub(rf"\b{re.escape(name)}\b", f"{name}_r{tag}", text)
    text = _DEF_LINE.sub(rf"\1  # rev {tag}", text)
    lines = text.splitlines(keepends=True)
    at = rng.randrange(len(lines) + 1)
    lines.insert(at, f"def bench_change_{tag}(value):\n    return helper(value)\n")
    return "".join(lines)


def _rows(repo: str, commit: str, path: str, content: str) -> list[dict[str, object]]:
    """Spec §3.3/§3.5 rows of one file (symbols: def/class lines only)."""
    lines = content.splitlines()
    base = {"base_commit": commit, "repo": repo, "path": path}
    rows: list[dict[str, object]] = [
        base
        | {"kind": "file", "symbol": "", "start_line": 1, "end_line": len(lines)}
        | {"text": truncate(content)}
    ]
    starts = []
    for i, line in enumerate(lines, start=1):
        match = _SYMBOL.match(line)
        if match:
            starts.append((i, match.group(1) or match.group(2)))
    for k, (start, name) in enumerate(starts):
        end = max(start, starts[k + 1][0] - 1) if k + 1 < len(starts) else max(start, len(lines))
        body = "\n".join(lines[start - 1 : end])
        rows.append(
            base
            | {"kind": "symbol", "symbol": name, "start_line": start, "end_line": end}
            | {"text": truncate(body)}
        )
    for row in rows:
        row["chunk_id"] = _stable_id(
            repo, commit, path, row["kind"], row["symbol"], row["start_line"], row["end_line"]
        )
    return rows


def _write_snapshot(
    out: Path, repo: str, commit: str, files: dict[str, str]
) -> tuple[dict[str, object], list[dict[str, object]]]:
    """Write one chunk file; return its manifest row and a few symbol rows for queries."""
    n_rows = n_symbols = 0
    picks: list[dict[str, object]] = []
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for path in sorted(files):
            rows = _rows(repo, commit, path, files[path])
            n_rows += len(rows)
            n_symbols += len(rows) - 1
            if len(rows) > 1 and len(picks) < 400:
                picks.append(rows[1])
            handle.write(
                "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
            )
    manifest = {
        "base_commit": commit,
        "chunk_count": n_rows,
        "file_count": len(files),
        "generated_at": STAMP,
        "repo": repo,
        "skipped_large": 0,
        "status": "ok",
        "symbol_count": n_symbols,
    }
    return manifest, picks


def _query(rng: random.Random, pick: dict[str, object], task: str) -> dict[str, object]:
    path, symbol, text = str(pick["path"]), str(pick["symbol"]), str(pick["text"])
    words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]+", text) if len(w) > 3] or ["value"]
    excerpt = " ".join(rng.choice(words) for _ in range(10))
    if task == "trace2code":
        return {
            "command": "pytest tests",
            "failure_excerpt": f"{symbol} failed in {path.rsplit('/', 1)[-1]}: {excerpt}",
        }
    return {"pr_body": f"Touches {symbol}: {excerpt}", "pr_title": f"Update {symbol}"}


def _build(base: Path) -> None:
    pool = _pool()
    rng = random.Random(0)
    rng.shuffle(pool)
    corpus = base / "corpus"
    manifests: dict[str, list[dict[str, object]]] = {s: [] for s in SUBSETS}
    samples: dict[str, list[dict[str, object]]] = {"trace2code": [], "code2test": []}
    snapshot_paths: dict[str, list[str]] = {}
    taken = 0
    n_snapshot = 0
    for repo, n_snapshots, n_files, keep in REPOS:
        files = dict(pool[taken : taken + n_files])
        taken += n_files
        for k in range(n_snapshots):
            if k:
                kept = set(rng.sample(sorted(files), int(keep * len(files))))
                files = {p: t if p in kept else _edit(t, rng, k) for p, t in files.items()}
            commit = hashlib.sha1(f"{repo}:{k}".encode()).hexdigest()
            slug = repo.replace("/", "__")
            first = corpus / SUBSETS[0] / slug / f"{commit}.chunks.jsonl"
            print(f"  {repo}@{commit[:8]}: {len(files)} files", file=sys.stderr)
            row, picks = _write_snapshot(first, repo, commit, files)
            # the last snapshot of the two smallest repositories exists in one subset only
            subsets = SUBSETS[:1] if k == n_snapshots - 1 and n_files <= 60 else SUBSETS
            for subset in subsets:
                target = corpus / subset / slug / first.name
                if subset != SUBSETS[0]:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(first, target)
                chunks_path = f"{subset}/{slug}/{first.name}"
                manifests[subset].append(row | {"chunks_path": chunks_path})
            snapshot_paths[f"{repo}@{commit}"] = sorted(files)
            for task in samples:
                pick = picks[rng.randrange(len(picks))]
                other = rng.choice(sorted(files))
                gold = (
                    {"root_cause_files": [pick["path"]]}
                    if task == "trace2code"
                    else {"related_tests": sorted({str(pick["path"]), other})}
                )
                samples[task].append(
                    {
                        "base_commit": commit,
                        "gold": gold,
                        "id": f"{task}-{n_snapshot:03d}",
                        "metadata": {},
                        "query": _query(rng, pick, task),
                        "repo": repo,
                        "task_type": task,
                    }
                )
            n_snapshot += 1
    for subset, rows in manifests.items():
        rows.sort(key=lambda r: (str(r["repo"]), str(r["base_commit"])))
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
        (corpus / subset / "corpus_manifest.jsonl").write_text(text, encoding="utf-8")
    bench = base / "benchmark" / "bench"
    bench.mkdir(parents=True)
    for task, records in samples.items():
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)
        (bench / f"{task}.jsonl").write_text(text, encoding="utf-8")
    _write_runs(base / "runs", samples, snapshot_paths)


def _write_runs(
    folder: Path, samples: dict[str, list[dict[str, object]]], paths: dict[str, list[str]]
) -> None:
    """Four stored runs: top-20 files per sample (gold at varying depth, one unknown path)."""
    folder.mkdir(parents=True)
    for k, run in enumerate(RUNS):
        rng = random.Random(100 + k)
        rows = []
        for records in samples.values():
            for record in records:
                gold_map = dict(record["gold"])  # type: ignore[call-overload]
                gold = sorted({p for v in gold_map.values() for p in v})
                snapshot = f"{record['repo']}@{record['base_commit']}"
                top = [p for p in rng.sample(paths[snapshot], 22) if p not in gold][:18]
                top.insert(rng.randrange(len(top) + 1), "not/in_corpus.py")
                for g in gold:
                    top.insert(min(len(top), rng.randrange(0, 12)), g)
                rows.append(
                    {
                        "base_commit": record["base_commit"],
                        "gold_files": gold,
                        "repo": record["repo"],
                        "sample_id": record["id"],
                        "task_type": record["task_type"],
                        "top_files": top[:20],
                    }
                )
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
        (folder / f"{run}_details.jsonl").write_text(text, encoding="utf-8")


def arb_shape(*, verbose: bool = True) -> Shape:
    """Build (or reuse) the generated release under ``$ARBWB_BENCH_DIR`` (default /tmp)."""
    base = ROOT / VERSION
    done = base / "DONE"
    if not done.is_file():
        if verbose:
            print(f"building {VERSION} under {base} (cached for reruns)", file=sys.stderr)
        shutil.rmtree(base, ignore_errors=True)
        _build(base)
        done.write_text("ok\n", encoding="utf-8")
    return Shape(
        data=base,
        runs=sorted((base / "runs").glob("*_details.jsonl")),
        chunk_files=sorted((base / "corpus").rglob("*.chunks.jsonl")),
    )


def describe(shape: Shape) -> str:
    """One line: chunk files, sizes, samples."""
    sizes = sorted(p.stat().st_size for p in shape.chunk_files)
    n_samples = sum(
        1 for f in (shape.data / "benchmark" / "bench").glob("*.jsonl") for _ in f.open()
    )
    return (
        f"{len(sizes)} chunk files, {sum(sizes) / 2**20:.0f} MiB (median "
        f"{sizes[len(sizes) // 2] / 2**20:.1f} MiB, largest {sizes[-1] / 2**20:.0f} MiB); "
        f"{n_samples} samples"
    )


if __name__ == "__main__":
    print(describe(arb_shape()))
