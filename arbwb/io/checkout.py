"""What ContextBench scoring may know of a repository at ``base_commit``: its regular files
(§2.2), their bytes (byte and symbol levels) and line counts (§13), from a mapping, a git
repository, a checked-out folder or a corpus file list (no bytes)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from arbwb.errors import InputError


class Checkout(Protocol):
    """Files of one repository at one commit."""

    @property
    def has_bytes(self) -> bool:
        """Whether :meth:`read` returns file bytes (byte and symbol levels need them)."""
        ...

    def is_file(self, path: str) -> bool:
        """Whether ``path`` (repo-relative, '/'-separated) is a regular file at the commit."""
        ...

    def read(self, path: str) -> bytes | None:
        """The file's bytes, None when absent or when bytes are not available."""
        ...

    def n_lines(self, path: str) -> int | None:
        """Line count of §13.3 (``\\n`` bytes, +1 if non-empty without final ``\\n``)."""
        ...


def count_lines(data: bytes) -> int:
    """§13.3 line count: number of ``\\n`` bytes, plus 1 if non-empty and not ending in ``\\n``."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@dataclass(frozen=True)
class MappingCheckout:
    """Files given as a mapping path -> bytes (tests, fixtures, demo repositories)."""

    files: Mapping[str, bytes]
    has_bytes: bool = True

    def is_file(self, path: str) -> bool:
        """Whether the mapping has ``path``."""
        return path in self.files

    def read(self, path: str) -> bytes | None:
        """The mapped bytes."""
        return self.files.get(path)

    def n_lines(self, path: str) -> int | None:
        """Line count of the mapped bytes."""
        data = self.files.get(path)
        return None if data is None else count_lines(data)


@dataclass(frozen=True)
class FileListCheckout:
    """Only paths and line counts (a corpus's: ``splitlines``, equal to the §13.3 count unless
    a file holds other Unicode line breaks)."""

    lines: Mapping[str, int]
    has_bytes: bool = False

    def is_file(self, path: str) -> bool:
        """Whether the list has ``path``."""
        return path in self.lines

    def read(self, path: str) -> bytes | None:
        """Never available."""
        return None

    def n_lines(self, path: str) -> int | None:
        """The listed line count."""
        return self.lines.get(path)


@dataclass
class GitCheckout:
    """Blobs of a git repository (bare or not) at ``commit``, read with ``git cat-file``."""

    git_dir: Path
    commit: str
    has_bytes: bool = True
    _paths: frozenset[str] | None = field(default=None, repr=False)
    _cache: dict[str, bytes] = field(default_factory=dict, repr=False)

    def _git(self, *args: str) -> bytes:
        proc = subprocess.run(
            ["git", "-C", str(self.git_dir), *args], capture_output=True, check=False
        )
        if proc.returncode != 0:
            msg = f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace').strip()}"
            raise InputError(msg, path=self.git_dir)
        return proc.stdout

    def paths(self) -> frozenset[str]:
        """Regular files (modes 100644/100755) at the commit; symlinks and submodules excluded."""
        if self._paths is None:
            out = self._git("ls-tree", "-r", "-z", "--full-tree", self.commit)
            paths = set()
            for entry in out.split(b"\0"):
                if not entry:
                    continue
                meta, _, name = entry.partition(b"\t")
                if meta.split(b" ")[0] in (b"100644", b"100755"):
                    paths.add(name.decode("utf-8", errors="surrogateescape"))
            self._paths = frozenset(paths)
        return self._paths

    def is_file(self, path: str) -> bool:
        """Whether ``path`` is a regular file at the commit."""
        return path in self.paths()

    def read(self, path: str) -> bytes | None:
        """The blob's bytes at the commit (cached)."""
        if not self.is_file(path):
            return None
        if path not in self._cache:
            self._cache[path] = self._git("cat-file", "blob", f"{self.commit}:{path}")
        return self._cache[path]

    def n_lines(self, path: str) -> int | None:
        """§13.3 line count of the blob."""
        data = self.read(path)
        return None if data is None else count_lines(data)


@dataclass(frozen=True)
class DirectoryCheckout:
    """A folder already checked out at the commit (regular files inside it only)."""

    root: Path
    has_bytes: bool = True

    def _target(self, path: str) -> Path | None:
        target = (self.root / path).resolve()
        root = self.root.resolve()
        if target != root and root not in target.parents:
            return None
        return target if target.is_file() else None

    def is_file(self, path: str) -> bool:
        """Whether ``path`` is a regular file inside the folder."""
        return self._target(path) is not None

    def read(self, path: str) -> bytes | None:
        """The file's bytes."""
        target = self._target(path)
        return None if target is None else target.read_bytes()

    def n_lines(self, path: str) -> int | None:
        """§13.3 line count of the file."""
        data = self.read(path)
        return None if data is None else count_lines(data)


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


def corpus_source(corpus: object) -> CheckoutSource:
    """Checkouts listing the files (and line counts) a corpus holds for ``repo@commit``."""
    from arbwb.io.corpus import Corpus

    if not isinstance(corpus, Corpus):
        msg = f"expected an arbwb.io.corpus.Corpus, got {type(corpus).__name__}"
        raise TypeError(msg)
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
        for candidate in present:
            checkout = candidate(repo, commit)
            if checkout is not None:
                return checkout
        return None

    return source
