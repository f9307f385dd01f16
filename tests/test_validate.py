"""Validation of released samples: real shared data passes; injected faults are located."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from arbwb import cli
from arbwb.release.validate import check_record, summary_table, validate_path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "arb-data"
C1, C2 = "a" * 40, "b" * 40


def shared() -> Path:
    if not (SHARED / "benchmark" / "v0_1" / "samples.jsonl").is_file():
        pytest.skip(f"real ARB data not found at {SHARED} (needs ../shared beside the checkout)")
    return SHARED


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def real_root(tmp_path: Path) -> Path:
    """A release root in tmp: v0_1 (symlinked) and the pilot abstention set as v2_abstention."""
    data = shared()
    root = tmp_path / "release"
    (root / "benchmark").mkdir(parents=True)
    (root / "benchmark" / "v0_1").symlink_to(data / "benchmark" / "v0_1")
    (root / "benchmark" / "v2_abstention").mkdir()
    pilot = data / "benchmark" / "v2_abstention_pilot" / "abstention.jsonl"
    (root / "benchmark" / "v2_abstention" / "abstention.jsonl").symlink_to(pilot)
    return root


@pytest.mark.shared
def test_real_release_passes_with_counts(tmp_path: Path) -> None:
    reports = validate_path(real_root(tmp_path))
    assert [(r.name, r.problems) for r in reports] == [("v0_1", []), ("v2_abstention", [])]
    assert all(r.corpus.startswith("not checked") for r in reports)
    table = summary_table(reports).rows()
    assert table == [
        ("v0_1", "positive", 35, None, "code2test=17, comment2context=16, trace2code=2"),
        ("v2_abstention", "counterfactual", 32, 32, "abstention=32"),
        ("v2_abstention", "natural", 50, 50, "abstention=50"),
    ]


@pytest.mark.shared
def test_cli_validate_real_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    assert cli.main(["validate", str(real_root(tmp_path)), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "v2_abstention: 0 problems; corpus membership not checked" in text
    assert "| v2_abstention | natural | 50 | 50 | abstention=50 |" in text
    assert json.loads(out.read_text())[1]["expected"] == {"counterfactual": 32, "natural": 50}


@pytest.mark.shared
def test_injected_faults_are_each_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = shared()
    root = tmp_path / "release"
    rows = read_rows(data / "benchmark" / "v0_1" / "samples.jsonl")
    rows[1]["task_type"] = "code2tests"  # line 2
    del rows[2]["repo"]  # line 3
    rows[4]["id"] = rows[3]["id"]  # line 5 duplicates line 4
    rows[5]["query"]["pr_body"] += f" (fixed in {rows[5]['gold']['fix_commit']})"  # line 6
    rows[6]["candidate_corpus"]["base_commit"] = C1  # line 7
    samples = write_rows(root / "benchmark" / "v0_1" / "samples.jsonl", rows)
    abst = read_rows(data / "benchmark" / "v2_abstention_pilot" / "abstention.jsonl")
    abst[0]["metadata"]["organic"] = False  # natural reason, counterfactual flag
    abst[1]["gold"]["no_gold"] = False
    abst_file = write_rows(root / "benchmark" / "v2_abstention" / "abstention.jsonl", abst)

    reports = validate_path(root)
    found = {(p.path, p.line, p.field) for r in reports for p in r.problems}
    assert found == {
        (str(samples), 2, "task_type"),
        (str(samples), 3, "repo"),
        (str(samples), 5, "id"),
        (str(samples), 6, "gold.fix_commit"),
        (str(samples), 7, "candidate_corpus.base_commit"),
        (str(abst_file), 1, "metadata.organic"),
        (str(abst_file), 2, "gold.no_gold"),
        (str(abst_file.parent), None, "count"),
    }
    count = next(p for p in reports[1].problems if p.field == "count")
    assert count.message == "release v2_abstention should hold 50 valid natural samples, found 48"
    assert summary_table(reports).filter(stratum="positive")["samples"].item() == 30

    assert cli.main(["validate", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"{samples}:2: field 'task_type': unknown task_type 'code2tests'" in out
    assert f"{samples}:5: field 'id': duplicate id '{rows[3]['id']}', first at {samples}:4" in out
    assert f"{abst_file}:1: field 'metadata.organic'" in out


def positive(task: str, **gold: Any) -> dict[str, Any]:
    return {
        "id": "s1",
        "version": 2,
        "task_type": task,
        "repo": "o/n",
        "base_commit": C1,
        "candidate_corpus": {"type": "repo_at_base_commit", "base_commit": C1},
        "query": {"pr_title": "t"},
        "gold": gold,
    }


def fields(record: dict[str, Any]) -> list[str]:
    return [f for f, _ in check_record(record)]


def test_check_record_rules_per_task() -> None:
    assert fields(positive("code2test", related_tests=["t.py"])) == []
    assert fields(positive("code2test", root_cause_files=["a.py"])) == ["gold.related_tests"]
    assert fields(positive("trace2code", related_tests=["t.py"])) == ["gold.root_cause_files"]
    c2c = positive("comment2context", root_cause_files=["a.py"])
    assert fields(c2c) == ["gold.must_context_files", "gold.given_files"]
    c2c["version"] = 1  # v1 comment2context needs neither
    assert fields(c2c) == []
    edit = positive("edit2ripple", files=["src/x.py"], given_files=["src/a.py"])
    assert fields(edit) == ["query.anchor_file", "query.anchor_diff", "query.intent"]
    edit["query"] = {"anchor_file": "src/a.py", "anchor_diff": "+x", "intent": "touch x.py too"}
    assert fields(edit) == ["query"]  # basename of a gold file named: fatal leak
    edit["query"]["intent"] = "update callers"
    assert fields(edit) == []
    bad = positive("code2test", related_tests=["t.py"], no_gold=True)
    bad["candidate_corpus"] = {"type": "git", "base_commit": C1}
    assert fields(bad) == ["candidate_corpus.type"]  # structure first, then task rules
    del bad["candidate_corpus"]
    bad["candidate_corpus"] = {"type": "repo_at_base_commit", "base_commit": C1}
    assert fields(bad) == ["gold.no_gold", "gold.reason"]  # stratum() cannot place it either


def test_check_record_abstention_rules() -> None:
    record = positive("abstention", files=[], no_gold=True, reason="flaky_ci")
    record["query"] = {"source": "ci_log", "text": "boom"}
    record["metadata"] = {"organic": True}
    assert fields(record) == []
    record["gold"] = {"files": ["a.py"], "no_gold": True, "reason": "flaky"}
    record["query"] = {"source": "slack", "text": "  "}
    assert fields(record) == [
        "gold.files",
        "gold.reason",
        "query.source",
        "query.text",
        "gold.reason",  # stratum() cannot place the sample either
    ]


def corpus_release(tmp_path: Path) -> Path:
    """A tiny release with a corpus: one snapshot ok, one missing."""
    root = tmp_path / "rel"
    chunk = root / "corpus" / "rx" / "o__n" / f"{C1}.chunks.jsonl"
    rows = [
        {"base_commit": C1, "chunk_id": "c1", "end_line": 1, "kind": "file", "path": p,
         "repo": "o/n", "start_line": 1, "symbol": "", "text": "x"}
        for p in ("src/a.py", "tests/test_a.py")
    ]  # fmt: skip
    write_rows(chunk, rows)
    manifest = [
        {"repo": "o/n", "base_commit": C1, "status": "ok", "chunks_path": str(chunk)},
        {"repo": "o/n", "base_commit": C2, "status": "missing_commit", "chunk_count": 0},
    ]
    write_rows(root / "corpus" / "rx" / "corpus_manifest.jsonl", manifest)
    good = positive("code2test", related_tests=["tests/test_a.py"])
    lost = {**positive("code2test", related_tests=["tests/test_gone.py"]), "id": "s2"}
    other = copy.deepcopy({**good, "id": "s3", "base_commit": C2})
    other["candidate_corpus"]["base_commit"] = C2
    write_rows(root / "benchmark" / "rx" / "samples.jsonl", [good, lost, other])
    return root


def test_corpus_membership(tmp_path: Path) -> None:
    root = corpus_release(tmp_path)
    (report,) = validate_path(root)
    assert report.corpus == f"checked against {root / 'corpus' / 'rx'}"
    got = [(p.line, p.field, p.message) for p in report.problems]
    manifest = root / "corpus" / "rx" / "corpus_manifest.jsonl"
    assert got == [
        (2, "gold", f"file 'tests/test_gone.py' is not in corpus snapshot o/n@{C1}"),
        (3, "base_commit", f"snapshot o/n@{C2} is not an ok row of {manifest}"),
    ]  # fmt: skip


def test_malformed_line_is_a_located_problem(tmp_path: Path) -> None:
    path = tmp_path / "bench" / "samples.jsonl"
    good = json.dumps(positive("code2test", related_tests=["t.py"]))
    path.parent.mkdir()
    path.write_text(good + "\n{not json\n")
    (report,) = validate_path(path)
    assert [(p.path, p.line) for p in report.problems] == [(str(path), 2)]
    assert report.problems[0].message.startswith("malformed JSON")
    assert report.corpus == "not checked: no corpus given (pass --corpus)"
