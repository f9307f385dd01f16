"""Demo ContextBench-style rows and predictions about the demo repositories (our own content).

The tasks are ``data/demo-src/contextbench_tasks.jsonl``. Writes ``<out>/rows.parquet`` (the
14 string columns of contextbench-spec §1.1; six tasks on ``arbdemo/*`` at their second commit, one with a bare Multi-SWE-style repo name and
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

from arbwb.demo.source import DemoRepo, default_repos, from_row, read_rows
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
    extra_gold: tuple[Mapping[str, Any], ...] = ()  # gold outside the repository (B3)


def read_tasks(src: Path) -> tuple[DemoTask, ...]:
    """The tasks of ``src/contextbench_tasks.jsonl``, one row each, in file order."""
    path = src / "contextbench_tasks.jsonl"

    def convert(row: dict[str, Any]) -> dict[str, Any]:
        spans = tuple(from_row(DemoSpan, s, path=path) for s in row.get("spans", ()))
        return row | {"spans": spans, "extra_gold": tuple(row.get("extra_gold", ()))}

    return read_rows(path, DemoTask, convert)


#: Each task with its repository's files at ``COMMIT_INDEX`` (path -> text).
TaskFiles = Sequence[tuple[DemoTask, Mapping[str, str]]]


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


def demo_rows(tasks: TaskFiles, commits: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """The demo rows (all 14 columns as strings), gold spans located in the demo sources."""
    rows = []
    for number, (task, files) in enumerate(tasks, start=1):
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
        gold += [{**extra, "content": ""} for extra in task.extra_gold]
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


def precise_run(tasks: TaskFiles) -> list[dict[str, Any]]:
    """ "demo-precise": three exploring steps, a tight final context, a patch near the gold."""
    out = []
    for task, files in tasks:
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


def broad_run(tasks: TaskFiles) -> list[dict[str, Any]]:
    """ "demo-broad": one step, whole gold files plus a neighbour, no patch (gold fallback)."""
    out = []
    for task, files in tasks:
        paths = list(dict.fromkeys(s.path for s in task.spans))
        folder = paths[0].rpartition("/")[0]
        neighbours = sorted(p for p in files if p.rpartition("/")[0] == folder and p not in paths)
        chosen = [*paths, *neighbours[:1]]
        final = [(p, 1, count_lines(files[p].encode())) for p in chosen]
        out.append({"instance_id": instance_id(task), "traj_data": _traj([], final)})
    return out


def mini_swe_trajectories(tasks: TaskFiles) -> dict[str, dict[str, Any]]:
    """ "demo-mini-swe": mini-SWE-agent ``.traj.json`` files (explore and PATCH_CONTEXT tags)."""
    out: dict[str, dict[str, Any]] = {}
    for index, (task, files) in enumerate(tasks):
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


def overlap_ranking(tasks: TaskFiles) -> list[dict[str, Any]]:
    """ "demo-overlap": files ranked by how many distinct problem-statement words they contain
    (ties by path); a stand-in file retriever, ARB predictions format.
    """
    out = []
    for task, files in tasks:
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


def write_contextbench_demo(
    out: str | Path,
    commits: Mapping[str, Sequence[str]],
    repos: Mapping[str, DemoRepo],
    demo_tasks: Sequence[DemoTask],
) -> list[Path]:
    """Write every demo ContextBench file below ``out``; returns the paths written."""
    out = Path(out)
    tasks = [(task, repos[task.repo].files_at(COMMIT_INDEX)) for task in demo_tasks]
    table = demo_rows(tasks, commits)
    rows = pl.DataFrame(table, schema=dict.fromkeys(ROW_COLUMNS, pl.String))
    written = [out / "rows.parquet"]
    with atomic_open(written[0], "wb") as handle:
        rows.write_parquet(handle, statistics=False)
    write_json(out / "commits.json", {repo: list(shas) for repo, shas in sorted(commits.items())})
    write_jsonl(out / "predictions" / "demo-precise.jsonl", precise_run(tasks))
    write_json(out / "predictions" / "demo-broad.json", broad_run(tasks))
    written += [
        out / "commits.json",
        out / "predictions" / "demo-precise.jsonl",
        out / "predictions" / "demo-broad.json",
    ]
    for instance, traj in mini_swe_trajectories(tasks).items():
        path = out / "predictions" / "demo-mini-swe" / f"{instance}.traj.json"
        write_json(path, traj)
        written.append(path)
    write_jsonl(out / "rankings" / "demo-overlap.jsonl", overlap_ranking(tasks))
    written.append(out / "rankings" / "demo-overlap.jsonl")
    return written


def demo_source(out: str | Path) -> CheckoutSource:
    """Checkouts of the demo repositories (exact bytes of ``data/demo-src/repos``) at the
    commits recorded in ``<out>/commits.json``, so demo predictions score at every level.
    """
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
