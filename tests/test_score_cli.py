"""``arbwb score`` end to end on small files: formats, counts of missing predictions, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arbwb import cli
from arbwb.jsonio import sha256_file


def _sample(sample_id: str, task: str, repo: str, gold: list[str]) -> dict[str, Any]:
    key = "related_tests" if task == "code2test" else "root_cause_files"
    return {
        "id": sample_id,
        "task_type": task,
        "repo": repo,
        "base_commit": "c" * 40,
        "query": {"text": sample_id},
        "gold": {key: gold},
        "metadata": {},
    }


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    samples = _jsonl(
        tmp_path / "samples.jsonl",
        [
            _sample("a", "code2test", "o/x", ["t.py"]),
            _sample("b", "code2test", "o/y", ["u.py", "v.py"]),
            _sample("c", "trace2code", "o/y", ["w.py"]),
            _sample("d", "trace2code", "o/x", ["z.py"]),
            {
                **_sample("n", "abstention", "o/x", []),
                "gold": {"files": [], "no_gold": True, "reason": "user_error"},
            },
        ],
    )
    preds = _jsonl(
        tmp_path / "mine.jsonl",
        [
            {"sample_id": "a", "status": "ok", "ranked_files": ["x.py", "t.py"]},
            {"sample_id": "b", "status": "ok", "ranked_files": ["u.py"]},
            {"sample_id": "c", "status": "error", "error": "timeout"},
        ],
    )
    return {"samples": samples, "preds": preds}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_by_task_is_refused_as_per_task_means_are_always_given(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--by task`` would print exactly what no ``--by`` prints, so it is a usage error."""
    argv = ["score", str(files["preds"]), "--samples", str(files["samples"])]
    code, out, _ = _run(argv, capsys)
    assert code == 0 and "by_task" in json.loads(out)["runs"][0]
    with pytest.raises(SystemExit) as info:
        cli.main([*argv, "--by", "task"])
    assert info.value.code == 2
    assert "invalid choice: 'task'" in capsys.readouterr().err


def test_json_summary_counts_missing_and_errors(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["score", str(files["preds"]), "--samples", str(files["samples"]), "--by", "repo"]
    code, out, _ = _run([*argv, "--metrics", "Recall@1,mrr,first_gold_rank"], capsys)
    assert code == 0
    doc = json.loads(out)
    (run,) = doc["runs"]
    assert (run["run"], run["n"], run["n_missing"], run["n_error"]) == ("mine", 4, 1, 1)
    # a: rr 1/2, recall@1 0; b: rr 1, recall@1 1/2; c (error) and d (missing): 0
    assert run["overall"] == {"recall@1": 0.125, "mrr": 0.375, "first_gold_rank": 1.5}
    assert run["by_task"]["code2test"] == {
        "n": 2,
        "recall@1": 0.25,
        "mrr": 0.75,
        "first_gold_rank": 1.5,
    }
    assert run["by_task"]["trace2code"] == {
        "n": 2,
        "recall@1": 0.0,
        "mrr": 0.0,
        "first_gold_rank": None,
    }
    assert run["by_repo"]["o/y"]["mrr"] == 0.5
    assert doc["metrics"] == ["recall@1", "mrr", "first_gold_rank"]
    assert doc["inputs"] == [
        {"path": str(files["preds"]), "sha256": sha256_file(files["preds"])},
        {"path": str(files["samples"]), "sha256": sha256_file(files["samples"])},
    ]


def test_markdown_and_csv_state_missing_on_stderr(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["score", str(files["preds"]), "--samples", str(files["samples"])]
    code, out, err = _run([*argv, "--format", "markdown"], capsys)
    assert code == 0
    assert "| mine | 4 | 0.3750 | 0.3750 | 0.3750 | 0.3750 |" in out
    assert "## task: trace2code" in out
    assert "1 of 4 samples have no prediction and 1 are errors" in err
    target = tmp_path / "out" / "scores.csv"
    code, out, err = _run([*argv, "--format", "csv", "--out", str(target)], capsys)
    assert (code, out) == (0, "")
    lines = target.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "run,grouping,group,metric,n,value"
    assert "mine,overall,overall,mrr,4,0.375" in lines
    assert "mine,task,code2test,recall@5,2,0.75" in lines


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = _run(argv, capsys)
    assert (code, out) == (2, "")
    assert "Traceback" not in err
    return err


def test_unknown_sample_id_is_located(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _jsonl(
        files["preds"],
        [{"sample_id": "a", "ranked_files": []}, {"sample_id": "zz", "ranked_files": []}],
    )
    err = _error(["score", str(files["preds"]), "--samples", str(files["samples"])], capsys)
    assert f"{files['preds']}:2: field 'sample_id': sample id 'zz' is not in --samples" in err


def test_malformed_json_line(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    files["preds"].write_text(
        '{"sample_id": "a", "ranked_files": []}\n{"sample_id": \n', encoding="utf-8"
    )
    err = _error(["score", str(files["preds"]), "--samples", str(files["samples"])], capsys)
    assert f"{files['preds']}:2: malformed JSON" in err


def test_duplicate_ids_in_samples_and_rankings(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    dup = _jsonl(
        files["preds"].with_name("dup.jsonl"), [{"sample_id": "a", "ranked_files": []}] * 2
    )
    err = _error(["score", str(dup), "--samples", str(files["samples"])], capsys)
    assert f"{dup}:2: field 'sample_id': duplicate sample id 'a'" in err
    text = files["samples"].read_text(encoding="utf-8")
    files["samples"].write_text(text + text.splitlines()[0] + "\n", encoding="utf-8")
    err = _error(["score", str(files["preds"]), "--samples", str(files["samples"])], capsys)
    assert f"{files['samples']}:6: field 'id': duplicate sample id 'a'" in err


def test_missing_required_field(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    details = _jsonl(
        files["preds"].with_name("x_details.jsonl"),
        [
            {
                "sample_id": "a",
                "task_type": "code2test",
                "repo": "o/x",
                "base_commit": "c",
                "top_files": [],
            }
        ],
    )
    err = _error(["score", str(details)], capsys)
    assert f"{details}:1: field 'gold_files': required field is missing" in err


def test_empty_file_and_gold_needed(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    empty = files["preds"].with_name("empty.jsonl")
    empty.write_text("", encoding="utf-8")
    err = _error(["score", str(empty), "--samples", str(files["samples"])], capsys)
    assert f"{empty}: file has no records (empty file)" in err
    err = _error(["score", str(files["preds"])], capsys)
    assert "carries no gold; pass --samples" in err
    err = _error(
        ["score", str(files["preds"]), "--samples", str(files["samples"]), "--metrics", "map@5"],
        capsys,
    )
    assert "field '--metrics': unknown metric 'map@5'" in err


def test_missing_snapshots_are_counted(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "o__x").mkdir(parents=True)
    base = {"repo": "o/x", "base_commit": "c" * 40, "symbol": "", "start_line": 1}
    rows = [
        {**base, "chunk_id": "1", "path": "t.py", "kind": "file", "end_line": 1, "text": "a b"},
        {**base, "chunk_id": "2", "path": "z.py", "kind": "file", "end_line": 1, "text": "z"},
    ]
    _jsonl(corpus / "o__x" / f"{'c' * 40}.chunks.jsonl", rows)
    manifest = {"repo": "o/x", "base_commit": "c" * 40, "status": "ok", "chunks_path": "gone"}
    _jsonl(corpus / "corpus_manifest.jsonl", [manifest])
    argv = ["score", str(files["preds"]), "--samples", str(files["samples"])]
    argv += ["--metrics", "bcy@8000", "--corpus", str(corpus)]
    with pytest.warns(UserWarning, match="2 \\(run, sample\\) pairs"):
        code, out, _ = _run(argv, capsys)
    summary = json.loads(out)["runs"][0]
    # b and c (repo o/y) have no snapshot; a covers t.py, d has no prediction: (1+0+0+0)/4.
    assert (code, summary["n_missing_snapshot"]) == (0, 2)
    assert summary["overall"]["bcy@8000"] == pytest.approx(0.25)
    with pytest.warns(UserWarning):
        code, _, err = _run([*argv, "--format", "markdown"], capsys)
    assert "2 samples rank a snapshot the corpus lacks" in err


def test_help_lists_metric_forms_grouping_and_format_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        cli.main(["score", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(form in text for form in ("recall@K", "ndcg@K", "mrr", "first_gold_rank", "bcy@B"))
    assert "overall and per-task means are always given" in text
    assert "output format (default: json)" in text
