"""Whole-process speed of ``arbwb rank`` (lexical, bm25-arb) and ``arbwb score`` (BCY) on an
ARB-shaped generated release, against literal references measured in the same run.

Every side is its own process, timed from launch to exit (interpreter start and imports
included; arbwb's bytecode compiled first, as an installed package has it) with its own
peak RSS (``wait4``):
- ``arbwb rank --method M`` cold (empty ``ARBWB_CACHE_DIR``) and warm (the same folder again)
  against a faithful single-threaded reading of upstream's loop written here: every chunk row
  read with ``json.loads``, documents tokenised with the spec §7.1 splitter, scored per
  §7.2/§7.3 chunk by chunk, sorted by (score desc, path, chunk_id). It is favoured: each
  snapshot is loaded once for all its samples. Top-20 files must agree on every sample.
- ``arbwb score RUNS --corpus C --metrics bcy@4000,...`` cold and warm against a literal
  single-file implementation of spec §5.7 in plain Python; per-run means must agree.
Targets (issue 10; measured, not asserted): rank >= 10x cold, >= 50x warm, peak RSS <= 1.5x
the largest chunk file + 300 MB; BCY >= 4x cold, >= 10x warm.
Usage: .venv/bin/python benchmarks/bench_cli_speed.py [--skip-reference-rank] [--only rank|bcy]
[--repeat N] (each side the fastest of N runs, the sides taking turns; every cold run from an
empty cache).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _arb_shape import SUBSETS, Shape, arb_shape, describe
from _installed import compile_package
from _literal_bcy import file_texts, literal_covered

ROOT = Path(__file__).resolve().parent.parent
BUDGETS = (4000, 8000, 16000, 32000)
_CAMEL = re.compile(r"([a-z])([A-Z])")
_ALNUM = re.compile(r"[A-Za-z0-9]+")


# --- literal references (stdlib only, so their processes import nothing else) -------------


def split(text: str) -> list[str]:
    """Spec §7.1 identifier splitter, literally."""
    return [m.lower() for m in _ALNUM.findall(_CAMEL.sub(r"\1 \2", text))]


def manifest_files(data: Path) -> dict[tuple[str, str], Path]:
    """Chunk file per (repo, commit): subset manifests in spec §1.4 merge order, first ok wins."""
    out: dict[tuple[str, str], Path] = {}
    for subset in SUBSETS:
        corpus = data / "corpus" / subset
        with (corpus / "corpus_manifest.jsonl").open(encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                if row.get("status", "ok") == "ok":
                    out.setdefault(
                        (row["repo"], row["base_commit"]), corpus.parent / row["chunks_path"]
                    )
    return out


def read_samples(data: Path) -> list[dict[str, Any]]:
    records = []
    for path in sorted((data / "benchmark" / "bench").glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            records += [json.loads(line) for line in handle]
    return records


def reference_rank(data: Path, method: str) -> dict[str, list[str]]:
    """Top-20 files per sample, upstream's loop read literally (one snapshot loaded at a time)."""
    files = manifest_files(data)
    by_snapshot: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in read_samples(data):
        by_snapshot.setdefault((record["repo"], record["base_commit"]), []).append(record)
    out = {}
    for key, records in by_snapshot.items():
        chunks = []
        with files[key].open(encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                doc = " ".join(
                    v for v in (row["path"], row["symbol"], row["kind"], row["text"]) if v
                )
                tf = Counter(split(doc))
                chunks.append((row["path"], row["chunk_id"], row["symbol"], tf))
        df: Counter[str] = Counter()
        for chunk in chunks:
            df.update(chunk[3].keys())
        n = max(1, len(chunks))
        lengths = [sum(c[3].values()) for c in chunks]
        avgdl = sum(lengths) / len(chunks) if chunks else 0.0
        for record in records:
            query = json.dumps(record["query"], ensure_ascii=False, sort_keys=True)
            n_q = Counter(split(query))
            lowered = query.lower()
            scores = []
            for (path, _cid, symbol, tf), dl in zip(chunks, lengths, strict=True):
                score = 0.0
                if method == "lexical":
                    for term, count in n_q.items():
                        if term in tf:
                            score += (1 + math.log(count)) * math.log((n + 1) / (1 + df[term]) + 1)
                    if path.lower() in lowered:
                        score += 25.0
                    if path.rsplit("/", 1)[-1].lower() in lowered:
                        score += 8.0
                    if symbol and symbol.lower() in lowered:
                        score += 5.0
                    score = score / max(1, math.sqrt(len(tf)))
                else:
                    for term, count in n_q.items():
                        f = tf.get(term, 0)
                        if f > 0:
                            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                            norm = 1.5 * (1 - 0.75 + 0.75 * dl / avgdl) if avgdl > 0 else 1.5 * 0.25
                            score += count * idf * (f * 2.5 / (f + norm))
                scores.append(score)
            order = sorted(
                range(len(chunks)), key=lambda i: (-scores[i], chunks[i][0], chunks[i][1])
            )
            top = list(dict.fromkeys(chunks[i][0] for i in order))[:20]
            out[record["id"]] = top
    return out


def reference_bcy(data: Path, runs: list[Path]) -> dict[str, dict[str, float]]:
    """Spec §5.7 literally: per run, mean BCY@B (tau 1) overall and per task."""
    files = manifest_files(data)
    texts_of: dict[tuple[str, str], dict[str, str]] = {}
    out = {}
    for run in runs:
        per_group: dict[str, list[float]] = {}
        with run.open(encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                key = (row["repo"], row["base_commit"])
                if key not in texts_of:
                    texts_of[key] = file_texts(files[key])
                texts = texts_of[key]
                gold = set(row["gold_files"])
                if not gold:
                    continue
                ranked = list(dict.fromkeys(p for p in row["top_files"] if p))[:20]
                for budget in BUDGETS:
                    covered = literal_covered(ranked, texts, gold, budget, (1,))[1]
                    value = covered / len(gold)
                    for group in ("overall", f"task:{row['task_type']}"):
                        per_group.setdefault(f"{group}|bcy@{budget}", []).append(value)
        out[run.name.removesuffix("_details.jsonl")] = {
            k: sum(v) / len(v) for k, v in per_group.items()
        }
    return out


# --- harness --------------------------------------------------------------------------------


def timed(cmd: list[str], env: dict[str, str], log: Path) -> tuple[float, float]:
    """Run ``cmd`` to completion; (wall seconds, peak RSS MiB) of that process alone."""
    start = time.perf_counter()
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{log.read_text(errors='replace')[-3000:]}")
    return seconds, usage.ru_maxrss / 1024


def arbwb_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "arbwb", *args]


def side_cmd(*args: str) -> list[str]:
    return [sys.executable, __file__, *args]


def details_top(path: Path) -> dict[str, list[str]]:
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    return {r["sample_id"]: r["top_files"] for r in rows}


def score_means(path: Path) -> dict[str, dict[str, float]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    out = {}
    for run in document["runs"]:
        values = {f"overall|{k}": v for k, v in run["overall"].items()}
        for task, metrics in run["by_task"].items():
            values |= {f"task:{task}|{k}": v for k, v in metrics.items() if k != "n"}
        out[run["run"]] = values
    return out


@dataclass(frozen=True)
class Side:
    """One timed command of a comparison; ``fresh`` (a cache folder) is emptied before each
    of its runs."""

    cmd: list[str]
    env: dict[str, str]
    log: Path
    fresh: Path | None = None


def interleaved(runs: int, sides: dict[str, Side]) -> dict[str, tuple[float, float]]:
    """Each side's fastest wall time of ``runs`` and its highest peak RSS, the sides taking
    turns (round by round, in order), so a shared machine's drifting load reaches them all."""
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for _ in range(runs):
        for name, side in sides.items():
            if side.fresh is not None:
                shutil.rmtree(side.fresh, ignore_errors=True)
            results[name].append(timed(side.cmd, side.env, side.log))
    return {
        name: (min(s for s, _ in found), max(p for _, p in found))
        for name, found in results.items()
    }


def line(label: str, seconds: float, peak: float) -> None:
    print(f"  {label:<34} {seconds:8.2f} s   peak RSS {peak:6.0f} MiB")


def bench_rank(
    shape: Shape, tmp: Path, env: dict[str, str], skip_reference: bool, repeat: int
) -> None:
    largest = max(p.stat().st_size for p in shape.chunk_files) / 2**20
    rss_target = 1.5 * largest + 300
    for method in ("lexical", "bm25-arb"):
        print(f"arbwb rank --method {method}")
        cache = tmp / f"cache-{method}"
        run_env = env | {"ARBWB_CACHE_DIR": str(cache)}
        sides = {}
        for phase in ("cold", "warm"):
            out = tmp / f"{method}-{phase}.jsonl"
            cmd = arbwb_cmd(
                "rank", "--method", method, "--data", str(shape.data), "--out", str(out)
            )
            fresh = cache if phase == "cold" else None
            sides[phase] = Side(cmd, run_env, tmp / f"{method}-{phase}.log", fresh)
        ref_out = tmp / f"{method}-reference.json"
        if not skip_reference:
            cmd = side_cmd("--side", "rank", "--method", method, "--out", str(ref_out))
            sides["literal"] = Side(cmd, env, tmp / f"{method}-reference.log")
        results = interleaved(repeat, sides)
        for phase in ("cold", "warm"):
            line(f"arbwb {phase}", *results[phase])
        tops = [details_top(tmp / f"{method}-{phase}.jsonl") for phase in ("cold", "warm")]
        if skip_reference:
            print(f"  cold == warm top-20: {tops[0] == tops[1]} (reference skipped)")
            continue
        ref_s, ref_peak = results["literal"]
        line("literal upstream loop", ref_s, ref_peak)
        ref = json.loads(ref_out.read_text(encoding="utf-8"))
        same = sum(tops[0].get(s) == top and tops[1].get(s) == top for s, top in ref.items())
        cold_s, cold_peak = results["cold"]
        warm_s, warm_peak = results["warm"]
        print(
            f"  speed-up cold {ref_s / cold_s:.1f}x (target >= 10x), warm {ref_s / warm_s:.1f}x "
            f"(target >= 50x); identical top-20 on {same}/{len(ref)} samples"
        )
        print(
            f"  peak RSS cold {cold_peak:.0f} / warm {warm_peak:.0f} MiB; target <= 1.5 x "
            f"{largest:.0f} MiB + 300 = {rss_target:.0f} MiB"
        )


def bench_bcy(shape: Shape, tmp: Path, env: dict[str, str], repeat: int) -> None:
    metrics = ",".join(f"bcy@{b}" for b in BUDGETS)
    print(f"arbwb score {len(shape.runs)} runs --corpus C --metrics {metrics}")
    cache = tmp / "cache-bcy"
    run_env = env | {"ARBWB_CACHE_DIR": str(cache)}
    sides = {}
    outs = {}
    for phase in ("cold", "warm"):
        outs[phase] = tmp / f"score-{phase}.json"
        cmd = arbwb_cmd(
            "score", *map(str, shape.runs), "--corpus", str(shape.data), "--metrics", metrics,
            "--out", str(outs[phase]),
        )  # fmt: skip
        fresh = cache if phase == "cold" else None
        sides[phase] = Side(cmd, run_env, tmp / f"score-{phase}.log", fresh)
    ref_out = tmp / "bcy-reference.json"
    sides["literal"] = Side(side_cmd("--side", "bcy", "--out", str(ref_out)), env, tmp / "bcy.log")
    results = interleaved(repeat, sides)
    for phase in ("cold", "warm"):
        line(f"arbwb {phase}", *results[phase])
    ref_s, ref_peak = results["literal"]
    line("literal spec 5.7", ref_s, ref_peak)
    ref = json.loads(ref_out.read_text(encoding="utf-8"))
    got = [score_means(outs[phase]) for phase in ("cold", "warm")]
    identical = all(g == ref for g in got)
    worst = max(
        abs(g[r][k] - v) for g in got for r, values in ref.items() for k, v in values.items()
    )
    print(
        f"  speed-up cold {ref_s / results['cold'][0]:.1f}x (target >= 4x), warm "
        f"{ref_s / results['warm'][0]:.1f}x (target >= 10x); identical means: {identical} "
        f"(max |diff| {worst:.1e}, {sum(len(v) for v in ref.values())} values)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-reference-rank", action="store_true", help="no literal rank runs")
    parser.add_argument("--only", choices=("rank", "bcy"), default=None)
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per side, the fastest counts (default 1)"
    )
    parser.add_argument("--side", choices=("rank", "bcy"), help=argparse.SUPPRESS)
    parser.add_argument("--method", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    shape = arb_shape()
    if args.side == "rank":
        args.out.write_text(json.dumps(reference_rank(shape.data, args.method)), encoding="utf-8")
        return
    if args.side == "bcy":
        args.out.write_text(json.dumps(reference_bcy(shape.data, shape.runs)), encoding="utf-8")
        return
    compile_package()
    print(f"corpus: {describe(shape)}; every figure is one whole process")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory(prefix="arbwb-bench-") as name:
        tmp = Path(name)
        if args.only in (None, "rank"):
            bench_rank(shape, tmp, env, args.skip_reference_rank, args.repeat)
        if args.only in (None, "bcy"):
            bench_bcy(shape, tmp, env, args.repeat)


if __name__ == "__main__":
    main()
