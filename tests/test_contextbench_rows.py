"""ContextBench rows: the 50-row sample (contextbench-spec §11) and bad input, located."""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from contextbench_fixture import CHECKOUT, check, make_gold, make_step

from arbwb.contextbench.aggregate import aggregate
from arbwb.contextbench.inputs import Prediction, gold_from_rows, predictions_from_frames
from arbwb.contextbench.score import results_frame, score_run
from arbwb.errors import InputError
from arbwb.io import contextbench as cio
from arbwb.io.contextbench_agents import load_predictions

# ../shared beside the checkout; ARBWB_SHARED points elsewhere (e.g. from a git worktree)
SHARED = Path(
    os.environ.get("ARBWB_SHARED") or Path(__file__).resolve().parents[1].parent / "shared"
)
SHARED = SHARED / "contextbench"
SAMPLE = SHARED / "contextbench_verified_test.parquet"


# --------------------------------------------------------------------------- §11 sample


def _sample() -> cio.ContextBenchRows:
    if not SAMPLE.is_file():
        pytest.skip("needs ../shared/contextbench beside the checkout (CI has it)")
    return cio.load_rows(SAMPLE)


@pytest.mark.shared
def test_sample_rows_sources_languages() -> None:
    rows = _sample()
    inst = rows.instances
    assert inst.height == rows.samples.height == 50
    assert rows.samples["sample_id"].n_unique() == 50
    assert set(rows.samples["task"]) == {"contextbench"}
    assert dict(inst.group_by("benchmark").len().iter_rows()) == {
        "Multi": 16,
        "Poly": 12,
        "Pro": 5,
        "Verified": 17,
    }
    assert dict(inst.group_by("language").len().iter_rows()) == {
        "python": 26,
        "javascript": 6,
        "typescript": 6,
        "java": 4,
        "go": 3,
        "rust": 3,
        "c": 2,
    }
    multi = inst.filter(pl.col("benchmark") == "Multi")
    assert dict(multi.group_by("language").len().iter_rows()) == {
        "c": 2,
        "go": 3,
        "java": 4,
        "javascript": 2,
        "rust": 3,
        "typescript": 2,
    }
    assert dict(inst.group_by("category").len().iter_rows()) == {
        "maintenance__bugfix": 49,
        "evolution__feature": 1,
    }
    assert all(r.count("/") == 1 for r in rows.samples["repo"])
    assert sorted(multi["repo_field"]) == sorted(
        [
            "jq",
            "zstd",
            "cli",
            "cli",
            "cli",
            "jackson-databind",
            "jackson-databind",
            "jackson-core",
            "jackson-core",
            "svelte",
            "dayjs",
            "rayon",
            "tracing",
            "clap",
            "core",
            "material-ui",
        ]
    )
    # recovered owner/name agrees with the /workspace/<owner>__<name>__0.1/ gold prefix
    prefixes = (
        rows.gold.filter(pl.col("path_form") == "workspace")
        .join(rows.samples.select("sample_id", "repo"), on="sample_id")
        .select(pl.col("raw_path").str.extract(r"^/workspace/([^/]+)__0\.1/"), "repo")
    )
    assert all(p == r.replace("/", "__") for p, r in prefixes.iter_rows())
    assert rows.excluded.height == 0


@pytest.mark.shared
def test_sample_spans_and_lines() -> None:
    rows = _sample()
    gold = rows.gold
    per_row = rows.instances["n_spans"].to_list()
    assert gold.height == sum(per_row) == 391
    assert (min(per_row), statistics.median(per_row), max(per_row)) == (1, 5, 65)
    assert sum(per_row) / 50 == pytest.approx(7.82)
    by_source = gold.join(rows.instances.select("sample_id", "benchmark"), on="sample_id")
    assert dict(by_source.group_by("benchmark").len().iter_rows()) == {
        "Multi": 74,
        "Poly": 78,
        "Pro": 142,
        "Verified": 97,
    }
    length = gold["end_line"] - gold["start_line"] + 1
    assert (length.min(), length.max(), int((length == 1).sum())) == (1, 597, 4)
    assert int(length.sum()) == 19242
    files = rows.labels.group_by("sample_id").len()["len"]
    assert (files.min(), files.median(), files.max(), files.sum()) == (1, 2, 14, 156)
    # merged gold lines (independent literal merge)
    merged_total, merged_rows, n_intervals = 0, [], 0
    for sid in rows.samples["sample_id"]:
        spans = gold.filter(pl.col("sample_id") == sid)
        total = 0
        for _path, part in spans.group_by("path"):
            ivs = sorted(zip(part["start_line"], part["end_line"], strict=True))
            out: list[list[int]] = []
            for s, e in ivs:
                if out and s <= out[-1][1] + 1:
                    out[-1][1] = max(out[-1][1], e)
                else:
                    out.append([s, e])
            n_intervals += len(out)
            total += sum(e - s + 1 for s, e in out)
        merged_rows.append(total)
        merged_total += total
    assert merged_total == 18575
    assert n_intervals == 267
    assert (min(merged_rows), statistics.median(merged_rows), max(merged_rows)) == (8, 187.5, 2308)
    assert rows.spans.height == 391 and rows.spans["kind"].unique().to_list() == ["gold_context"]


@pytest.mark.shared
def test_sample_path_anomalies() -> None:
    rows = _sample()
    forms = dict(rows.gold.group_by("path_form").len().iter_rows())
    assert forms == {"relative": 316, "workspace": 72, "workspace_root": 2, "dotfile": 1}
    b3 = (
        rows.gold.filter(pl.col("quirk") == "B3")
        .select("raw_path", "start_line", "end_line")
        .rows()
    )
    assert sorted(b3) == [
        ("/workspace/CustomJsonNodeTest.java", 1, 117),
        ("/workspace/run_svelte_test.js", 1, 88),
    ]
    b2 = rows.gold.filter(pl.col("quirk") == "B2").row(0, named=True)
    assert (b2["raw_path"], b2["path"], b2["fixed_path"]) == (
        ".size-limit.js",
        "size-limit.js",
        ".size-limit.js",
    )
    assert rows.gold.filter(pl.col("quirk") == "B3")["fixed_path"].null_count() == 2
    assert rows.gold.filter(pl.col("raw_path").str.contains(r"\\|^/testbed/")).height == 0


@pytest.mark.shared
def test_sample_polars_json_decoding_matches_loader() -> None:
    rows = _sample()
    span = {"file": pl.String, "start_line": pl.Int64, "end_line": pl.Int64, "content": pl.String}
    decoded = (  # §1.2 decoding with Polars alone: one row per span, with its content
        pl.read_parquet(SAMPLE)
        .select("instance_id", pl.col("gold_context").str.json_decode(pl.List(pl.Struct(span))))
        .explode("gold_context")
        .unnest("gold_context")
    )
    assert decoded.height == rows.gold.height
    assert decoded["start_line"].to_list() == rows.gold["start_line"].to_list()
    contents = decoded["content"].to_list()
    lengths = (decoded["end_line"] - decoded["start_line"] + 1).to_list()
    counts = [len(c.splitlines()) for c in contents]
    assert sum(c == n for c, n in zip(counts, lengths, strict=True)) == 303
    assert sum(c > n for c, n in zip(counts, lengths, strict=True)) == 13


# --------------------------------------------------------------------------- bad input


def _row(**over: Any) -> dict[str, Any]:
    row = {c: None for c in cio.ROW_COLUMNS}
    row.update(
        instance_id="Multi-SWE-Bench__go__maintenance__bugfix__0000abcd",
        original_inst_id="cli__cli-5973",
        repo="cli",
        language="go",
        base_commit="a" * 40,
        gold_context=json.dumps(
            [
                {
                    "file": "/workspace/cli__cli__0.1/x.go",
                    "start_line": 1,
                    "end_line": 3,
                    "content": "",
                }
            ]
        ),
        problem_statement="p",
        source="Multi",
    )
    row.update(over)
    return row


def _write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "rows.parquet"
    pl.DataFrame(rows, schema=dict.fromkeys(cio.ROW_COLUMNS, pl.String)).write_parquet(path)
    return path


def test_bad_rows_raise_located_errors(tmp_path: Path) -> None:
    cases = [
        ({"gold_context": "not json at all"}, "gold_context", "not a JSON list"),
        ({"repo": "notcli"}, "repo", "unknown repository short name 'notcli'"),
        ({"original_inst_id": "garbage"}, "repo", "cannot recover owner/name"),
        (
            {"gold_context": json.dumps([{"file": "x.go", "start_line": 5, "end_line": 2}])},
            "gold_context",
            "end_line 2 < start_line 5",
        ),
        (
            {"gold_context": json.dumps([{"file": "x.go", "start_line": "one", "end_line": 2}])},
            "gold_context",
            "no integer start_line",
        ),
        ({"base_commit": ""}, "base_commit", "required cell is empty"),
    ]
    for over, field, text in cases:
        path = _write(tmp_path, [_row(), _row(instance_id="second__x", **over)])
        with pytest.raises(InputError) as info:
            cio.load_rows(path)
        assert info.value.field == field and info.value.line == 2 and text in str(info.value), over
        kept = cio.load_rows(path, on_error="exclude")
        assert kept.instances.height == 1
        assert kept.excluded.select("sample_id", "line", "field").row(0) == ("second__x", 2, field)


def test_text_encoded_gold_is_parsed_not_emptied(tmp_path: Path) -> None:
    text = (
        "context1\uff1a\nfile: /workspace/cli__cli__0.1/x.go\nstart_line: 3\nend_line: 9\nbody\n\n"
        "context2\uff1a\nfile: y.go\nstart_line: 1\nend_line: 1\nz"
    )
    rows = cio.load_rows(_write(tmp_path, [_row(gold_context=text)]))
    assert rows.instances["gold_encoding"].to_list() == ["text"]
    assert rows.gold.select("path", "start_line", "end_line").rows() == [
        ("x.go", 3, 9),
        ("y.go", 1, 1),
    ]
    assert rows.samples["repo"].to_list() == ["cli/cli"]


def test_duplicate_ids_and_pro_repo_recovery(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="duplicate instance_id"):
        cio.load_rows(_write(tmp_path, [_row(), _row()]))
    pro = "instance_ansible__ansible-" + "f" * 40 + "-v0f01c69f1e2528b935359cfe578530722bca2c59"
    assert cio.recover_repo("ansible", pro) == "ansible/ansible"
    assert cio.recover_repo("fasterxml/jackson-core", "x") == "fasterxml/jackson-core"


def test_unknown_instances_are_counted_missing_gold(tmp_path: Path) -> None:
    gold = {"I": make_gold(["a.py:5-6"])}
    preds = tmp_path / "p.jsonl"
    lines = [
        {
            "instance_id": "I",
            "traj_data": {"pred_files": ["a.py"], "pred_spans": {"a.py": [{"start": 5, "end": 6}]}},
        },
        {"instance_id": "nope", "traj_data": {"pred_files": ["a.py"]}},
    ]
    preds.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    run = load_predictions(preds)
    parsed = predictions_from_frames(run.records, run.context)[run.run]
    scored = score_run(run.run, parsed, gold, source=lambda r, c: CHECKOUT)
    results = results_frame([scored])
    assert results.filter(pl.col("error") == "missing_gold")["instance_id"].to_list() == ["nope"]
    agg = (
        aggregate(results)
        .filter(pl.col("aggregation") == "micro", pl.col("level") == "file")
        .row(0, named=True)
    )
    assert (agg["n_valid"], agg["n_error"], agg["n_missing_gold"]) == (1, 0, 1)


def test_bad_prediction_records(tmp_path: Path) -> None:
    preds = tmp_path / "p.json"
    preds.write_text(
        json.dumps([{"instance_id": "I", "traj_data": {"pred_spans": {"a.py": [{"start": 1}]}}}])
    )
    with pytest.raises(InputError, match="needs 'start' and 'end'") as info:
        load_predictions(preds)
    assert info.value.path is not None and "p.json:1" in info.value.path
    preds.write_text(json.dumps([{"instance_id": "I"}, {"instance_id": "I"}]))
    with pytest.raises(InputError, match="already predicted on line 1"):
        load_predictions(preds)


def test_predictions_keyed_by_original_inst_id(tmp_path: Path) -> None:
    rows = cio.load_rows(_write(tmp_path, [_row()]))
    gold = gold_from_rows(rows)
    assert gold["cli__cli-5973"] is gold["Multi-SWE-Bench__go__maintenance__bugfix__0000abcd"]
    pred = Prediction("cli__cli-5973", (), make_step(["/workspace/x.go:1-3"]))
    scored = score_run("r", {"cli__cli-5973": pred}, gold)
    item = scored.records[0]
    assert item["sample_id"] == "Multi-SWE-Bench__go__maintenance__bugfix__0000abcd"
    assert scored.resolution == "lexical"
    check(item["record"], "line", 1, 1, (3, 3, 3))
