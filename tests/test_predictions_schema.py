"""The predictions format: its JSON Schema, ``arbwb validate`` on predictions, the object form."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from arbwb.cli import main
from arbwb.errors import InputError
from arbwb.io.predictions import SCHEMA_FILE, problems, schema
from arbwb.io.rankings import load_rankings
from arbwb.release.validate import validate_path

ROOT = Path(__file__).resolve().parents[1]


def _write(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_schema_is_package_data_and_a_valid_draft_2020_12_schema() -> None:
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(schema())
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert SCHEMA_FILE in pyproject["tool"]["setuptools"]["package-data"]["arbwb"]
    assert (ROOT / "arbwb" / SCHEMA_FILE).is_file()


def test_sample_id_to_paths_object_is_read_like_records(tmp_path: Path) -> None:
    path = _write(tmp_path / "mine.json", {"s1": ["b.py", "a.py", "b.py"], "s2": []})
    run = load_rankings(path)
    assert run.run == "mine"
    assert run.rankings.select("sample_id", "rank", "path").rows() == [
        ("s1", 1, "b.py"),
        ("s1", 2, "a.py"),
    ]
    assert run.submitted.select("sample_id", "status").rows() == [("s1", "ok"), ("s2", "ok")]


def test_sample_id_to_non_list_is_refused_naming_the_sample(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.json", {"s1": "a.py"})
    with pytest.raises(InputError, match=r"s1\.ranked_files"):
        load_rankings(path)


@pytest.mark.parametrize(
    "document",
    [
        {"s1": ["a.py"], "s2": [{"path": "b.py", "score": 0.5}]},
        [{"sample_id": "s1", "ranked_files": ["a.py"]}, {"sample_id": "s2", "status": "error",
                                                          "error": "timeout"}],
    ],
)  # fmt: skip
def test_valid_predictions_have_no_problems(tmp_path: Path, document: object) -> None:
    assert list(problems(_write(tmp_path / "p.json", document))) == []


def test_problems_are_located_by_pointer_or_line(tmp_path: Path) -> None:
    array = [
        {"sample_id": "s1", "ranked_files": ["a.py", 3]},
        {"sample_id": "s2", "status": "error"},
    ]
    found = list(problems(_write(tmp_path / "p.json", array)))
    assert [(line, where) for line, where, _ in found] == [
        (None, "/0/ranked_files/1"),
        (None, "/1"),
    ]
    assert "'error' is a required property" in found[1][2]
    lines = tmp_path / "p.jsonl"
    lines.write_text('{"sample_id": "s1", "ranked_files": []}\n{"sample_id": ""}\n', "utf-8")
    located = [(line, where) for line, where, _ in problems(lines)]
    assert located == [(2, "/sample_id"), (2, "/")]  # empty id, and no ranked_files


def test_validate_command_checks_a_predictions_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _write(tmp_path / "good.json", {"s1": ["a.py"]})
    assert validate_path(good)[0].problems == []
    bad = _write(tmp_path / "bad.json", [{"sample_id": "s1", "ranked_files": "a.py"}])
    assert main(["validate", str(bad)]) == 1
    assert (
        f"{bad}: field '/0/ranked_files': 'a.py' is not of type 'array'" in capsys.readouterr().out
    )
