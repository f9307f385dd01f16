"""RepoMap speed: whole-process ``arbwb rank --method repomap`` vs a literal reading of the spec.

On the realistic generated corpus (stdlib snapshots, ~28k chunk rows each; benchmarks/
_realistic.py) with generated code2test / trace2code / comment2context samples, it times:
- ``arbwb rank --method repomap`` in a fresh process with an empty index cache (cold), then
  again with the cache it wrote (warm);
- a faithful single-threaded reimplementation of upstream's loop written below from
  arb-repomap.md alone (JSON rows read line by line, Python sets and dicts, per-node loops,
  dict-of-dict PageRank; canonical order of §4.4.5 so the result is defined), also in a
  fresh process. It computes rankings only (no metrics), which favours it.
The same on a subset of the ARB-shaped corpus of ``_arb_shape.py`` (issue 16 target: >= 5x).
Every sample's 20 ``top_file_scores`` (path, score and the three components, bit for bit) and
``gold_ranks`` must be identical. Prints the cold and warm speed-up ratios.
Usage: .venv/bin/python benchmarks/bench_repomap.py [--snapshots 12 --per-snapshot 4
--arb-snapshots 8 --skip-stdlib --repeat N] (each side the fastest of N rounds)
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _arb_subset import arb_release, gold_files, release_inputs, release_mib
from _installed import compile_package
from _realistic import REPO, realistic

from arbwb.io.pathclass import is_code_path, is_test_path
from arbwb.tokenize import split_identifiers

RELEASE = "bench"
_WORDS = """add app args build call case check class close config context data default delete error
    event file find get handle helper init item list load main make mock model name node option
    options parse path read render request response result run save server set state string test
    tests type update value write"""
GENERIC = set(_WORDS.split())
IMPORT_RE = re.compile(
    r"(?:^|\s)(?:from\s+([A-Za-z0-9_\.]+)\s+import|import\s+([A-Za-z0-9_\./:-]+)"
    r"|require\(\s*['\"]([^'\"]+)['\"]\s*\)|from\s+['\"]([^'\"]+)['\"]"
    r"|import\s+['\"]([^'\"]+)['\"]|#include\s+[<\"]([^>\"]+)[>\"]"
    r"|use\s+(?:crate::|super::)?([A-Za-z0-9_:]+))"
)


# --- inputs -----------------------------------------------------------------------------------


def make_release(root: Path, snapshots: int, per_snapshot: int) -> Path:
    """A release root over the first ``snapshots`` realistic snapshots, with generated samples."""
    corpus_dir = realistic(verbose=False).corpus_dir
    data = root / "data"
    corpus = data / "corpus" / RELEASE
    corpus.mkdir(parents=True)
    slug = REPO.replace("/", "__")
    (corpus / slug).symlink_to(corpus_dir / slug)
    manifest = (corpus_dir / "corpus_manifest.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in manifest][:snapshots]
    (corpus / "corpus_manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    rng = random.Random(0)
    samples = []
    for row in rows:
        chunk_file = corpus / slug / f"{row['base_commit']}.chunks.jsonl"
        symbols: list[tuple[str, str]] = []
        paths: list[str] = []
        with chunk_file.open(encoding="utf-8") as handle:
            for line in handle:
                chunk = json.loads(line)
                if chunk["kind"] == "file":
                    paths.append(chunk["path"])
                else:
                    symbols.append((chunk["path"], chunk["symbol"]))
        for k in range(per_snapshot):
            path, symbol = symbols[rng.randrange(len(symbols))]
            other = rng.choice(paths)
            words = " ".join(s for _, s in rng.sample(symbols, 6))
            task = ("code2test", "trace2code", "comment2context", "trace2code")[k % 4]
            if task == "code2test":
                query = {"changed_file": path, "pr_title": f"Fix {symbol}", "pr_body": words}
                gold: dict[str, Any] = {"files": [other]}
            elif task == "trace2code":
                query = {
                    "failure_excerpt": f'Error in {symbol}\n  File "{other}", line 3\n{words}',
                    "command": "pytest tests",
                }
                gold = {"files": [path]}
            else:
                query = {"given_file": path, "review_comment": f"keep {symbol} in sync: {words}"}
                gold = {"files": [other], "given_files": [path]}
            samples.append(
                {
                    "id": f"{row['base_commit'][:10]}-{k}",
                    "task_type": task,
                    "repo": REPO,
                    "base_commit": row["base_commit"],
                    "query": query,
                    "gold": gold,
                }
            )
    bench = data / "benchmark" / RELEASE
    bench.mkdir(parents=True)
    (bench / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    return data


# --- the literal reference (arb-repomap.md read line by line) ----------------------------------


def key_of(symbol: str) -> str:
    """§3.2 key: compact form, ≥ 4 characters, not generic, not all digits."""
    key = "".join(split_identifiers(symbol))
    if len(key) < 4 or key in GENERIC or key.isdigit():
        return ""
    return key


def parts_of_symbol(symbol: str) -> set[str]:
    return {t for t in split_identifiers(symbol) if len(t) >= 3 and t not in GENERIC}


def kind_of(path: str) -> str:
    if is_test_path(path):
        return "test"
    return "source" if is_code_path(path) else "other"


def index_keys(path: str) -> set[str]:
    """§4.2 variants of one node path."""
    pure = PurePosixPath(path)
    no_ext = str(pure.with_name(pure.stem)) if pure.suffix else path
    variants = [no_ext, no_ext.replace("/", "."), pure.name, PurePosixPath(pure.name).stem]
    comps = no_ext.split("/")
    for width in range(2, min(5, len(comps)) + 1):
        variants.append("/".join(comps[-width:]))
        variants.append(".".join(comps[-width:]))
    return {v.lower() for v in variants if v}


def resolve_keys(spec: str, importer: str) -> list[str]:
    """§4.3.2 steps 1-3."""
    clean = spec.strip().strip(";,")
    if not clean.startswith("."):
        slashed = clean.replace("::", "/").replace(".", "/").strip("/")
        return [slashed.lower(), slashed.replace("/", ".").lower()]
    base = list(PurePosixPath(importer).parent.parts)
    if "/" in clean:
        comps = [c for c in base + clean.split("/") if c not in ("", ".")]
        if comps and comps[-1] != "..":
            comps[-1] = (
                PurePosixPath(comps[-1]).stem if PurePosixPath(comps[-1]).suffix else comps[-1]
            )
    else:
        dots = len(clean) - len(clean.lstrip("."))
        for _ in range(dots - 1):
            base = base[:-1]
        comps = base + [piece for piece in clean[dots:].split(".") if piece]
    kept: list[str] = []
    for comp in comps:
        if comp in ("", "."):
            continue
        if comp == "..":
            kept = kept[:-1]
        else:
            kept.append(comp)
    joined = "/".join(kept)
    if not joined:
        return []
    return [k.lower() for k in (joined, joined + "/index", joined + "/mod", joined + "/__init__")]


def test_keys(path: str) -> list[str]:
    """§4.5 canonical source-test keys."""
    s = PurePosixPath(path).stem.lower()
    for ending in ("_test", "test", "tests", ".test", ".spec", "_spec"):
        if s.endswith(ending):
            s = s[: -len(ending)]
    for start in ("test_", "tests_"):
        if s.startswith(start):
            s = s[len(start) :]
    s = re.sub(r"[^a-z0-9]", "", s)
    if len(s) < 3:
        return []
    markers = {"test", "tests", "testing", "__tests__", "testsuite", "testsuites"}
    parents = [c.lower() for c in PurePosixPath(path).parent.parts]
    parents = [c for c in parents if c not in markers]
    return [s, parents[-1] + ":" + s] if parents else [s]


def literal_specs(text: str) -> list[str]:
    """§4.3.1 without shortcuts: every line up to 2,000 goes through the regex."""
    specs: list[str] = []
    for line in text.splitlines()[:2000]:
        stripped = line.strip()
        if not stripped or stripped.startswith("//") or stripped.startswith("# "):
            continue
        if stripped.startswith("*"):
            continue
        for match in IMPORT_RE.finditer(stripped):
            for group in match.groups():
                if group:
                    specs.append(group)
                    break
    return specs[:200]


def literal_index(rows: list[dict[str, Any]], cap: int = 80) -> dict[str, Any]:
    """Nodes, token sets, IDF and the weight map W, as upstream builds them (§3-§4)."""
    order: list[str] = []
    text: dict[str, str] = {}
    symbols: dict[str, set[str]] = {}
    for row in rows:
        path = row.get("path") or ""
        if not path:
            continue
        if path not in text:
            order.append(path)
            text[path] = ""
            symbols[path] = set()
        if row.get("kind") == "file" and not text[path]:
            text[path] = row.get("text") or ""
        s = (row.get("symbol") or "").strip()
        if s and key_of(s):
            symbols[path].add(s)
    kind = {p: kind_of(p) for p in order}
    pt, st, ts = {}, {}, {}
    for p in order:
        pt[p] = set(split_identifiers(p.replace("/", " ").replace(".", " ").replace("_", " ")))
        st[p] = set()
        for s in symbols[p]:
            st[p] |= set(split_identifiers(s))
        ts[p] = pt[p] | st[p] | set(split_identifiers(text[p][:20000]))
    df: Counter[str] = Counter()
    for p in order:
        df.update(ts[p])
    n = max(1, len(order))
    idf = {t: math.log((n + 1) / (c + 1)) + 1.0 for t, c in df.items()}
    weights: dict[str, dict[str, float]] = {p: {} for p in order}

    def add(u: str, v: str, w: float) -> None:
        if u == v or u not in weights or v not in weights:
            return
        weights[u][v] = weights[u].get(v, 0.0) + w
        weights[v][u] = weights[v].get(u, 0.0) + w

    index: dict[str, set[str]] = {}
    for p in order:
        for key in index_keys(p):
            index.setdefault(key, set()).add(p)
    for p in order:
        for spec in literal_specs(text[p]):
            found: set[str] = set()
            for key in resolve_keys(spec, p):
                found |= index.get(key, set())
            for target in sorted(found)[:8]:
                if target != p:
                    add(p, target, 1.5)
    searchable = [p for p in order if kind[p] != "other"]
    if len(searchable) <= 3000:
        definers: dict[str, set[str]] = {}
        for p in searchable:
            for s in symbols[p]:
                definers.setdefault(key_of(s), set()).add(p)
        parts_of: dict[str, set[str]] = {}
        last: dict[str, set[str]] = {}
        for p in searchable:
            for s in sorted(symbols[p]):
                key, parts = key_of(s), parts_of_symbol(s)
                if len(definers[key]) > 8 or not parts:
                    continue
                if len(parts) == 1 and len(next(iter(parts))) < 8:
                    continue
                parts_of.setdefault(key, set()).update(parts)
                last[key] = parts
        keys_by_token: dict[str, set[str]] = {}
        for key, parts in parts_of.items():
            for part in parts:
                keys_by_token.setdefault(part, set()).add(key)
        for f in searchable:
            if not ts[f]:
                continue
            counter: Counter[str] = Counter()
            for token in ts[f]:
                for key in keys_by_token.get(token, ()):
                    counter[key] += 1
            window = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[: 4 * cap]
            refs, linked = 0, set()
            for key, matched in window:
                if matched < len(last[key]):
                    continue
                for target in sorted(definers[key]):
                    if target == f or target in linked:
                        continue
                    add(f, target, 1.0)
                    linked.add(target)
                    refs += 1
                    if refs >= cap:
                        break
                if refs >= cap:
                    break
    sources: dict[str, list[str]] = {}
    tests: dict[str, list[str]] = {}
    for p in order:
        if kind[p] == "other":
            continue
        for key in test_keys(p):
            (tests if kind[p] == "test" else sources).setdefault(key, []).append(p)
    for key, found_tests in tests.items():
        for s in sources.get(key, [])[:20]:
            for t in found_tests[:20]:
                add(s, t, 2.0)
    return {"order": order, "kind": kind, "pt": pt, "st": st, "ts": ts, "idf": idf, "w": weights}


def literal_rank(
    idx: dict[str, Any], sample: dict[str, Any], q: str, weights: tuple[float, float, float]
) -> list[tuple[str, float, float, float, float]]:
    """§5-§8 for one sample: all files, (path, final, qc, pc, ac) best first."""
    order, ts, w = idx["order"], idx["ts"], idx["w"]
    tokens = Counter(split_identifiers(q))
    lowered = q.lower()
    raw: dict[str, float] = {}
    for p in order:
        if not tokens:
            raw[p] = 0.0
            continue
        score = 0.0
        for t, count in tokens.items():
            if t not in ts[p]:
                continue
            weight = idx["idf"][t]
            if t in idx["pt"][p]:
                weight = weight * 3.0
            elif t in idx["st"][p]:
                weight = weight * 2.0
            score = score + (1.0 + math.log(count)) * weight
        if p.lower() in lowered:
            score = score + 20.0
        if PurePosixPath(p).name.lower() in lowered:
            score = score + 7.0
        raw[p] = score / max(1.0, math.sqrt(len(ts[p])))
    query = sample["query"]
    explicit = {
        query[k] for k in ("changed_file", "given_file", "path") if isinstance(query.get(k), str)
    }
    for key in ("implementation_files", "changed_files"):
        if isinstance(query.get(key), list):
            explicit |= {str(v) for v in query[key] if v}
    aff = dict.fromkeys(order, 0.0)
    for m in [p for p in order if p in explicit or p.lower() in lowered]:
        aff[m] += 0.4
        for v in w[m]:
            aff[v] += 1.0
    task = sample["task_type"]
    if task == "code2test":
        for p in order:
            if idx["kind"][p] == "test":
                aff[p] += 1.0
    elif task == "comment2context":
        for g in sample["gold"].get("given_files", []):
            if g in aff:
                aff[g] -= 1.0
                for v in w[g]:
                    aff[v] += 0.8
    elif task == "trace2code":
        for p in order:
            if idx["kind"][p] == "source":
                aff[p] += 0.5
            elif idx["kind"][p] == "test":
                aff[p] -= 0.2
    seeds = {p: max(0.0, raw[p]) + max(0.0, aff[p]) for p in order}
    if not any(s > 0 for s in seeds.values()):
        seeds = dict.fromkeys(order, 1.0)
    total = 0.0
    for p in order:
        total = total + max(0.0, seeds[p])
    base = {p: max(0.0, seeds[p]) / total for p in order}
    out = {}
    for u in order:
        o = 0.0
        for x in w[u].values():
            o = o + x
        out[u] = o
    rank = dict(base)
    for _ in range(24):
        dangling = 0.0
        for u in order:
            if out[u] == 0:
                dangling = dangling + rank[u]
        nxt = {v: (1.0 - 0.85) * base[v] for v in order}
        if dangling != 0:
            for v in order:
                nxt[v] = nxt[v] + (0.85 * dangling) * base[v]
        for u in order:
            if out[u] == 0:
                continue
            share = (0.85 * rank[u]) / out[u]
            for v, x in w[u].items():
                nxt[v] = nxt[v] + share * x
        rank = nxt
    mq = max(raw.values()) or 1.0
    mp = max(rank.values()) or 1.0
    ma = max(abs(a) for a in aff.values()) or 1.0
    wq, wp, wa = weights
    rows = []
    for p in order:
        qc, pc, ac = raw[p] / mq, rank[p] / mp, aff[p] / ma
        rows.append((p, (wq * qc + wp * pc) + wa * ac, qc, pc, ac))
    rows.sort(key=lambda r: (-r[1], r[0]))
    return rows


def literal_main(data: Path, out: Path) -> None:
    """Upstream's loop: samples grouped per chunk file, one index each, rankings written."""
    samples, manifest = release_inputs(data)
    queued: dict[Path, list[dict[str, Any]]] = {}
    for sample in samples:
        queued.setdefault(manifest[(sample["repo"], sample["base_commit"])], []).append(sample)
    result = {}
    for chunk_file, members in queued.items():
        with chunk_file.open(encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle]
        idx = literal_index(rows)
        for sample in members:
            q = json.dumps(sample["query"] or {}, ensure_ascii=False, sort_keys=True)
            ranked = literal_rank(idx, sample, q, (0.65, 0.25, 0.1))
            position = {r[0]: i for i, r in enumerate(ranked, start=1)}
            result[sample["id"]] = {
                "top": [list(r) for r in ranked[:20]],
                "gold_ranks": {g: position.get(g) for g in gold_files(sample)},
            }
    out.write_text(json.dumps(result), encoding="utf-8")


# --- driver ---------------------------------------------------------------------------------


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def compare(data: Path, root: Path, repeat: int = 1) -> tuple[float, float, float, int]:
    """Cold, warm and literal whole-process seconds on one release root, each the fastest of
    ``repeat`` rounds taking turns (a shared machine's load only ever adds, and drifting load
    reaches every side); rankings checked."""
    details, cache = root / "out" / "repomap_details.jsonl", root / "index-cache"
    rank = [sys.executable, "-m", "arbwb.cli", "rank", "--method", "repomap"]
    rank += ["--data", str(data), "--out", str(details), "--cache-dir", str(cache)]
    literal_out = root / "literal.json"
    cold = warm = slow = math.inf
    for _ in range(repeat):
        shutil.rmtree(cache, ignore_errors=True)
        cold = min(cold, timed(rank))
        warm = min(warm, timed(rank))
        slow = min(
            slow, timed([sys.executable, __file__, "--literal", str(data), str(literal_out)])
        )
    rows = [json.loads(line) for line in details.read_text(encoding="utf-8").splitlines()]
    expected = json.loads(literal_out.read_text(encoding="utf-8"))
    assert len(rows) == len(expected), "sample count"
    for row in rows:
        want = expected[row["sample_id"]]
        got = [
            [s["path"], s["score"], s["query"], s["pagerank"], s["affinity"]]
            for s in row["top_file_scores"]
        ]
        assert got == want["top"], f"{row['sample_id']}: top_file_scores differ"
        assert row["gold_ranks"] == want["gold_ranks"], f"{row['sample_id']}: gold_ranks differ"
    return cold, warm, slow, len(rows)


def report(label: str, cold: float, warm: float, slow: float, n: int) -> None:
    print(
        f"{label} ({n} rankings identical, top-20 scores bit for bit)\n"
        f"literal spec loop      {slow:7.2f} s\n"
        f"arbwb rank cold cache  {cold:7.2f} s   {slow / cold:5.1f}x (target >= 5x)\n"
        f"arbwb rank warm cache  {warm:7.2f} s   {slow / warm:5.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=12)
    parser.add_argument("--per-snapshot", type=int, default=4)
    parser.add_argument("--arb-snapshots", type=int, default=8, help="ARB-shaped snapshots")
    parser.add_argument("--skip-stdlib", action="store_true", help="only the ARB-shaped corpus")
    parser.add_argument("--repeat", type=int, default=1, help="rounds; the fastest counts")
    parser.add_argument("--literal", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.literal:
        literal_main(Path(args.literal[0]), Path(args.literal[1]))
        return
    compile_package()
    if not args.skip_stdlib:
        realistic()
        with tempfile.TemporaryDirectory(prefix="arbwb-bench-repomap-") as tmp:
            root = Path(tmp)
            data = make_release(root, args.snapshots, args.per_snapshot)
            found = compare(data, root, args.repeat)
        assert found[3] == args.snapshots * args.per_snapshot, "sample count"
        label = f"realistic stdlib: {args.snapshots} snapshots x {args.per_snapshot} samples"
        report(label, *found)
    with tempfile.TemporaryDirectory(prefix="arbwb-bench-repomap-arb-") as tmp:
        root = Path(tmp)
        data = arb_release(root, args.arb_snapshots)
        size = release_mib(data)
        found = compare(data, root, args.repeat)
    report(f"ARB-shaped: {args.arb_snapshots} snapshots ({size:.0f} MiB of chunk files)", *found)


if __name__ == "__main__":
    main()
