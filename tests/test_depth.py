"""First-gold depth, cross-run coverage, fusion and ablation tables (spec §5.5, §13.3, §13.7-8)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb.analysis import depth, fusion_report
from arbwb.analysis import rank_analysis as ra
from arbwb.cli import main
from arbwb.io.rankings import load_rankings
from arbwb.io.release import load_release
from arbwb.paths import DEMO_DIR

DEPTHS = (1, 2, 3, 5, 10, 20, 50, 100, 200)


# --- nearest rank (TV13 and hand vectors) ---------------------------------------------


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([3, 1, 20, 7], 0.5, 3),  # TV13
        ([3, 1, 20, 7], 0.9, 20),  # TV13
        ([5], 0.5, 5),  # TV13
        ([5], 0.9, 5),
        (list(range(1, 11)), 0.9, 9),  # ceil(9) - 1 = index 8
        (list(range(1, 11)), 0.5, 5),  # ceil(5) - 1 = index 4
        ([4, 2, 9], 0.5, 4),  # ceil(1.5) - 1 = index 1 of [2, 4, 9]
        ([4, 2, 9], 0.9, 9),  # ceil(2.7) - 1 = index 2
        ([], 0.5, None),
    ],
)
def test_nearest_rank_vectors(values: list[int], q: float, expected: int | None) -> None:
    frame = pl.DataFrame(
        {"g": [0] * len(values), "x": values}, schema={"g": pl.Int64, "x": pl.Int64}
    )
    got = frame.group_by("g").agg(ra.nearest_rank_expr("x", q).alias("v"))
    assert got["v"].to_list() == ([] if not values else [expected])


def test_nearest_rank_expr_ignores_nulls_and_empty_groups() -> None:
    frame = pl.DataFrame({"g": [1, 1, 1, 1, 1, 2], "x": [3, None, 1, 20, 7, None]})
    got = frame.group_by("g").agg(
        ra.nearest_rank_expr("x", 0.5).alias("med"),
        ra.nearest_rank_expr("x", 0.9).alias("p90"),
    )
    rows = {g: (m, p) for g, m, p in got.iter_rows()}
    assert rows == {1: (3, 20), 2: (None, None)}


# --- hand fixture: details files written in the test ----------------------------------


def _row(
    sid: str, task: str, gold: list[str], top: list[str], ranks: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "sample_id": sid,
        "task_type": task,
        "repo": "o/r",
        "base_commit": "c1",
        "gold_files": gold,
        "gold_ranks": ranks,
        "top_files": top,
        **extra,
    }


def _write(path: Path, rows: list[dict[str, Any]], summary: dict[str, Any] | None = None) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if summary is not None:
        stem = path.name.removesuffix("_details.jsonl")
        (path.parent / f"{stem}_summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return path


def test_first_gold_rank_tv13_and_deep_ranks(tmp_path: Path) -> None:
    """gold_ranks {a: null, b: 7, c: 3} -> 3; {a: null} -> null; a rank past top 20 counts."""
    top = [f"x{i}.py" for i in range(20)]
    top[2] = "c"
    rows = [
        _row("s1", "code2test", ["a", "b", "c"], top, {"a": None, "b": 7 + 20, "c": 3}),
        _row("s2", "code2test", ["a"], top[:5], {"a": None}),
        _row("s3", "trace2code", ["d", "e"], top, {"d": 150, "e": 40}),
    ]
    top3 = list(top)
    top3[2] = "x2.py"
    rows[2]["top_files"] = top3
    run = load_rankings(_write(tmp_path / "r_details.jsonl", rows))
    assert run.labels is not None and run.details is not None
    per = ra.per_sample(run.rankings, run.labels, run.details, runs=["r"])
    first = dict(zip(per["sample_id"], per["first_gold_rank"], strict=True))
    assert first == {"s1": 3, "s2": None, "s3": 40}
    s3 = per.filter(pl.col("sample_id") == "s3").row(0, named=True)
    assert (s3["gold_recall@20"], s3["gold_recall@50"], s3["gold_recall@200"]) == (0.0, 0.5, 1.0)
    rows_ = ra.depth_rows(per)
    overall = rows_.filter(pl.col("task") == "overall").row(0, named=True)
    assert overall["samples"] == 3
    assert overall["missing_first_gold_rank"] == 1
    assert overall["median_first_gold_rank_hit_only"] == 3  # hits [3, 40]: ceil(1.0) - 1 = 0
    assert overall["p90_first_gold_rank_hit_only"] == 40
    assert overall["mean_mrr"] == pytest.approx((1 / 3 + 0 + 1 / 40) / 3, abs=1e-15)
    assert overall["any_gold@20"] == pytest.approx(1 / 3)
    assert overall["any_gold@50"] == pytest.approx(2 / 3)
    # s1 recall@3 = 1/3 (only c), s2 0, s3 0
    assert overall["gold_recall@3"] == pytest.approx((1 / 3) / 3)
    trace = rows_.filter(pl.col("task") == "trace2code").row(0, named=True)
    assert trace["median_first_gold_rank_hit_only"] == 40


def _ablation_fixture(root: Path) -> list[Path]:
    """Method ``lex`` (all_files) and ``lex_code_only`` over two code2test + one trace2code."""
    top = ["a.py", "b.py", "c.py", "d.py", "e.py"]
    base = [
        _row("s1", "code2test", ["a.py"], top, {"a.py": 1}),
        _row("s2", "code2test", ["d.py"], top, {"d.py": 4}),
        _row("s3", "trace2code", ["b.py", "z.py"], top, {"b.py": 2, "z.py": None}),
    ]
    code = [
        _row("s1", "code2test", ["a.py"], ["b.py", "a.py"], {"a.py": 2}),
        _row("s2", "code2test", ["d.py"], ["a.py"], {"d.py": None}),
        _row("s3", "trace2code", ["b.py", "z.py"], ["z.py", "b.py"], {"b.py": 2, "z.py": 1}),
    ]
    for row in code:
        row["candidate_filter"] = "code_only"
    return [
        _write(
            root / "lex_details.jsonl", base, {"mode": "corpus", "candidate_filter": "all_files"}
        ),
        _write(root / "lex_code_only_details.jsonl", code, {"mode": "corpus"}),
    ]


def _cli_json(args: list[str], out: Path) -> dict[str, Any]:
    assert main(["depth", *args, "--format", "json", "--out", str(out)]) == 0
    doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return doc


def test_ablation_table_hand_values(tmp_path: Path) -> None:
    paths = _ablation_fixture(tmp_path)
    doc = _cli_json([str(p) for p in paths], tmp_path / "out.json")
    table = {
        (r["method"], r["candidate_filter"], r["task"]): r for r in doc["candidate_filter_ablation"]
    }
    # hand: lex MRR code2test (1 + 1/4)/2 = 0.625, trace2code 1/2; overall (1 + .25 + .5)/3
    # lex_code_only: code2test (1/2 + 0)/2 = 0.25, trace2code 1; overall (.5 + 0 + 1)/3 = 0.5
    assert table[("lex", "all_files", "code2test")]["mrr"] == 0.625
    assert table[("lex", "code_only", "code2test")]["mrr"] == 0.25
    assert table[("lex", "code_only", "code2test")]["delta_mrr_vs_all_files"] == -0.375
    assert table[("lex", "code_only", "trace2code")]["delta_mrr_vs_all_files"] == 0.5
    assert table[("lex", "all_files", "overall")]["mrr"] == pytest.approx(1.75 / 3, abs=1e-15)
    assert table[("lex", "code_only", "overall")]["delta_mrr_vs_all_files"] == pytest.approx(
        0.5 - 1.75 / 3, abs=1e-15
    )
    assert table[("lex", "all_files", "overall")]["delta_mrr_vs_all_files"] == 0.0
    # R@5 code_only trace2code: both gold in top 2 -> 1.0; all_files: b only -> 0.5
    assert table[("lex", "code_only", "trace2code")]["recall@5"] == 1.0
    assert table[("lex", "all_files", "trace2code")]["recall@5"] == 0.5
    assert table[("lex", "all_files", "overall")]["samples"] == 3
    order = [(r["candidate_filter"], r["task"]) for r in doc["candidate_filter_ablation"]]
    assert order[:2] == [("all_files", "overall"), ("code_only", "overall")]
    assert doc["rank_fusion"] is None  # no fusion run given


def test_ablation_absent_without_filtered_runs(tmp_path: Path) -> None:
    paths = _ablation_fixture(tmp_path)
    doc = _cli_json([str(paths[0])], tmp_path / "out.json")
    assert doc["candidate_filter_ablation"] is None


def test_fusion_tv8_hand_values(tmp_path: Path) -> None:
    """TV8: L1 [a,b,c,d], L2 [c,a,e,a], gold {c, z} -> fused [a,c,b,e,d], MRR 0.5, nDCG 0.3869."""
    one = _write(
        tmp_path / "one_details.jsonl",
        [_row("s1", "code2test", ["c", "z"], ["a", "b", "c", "d"], {})],
    )
    two = _write(
        tmp_path / "two_details.jsonl",
        [_row("s1", "code2test", ["c", "z"], ["c", "a", "e", "a"], {})],
    )
    runs = [load_rankings(one), load_rankings(two)]
    rankings = pl.concat([r.rankings for r in runs])
    fused = fusion_report.fuse(rankings, ["one", "two"], name="rrf_one_two")
    assert fused["path"].to_list() == ["a", "c", "b", "e", "d"]
    assert fused["score"][0] == 1 / 61 + 1 / 62
    labels, samples = runs[0].labels, runs[0].details
    assert labels is not None and samples is not None
    table = fusion_report.fusion_table(
        pl.concat([rankings, fused]), labels, samples, {"rrf_one_two": ["one", "two"]}
    )
    row = table.filter(pl.col("task") == "overall").row(0, named=True)
    assert row["samples"] == 1
    assert (row["recall@5"], row["recall@20"], row["mrr"], row["any@20"]) == (0.5, 0.5, 0.5, 1.0)
    assert row["ndcg@20"] == pytest.approx(0.38685280723454163, abs=1e-15)
    assert row["components"] == "one + two"


def test_stored_fusion_run_in_cli(tmp_path: Path) -> None:
    """A run whose summary says rank_fusion lands in the fusion table; components in reference."""
    gold = ["c", "z"]
    one = _write(
        tmp_path / "one_details.jsonl",
        [_row("s1", "code2test", gold, ["a", "b", "c", "d"], {"c": 3, "z": 30})],
    )
    two = _write(
        tmp_path / "two_details.jsonl",
        [_row("s1", "code2test", gold, ["c", "a", "e"], {"c": 1, "z": None})],
    )
    fused_row = _row("s1", "code2test", gold, ["a", "c", "b", "e", "d"], {"c": 2, "z": None})
    fused = _write(
        tmp_path / "rrf_x_details.jsonl",
        [fused_row],
        {"mode": "rank_fusion", "components": ["one", "two"]},
    )
    doc = _cli_json([str(one), str(two), str(fused)], tmp_path / "out.json")
    assert [r["fusion"] for r in doc["rank_fusion"]] == ["rrf_x", "rrf_x"]
    assert doc["rank_fusion"][0]["mrr"] == 0.5
    ref = {(r["task"], r["model"]): r for r in doc["rank_fusion_reference"]}
    assert set(ref) == {
        ("overall", "one"),
        ("overall", "two"),
        ("code2test", "one"),
        ("code2test", "two"),
    }
    assert ref[("overall", "one")]["mrr"] == 1 / 3
    assert ref[("overall", "one")]["recall@20"] == 0.5  # z at 30 is past 20
    modes = {r["run"]: r["mode"] for r in doc["runs"]}
    assert modes == {"one": "other", "two": "other", "rrf_x": "rank_fusion"}


def test_unanswered_sample_counts_as_miss(tmp_path: Path) -> None:
    """A sample only one run ranks: the other run has it unanswered and missing (never dropped)."""
    a = _write(
        tmp_path / "a_details.jsonl",
        [
            _row("s1", "code2test", ["x"], ["x"], {"x": 1}),
            _row("s2", "code2test", ["y"], ["y"], {"y": 1}),
        ],
    )
    b = _write(tmp_path / "b_details.jsonl", [_row("s1", "code2test", ["x"], ["q", "x"], {"x": 2})])
    doc = _cli_json([str(a), str(b)], tmp_path / "out.json")
    rows = {(r["run"], r["task"]): r for r in doc["depth_rows"]}
    assert rows[("b", "overall")]["samples"] == 2
    assert rows[("b", "overall")]["unanswered"] == 1
    assert rows[("b", "overall")]["missing_first_gold_rank"] == 1
    assert rows[("b", "overall")]["mean_mrr"] == 0.25
    cov = {r["task"]: r for r in doc["cross_model_coverage"]}
    assert cov["overall"]["hit_model_count_distribution"] == {"0": 0, "1": 1, "2": 1}
    assert cov["overall"]["all_models_miss@20"] == 0


# --- the four shared v1_1 runs against a plain-Python computation -----------------------


def _nearest(values: list[int], q: float) -> int | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(max(math.ceil(q * len(values)) - 1, 0), len(values) - 1)]


def _independent(path: Path) -> dict[str, dict[str, Any]]:
    """Depth rows of one details file computed literally from its rows (spec §5.5, §13.3)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        groups.setdefault("overall", []).append(row)
        groups.setdefault(row["task_type"], []).append(row)
    out: dict[str, dict[str, Any]] = {}
    for task, rows in groups.items():
        firsts: list[int | None] = []
        stats: dict[str, float] = {f"any_gold@{k}": 0.0 for k in DEPTHS}
        stats |= {f"gold_recall@{k}": 0.0 for k in DEPTHS}
        mrr = cov = 0.0
        for row in rows:
            ranks = {p: r for p, r in row["gold_ranks"].items() if r is not None and r > 0}
            first = min(ranks.values()) if ranks else None
            firsts.append(first)
            gold = list(dict.fromkeys(row["gold_files"]))
            for k in DEPTHS:
                stats[f"any_gold@{k}"] += 1.0 if first is not None and first <= k else 0.0
                stats[f"gold_recall@{k}"] += sum(1 for p in gold if ranks.get(p, k + 1) <= k) / len(
                    gold
                )
            mrr += row["metrics"]["MRR"]
            cov += row["metrics"]["gold_coverage@8k"]
        n = len(rows)
        hits = [f for f in firsts if f is not None]
        out[task] = {
            "samples": n,
            "missing_first_gold_rank": n - len(hits),
            "median_first_gold_rank_hit_only": _nearest(hits, 0.5),
            "p90_first_gold_rank_hit_only": _nearest(hits, 0.9),
            "mean_mrr": mrr / n,
            "mean_gold_coverage@8k": cov / n,
            **{key: value / n for key, value in stats.items()},
        }
    return out


def _independent_coverage(paths: list[Path]) -> dict[str, dict[str, Any]]:
    hits: dict[str, int] = {}
    tasks: dict[str, str] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            tasks[row["sample_id"]] = row["task_type"]
            hit = row["metrics"]["Recall@20"] > 0
            hits[row["sample_id"]] = hits.get(row["sample_id"], 0) + int(hit)
    out: dict[str, dict[str, Any]] = {}
    for sid, count in hits.items():
        for task in ("overall", tasks[sid]):
            entry = out.setdefault(
                task, {"samples": 0, "dist": {str(h): 0 for h in range(len(paths) + 1)}}
            )
            entry["samples"] += 1
            entry["dist"][str(count)] += 1
    return out


@pytest.mark.shared
def test_depth_cli_on_shared_v1_1_runs(shared_dir: Path, tmp_path: Path) -> None:
    folder = shared_dir / "eval" / "v1_1_candidate_filter_ablation"
    paths = sorted(folder.glob("*_details.jsonl"))
    assert len(paths) == 4
    doc = _cli_json([str(p) for p in paths], tmp_path / "depth.json")
    got = {(r["run"], r["task"]): r for r in doc["depth_rows"]}
    assert len(got) == 16
    for path in paths:
        run = path.name.removesuffix("_details.jsonl")
        for task, expected in _independent(path).items():
            row = got[(run, task)]
            for key, value in expected.items():
                if isinstance(value, float):
                    assert row[key] == pytest.approx(value, abs=1e-12), (run, task, key)
                else:
                    assert row[key] == value, (run, task, key)
            assert row["unanswered"] == 0
    # TV19 literals
    lex = got[("lexical_code_only", "overall")]
    assert (lex["median_first_gold_rank_hit_only"], lex["p90_first_gold_rank_hit_only"]) == (
        13,
        105,
    )
    assert lex["any_gold@1"] == pytest.approx(0.027874564459930314, abs=1e-12)
    assert lex["any_gold@20"] == pytest.approx(0.6445993031358885, abs=1e-12)
    assert lex["gold_recall@50"] == pytest.approx(0.7614401858304296, abs=1e-12)
    assert lex["mean_mrr"] == pytest.approx(0.16200440756071394, abs=1e-12)
    assert got[("lexical_code_only", "trace2code")]["median_first_gold_rank_hit_only"] == 7
    rt = got[("repomap_tests_only", "overall")]
    assert (rt["missing_first_gold_rank"], rt["median_first_gold_rank_hit_only"]) == (143, 4)
    assert rt["p90_first_gold_rank_hit_only"] == 46
    assert got[("repomap_tests_only", "trace2code")]["median_first_gold_rank_hit_only"] is None
    # cross-run coverage vs the stored Recall@20 of every run
    coverage = {r["task"]: r for r in doc["cross_model_coverage"]}
    for task, expected in _independent_coverage(paths).items():
        row = coverage[task]
        assert row["samples"] == expected["samples"]
        assert row["hit_model_count_distribution"] == expected["dist"]
        assert row["all_models_miss@20"] == expected["dist"]["0"]
        assert row["any_model_hit@20"] == expected["samples"] - expected["dist"]["0"]
    assert len(doc["all_models_miss@20"]) == coverage["overall"]["all_models_miss@20"]
    # the ablation table is present (code_only/tests_only runs) but no all_files base exists
    ablation = doc["candidate_filter_ablation"]
    assert {(r["method"], r["candidate_filter"]) for r in ablation} == {
        ("lexical", "code_only"),
        ("lexical", "tests_only"),
        ("repomap", "code_only"),
        ("repomap", "tests_only"),
    }
    assert all(r["delta_mrr_vs_all_files"] is None for r in ablation)
    modes = {r["run"]: r["mode"] for r in doc["runs"]}
    assert modes["repomap_code_only"] == "repomap" and modes["lexical_code_only"] == "corpus"
    # run order: repomap before corpus (spec §13.3)
    order = list(dict.fromkeys(r["run"] for r in doc["depth_rows"]))
    assert order == [
        "repomap_code_only",
        "repomap_tests_only",
        "lexical_code_only",
        "lexical_tests_only",
    ]


@pytest.mark.shared
def test_depth_cli_markdown_on_shared(shared_dir: Path, tmp_path: Path) -> None:
    paths = sorted((shared_dir / "eval" / "v1_1_candidate_filter_ablation").glob("*_details.jsonl"))
    out = tmp_path / "depth.md"
    assert main(["depth", *map(str, paths), "--format", "markdown", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "| lexical_code_only | corpus | 0.0279 | " in text
    assert "No all_files run for lexical, repomap" in text


def test_run_per_group_with_arbwb_fusion_and_left_out_spec() -> None:
    release = load_release(DEMO_DIR)
    options = depth.DepthOptions(fuse_runs="lexical+bm25; lexical+nosuch")
    result = depth.run(release, options)
    assert list(result.groups) == ["demo"] and result.skipped is None
    assert result.problems == [
        "fuse_runs: 'lexical+nosuch' names runs that are not all in one group"
    ]
    part = result.groups["demo"]
    assert list(part.made) == ["arbwb:rrf_lexical_bm25"]
    names = {t.name for t in result.tables()}
    assert {"demo__depth_rows", "demo__all_miss", "demo__arbwb_rrf_lexical_bm25"} <= names
    assert {"demo__rank_fusion", "demo__given_at_rank_1", "demo__ablation"} <= names
    assert part.misses.columns[-2:] == ["gold_files", "query"]
    records = result.records()
    assert records["runs"] == sorted(release.runs)
    traps = records["given_at_rank_1"]["demo"]
    assert part.trap_line.startswith(f"{traps['pairs']} (run, sample) pairs")
    assert set(records["depth"]["demo/lexical/overall"]) == set(depth.RECORDED)


def test_run_without_runs_is_a_skip(tmp_path: Path) -> None:
    result = depth.run(load_release(tmp_path), depth.DepthOptions())
    assert result.skipped == f"no runs found under {tmp_path}" and result.tables() == []
    assert result.records()["depth"] == {}


def test_first_gold_cdf_grid_has_a_panel_per_task() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from arbwb.plots.depth import plot_first_gold_cdf_grid

    part = depth.run(load_release(DEMO_DIR), depth.DepthOptions()).groups["demo"]
    tasks = part.report.coverage["task"].to_list()
    panels = plot_first_gold_cdf_grid(part.report.per, tasks=tasks, title="t", demo=True)
    fig = panels[0].figure
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert shown == panels  # one panel per task, the grid's spare cells hidden
    assert [ax.get_title().split(" (")[0] for ax in shown] == tasks
    assert len(fig.legends) == 1  # one legend, right of the panels, clear of every curve
    assert all(ax.get_legend() is None for ax in shown)
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one task"):
        plot_first_gold_cdf_grid(part.report.per, tasks=[], title="t")
