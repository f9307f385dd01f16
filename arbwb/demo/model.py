"""The shapes of a demo repository (commits of files) shared by every demo source module."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class DemoCommit:
    """One commit: its message, fixed ISO date and the files it writes (``None`` deletes)."""

    message: str
    date: str
    files: Mapping[str, str | None]


@dataclass(frozen=True)
class DemoRepo:
    """A demo repository with the metadata a ``repo_manifest.jsonl`` row carries."""

    repo: str
    language: str
    license: str
    commits: tuple[DemoCommit, ...]

    def files_at(self, index: int) -> dict[str, str]:
        """The repository's files after its commit ``index`` (later commits overwrite earlier)."""
        files: dict[str, str] = {}
        for commit in self.commits[: index + 1]:
            for path, text in commit.files.items():
                if text is None:
                    files.pop(path, None)
                else:
                    files[path] = text
        return files


def patch(text: str, old: str, new: str) -> str:
    """``text`` with its single ``old`` replaced by ``new``; fails loudly otherwise."""
    if text.count(old) != 1:
        msg = f"demo source patch expects exactly one {old!r}, got {text.count(old)}"
        raise ValueError(msg)
    return text.replace(old, new)
