"""Reading chunk files fast (internal): a byte scanner finds upstream-serialised file rows in
the memory-mapped file without parsing the symbol rows around them; a full Polars parse is the
fallback that validates and locates every error. Texts are tokenised in batches, each distinct
text once."""

from __future__ import annotations

import io
import json
import mmap
import re
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import polars as pl

from arbwb.cache import entry_path, store
from arbwb.errors import InputError
from arbwb.jsonio import dumps_upstream, iter_jsonl
from arbwb.schemas import CHUNKS
from arbwb.tokenize import count_tokens_expr

CHUNK_FIELDS = {name: dtype for name, dtype in CHUNKS.items() if name != "snapshot_id"}
_ROW_START = b'{"base_commit": "'
# An upstream file row (spec §3.1, §3.3: sorted keys, start_line 1, empty symbol) reads
# {..., "end_line": N, "kind": "file", "path": "P", "repo": "R", "start_line": 1, "symbol": "",
# "text": "T"}
_FILE_HEAD = b', "kind": "file", "path": "'
_FILE_TAIL = b'", "start_line": 1, "symbol": "", "text":'  # then ' "'
_END_LINE = b'"end_line": '
_JSON_INT = re.compile(rb"-?(?:0|[1-9][0-9]*)")
_PLAIN = re.compile(r'[^"\\\x00-\x1f]*')  # serialised as is inside a JSON string
_PLAIN_BYTES = re.compile(_PLAIN.pattern.encode())
_COUNT_BLOCK = 1 << 22  # newlines are counted in blocks of this many bytes
_BLANK_START = np.array([9, 10, 13, 32], dtype=np.uint8)  # bytes a blank line can start with
Key = tuple[int, int]  # (hash, length) of a text as the chunk file escapes it


def read_chunk_file(path: Path, columns: list[str]) -> pl.DataFrame:
    """Read selected chunk-file fields with Polars; on any problem, locate it line by line (a
    zero-byte chunk file is a snapshot without files)."""
    if path.stat().st_size == 0:
        return pl.DataFrame(schema={name: CHUNK_FIELDS[name] for name in columns})
    return _parsed(path, path, columns)


#: Format version of the marks :func:`check_chunk_file` leaves (their key adds the columns).
CHECK_VERSION = "rows-checked-v1"


def check_chunk_file(path: Path, columns: list[str], marks: Path | None = None) -> None:
    """Check every row's selected fields as :func:`read_chunk_file` does, keeping nothing (a
    lazy null count: no file-sized allocation). With ``marks`` (a cache folder) a file that
    passes leaves an empty mark and is not checked again until it changes (arbwb-defined)."""
    if path.stat().st_size == 0:
        return
    mark = None
    if marks is not None:
        mark = entry_path(marks, path, f"{CHECK_VERSION}:{','.join(sorted(columns))}", ".ok")
        if mark.is_file():
            return
    schema = {name: CHUNK_FIELDS[name] for name in columns}
    scan = pl.scan_ndjson(path, schema=schema).select(pl.all().null_count())
    nulls = _checked(path, columns, scan.collect)
    if nulls.sum_horizontal().item() > 0:
        _locate_problem(path, columns)
    if mark is not None:  # an empty entry; a mark not left only costs the next run a check
        store(mark, lambda _handle: None)


def count_rows(path: Path) -> int:
    """Rows of a chunk file as Polars reads them (its non-blank lines), without parsing."""
    if path.stat().st_size == 0:
        return 0
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return row_count(data)


def row_count(data: mmap.mmap) -> int:
    """Non-blank lines of ``data`` (rows Polars would read): newlines counted with numpy in
    blocks, lines one by one only when some line starts with whitespace (maybe blank)."""
    raw = np.frombuffer(data, dtype=np.uint8)  # a view, released on return
    size, n = raw.size, 0
    for start in range(0, size, _COUNT_BLOCK):
        breaks = np.flatnonzero(raw[start : start + _COUNT_BLOCK] == 10) + (start + 1)
        heads = breaks[breaks < size]
        if np.isin(raw[heads], _BLANK_START).any():
            n = -1
            break
        n += breaks.size
    if n >= 0 and size and raw[0] not in _BLANK_START:
        return n + int(raw[-1] != 10)  # a last line without a line break
    del raw
    return sum(1 for line in data[:].split(b"\n") if line.strip())


def _checked(path: Path, columns: list[str], read: Callable[[], pl.DataFrame]) -> pl.DataFrame:
    """``read()``; if Polars cannot read ``path`` (its messages carry no line number), the
    problem is located line by line."""
    try:
        return read()
    except Exception:
        _locate_problem(path, columns)
        raise InputError("chunk file could not be read as JSON lines", path=path) from None


def iter_raw_blocks(path: Path, block_bytes: int = 2 * 2**20) -> Iterator[bytes]:
    """A chunk file's bytes in consecutive blocks of whole lines (for :func:`parse_block`)."""
    with path.open("rb") as handle:
        while block := handle.read(block_bytes):
            yield block + handle.readline()  # finish the last line


def parse_block(path: Path, block: bytes, columns: list[str]) -> pl.DataFrame:
    """Selected fields of a block of whole chunk-file lines; a problem in ``path`` is located."""
    return _parsed(path, io.BytesIO(block), columns)


def _parsed(path: Path, source: Path | io.BytesIO, columns: list[str]) -> pl.DataFrame:
    """Selected fields of ``source`` (``path`` or a block of it); a problem is located."""
    schema = {name: CHUNK_FIELDS[name] for name in columns}
    frame = _checked(path, columns, lambda: pl.read_ndjson(source, schema=schema))
    if frame.null_count().sum_horizontal().item() > 0:
        _locate_problem(path, columns)
    return frame


def _locate_problem(path: Path, columns: list[str]) -> None:
    """Raise a located InputError for the first line with a missing or mistyped field."""
    for line, row in iter_jsonl(path):
        for name in columns:
            want = str if CHUNK_FIELDS[name] is pl.String else int
            value = row.get(name)
            if not isinstance(value, want) or isinstance(value, bool):
                msg = f"expected {want.__name__}, got {value!r}"
                raise InputError(msg, path=path, line=line, field=name)


class TokenCounter:
    """Token and byte counts of file texts keyed by their escaped form; new texts are decoded
    as they are added and tokenised together by :meth:`flush` (one Polars call)."""

    def __init__(self, known: dict[Key, tuple[int, int]]) -> None:
        self.known = known
        self.pending: dict[Key, str] = {}
        self.pending_bytes = 0

    def add_escaped(self, raw: bytes) -> Key:
        """Key of a JSON string body as the chunk file holds it (ValueError if it is not one):
        its hash and length, so equal texts of different snapshots are tokenised once."""
        key = (hash(raw), len(raw))
        if key not in self.known and key not in self.pending:
            self.pending[key] = _json_string(raw)
            self.pending_bytes += len(raw)
        return key

    def flush(self) -> None:
        """Tokenise every pending text at once and record (n_tokens, n_bytes)."""
        if not self.pending:
            return
        texts = pl.Series("t", list(self.pending.values()), dtype=pl.String)
        counts = pl.select(n=count_tokens_expr(pl.lit(texts)), b=pl.lit(texts).str.len_bytes())
        pairs = zip(counts["n"].to_list(), counts["b"].to_list(), strict=True)
        self.known.update(zip(self.pending, pairs, strict=True))
        self.pending.clear()
        self.pending_bytes = 0


def mapped_files(paths: Sequence[Path]) -> Generator[mmap.mmap | None, None, None]:
    """Each file mapped read-only (None if it cannot be mapped: vanished or emptied since
    listed, so the full parse reports it), valid until the next is asked for."""
    for path in paths:
        try:
            with path.open("rb") as handle:
                data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            yield None
            continue
        try:
            yield data
        finally:
            data.close()


class RowCounts(NamedTuple):
    """Rows read from a chunk file and how many of them are ``kind=file`` rows, to check
    against the manifest row's ``chunk_count`` and ``file_count``."""

    rows: int
    file_rows: int


def parse_file_rows(
    path: Path, wanted: set[str] | None, counter: TokenCounter
) -> tuple[dict[str, tuple[int, Key]], RowCounts]:
    """(end_line, text key) of the last ``kind=file`` row per path (only ``wanted`` paths),
    from a full Polars parse that validates every row and locates any error; with the rows
    counted on the way."""
    if path.stat().st_size == 0:
        return {}, RowCounts(0, 0)
    chunks = read_chunk_file(path, ["path", "kind", "end_line", "text"])
    files = chunks.filter(pl.col("kind") == "file")
    counts = RowCounts(chunks.height, files.height)
    del chunks
    rows = files.unique(subset="path", keep="last", maintain_order=True)
    if wanted is not None:
        rows = rows.filter(pl.col("path").is_in(sorted(wanted)))
    found = {
        p: (n_lines, counter.add_escaped(_escape(text)))  # the key of its escaped form
        for p, n_lines, text in rows.select("path", "end_line", "text").iter_rows()
    }
    return found, counts


def scan_upstream(
    data: mmap.mmap,
    repo: str,
    wanted: set[str] | None,
    counter: TokenCounter,
    counts: tuple[int, int | None],
) -> dict[str, tuple[int, Key]] | None:
    """The file rows of an upstream-serialised chunk file found without parsing the rest.

    Only a file row contains ``", "repo": "R", "start_line": 1, "symbol": "", "text":`` (spec
    §3.1, §3.3; a quote after a space cannot lie inside a JSON string), so one ``find`` per file
    row skips the symbol rows unparsed. None (the caller then parses everything) when the file
    does not start like an upstream row, a row is not so shaped, or the rows differ from
    ``counts``, the manifest's ``(file_count, chunk_count)`` (a None count is not checked).
    """
    file_count, chunk_count = counts
    needle = b'", "repo": "' + _escape(repo) + _FILE_TAIL
    if data[: len(_ROW_START)] != _ROW_START:
        return None
    rows: dict[str, tuple[int, Key]] = {}
    escaped = None if wanted is None else {_escape(p) for p in wanted}
    n_found = 0
    find, rfind = data.find, data.rfind
    at = find(needle)
    while at != -1:
        n_found += 1
        start = rfind(b"\n", 0, at) + 1
        head = find(_FILE_HEAD, start, at)
        if head == -1:
            return None
        name = data[head + len(_FILE_HEAD) : at]  # exact unless it has a backslash
        resume = at + len(needle)  # a text holds no needle: it has no unescaped quote
        if escaped is None or name in escaped or b"\\" in name:
            row = _file_row(data, start, head, name, resume, counter)
            if row is None:
                return None
            path, n_lines, key, resume = row
            if wanted is None or path in wanted:
                rows.pop(path, None)  # the last row of a path wins, at its position
                rows[path] = (n_lines, key)
        at = find(needle, resume)
    if n_found != file_count or (chunk_count is not None and row_count(data) != chunk_count):
        return None
    return rows


def _file_row(
    data: mmap.mmap, start: int, head: int, name: bytes, text: int, counter: TokenCounter
) -> tuple[str, int, Key, int] | None:
    """(path, end_line, text key, end offset) of the upstream file row at ``start`` whose
    ``kind`` key sits at ``head``, path bytes are ``name`` and text value starts after
    ``text``; None if it is not so shaped (only the fields BCY reads are validated)."""
    end = data.find(b"\n", text)
    end = len(data) if end == -1 else end
    number = data.rfind(_END_LINE, start, head)
    digits = data[number + len(_END_LINE) : head]
    if data[text : text + 2] != b' "' or data[end - 2 : end] != b'"}':
        return None
    if number == -1 or not _JSON_INT.fullmatch(digits):
        return None
    try:
        path = _json_string(name)
        key = counter.add_escaped(data[text + 2 : end - 2])
    except ValueError:  # bad UTF-8 or JSON: the full parse locates it
        return None
    return path, int(digits), key, end


def _json_string(body: bytes) -> str:
    """The string whose JSON form is ``"body"``; ValueError if that is not a JSON string."""
    if _PLAIN_BYTES.fullmatch(body):
        return body.decode("utf-8")
    value: str = json.loads('"' + body.decode("utf-8") + '"')  # a leading quote: a string
    return value


def _escape(text: str) -> bytes:
    """``text`` as upstream serialisation writes it inside a JSON string (spec §0); lone
    surrogates pass through (no UTF-8 chunk file holds them, so such a path is not found)."""
    if _PLAIN.fullmatch(text) is None:
        text = dumps_upstream(text)[1:-1]
    return text.encode("utf-8", "surrogatepass")
