"""``arbwb taxonomy``: spec 10.6 JSONL fields, CSV, the 13.4 Markdown tables, bad input."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from arbwb import cli

FIELDS = {
    "sample_id",
    "task_type",
    "repo",
    "primary_relevance_type",
    "secondary_relevance_types",
    "confidence",
    "gold_files",
    "query_token_overlap",
    "path_token_overlap",
    "semantic_overlap_score",
    "structural_signal_count",
    "workflow_signal_count",
    "evidence",
}
BASE = {"repo": "o/r", "base_commit": "c" * 40}
RECORDS = [
    {
        **BASE,
        "id": "a1",
        "task_type": "comment2context",
        "query": {"review_comment": "why do we need this here", "given_file": "pkg/a/handler.go"},
        "gold": {"must_context_files": [{"path": "internal/b/router.go", "evidence": []}]},
    },
    {
        **BASE,
        "id": "n1",
        "task_type": "abstention",
        "query": {"text": "ci flake"},
        "gold": {"files": [], "no_gold": True, "reason": "flaky_ci"},
    },
    {
        **BASE,
        "id": "t1",
        "task_type": "trace2code",
        "query": {},
        "gold": {"root_cause_files": ["src/x.py"]},
    },  # a query without fields
]


@pytest.fixture
def samples(tmp_path: Path) -> Path:
    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n", encoding="utf-8")
    return path


def test_jsonl_has_exactly_the_spec_fields(
    samples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["taxonomy", "--samples", str(samples)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["sample_id"] for r in rows] == ["a1", "n1", "t1"]
    assert all(set(r) == FIELDS for r in rows)
    assert lines[0].startswith('{"confidence": ')  # keys sorted, upstream separators
    first = rows[0]
    assert first["primary_relevance_type"] == "structural_indirect"
    assert first["gold_files"] == ["internal/b/router.go"]
    assert rows[1]["gold_files"] == [] and rows[1]["confidence"] == "low"
    assert rows[2]["primary_relevance_type"] == "causal_indirect"  # trace2code, from empty inputs


def test_csv_and_markdown(samples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["taxonomy", "--samples", str(samples), "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert set(table[0]) == FIELDS and len(table) == 3
    assert json.loads(table[0]["gold_files"]) == ["internal/b/router.go"]
    assert cli.main(["taxonomy", "--samples", str(samples), "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert "| Primary type | Samples |" in text
    assert "| causal_indirect | 1 |" in text and "| structural_indirect | 2 |" in text
    header = (
        "| Task | semantic_direct | structural_indirect | workflow_conventional | causal_indirect |"
    )
    assert header in text
    assert "| trace2code | 0 | 0 | 0 | 1 |" in text
    assert "| no_query_fields | 2 |" in text  # the flags table counts the odd records


def test_malformed_json_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(RECORDS[0]) + "\n{not json\n", encoding="utf-8")
    assert cli.main(["taxonomy", "--samples", str(path)]) == 2
    assert f"{path}:2" in capsys.readouterr().err


def test_a_record_score_refuses_is_refused_here_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "samples.jsonl"
    bad = {**RECORDS[2], "gold": {"root_cause_files": "src/x.py"}}
    path.write_text(json.dumps(RECORDS[0]) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    assert cli.main(["taxonomy", "--samples", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: field 'gold.root_cause_files': expected a list of paths, got str" in err
