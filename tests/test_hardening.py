"""Property-based hardening: adversarial inputs to every loader, the validator and the CLI.

Each property feeds a file built from valid records with one adversarial edit
(truncated line, wrong type, huge number, NaN, non-UTF-8 bytes, ``..`` paths,
duplicate keys, empty file) and asserts the outcome is either a located
:class:`InputError` (exit 2 naming the file for the CLI) or a correct result
that keeps every record: never another exception, never a smaller denominator.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbwb import cli
from arbwb.errors import InputError
from arbwb.io.corpus import open_corpus
from arbwb.io.rankings import load_rankings
from arbwb.io.samples import load_samples
from arbwb.release.validate import validate_path

BUDGET = settings(max_examples=40, deadline=None, derandomize=True)  # same examples every run
C1 = "c" * 40

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def sample(i: int) -> dict[str, Any]:
    return {
        "id": f"s{i}",
        "version": 2,
        "task_type": "code2test",
        "repo": "o/n",
        "base_commit": C1,
        "candidate_corpus": {"type": "repo_at_base_commit", "base_commit": C1},
        "query": {"pr_title": f"change {i}", "implementation_files": ["src/a.py"]},
        "gold": {"related_tests": ["tests/test_a.py"], "fix_commit": "f" * 40},
        "gold_spans": [{"path": "tests/test_a.py", "start_line": 1, "end_line": 3}],
        "metadata": {"pr_url": "https://example.org/1"},
    }


def sample_or_abstention(i: int) -> dict[str, Any]:
    """Record 1 is a natural no-gold abstention sample, the others code2test."""
    record = sample(i)
    if i == 1:
        record["task_type"] = "abstention"
        record["query"] = {"source": "issue", "text": "crash in dependency"}
        record["gold"] = {"files": [], "no_gold": True, "reason": "upstream_dependency"}
        record["metadata"] = {"organic": True}
    return record


def details(i: int) -> dict[str, Any]:
    return {
        "sample_id": f"s{i}",
        "task_type": "code2test",
        "repo": "o/n",
        "base_commit": C1,
        "gold_files": ["tests/test_a.py"],
        "top_files": ["src/a.py", "tests/test_a.py"],
        "gold_ranks": {"tests/test_a.py": 2},
        "metrics": {"MRR": 0.5, "Recall@20": 1.0},
    }


def chunk(i: int) -> dict[str, Any]:
    return {
        "base_commit": C1,
        "chunk_id": f"k{i}",
        "end_line": 2,
        "kind": "file",
        "path": f"src/f{i}.py",
        "repo": "o/n",
        "start_line": 1,
        "symbol": "",
        "text": "def f():\n    return 1",
    }


def manifest_row(i: int) -> dict[str, Any]:
    return {"repo": f"o/n{i}", "base_commit": C1, "status": "ok", "chunks_path": f"x{i}.jsonl"}


@st.composite
def edited_lines(draw: st.DrawFn, make: Callable[[int], dict[str, Any]]) -> list[bytes]:
    """Three valid JSONL records, one of them edited adversarially (or an empty file)."""
    records = [make(i) for i in range(3)]
    target = draw(st.integers(0, 2))
    record = records[target]
    keys = sorted(record)
    kind = draw(
        st.sampled_from(
            ["value", "delete", "nested", "paths", "truncate", "nan", "bytes", "dupkey", "empty"]
        )
    )
    if kind == "empty":
        return [draw(st.sampled_from([b"", b"\n", b"  \n\n"]))]
    if kind == "value":
        record[draw(st.sampled_from(keys))] = draw(json_values)
    elif kind == "delete":
        del record[draw(st.sampled_from(keys))]
    elif kind == "nested":
        holders = [record[k] for k in keys if isinstance(record[k], dict | list) and record[k]]
        holder: Any = draw(st.sampled_from(holders)) if holders else record
        if isinstance(holder, list):
            holder = holder[0] if isinstance(holder[0], dict) else holder
        if isinstance(holder, dict):
            holder[draw(st.sampled_from(sorted(holder)))] = draw(json_values)
        else:
            holder[0] = draw(json_values)
    elif kind == "paths":
        bad = draw(st.sampled_from(["../../etc/passwd", "/abs/x.py", "a/../b.py", "", "a\x00b"]))
        for name, value in record.items():
            if name in ("path", "chunks_path"):
                record[name] = bad
            for inner in value.values() if isinstance(value, dict) else []:
                if isinstance(inner, list):
                    inner[:] = [bad]
    lines = [json.dumps(r, ensure_ascii=False).encode() for r in records]
    line = lines[target]
    cut = draw(st.integers(1, max(1, len(line) - 1)))
    if kind == "truncate":
        lines[target] = line[:cut]
    elif kind == "nan":
        name = json.dumps(keys[draw(st.integers(0, len(keys) - 1))])
        word = draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"1" * 400]))
        lines[target] = b"{" + name.encode() + b": " + word + b", " + line[1:]
    elif kind == "bytes":
        lines[target] = line[:cut] + draw(st.sampled_from([b"\xff", b"\xc3(", b"\xed\xa0\x80"]))
    elif kind == "dupkey":
        name = draw(st.sampled_from(keys))
        lines[target] = line[:-1] + b", " + json.dumps(name).encode() + b": " + b"[1, 2]}"
    return lines


@contextlib.contextmanager
def written(lines: list[bytes], name: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(b"\n".join(lines) + b"\n")
        yield path


def records_in(lines: list[bytes]) -> int:
    return sum(1 for line in lines if line.strip())


def assert_located(exc: InputError, path: Path) -> None:
    assert exc.path is not None and Path(exc.path).name == path.name, str(exc)
    assert str(path.name) in str(exc)


@BUDGET
@given(edited_lines(sample_or_abstention))
def test_load_samples_never_crashes_nor_drops(lines: list[bytes]) -> None:
    with written(lines, "samples.jsonl") as path:
        try:
            got = load_samples(path)
        except InputError as exc:
            assert_located(exc, path)
            return
        assert got.samples.height == records_in(lines)


@BUDGET
@given(edited_lines(details))
def test_load_rankings_never_crashes_nor_drops(lines: list[bytes]) -> None:
    with written(lines, "lexical_details.jsonl") as path:
        try:
            got = load_rankings(path)
        except InputError as exc:
            assert_located(exc, path)
            return
        assert got.submitted.height == records_in(lines)
        assert got.rankings["sample_id"].n_unique() <= records_in(lines)


@BUDGET
@given(edited_lines(chunk))
def test_corpus_chunks_never_crash_nor_drop(lines: list[bytes]) -> None:
    with written(lines, f"{C1}.chunks.jsonl") as path:
        row = {"repo": "o/n", "base_commit": C1, "status": "ok", "chunks_path": str(path)}
        (path.parent / "corpus_manifest.jsonl").write_text(json.dumps(row) + "\n")
        try:
            got = open_corpus(path.parent).chunks(f"o/n@{C1}")
        except InputError as exc:
            assert_located(exc, path)
            return
        assert got.height == records_in(lines)


@BUDGET
@given(edited_lines(sample_or_abstention))
def test_validate_accounts_for_every_record(lines: list[bytes]) -> None:
    with written(lines, "samples.jsonl") as path:
        (report,) = validate_path(path)
        problem_lines = {p.line for p in report.problems}
        valid = sum(report.strata.values())
        if any(
            p.line is None
            or p.message.startswith(("malformed", "not valid UTF-8", "expected a JSON"))
            for p in report.problems
        ):
            assert report.problems  # the unreadable line is reported; later lines are not read
        else:
            assert valid + len(problem_lines) == records_in(lines)


def run_cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(argv)
    return code, err.getvalue()


@BUDGET
@given(edited_lines(sample_or_abstention))
def test_cli_validate_exit_codes(lines: list[bytes]) -> None:
    with written(lines, "samples.jsonl") as path:
        code, _ = run_cli(["validate", str(path)])
        assert code in (0, 1)
        assert code == (1 if validate_path(path)[0].problems else 0)


@BUDGET
@given(edited_lines(manifest_row))
def test_cli_merge_corpus_exit_codes(lines: list[bytes]) -> None:
    with written(lines, "corpus_manifest.jsonl") as path:
        root = path.parent
        for release in ("a", "b"):
            (root / "corpus" / release).mkdir(parents=True)
            (root / "corpus" / release / "corpus_manifest.jsonl").write_bytes(path.read_bytes())
        code, err = run_cli(["merge-corpus", "--dir", str(root), "--releases", "a", "b"])
        out = root / "corpus" / "v2_selective_mixed" / "corpus_manifest.jsonl"
        if code == 2:
            assert "corpus_manifest.jsonl" in err and not out.exists()
        else:
            assert code == 0
            # count "\n" only: rows keep raw U+0085/U+2028 (upstream), which splitlines() splits
            assert out.read_text(encoding="utf-8").count("\n") <= records_in(lines)


def write_one(tmp: Path, name: str, record: dict[str, Any]) -> Path:
    path = tmp / name
    path.write_text(json.dumps(record) + "\n")
    return path


def span_line(value: Any) -> dict[str, Any]:
    record = sample(0)
    record["gold_spans"][0]["start_line"] = value
    return record


def no_gold_reason(value: Any) -> dict[str, Any]:
    record = sample_or_abstention(1)
    record["gold"]["reason"] = value
    return record


@pytest.mark.parametrize(
    "record",
    [span_line(10**30), span_line(1.5e300), no_gold_reason(["flaky_ci"])],
    ids=["span-line-10**30", "span-line-1.5e300", "unhashable-reason"],
)
def test_samples_regressions(tmp_path: Path, record: dict[str, Any]) -> None:
    path = write_one(tmp_path, "samples.jsonl", record)
    try:
        got = load_samples(path)
    except InputError as exc:
        assert_located(exc, path)
    else:
        assert got.samples.height == 1


def details_with(key: str, inner: str, value: Any) -> dict[str, Any]:
    record = details(0)
    record[key][inner] = value
    return record


@pytest.mark.parametrize(
    "record",
    [
        details_with("gold_ranks", "tests/test_a.py", 10**30),
        details_with("metrics", "MRR", 10**400),
    ],
    ids=["gold-rank-10**30", "metric-10**400"],
)
def test_rankings_regressions(tmp_path: Path, record: dict[str, Any]) -> None:
    path = write_one(tmp_path, "lexical_details.jsonl", record)
    try:
        got = load_rankings(path)
    except InputError as exc:
        assert_located(exc, path)
    else:
        assert got.submitted.height == 1
