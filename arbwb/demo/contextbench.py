"""Demo ContextBench rows (``data/demo-src/contextbench_tasks.jsonl``, spans located in the demo
repositories), predictions of three kinds of agent and a ranked file list (our own content)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from arbwb.demo.samples import SpanSpec, locate_span
from arbwb.demo.source import DemoRepo, default_repos, read_rows
from arbwb.errors import InputError
from arbwb.io.checkout import CheckoutSource, MappingCheckout, count_lines
from arbwb.io.contextbench import ROW_COLUMNS
from arbwb.jsonio import atomic_open, read_json, write_json, write_jsonl

COMMIT_INDEX = 1  # every demo task sits on the repositories' second commit
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]+")


@dataclass(frozen=True)
class DemoTask:
    """One demo row: its literal columns, gold spans and the line its gold patch rewrites."""

    repo: str  # the demo repository (``row["repo"]`` is the name as the row spells it)
    spans: Sequence[SpanSpec]  # ``written_as``: the gold path as the row spells it
    patch_needle: str  # the line the gold patch rewrites (inside the first span's file)
    row: Mapping[str, Any]  # instance_id, problem_statement, ... copied as they are
    extra_gold: Sequence[Mapping[str, Any]] = ()  # gold outside the repository (B3)

    @property
    def instance_id(self) -> str:
        """The row's ``instance_id``."""
        return str(self.row["instance_id"])


#: Each task with its repository's files at ``COMMIT_INDEX`` (path -> text).
TaskFiles = Sequence[tuple[DemoTask, Mapping[str, str]]]
#: A path with a 1-based inclusive line range.
Located = tuple[str, int, int]


def read_tasks(src: Path) -> tuple[DemoTask, ...]:
    """The tasks of ``src/contextbench_tasks.jsonl``, one row each, in file order."""
    return read_rows(src / "contextbench_tasks.jsonl", DemoTask, spans=SpanSpec)


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


def _spans_of(task: DemoTask, files: Mapping[str, str]) -> list[Located]:
    return [(s.path, *locate_span(files, s)) for s in task.spans]


def demo_rows(tasks: TaskFiles, commits: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """The demo rows (all 14 columns as strings), gold spans located in the demo sources."""
    rows = []
    for task, files in tasks:
        gold = [
            {
                "file": span.written_as or path,
                "start_line": start,
                "end_line": end,
                "content": "\n".join(files[path].splitlines()[start - 1 : end]),
            }
            for span, (path, start, end) in zip(task.spans, _spans_of(task, files), strict=True)
        ]
        gold += [{**extra, "content": ""} for extra in task.extra_gold]
        first = task.spans[0].path
        resolved = {
            "base_commit": commits[task.repo][COMMIT_INDEX],
            "gold_context": json.dumps(gold, ensure_ascii=False),
            "patch": _gold_patch(first, files[first], task.patch_needle),
        }
        literal = sorted(set(ROW_COLUMNS) - set(resolved))
        if sorted(task.row) != literal:
            msg = f"{task.instance_id}: the row's literal columns must be exactly {literal}"
            raise InputError(msg, path="contextbench_tasks.jsonl", field="row")
        rows.append(dict(task.row) | resolved)
    return rows


def _traj(steps: list[list[Located]], final: list[Located]) -> dict[str, Any]:
    """A unified record's ``traj_data``: the files and spans of each step and of the final."""

    def as_spans(items: list[Located]) -> dict[str, list[dict[str, int]]]:
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


def precise(task: DemoTask, files: Mapping[str, str]) -> dict[str, Any]:
    """ "demo-precise": three exploring steps, a tight final context, a patch near the gold."""
    (p1, s1, e1), (p2, s2, e2) = _spans_of(task, files)
    other = sorted(p for p in files if p not in (p1, p2))[0]
    steps = [
        [(other, 1, min(10, count_lines(files[other].encode())))],
        [(p1, max(1, s1 - 5), e1 + 5)],
        [(p2, max(1, s2 - 3), e2 + 3)],
    ]
    traj = _traj(steps, [(p1, s1, e1), (p2, s2 + 2, e2 + 2)])
    patch = _gold_patch(p1, files[p1], task.patch_needle)
    return {"instance_id": task.instance_id, "traj_data": traj, "model_patch": patch}


def broad(task: DemoTask, files: Mapping[str, str]) -> dict[str, Any]:
    """ "demo-broad": one step, whole gold files plus a neighbour, no patch (gold fallback)."""
    paths = list(dict.fromkeys(s.path for s in task.spans))
    folder = paths[0].rpartition("/")[0]
    neighbours = sorted(p for p in files if p.rpartition("/")[0] == folder and p not in paths)
    final = [(p, 1, count_lines(files[p].encode())) for p in [*paths, *neighbours[:1]]]
    return {"instance_id": task.instance_id, "traj_data": _traj([], final)}


def _block(tag: str, items: list[Located]) -> str:
    body = "\n".join(f"File: /testbed/{p}\nLines: {a}-{b}" for p, a, b in items)
    return f"<{tag}>\n{body}\n</{tag}>"


def mini_swe(task: DemoTask, files: Mapping[str, str], *, final: bool) -> dict[str, Any]:
    """ "demo-mini-swe": a mini-SWE-agent ``.traj.json`` (explore and PATCH_CONTEXT tags)."""
    (p1, s1, e1), (p2, _, e2) = _spans_of(task, files)
    messages = [
        {"role": "system", "content": "You are a demo agent (arbwb demo data)."},
        {"role": "user", "content": task.row["problem_statement"]},
        {"role": "assistant", "content": _block("explore_context", [(p2, 1, e2 + 10)])},
        {"role": "assistant", "content": _block("explore_context", [(p1, s1, e1)])},
    ]
    if final:
        messages.append(
            {"role": "assistant", "content": _block("PATCH_CONTEXT", [(p1, s1, e1 + 1)])}
        )
    return {"instance_id": task.instance_id, "info": {"submission": ""}, "messages": messages}


def overlap(task: DemoTask, files: Mapping[str, str]) -> dict[str, Any]:
    """ "demo-overlap": files ranked by the distinct problem-statement words they contain (ties by
    path); a stand-in file retriever, ARB predictions format."""
    words = {w.lower() for w in _TOKEN.findall(task.row["problem_statement"])}
    scores = {p: len(words & {w.lower() for w in _TOKEN.findall(t)}) for p, t in files.items()}
    ranked = [
        {"path": p, "score": float(scores[p])}
        for p in sorted(scores, key=lambda p: (-scores[p], p))
    ]
    return {"sample_id": task.instance_id, "ranked_files": ranked}


def write_contextbench_demo(
    out: Path,
    commits: Mapping[str, Sequence[str]],
    repos: Mapping[str, DemoRepo],
    demo_tasks: Sequence[DemoTask],
) -> None:
    """Write every demo ContextBench file below ``out`` (rows, commits, runs, a ranking)."""
    tasks = [(task, repos[task.repo].files_at(COMMIT_INDEX)) for task in demo_tasks]
    rows = pl.DataFrame(demo_rows(tasks, commits), schema=dict.fromkeys(ROW_COLUMNS, pl.String))
    with atomic_open(out / "rows.parquet", "wb") as handle:
        rows.write_parquet(handle, statistics=False)
    write_json(out / "commits.json", {repo: list(shas) for repo, shas in sorted(commits.items())})
    write_jsonl(out / "predictions" / "demo-precise.jsonl", [precise(*t) for t in tasks])
    write_json(out / "predictions" / "demo-broad.json", [broad(*t) for t in tasks])
    for index, (task, files) in enumerate(tasks):
        traj = mini_swe(task, files, final=index != 2)  # one never declares its final context
        write_json(out / "predictions" / "demo-mini-swe" / f"{task.instance_id}.traj.json", traj)
    write_jsonl(out / "rankings" / "demo-overlap.jsonl", [overlap(*t) for t in tasks])


def demo_source(out: str | Path) -> CheckoutSource:
    """Checkouts of the demo repositories at the commits of ``<out>/commits.json``, so demo
    predictions score at every level."""
    commits: dict[str, list[str]] = read_json(Path(out) / "commits.json")
    repos = {r.repo: r for r in default_repos()}
    table = {(repo, sha): index for repo, shas in commits.items() for index, sha in enumerate(shas)}

    def source(repo: str, commit: str) -> MappingCheckout | None:
        index = table.get((repo, commit))
        if index is None or repo not in repos:
            return None
        files = repos[repo].files_at(index)
        return MappingCheckout({p: t.encode("utf-8") for p, t in files.items()})

    return source
