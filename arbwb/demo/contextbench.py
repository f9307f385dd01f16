"""Demo ContextBench-style rows and predictions about the demo repositories (our own content).

Writes ``<out>/rows.parquet`` (the 14 string columns of contextbench-spec §1.1; six tasks on
``arbdemo/*`` at their second commit, one with a bare Multi-SWE-style repo name and
``/workspace/`` gold paths, one with a ``./`` path and a ``/workspace/<file>`` annotator
script), ``commits.json`` (repo -> commit SHAs), two unified-record runs, one folder of
mini-SWE-agent trajectories (with a no-context and an unknown instance, so error counting has
something to show) and a ranked file list per task. Deterministic: same bytes on every build.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from arbwb.demo.repos import DEMO_REPOS, DemoRepo
from arbwb.io.checkout import CheckoutSource, MappingCheckout, count_lines
from arbwb.io.contextbench import ROW_COLUMNS
from arbwb.jsonio import atomic_open, read_json, write_json, write_jsonl

COMMIT_INDEX = 1  # every demo task sits on the repositories' second commit
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]+")


@dataclass(frozen=True)
class DemoSpan:
    """``n_lines`` lines of ``path`` from the first line containing ``needle``."""

    path: str
    needle: str
    n_lines: int
    written_as: str = ""  # gold path as the row spells it; "" = path


@dataclass(frozen=True)
class DemoTask:
    """One demo row before commits, line numbers and patches are resolved."""

    key: str
    repo: str
    bare_repo: bool  # write `repo` as a bare name (Multi-SWE style)
    language: str
    category: str
    problem: str
    spans: tuple[DemoSpan, ...]
    patch_needle: str  # the line the gold patch rewrites (inside the first span's file)
    extra_gold: tuple[tuple[str, int, int], ...] = ()  # gold outside the repository (B3)


_W = "/workspace/arbdemo__kvcache__0.1/"
TASKS: tuple[DemoTask, ...] = (
    DemoTask(
        "split-negative",
        "arbdemo/tallyho",
        False,
        "python",
        "maintenance__bugfix",
        "split_evenly(Money(-5), 2) returns shares of -3 and -2 cents plus a remainder share "
        "that is positive; negative amounts should split symmetrically.",
        (
            DemoSpan("tallyho/money.py", "def split_evenly", 6),
            DemoSpan("tallyho/money.py", "class Money:", 3),
        ),
        "base, extra = divmod(value.cents, parts)",
    ),
    DemoTask(
        "budget-subaccounts",
        "arbdemo/tallyho",
        False,
        "python",
        "evolution__feature",
        "Budget.overspent only compares top-level totals; spending booked on sub-accounts "
        "such as food:restaurants should count against the food budget.",
        (
            DemoSpan("tallyho/budget.py", "def overspent", 6, "./tallyho/budget.py"),
            DemoSpan("tallyho/ledger.py", "def balance(self", 6),
        ),
        "if -totals.get(name, Money(0, self.currency)).cents > limit.cents",
    ),
    DemoTask(
        "get-expired-stats",
        "arbdemo/kvcache",
        True,
        "go",
        "maintenance__bugfix",
        "Get on an expired key counts a miss but leaves the key in the LRU order until the "
        "next Purge; expired entries should be dropped and counted once.",
        (
            DemoSpan("cache.go", "func (c *Cache) Get", 16, _W + "cache.go"),
            DemoSpan("ttl.go", "func (c *Cache) expired", 4, _W + "ttl.go"),
        ),
        "c.stats.Misses++",
        (("/workspace/run_kvcache_test.sh", 1, 12),),
    ),
    DemoTask(
        "put-eviction",
        "arbdemo/kvcache",
        False,
        "go",
        "maintenance__bugfix",
        "Set with capacity 1 evicts the key it just inserted when the key already existed "
        "with a TTL; the eviction count in Stats is wrong after updates.",
        (
            DemoSpan("lru.go", "func (l *lruList) put", 16),
            DemoSpan("cache.go", "func (c *Cache) Set", 11),
        ),
        "if l.order.Len() <= l.capacity {",
    ),
    DemoTask(
        "query-repeated-keys",
        "arbdemo/routekit",
        False,
        "javascript",
        "maintenance__bugfix",
        "parseQuery('a=1&a=2&a=3') nests arrays instead of returning ['1', '2', '3'], and "
        "handlers see the nested value in context.query.",
        (
            DemoSpan("src/query.js", "export function parseQuery", 16),
            DemoSpan("src/router.js", "const query = parseQuery", 2),
        ),
        "query[key] = [].concat(query[key], value);",
    ),
    DemoTask(
        "optional-params",
        "arbdemo/routekit",
        False,
        "javascript",
        "evolution__feature",
        "Optional parameters such as /users/:id? do not match /users/ with a trailing slash; "
        "matchPath should treat the optional segment and the slash together.",
        (
            DemoSpan("src/match.js", "export function compilePattern", 17),
            DemoSpan("src/match.js", "export function matchPath", 10),
        ),
        "return param[2] ? '(?:/([^/]+))?' : '/([^/]+)';",
    ),
)


def _locate(text: str, span: DemoSpan) -> tuple[int, int]:
    for number, line in enumerate(text.splitlines(), start=1):
        if span.needle in line:
            return number, number + span.n_lines - 1
    msg = f"demo ContextBench needle {span.needle!r} not in {span.path}; fix the demo task"
    raise ValueError(msg)


def instance_id(task: DemoTask) -> str:
    """ContextBench-shaped id ``ARBWB-Demo__<language>__<category>__<8 hex>``."""
    digest = hashlib.sha256(f"arbwb-demo-cb/{task.key}".encode()).hexdigest()[:8]
    return f"ARBWB-Demo__{task.language}__{task.category}__{digest}"


def _gold_patch(path: str, text: str, needle: str) -> str:
    """A one-line unified diff rewriting the line containing ``needle``."""
    lines = text.splitlines()
    number = next(i for i, line in enumerate(lines, start=1) if needle in line)
    old = lines[number - 1]
    new = old.rstrip() + ("  # fixed" if path.endswith(".py") else "  // fixed")
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -{number},1 +{number},1 @@\n-{old}\n+{new}\n"
    )


def _repos() -> dict[str, DemoRepo]:
    return {r.repo: r for r in DEMO_REPOS}


def demo_rows(commits: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """The demo rows (all 14 columns as strings), gold spans located in the demo sources."""
    rows = []
    repos = _repos()
    for number, task in enumerate(TASKS, start=1):
        files = repos[task.repo].files_at(COMMIT_INDEX)
        gold = []
        for span in task.spans:
            start, end = _locate(files[span.path], span)
            body = "\n".join(files[span.path].splitlines()[start - 1 : end])
            gold.append(
                {
                    "file": span.written_as or span.path,
                    "start_line": start,
                    "end_line": end,
                    "content": body,
                }
            )
        for path, start, end in task.extra_gold:
            gold.append({"file": path, "start_line": start, "end_line": end, "content": ""})
        owner, name = task.repo.split("/")
        first = task.spans[0].path
        rows.append(
            {
                "instance_id": instance_id(task),
                "original_inst_id": f"{owner}__{name}-{100 + number}",
                "repo": name if task.bare_repo else task.repo,
                "language": task.language,
                "base_commit": commits[task.repo][COMMIT_INDEX],
                "gold_context": json.dumps(gold, ensure_ascii=False),
                "patch": _gold_patch(first, files[first], task.patch_needle),
                "test_patch": "",
                "problem_statement": task.problem,
                "hints_text": None,
                "created_at": None,
                "f2p": "[]",
                "p2p": "[]",
                "source": "Demo",
            }
        )
    return rows


def _spans_of(task: DemoTask, files: Mapping[str, str]) -> list[tuple[str, int, int]]:
    return [(s.path, *_locate(files[s.path], s)) for s in task.spans]


def _traj(
    steps: list[list[tuple[str, int, int]]], final: list[tuple[str, int, int]]
) -> dict[str, Any]:
    def as_spans(items: list[tuple[str, int, int]]) -> dict[str, list[dict[str, int]]]:
        out: dict[str, list[dict[str, int]]] = {}
        for path, start, end in items:
            out.setdefault(path, []).append({"start": start, "end": end})
        return out

    return {
        "pred_steps": [
            {"files": sorted({p for p, _, _ in step}), "spans": as_spans(step)} for step in steps
        ],
        "pred_files": sorted({p for p, _, _ in final}),
        "pred_spans": as_spans(final),
    }


def precise_run(commits: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """ "demo-precise": three exploring steps, a tight final context, a patch near the gold."""
    out = []
    repos = _repos()
    for task in TASKS:
        files = repos[task.repo].files_at(COMMIT_INDEX)
        (p1, s1, e1), (p2, s2, e2) = _spans_of(task, files)
        other = sorted(p for p in files if p not in (p1, p2))[0]
        steps = [
            [(other, 1, min(10, count_lines(files[other].encode())))],
            [(p1, max(1, s1 - 5), e1 + 5)],
            [(p2, max(1, s2 - 3), e2 + 3)],
        ]
        final = [(p1, s1, e1), (p2, s2 + 2, e2 + 2)]
        out.append(
            {
                "instance_id": instance_id(task),
                "traj_data": _traj(steps, final),
                "model_patch": _gold_patch(p1, files[p1], task.patch_needle),
            }
        )
    return out


def broad_run() -> list[dict[str, Any]]:
    """ "demo-broad": one step, whole gold files plus a neighbour, no patch (gold fallback)."""
    out = []
    repos = _repos()
    for task in TASKS:
        files = repos[task.repo].files_at(COMMIT_INDEX)
        paths = list(dict.fromkeys(s.path for s in task.spans))
        folder = paths[0].rpartition("/")[0]
        neighbours = sorted(p for p in files if p.rpartition("/")[0] == folder and p not in paths)
        chosen = [*paths, *neighbours[:1]]
        final = [(p, 1, count_lines(files[p].encode())) for p in chosen]
        out.append({"instance_id": instance_id(task), "traj_data": _traj([], final)})
    return out


def mini_swe_trajectories(commits: Mapping[str, Sequence[str]]) -> dict[str, dict[str, Any]]:
    """ "demo-mini-swe": mini-SWE-agent ``.traj.json`` files (explore and PATCH_CONTEXT tags)."""
    out: dict[str, dict[str, Any]] = {}
    repos = _repos()
    for index, task in enumerate(TASKS):
        files = repos[task.repo].files_at(COMMIT_INDEX)
        (p1, s1, e1), (p2, _, e2) = _spans_of(task, files)

        def block(tag: str, items: list[tuple[str, int, int]]) -> str:
            body = "\n".join(f"File: /testbed/{p}\nLines: {a}-{b}" for p, a, b in items)
            return f"<{tag}>\n{body}\n</{tag}>"

        messages = [
            {"role": "system", "content": "You are a demo agent (arbwb demo data)."},
            {"role": "user", "content": task.problem},
            {"role": "assistant", "content": block("explore_context", [(p2, 1, e2 + 10)])},
            {"role": "assistant", "content": block("explore_context", [(p1, s1, e1)])},
        ]
        if index != 2:  # one trajectory never declares its final context
            messages.append(
                {"role": "assistant", "content": block("PATCH_CONTEXT", [(p1, s1, e1 + 1)])}
            )
        out[instance_id(task)] = {
            "instance_id": instance_id(task),
            "info": {"submission": ""},
            "messages": messages,
        }
    unknown = "ARBWB-Demo__python__maintenance__bugfix__00000000"
    out[unknown] = {
        "instance_id": unknown,
        "info": {"submission": ""},
        "messages": [
            {
                "role": "assistant",
                "content": "<PATCH_CONTEXT>\nFile: a.py\nLines: 1-2\n</PATCH_CONTEXT>",
            }
        ],
    }
    return out


def overlap_ranking(commits: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """ "demo-overlap": files ranked by how many distinct problem-statement words they contain
    (ties by path); a stand-in file retriever, ARB predictions format.
    """
    out = []
    repos = _repos()
    for task in TASKS:
        files = repos[task.repo].files_at(COMMIT_INDEX)
        words = {w.lower() for w in _TOKEN.findall(task.problem)}
        scores = {
            path: len(words & {w.lower() for w in _TOKEN.findall(text)})
            for path, text in files.items()
        }
        ranked = sorted(scores, key=lambda p: (-scores[p], p))
        out.append(
            {
                "sample_id": instance_id(task),
                "ranked_files": [{"path": p, "score": float(scores[p])} for p in ranked],
            }
        )
    return out


def write_contextbench_demo(out: str | Path, commits: Mapping[str, Sequence[str]]) -> list[Path]:
    """Write every demo ContextBench file below ``out``; returns the paths written."""
    out = Path(out)
    rows = pl.DataFrame(demo_rows(commits), schema=dict.fromkeys(ROW_COLUMNS, pl.String))
    written = [out / "rows.parquet"]
    with atomic_open(written[0], "wb") as handle:
        rows.write_parquet(handle, statistics=False)
    write_json(out / "commits.json", {repo: list(shas) for repo, shas in sorted(commits.items())})
    write_jsonl(out / "predictions" / "demo-precise.jsonl", precise_run(commits))
    write_json(out / "predictions" / "demo-broad.json", broad_run())
    written += [
        out / "commits.json",
        out / "predictions" / "demo-precise.jsonl",
        out / "predictions" / "demo-broad.json",
    ]
    for instance, traj in mini_swe_trajectories(commits).items():
        path = out / "predictions" / "demo-mini-swe" / f"{instance}.traj.json"
        write_json(path, traj)
        written.append(path)
    write_jsonl(out / "rankings" / "demo-overlap.jsonl", overlap_ranking(commits))
    written.append(out / "rankings" / "demo-overlap.jsonl")
    return written


def demo_source(out: str | Path) -> CheckoutSource:
    """Checkouts of the demo repositories (exact bytes from :mod:`arbwb.demo.repos`) at the
    commits recorded in ``<out>/commits.json``, so demo predictions score at every level.
    """
    commits: dict[str, list[str]] = read_json(Path(out) / "commits.json")
    repos = _repos()
    table = {(repo, sha): index for repo, shas in commits.items() for index, sha in enumerate(shas)}

    def source(repo: str, commit: str) -> MappingCheckout | None:
        index = table.get((repo, commit))
        if index is None or repo not in repos:
            return None
        files = repos[repo].files_at(index)
        return MappingCheckout({p: t.encode("utf-8") for p, t in files.items()})

    return source
