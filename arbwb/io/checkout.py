"""What ContextBench scoring may know of a repository at ``base_commit``: its regular files
(§2.2), their bytes (byte and symbol levels) and line counts (§13), from a mapping, a git
repository, a checked-out folder or a corpus file list (no bytes)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from arbwb.errors import InputError

if TYPE_CHECKING:
    from arbwb.io.corpus import Corpus


def count_lines(data: bytes) -> int:
    """§13.3 line count: number of ``\\n`` bytes, plus 1 if non-empty and not ending in ``\\n``."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


class Checkout:
    """Files of one repository at one commit (paths repo-relative, '/'-separated)."""

    has_bytes = True  # whether :meth:`read` returns bytes (byte and symbol levels need them)

    def is_file(self, path: str) -> bool:
        """Whether ``path`` is a regular file at the commit."""
        raise NotImplementedError

    def read(self, path: str) -> bytes | None:
        """The file's bytes, None when absent or when bytes are not available."""
        raise NotImplementedError

    def n_lines(self, path: str) -> int | None:
        """Line count of §13.3 (:func:`count_lines` of the bytes); None when absent."""
        data = self.read(path)
        return None if data is None else count_lines(data)


@dataclass(frozen=True)
class MappingCheckout(Checkout):
    """Files given as a mapping path -> bytes (tests, fixtures, demo repositories)."""

    files: Mapping[str, bytes]

    def is_file(self, path: str) -> bool:
        return path in self.files

    def read(self, path: str) -> bytes | None:
        return self.files.get(path)


@dataclass(frozen=True)
class FileListCheckout(Checkout):
    """Only paths and line counts (a corpus's: ``splitlines``, equal to the §13.3 count unless
    a file holds other Unicode line breaks)."""

    lines: Mapping[str, int]
    has_bytes = False

    def is_file(self, path: str) -> bool:
        return path in self.lines

    def read(self, path: str) -> bytes | None:
        return None

    def n_lines(self, path: str) -> int | None:
        return self.lines.get(path)


def run_git(git_dir: Path, *args: str) -> bytes:
    """Stdout of ``git -C git_dir *args``; a failure is an InputError with git's message."""
    proc = subprocess.run(["git", "-C", str(git_dir), *args], capture_output=True, check=False)
    if proc.returncode != 0:
        msg = f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace').strip()}"
        raise InputError(msg, path=git_dir)
    return proc.stdout


@dataclass
class GitCheckout(Checkout):
    """Blobs of a git repository (bare or not) at ``commit``, read with ``git cat-file``."""

    git_dir: Path
    commit: str
    _paths: frozenset[str] | None = field(default=None, repr=False)
    _cache: dict[str, bytes] = field(default_factory=dict, repr=False)

    def is_file(self, path: str) -> bool:
        """Regular files (modes 100644/100755) only: symlinks and submodules excluded."""
        if self._paths is None:
            out = run_git(self.git_dir, "ls-tree", "-r", "-z", "--full-tree", self.commit)
            entries = (e.partition(b"\t") for e in out.split(b"\0") if e)
            self._paths = frozenset(
                name.decode("utf-8", errors="surrogateescape")
                for meta, _, name in entries
                if meta.split(b" ")[0] in (b"100644", b"100755")
            )
        return path in self._paths

    def read(self, path: str) -> bytes | None:
        """The blob's bytes at the commit (cached)."""
        if path not in self._cache and self.is_file(path):
            self._cache[path] = run_git(self.git_dir, "cat-file", "blob", f"{self.commit}:{path}")
        return self._cache.get(path)


@dataclass(frozen=True)
class DirectoryCheckout(Checkout):
    """A folder already checked out at the commit (regular files inside it only)."""

    root: Path

    def _target(self, path: str) -> Path | None:
        target, root = (self.root / path).resolve(), self.root.resolve()
        if target != root and root not in target.parents:
            return None
        return target if target.is_file() else None

    def is_file(self, path: str) -> bool:
        return self._target(path) is not None

    def read(self, path: str) -> bytes | None:
        target = self._target(path)
        return None if target is None else target.read_bytes()


#: Finds the checkout of ``(owner/name, commit)``; None when unavailable.
CheckoutSource = Callable[[str, str], Checkout | None]


def _is_git_repository(folder: Path) -> bool:
    """A work tree with ``.git`` or a bare repository (``HEAD`` beside ``objects/``)."""
    return (folder / ".git").exists() or (
        (folder / "HEAD").is_file() and (folder / "objects").is_dir()
    )


def repos_source(root: str | Path) -> CheckoutSource:
    """Checkouts from a folder of ``owner__name`` (or ``.git``) subfolders, case-insensitively:
    git repositories read at each ``base_commit``, plain folders taken as at that commit."""
    folder = Path(root)
    if not folder.is_dir():
        raise InputError("repositories folder not found", path=folder, field="--repos")
    index = {p.name.lower().removesuffix(".git"): p for p in folder.iterdir() if p.is_dir()}
    git = {name: _is_git_repository(p) for name, p in index.items()}

    def source(repo: str, commit: str) -> Checkout | None:
        name = repo.replace("/", "__").lower()
        found = index.get(name)
        if found is None:
            return None
        return GitCheckout(found, commit) if git[name] else DirectoryCheckout(found)

    return source


def corpus_source(corpus: Corpus) -> CheckoutSource:
    """Checkouts listing the files (and line counts) a corpus holds for ``repo@commit``."""
    cache: dict[str, Checkout] = {}

    def source(repo: str, commit: str) -> Checkout | None:
        sid = f"{repo}@{commit}"
        if not corpus.has(sid):
            return None
        if sid not in cache:
            files = corpus.files(sid)
            cache[sid] = FileListCheckout(dict(zip(files["path"], files["n_lines"], strict=True)))
        return cache[sid]

    return source


def first_source(*sources: CheckoutSource | None) -> CheckoutSource | None:
    """A source asking each given source in turn (e.g. git repositories, then a corpus)."""
    present = [s for s in sources if s is not None]
    if not present:
        return None

    def source(repo: str, commit: str) -> Checkout | None:
        return next((c for s in present if (c := s(repo, commit)) is not None), None)

    return source
