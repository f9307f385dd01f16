"""Agent trajectory extractors: mini-SWE-agent, SWE-agent, Agentless, Prometheus."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from contextbench_fixture import CHECKOUT, PATCH_V15, check, make_gold

from arbwb.contextbench.inputs import predictions_from_frames
from arbwb.contextbench.instance import evaluate_instance
from arbwb.io.contextbench_agents import load_trajectories


def test_mini_swe_agent_extractor(tmp_path: Path) -> None:
    traj = {
        "instance_id": "I",
        "info": {
            "submission": PATCH_V15,
            "config": {"environment": {"image": "mswebench/own_m_repo:pr-1"}},
        },
        "messages": [
            {
                "role": "assistant",
                "content": "<explore_context>\nFile: /testbed/a.py\nLines: 9-5\n</explore_context>",
            },
            {
                "role": "user",
                "content": "<explore_context>\nFile: /home/repo/b.py\nLines: 1-2\n"
                "File: /home/other/b.py\nLines: 3-3\n</explore_context>",
            },
            {
                "role": "assistant",
                "content": "<EXPLORE_CONTEXT>\nFile: README.md\nLines: 1-5\n</EXPLORE_CONTEXT>",
            },
            {
                "role": "assistant",
                "content": "<PATCH_CONTEXT>\nFile: /testbed/b.py\nLines: 1-1\n</PATCH_CONTEXT>",
            },
            {
                "role": "assistant",
                "content": "<PATCH_CONTEXT>\nFile: /testbed/a.py\nLines: 5-6\n</PATCH_CONTEXT>",
            },
        ],
    }
    (tmp_path / "I.traj.json").write_text(json.dumps(traj))
    run = load_trajectories(tmp_path, run="mini")
    assert run.records.row(0, named=True)["n_steps"] == 2
    assert run.records["model_patch"].to_list() == [PATCH_V15]
    spans = (
        run.context.filter(pl.col("kind") == "span")
        .select("step", "path", "start_line", "end_line")
        .rows()
    )
    assert spans == [
        (1, "a.py", 5, 9),
        (2, "b.py", 1, 2),
        (2, "other/b.py", 3, 3),
        (0, "a.py", 5, 6),
    ]


def test_mini_swe_bash_fallback(tmp_path: Path) -> None:
    messages = [
        {"role": "assistant", "content": "```bash\nnl -ba /testbed/a.py | sed -n '3,8p'\n```"},
        {"role": "assistant", "content": "```bash\ncat b.py && grep -n foo pkg/c.py\n```"},
        {"role": "assistant", "content": "```bash\nsed -i 's/x/y/' a.py\n```"},
        {"role": "assistant", "content": "```bash\nhead -n 4 README.md\n```"},
    ]
    (tmp_path / "I.traj.json").write_text(json.dumps({"messages": messages}))
    run = load_trajectories(tmp_path / "I.traj.json", run="mini")
    rows = run.context.select("step", "kind", "path", "start_line").rows()
    assert rows == [
        (1, "file", "a.py", None),
        (1, "span", "a.py", 3),
        (2, "file", "b.py", None),
        (2, "file", "pkg/c.py", None),
    ]
    assert run.records["instance_id"].to_list() == ["I"]


def test_swe_agent_checkpoints(tmp_path: Path) -> None:
    lines = [
        {"action": "str_replace_editor view /testbed/a.py --view_range 1 5", "observation": ""},
        {"action": "str_replace_editor view /testbed/b.py", "observation": ""},
        {
            "action": "str_replace_editor view /testbed/README.md --view_range 1 5",
            "observation": "",
        },
        {
            "type": "patch_context",
            "patch_context": "File: /testbed/a.py\nLines: 5-6\nFile: /testbed/b.py\n",
        },
    ]
    (tmp_path / "I.checkpoints.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    run = load_trajectories(tmp_path, run="swe")
    assert run.records["n_steps"].to_list() == [2]
    final = run.context.filter(pl.col("step") == 0).select("kind", "path", "start_line").rows()
    assert final == [("file", "a.py", None), ("file", "b.py", None), ("span", "a.py", 5)]
    parsed = predictions_from_frames(run.records, run.context)["swe"]
    record = evaluate_instance(make_gold(["a.py:5-6"]), parsed["I"], CHECKOUT)
    check(record, "file", 1, 0.5, (1, 1, 2))
    assert [s["coverage"]["line"] for s in record["trajectory"]["steps"]] == [0.5, 0.5]  # 5 of 5-6


def test_agentless_and_prometheus(tmp_path: Path) -> None:
    agentless = {
        "instance_id": "I",
        "3_final_combined_files": ["a.py", "b.py", "a.py"],
        "4_related_elements": {"a.py": ["function: Foo.bar\nclass: Foo"]},
        "5_sampled_edit_locs_and_patches": [
            {"edit_locs": {"a.py": ["function: bar"]}},
            {"edit_locs": {"a.py": ["line: 6\nlines: 9-8"], "b.py": ["line: 2"]}},
        ],
        "6_final_selected_patch": PATCH_V15,
    }
    (tmp_path / "I_traj.json").write_text(json.dumps(agentless))
    run = load_trajectories(tmp_path / "I_traj.json", run="al")
    final = run.context.filter(pl.col("step") == 0)
    assert final.filter(pl.col("kind") == "span").select(
        "path", "start_line", "end_line"
    ).rows() == [("a.py", 6, 6), ("a.py", 8, 9), ("b.py", 2, 2)]
    assert sorted(final.filter(pl.col("kind") == "symbol")["symbol"]) == ["Foo", "Foo.bar"]
    log = (
        "x\n--- BEGIN CONTEXT ---\nFile: /testbed/a.py\nLine number range: 1 - 4\n"
        "--- END CONTEXT ---\n"
        "--- BEGIN CONTEXT ---\nFile: b.py\nLine number range: 3 - 2\n--- END CONTEXT ---\n"
    )
    (tmp_path / "J.log").write_text(log)
    run = load_trajectories(tmp_path / "J.log", run="prom")
    rows = (
        run.context.filter(pl.col("kind") == "span")
        .select("step", "path", "start_line", "end_line")
        .rows()
    )
    assert rows == [(1, "a.py", 1, 4), (2, "b.py", 2, 3), (0, "a.py", 1, 4), (0, "b.py", 2, 3)]
