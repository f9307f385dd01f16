"""Readers of the demo's source files in ``data/demo-src`` (trees, samples, tasks, runs): frozen
values for the builder, failing with the file, line and field of anything malformed."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from arbwb.errors import InputError
from arbwb.io.pathclass import CandidateFilter
from arbwb.jsonio import iter_jsonl, read_json
from arbwb.paths import DEMO_SRC_DIR

T = TypeVar("T")


def source_dir(src: str | Path | None = None) -> Path:
    """The demo source folder: ``src``, else ``data/demo-src`` of the checkout arbwb runs from."""
    folder = DEMO_SRC_DIR if src is None else Path(src)
    if not (folder / "repos.json").is_file():
        msg = (
            "is not a demo source folder (no repos.json); pass --src DIR pointing at "
            "data/demo-src of an arbwb checkout, or install arbwb editable from its checkout"
        )
        raise InputError(msg, path=folder, field="--src")
    return folder


def from_row(cls: type[T], row: Mapping[str, Any], *, path: Path, line: int | None = None) -> T:
    """``cls(**row)`` for a dataclass, refusing a missing or an unknown field by name."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    names = sorted(f.name for f in fields)
    required = [f.name for f in fields if f.default is dataclasses.MISSING]
    for name in [*required, *row]:
        if name not in row or name not in names:
            problem = "is missing" if name not in row else "is not a known field"
            msg = f"{problem}; expected fields {names}"
            raise InputError(msg, path=path, line=line, field=name)
    return cls(**row)


def read_rows(path: Path, cls: type[T], **nested: type) -> tuple[T, ...]:
    """The JSONL file ``path`` as ``cls`` values, each ``nested`` field a list of its class."""
    out = []
    for n, row in iter_jsonl(path):
        lists: dict[str, list[Any]] = {
            k: [from_row(c, v, path=path) for v in row.get(k, ())] for k, c in nested.items()
        }
        out.append(from_row(cls, row | lists, path=path, line=n))
    return tuple(out)


@dataclass(frozen=True)
class DemoCommit:
    """One commit: its message, fixed ISO date and the whole tree it records (path -> text)."""

    message: str
    date: str
    files: Mapping[str, str]


@dataclass(frozen=True)
class DemoRepo:
    """A demo repository with the metadata a ``repo_manifest.jsonl`` row carries."""

    repo: str
    language: str
    license: str
    commits: Sequence[DemoCommit]

    def files_at(self, index: int) -> dict[str, str]:
        """The repository's files (path -> text) at its commit ``index``."""
        return dict(self.commits[index].files)


def read_tree(folder: Path) -> dict[str, str]:
    """Every file below ``folder`` as text, keyed by its ``/``-separated relative path; Python's
    bytecode caches (left by running a demo repository's tests) are not part of a tree."""
    if not folder.is_dir():
        msg = "tree folder is missing; every commit in repos.json needs repos/<repo>/<index>/"
        raise InputError(msg, path=folder)
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix != ".pyc"):
        try:
            files[path.relative_to(folder).as_posix()] = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 ({exc.reason})", path=path) from None
    return files


def read_repos(src: Path) -> tuple[DemoRepo, ...]:
    """The repositories of ``repos.json``, commit ``i`` of each read from ``repos/<repo>/<i>/``."""
    path = src / "repos.json"
    repos = []
    for row in read_json(path):
        trees = src / "repos" / row["repo"]
        commits = [
            from_row(DemoCommit, c | {"files": read_tree(trees / str(i))}, path=path)
            for i, c in enumerate(row["commits"])
        ]
        repos.append(from_row(DemoRepo, row | {"commits": commits}, path=path))
    return tuple(repos)


@cache
def default_repos() -> tuple[DemoRepo, ...]:
    """The repositories of the checkout's ``data/demo-src`` (read once)."""
    return read_repos(source_dir())


@dataclass(frozen=True)
class RunSpec:
    """One stored run: a registry ``method`` (optionally model/encoder/filter) or a ``fuse``."""

    name: str
    method: str | None = None
    model: str | None = None
    encoder: str | None = None
    candidate_filter: CandidateFilter | None = None
    fuse: Sequence[str] = ()


@dataclass(frozen=True)
class ReleaseSpec:
    """``release.json``: release name, corpus stamp, task file order and the runs to store."""

    release: str
    stamp: str
    candidate_filter: CandidateFilter
    task_order: Sequence[str]
    runs: Sequence[RunSpec]
    selective_runs: Sequence[str]


def read_release(src: Path) -> ReleaseSpec:
    """``release.json``, checked: each run a method or a fusion of method runs."""
    path = src / "release.json"
    row = read_json(path)
    runs = [from_row(RunSpec, r, path=path) for r in row.get("runs", [])]
    spec = from_row(ReleaseSpec, row | {"runs": runs}, path=path)
    methods = sorted(r.name for r in runs if r.method is not None)
    for run in runs:
        if (run.method is None) == (not run.fuse) or not set(run.fuse) <= set(methods):
            msg = f"run {run.name!r} needs a method or a fuse list of method runs {methods}"
            raise InputError(msg, path=path, field="runs")
    if not set(spec.selective_runs) <= set(methods):
        msg = f"selective runs must name method runs {methods}"
        raise InputError(msg, path=path, field="selective_runs")
    return spec
