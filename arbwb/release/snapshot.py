"""Byte-identical rebuild of upstream corpus chunk files from git objects (spec §3, §1.4): one
``ls-tree`` per commit, one ``cat-file --batch`` for the blobs, symbol detection memoised."""

from __future__ import annotations

import hashlib
import re
import subprocess
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import IO, Any

from arbwb.errors import InputError
from arbwb.io.checkout import run_git
from arbwb.io.corpus import MANIFEST_NAME, repo_slug
from arbwb.io.pathclass import is_generated_path
from arbwb.jsonio import atomic_open, dumps_upstream, iter_jsonl
from arbwb.release.merge import manifest_key

MAX_FILE_BYTES = 400_000
MAX_CHUNK_CHARS = 8_000
MAX_FILES_PER_COMMIT = 20_000
TRUNCATION_MARK = "\n...[truncated]"
_BINARY_SUFFIX_TEXT = (
    ".7z .avif .bin .bmp .bz2 .class .dll .dylib .eot .exe .gif .gz .ico .jar .jpeg .jpg .mp4 .o "
    ".otf .pdf .png .pyc .so .svg .tar .tgz .ttf .wasm .webp .woff .woff2 .zip"
)
BINARY_SUFFIXES = frozenset(_BINARY_SUFFIX_TEXT.split(" "))
SYMBOL_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"^\s*(?:async\s+)?def\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*\(",
        r"^\s*class\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\b",
        r"^\s*(?:export\s+)?(?:async\s+)?function\s+(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)\s*\(",
        r"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)\s*=\s*(?:async\s*)?\(?",
        r"^\s*(?:export\s+)?class\s+(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)\b",
        r"^\s*func\s+(?:\([^)]*\)\s*)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*\(",
        r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*\(",
        r"^\s*(?:public|private|protected|static|final|abstract|synchronized|\s)+"
        r"[\w<>\[\], ?]+\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*\(",
        r"^\s*(?:public\s+)?(?:class|interface|enum|record)\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\b",
    )
)
_PATTERN8 = 7
# A necessary condition for pattern 8 without its nested repetition (so cheap): a keyword or
# whitespace at the start, then type-class characters and whitespace right before the name.
_PATTERN8_SHAPE = re.compile(
    r"(?=\s|public|private|protected|static|final|abstract|synchronized)"
    r"[\w<>\[\], ?\s]*\s[A-Za-z_][A-Za-z0-9_]*\s*\("
)
# Substrings a line must contain (any one) for each pattern to match: cheap ``in`` tests.
_REQUIRED = (
    ("def",),
    ("class",),
    ("function",),
    ("const", "let", "var"),
    ("class",),
    ("func",),
    ("fn",),
    ("(",),
    ("class", "interface", "enum", "record"),
)
_PREFILTERED = tuple(zip(SYMBOL_PATTERNS, _REQUIRED, strict=True))


def stable_id(*parts: object) -> str:
    """Upstream id: SHA-256 of the parts' ``str`` joined by U+001F, first 24 hex chars (§0)."""
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:24]


def truncate(value: str | None, limit: int = MAX_CHUNK_CHARS) -> str:
    """Normalise newlines, strip, and cut to ``limit`` code points plus a mark (spec §3.4)."""
    if not value:
        return ""
    text = value.replace("\r\n", "\n").replace("\r", "\n").strip()
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + TRUNCATION_MARK


def is_candidate_path(path: str) -> bool:
    """Builder file selection of spec §3.2 step 2: not generated and not a binary suffix."""
    return not is_generated_path(path) and PurePosixPath(path).suffix.lower() not in BINARY_SUFFIXES


def symbol_name(line: str, memo: dict[str, str | None] | None = None) -> str | None:
    """Name given by the first symbol pattern matching ``line`` (spec §3.5), or None; ``memo``
    caches results per distinct line, and the prefilters above skip most regex calls."""
    if memo is not None and line in memo:
        return memo[line]
    name: str | None = None
    for index, (pattern, required) in enumerate(_PREFILTERED):
        if not any(word in line for word in required):
            continue
        if index == _PATTERN8 and not _PATTERN8_SHAPE.match(line):
            continue
        match = pattern.match(line)
        if match:
            name = match.group("name")
            break
    if memo is not None:
        memo[line] = name
    return name


def extract_symbols(
    lines: Sequence[str], memo: dict[str, str | None] | None = None
) -> list[tuple[str, int, int]]:
    """Flat symbols ``(name, start_line, end_line)``: each ends where the next starts (§3.5)."""
    starts = [(name, i + 1) for i, line in enumerate(lines) if (name := symbol_name(line, memo))]
    symbols = []
    for k, (name, start) in enumerate(starts):
        end = starts[k + 1][1] - 1 if k + 1 < len(starts) else len(lines)
        symbols.append((name, start, max(start, end)))
    return symbols


def chunk_row(
    repo: str, commit: str, path: str, kind: str, symbol: str, start: int, end: int, text: str
) -> dict[str, Any]:
    """One chunk row (spec §3.1): stable chunk id and the truncated text (§3.4)."""
    return {
        "chunk_id": stable_id(repo, commit, path, kind, symbol, start, end),
        "repo": repo,
        "base_commit": commit,
        "path": path,
        "kind": kind,
        "symbol": symbol,
        "start_line": start,
        "end_line": end,
        "text": truncate(text),
    }


def chunks_for_file(
    repo: str, commit: str, path: str, content: str, memo: dict[str, str | None] | None = None
) -> list[dict[str, Any]]:
    """The file row then the symbol rows of one decoded file (spec §3.1, §3.3, §3.5)."""
    lines = content.splitlines()
    rows = [chunk_row(repo, commit, path, "file", "", 1, len(lines), content)]
    for name, start, end in extract_symbols(lines, memo):
        text = "\n".join(lines[start - 1 : end])
        rows.append(chunk_row(repo, commit, path, "symbol", name, start, end, text))
    return rows


@dataclass(frozen=True)
class TreeEntry:
    """One ``ls-tree -r -l`` line: path as git prints it (maybe C-quoted) and size if numeric."""

    path: str
    size: int | None


def list_tree(git_dir: Path, commit: str) -> list[TreeEntry]:
    """Tree entries of ``commit`` in git order, parsed as upstream does (spec §3.2 step 1)."""
    out = run_git(git_dir, "-c", "core.quotePath=true", "ls-tree", "-r", "-l", commit)
    entries = []
    for line in out.decode("utf-8", errors="replace").splitlines():
        if "\t" not in line:
            continue
        meta, path = line.split("\t", 1)
        fields = meta.split()
        if len(fields) < 4:
            continue
        entries.append(TreeEntry(path, int(fields[3]) if fields[3].isdigit() else None))
    return entries


def commit_exists(git_dir: Path, commit: str) -> bool:
    """Whether ``commit`` names a commit object in the repository."""
    proc = subprocess.run(
        ["git", "-C", str(git_dir), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0


def read_blobs(git_dir: Path, commit: str, paths: Sequence[str]) -> Iterator[bytes | None]:
    """Blob bytes of ``commit:path`` for each path in order (None when git cannot resolve it),
    from one ``git cat-file --batch`` fed by a thread (so large outputs cannot deadlock)."""
    proc = subprocess.Popen(
        ["git", "-C", str(git_dir), "-c", "core.quotePath=true", "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None
    writer = threading.Thread(target=_write_requests, args=(stdin, commit, paths), daemon=True)
    writer.start()
    try:
        for _ in paths:
            header = stdout.readline().rstrip(b"\n").split(b" ")
            if len(header) != 3 or not header[2].isdigit():
                yield None
                continue
            data = stdout.read(int(header[2]))
            stdout.read(1)
            yield data if header[1] == b"blob" else None
    finally:
        writer.join()
        stdout.close()
        proc.wait()


def _write_requests(stdin: IO[bytes], commit: str, paths: Sequence[str]) -> None:
    try:
        for path in paths:
            stdin.write(f"{commit}:{path}\n".encode("utf-8", errors="surrogateescape"))
    finally:
        stdin.close()


def build_chunk_file(
    git_dir: Path, repo: str, commit: str, out_path: Path, memo: dict[str, str | None] | None = None
) -> dict[str, int]:
    """Write the chunk file of (repo, commit) atomically, exactly as upstream (spec §3.2); return
    its manifest counts (spec §1.4)."""
    candidates = [e for e in list_tree(git_dir, commit) if is_candidate_path(e.path)]
    candidates = candidates[:MAX_FILES_PER_COMMIT]
    readable = [e.path for e in candidates if e.size is not None and e.size <= MAX_FILE_BYTES]
    counts = {"chunk_count": 0, "file_count": 0, "symbol_count": 0}
    memo = {} if memo is None else memo
    with atomic_open(out_path, "w") as handle:
        for path, data in zip(readable, read_blobs(git_dir, commit, readable), strict=True):
            if data is None or b"\x00" in data:
                continue
            content = data.decode("utf-8", errors="replace")
            if not content:
                continue
            rows = chunks_for_file(repo, commit, path, content, memo)
            counts["file_count"] += 1
            counts["chunk_count"] += len(rows)
            counts["symbol_count"] += len(rows) - 1
            handle.write("".join(dumps_upstream(r) + "\n" for r in rows))
    return counts | {"skipped_large": len(candidates) - len(readable)}


def generated_at(value: str | None, source_date_epoch: str | None) -> str:
    """ISO-8601 UTC seconds: an explicit value (verbatim), else ``SOURCE_DATE_EPOCH`` (for
    reproducible demo builds), else now (arbwb-defined)."""
    if value:
        return value
    if source_date_epoch:
        if not source_date_epoch.isdigit():
            msg = f"SOURCE_DATE_EPOCH must be integer seconds, got {source_date_epoch!r}"
            raise InputError(msg, field="SOURCE_DATE_EPOCH")
        return datetime.fromtimestamp(int(source_date_epoch), UTC).isoformat()
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def build_snapshots(
    git_dir: str | Path, repo: str, commits: Sequence[str], out_dir: str | Path, *, stamp: str
) -> list[dict[str, Any]]:
    """Build ``OUT/OWNER__NAME/<commit>.chunks.jsonl`` for ``commits`` and merge their rows
    (``chunks_path`` relative to OUT's parent, arbwb-defined; absent commits get upstream's
    ``missing_commit`` row) into the corpus manifest; return the new rows."""
    git_path, out = Path(git_dir), Path(out_dir)
    if not (git_path / "HEAD").is_file() and not (git_path / ".git").exists():
        raise InputError("not a git repository (no HEAD or .git)", path=git_path, field="--git")
    if "/" not in repo.strip("/"):
        raise InputError(f"repo must be OWNER/NAME, got {repo!r}", field="--repo")
    memo: dict[str, str | None] = {}
    rows: list[dict[str, Any]] = []
    for commit in commits:
        if not commit_exists(git_path, commit):
            rows.append(
                {"repo": repo, "base_commit": commit, "status": "missing_commit", "chunk_count": 0}
            )
            continue
        relative = Path(repo_slug(repo)) / f"{commit}.chunks.jsonl"
        counts = build_chunk_file(git_path, repo, commit, out / relative, memo)
        chunks_path = (Path(out.resolve().name) / relative).as_posix()
        row = {"repo": repo, "base_commit": commit, "status": "ok", "chunks_path": chunks_path}
        rows.append(row | counts | {"generated_at": stamp})
    merge_manifest(out / MANIFEST_NAME, rows)
    return rows


def merge_manifest(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Replace rows with the same (repo, base_commit), keep the rest, sort, write atomically."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    if path.is_file():
        for line, row in iter_jsonl(path, allow_empty=True):
            merged[manifest_key(row, path, line)] = row
    for row in rows:
        merged[(row["repo"], row["base_commit"])] = row
    with atomic_open(path, "w") as handle:
        for key in sorted(merged):
            handle.write(dumps_upstream(merged[key]) + "\n")
