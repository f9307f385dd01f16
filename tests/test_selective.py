"""Selective retrieval (spec §9): section-14 vectors, a 6-repo hand fixture, real data, bad input.

Expected values come from spec §14 (TV9, TV10), from hand arithmetic in comments, or from the
literal list-based reading in ``selective_reference.py`` (independent of arbwb's selective
modules).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import selective_reference as ref

from arbwb.analysis import selective_folds as sfolds
from arbwb.analysis import selective_metrics as smetrics
from arbwb.analysis import selective_rows as srows
from arbwb.analysis import selective_views as sv
from arbwb.cli import main
from arbwb.errors import InputError
from arbwb.io.rankings import load_rankings
from arbwb.io.samples import load_samples

ROOT = Path(__file__).resolve().parents[1]
DEMO_SELECTIVE = ROOT / "data" / "demo" / "eval" / "demo_selective"
NATURAL = ("flaky_ci", "upstream_dependency", "external_service", "user_error")
CF = "counterfactual_wrong_repo"


def frame(rows: list[dict[str, Any]], run: str = "r") -> pl.DataFrame:
    """ROWS frame from reference-style dicts."""
    out = [
        {
            "run": run,
            "sample_id": r["sample_id"],
            "repo": r["repo"],
            "label": r["label"],
            "no_gold_reason": r["reason"],
            "stratum": "positive"
            if r["label"] == "positive"
            else ("counterfactual" if r["reason"] == CF else "natural"),
            "confidence": r["conf"],
            "recall@20": r["recall"],
        }
        for r in rows
    ]
    return pl.DataFrame(out, schema=dict(srows.ROWS))


def row(
    sid: str, repo: str, conf: float, recall: float = 0.0, reason: str | None = None
) -> dict[str, Any]:
    label = "positive" if reason is None else "no_gold"
    return {
        "sample_id": sid,
        "repo": repo,
        "label": label,
        "reason": reason,
        "conf": conf,
        "recall": recall,
    }


TV9 = [
    row("p1", "o/a", 5.0, 1.0),
    row("p2", "o/a", 3.0, 0.0),
    row("n1", "o/a", 1.0, reason="upstream_dependency"),
    row("p3", "o/b", 4.0, 0.5),
    row("n2", "o/b", 2.0, reason=CF),
    row("p4", "o/c", 2.0, 1.0),
    row("n3", "o/c", 3.0, reason="user_error"),
    row("p5", "o/d", 6.0, 0.0),
    row("n4", "o/d", 0.5, reason="external_service"),
]


# --------------------------------------------------------------------------- TV9 / TV10


def test_tv9_sweep_and_operating_points() -> None:
    sweep = smetrics.sweep(frame(TV9))
    assert sweep["threshold"].to_list() == [-math.inf, 0.75, 1.5, 2.5, 3.5, 4.5, 5.5, 6.000000006]
    assert sweep["balanced_accuracy"].to_list() == [0.5, 0.625, 0.75, 0.775, 0.8, 0.7, 0.6, 0.5]
    ninths = {
        "selective_accuracy": [5, 6, 7, 7, 7, 6, 5, 4],
        "selective_success@20": [3, 4, 5, 5, 6, 5, 4, 4],
        "coverage": [9, 8, 7, 5, 3, 2, 1, 0],
    }
    for column, counts in ninths.items():
        assert sweep[column].to_list() == [k / 9 for k in counts], column
    assert sweep["threshold_index"].to_list() == list(range(8))
    chosen = {p: smetrics.select(sweep, p) for p in smetrics.POINTS}
    assert {p: r["threshold"] for p, r in chosen.items() if r} == {
        "best_selective_accuracy": 3.5,
        "best_balanced_accuracy": 3.5,
        "best_selective_success@20": 3.5,
        "target_no_gold_abstain_80": 3.5,
        "target_positive_pass_90": 1.5,
    }


def test_tv9_folds_and_out_of_fold() -> None:
    rows = frame(TV9)
    fold_of = sfolds.assign_folds(rows, 2)
    assert fold_of == {"o/a": 0, "o/b": 1, "o/c": 1, "o/d": 0}
    cv = sfolds.cross_validate(rows, fold_of)
    assert [f["threshold"] for f in cv.folds] == [3.5, 2.0]
    assert cv.threshold_summary == {
        "mean": 2.75,
        "std": 0.75,
        "min": 2.0,
        "max": 3.5,
        "thresholds": [3.5, 2.0],
    }
    oof = cv.out_of_fold
    assert oof["positive_pass_rate"] == 0.8
    assert oof["no_gold_abstain_rate"] == 0.5
    assert oof["balanced_accuracy"] == 0.65
    assert oof["selective_accuracy"] == 0.6666666666666666
    assert oof["selective_success@20"] == 0.5555555555555556
    assert oof["coverage"] == 0.6666666666666666
    assert oof["accepted_positive_recall@20"] == 0.625
    assert oof["accepted_positive_hit@20"] == 0.75
    assert cv.no_abstain["selective_success@20"] == 0.3333333333333333
    n2 = cv.predictions.filter(pl.col("sample_id") == "n2").row(0, named=True)
    assert (n2["confidence"], n2["threshold"], n2["abstained"]) == (2.0, 2.0, False)
    assert cv.predictions["sample_id"].to_list() == sorted(r["sample_id"] for r in TV9)


def test_tv9_tie_case_selects_minus_inf() -> None:
    rows = frame([row("p", "o/a", 1.0, 1.0), row("n", "o/b", 1.0, reason="flaky_ci")])
    sweep = smetrics.sweep(rows)
    assert sweep["threshold"].to_list() == [-math.inf, 1.000000001]
    for column in ("balanced_accuracy", "selective_accuracy", "selective_success@20"):
        assert sweep[column].to_list() == [0.5, 0.5], column
    assert smetrics.select(sweep)["threshold"] == -math.inf  # type: ignore[index]


def test_tv10_fold_assignment_f3() -> None:
    counts = {"r/a": (6, 1), "r/b": (1, 3), "r/c": (4, 0), "r/d": (2, 2), "r/e": (3, 1)}
    counts |= {"r/f": (1, 1), "r/g": (5, 0)}
    rows = []
    for repo, (p, n) in counts.items():
        rows += [row(f"{repo}p{i}", repo, 1.0) for i in range(p)]
        rows += [row(f"{repo}n{i}", repo, 0.0, reason="flaky_ci") for i in range(n)]
    fold_of = sfolds.assign_folds(frame(rows), 3)
    assert fold_of == {"r/a": 1, "r/b": 0, "r/c": 2, "r/d": 2, "r/e": 1, "r/f": 2, "r/g": 0}
    comp = sfolds.fold_composition(frame(rows), fold_of)
    assert comp.select("samples", "positive", "no_gold").rows() == [
        (9, 6, 3),
        (11, 9, 2),
        (10, 7, 3),
    ]
    assert comp["repositories"].to_list() == [["r/b", "r/g"], ["r/a", "r/e"], ["r/c", "r/d", "r/f"]]


# --------------------------------------------------------------------- 6-repo fixture


def hand_rows() -> list[dict[str, Any]]:
    """Six repos, positives and both no-gold strata in every repo, some tied confidences."""
    rows = []
    rng = np.random.default_rng(7)
    for i, repo in enumerate(["x/alpha", "x/beta", "x/gamma", "x/delta", "x/eps", "x/zeta"]):
        for j in range(3 + i):
            conf = float(rng.integers(2, 12))  # integer confidences make ties
            rows.append(row(f"{repo}-p{j}", repo, conf, float(rng.integers(0, 3)) / 2))
        rows.append(row(f"{repo}-n0", repo, float(rng.integers(0, 6)), reason=NATURAL[i % 4]))
        rows.append(row(f"{repo}-c0", repo, float(rng.integers(0, 8)), reason=CF))
    return rows


@pytest.mark.parametrize("protocol", ["mixed", "natural"])
def test_hand_fixture_matches_literal_reference(protocol: srows.Protocol) -> None:
    rows = hand_rows()
    subset = rows if protocol == "mixed" else ref.natural(rows)
    cal = sfolds.calibrate({"r": frame(rows)}, protocol=protocol, folds=5)
    expected = ref.out_of_fold(subset, 5)
    assert cal.repo_folds == expected["folds"]
    assert sorted(set(cal.repo_folds.values())) == [0, 1, 2, 3, 4]
    cv = cal.runs["r"]
    assert [f["threshold"] for f in cv.folds] == expected["thresholds"]
    for key, value in expected["out_of_fold"].items():
        assert cv.out_of_fold[key] == pytest.approx(value, abs=1e-12), key
    assert cv.no_abstain == pytest.approx(expected["no_abstain"], abs=1e-12)
    assert cv.predictions.height == len(subset)


def test_tie_rules_lowest_threshold_and_strict_abstain() -> None:
    # n1 1.0, p1 2.0 (hit), n2 3.0, p2 4.0 (miss): thresholds 1.5 and 3.5 both give
    # balanced 0.75, selective 3/4, success 2/4 -> the lower one (1.5) wins.
    rows = frame(
        [
            row("n1", "a", 1.0, reason="flaky_ci"),
            row("p1", "a", 2.0, 1.0),
            row("n2", "b", 3.0, reason=CF),
            row("p2", "b", 4.0, 0.0),
        ]
    )
    sweep = smetrics.sweep(rows)
    tied = sweep.filter(pl.col("threshold").is_in([1.5, 3.5]))
    keys = tied.select("balanced_accuracy", "selective_accuracy", "selective_success@20").rows()
    assert keys == [(0.75, 0.75, 0.5), (0.75, 0.75, 0.5)]
    assert smetrics.select(sweep)["threshold"] == 1.5  # type: ignore[index]
    assert smetrics.abstains([2.0, 1.9999999999, 2.0000001], 2.0).tolist() == [False, True, False]
    assert smetrics.metrics_at(rows, 2.0)["positive_returned"] == 2  # p1 at exactly 2.0 is returned


def test_minus_inf_and_abstain_everything_rows() -> None:
    rows = frame(
        [row("p", "a", 1000.0, 1.0), row("q", "a", 3.0, 0.0), row("n", "b", 2.0, reason=CF)]
    )
    sweep = smetrics.sweep(rows)
    first, last = sweep.row(0, named=True), sweep.row(-1, named=True)
    assert first["threshold"] == -math.inf
    assert (first["coverage"], first["positive_pass_rate"], first["no_gold_abstain_rate"]) == (
        1.0,
        1.0,
        0.0,
    )
    assert first["balanced_accuracy"] == 0.5
    assert first["selective_success@20"] == 1 / 3  # only p has a top-20 hit
    assert last["threshold"] == 1000.0 + 1e-6  # max(1e-9, |s_m| * 1e-9) with s_m = 1000
    assert (last["coverage"], last["positive_pass_rate"], last["no_gold_abstain_rate"]) == (
        0.0,
        0.0,
        1.0,
    )
    assert (last["abstain_precision"], last["accepted"], last["abstained"]) == (1 / 3, 0, 3)
    assert smetrics.candidate_thresholds([-5.0, -7.0]) == [-math.inf, -6.0, -5.0 + 5e-9]
    assert smetrics.candidate_thresholds([-0.5]) == [-math.inf, -0.5 + 1e-9]
    points = smetrics.operating_points(sweep)
    assert points["no_abstain"]["threshold"] == -math.inf  # type: ignore[index]
    assert points["best_balanced_accuracy"]["threshold_display"] == 2.5  # type: ignore[index]


def test_summary_fields_and_transfer() -> None:
    rows = frame(TV9)
    summary = smetrics.summary_fields(rows)
    assert (summary["evaluated"], summary["positive_evaluated"], summary["no_gold_evaluated"]) == (
        9,
        5,
        4,
    )
    no_gold = summary["confidence_summary"]["no_gold"]  # 0.5, 1, 2, 3
    assert no_gold == {"count": 4, "min": 0.5, "p10": 0.65, "median": 1.5, "p90": 2.7, "max": 3.0}
    assert summary["threshold_sweep_count"] == 8
    point = summary["operating_points"]["target_positive_pass_90"]
    assert point["threshold"] == 1.5 and point["confusion"]["no_gold_abstained"] == 2
    moved = smetrics.transfer(rows, frame(TV9[:3]))
    assert moved["threshold"] == 3.5
    assert moved["calibrated"] == ref.at(TV9[:3], 3.5)


# ------------------------------------------------------------------------ views


def test_views_equal_literal_definitions() -> None:
    rows = frame(hand_rows())
    pos = [r["conf"] for r in hand_rows() if r["label"] == "positive"]
    nat = [r["conf"] for r in hand_rows() if r["reason"] in NATURAL]
    table = sv.separability(rows, n_boot=200)
    natural = table.filter(pl.col("stratum") == "natural").row(0, named=True)
    pairs = [1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in nat]
    assert natural["auroc"] == pytest.approx(sum(pairs) / len(pairs), abs=1e-12)
    assert natural["auroc_low"] <= natural["auroc"] <= natural["auroc_high"]
    # AP of no-gold detection by low confidence, ties grouped: sum over distinct scores.
    scored = [(-c, False) for c in pos] + [(-c, True) for c in nat]
    ap, tp, fp, prev = 0.0, 0, 0, 0.0
    for s in sorted({s for s, _ in scored}, reverse=True):
        tp += sum(1 for x, t in scored if x == s and t)
        fp += sum(1 for x, t in scored if x == s and not t)
        ap += (tp / len(nat) - prev) * tp / (tp + fp)
        prev = tp / len(nat)
    assert natural["auprc_no_gold"] == pytest.approx(ap, abs=1e-12)
    curve = sv.risk_coverage(rows, n_boot=100)
    assert (
        curve["selective_success@20"].to_list()
        == smetrics.sweep(rows)["selective_success@20"].to_list()
    )
    ok = curve.filter(pl.col("hit_low").is_not_nan())
    assert (ok["hit_low"] <= ok["accepted_positive_hit@20"] + 1e-12).all()
    rates = sv.rate_intervals(smetrics.metrics_at(rows, 4.5)).row(0, named=True)
    k, n, z = rates["k"], rates["n"], 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (rates["low"], rates["high"]) == pytest.approx((centre - half, centre + half), abs=1e-12)


def test_signals_from_file_scores() -> None:
    rows = frame(
        [
            row("p", "a", 9.0, 1.0),
            row("n", "a", 5.0, reason=CF),
            row("m", "b", 1.0, reason="user_error"),
        ]
    )
    rankings = pl.DataFrame(
        {
            "run": ["r"] * 4,
            "sample_id": ["p", "p", "p", "n"],
            "rank": [1, 2, 3, 1],
            "path": ["x", "y", "z", "x"],
            "score": [9.0, 6.0, 3.0, 5.0],
        }
    )
    sig = sv.confidence_signals(rows, rankings, k=5).sort("sample_id")
    assert sig["file_margin"].to_list() == [None, 5.0, 3.0]  # n: 5 - 0.0 (absent second)
    assert sig["top1_minus_mean_topk"].to_list() == [None, 0.0, 3.0]
    assert sig["repo_z"].to_list() == [0.0, -1.0, 1.0]  # repo a: mean 7, std 2


# ------------------------------------------------------------------ loaders & real data


def test_details_loader_keeps_selective_fields() -> None:
    path = DEMO_SELECTIVE / "demo_all_files_selective_lexical_details.jsonl"
    run = load_rankings(path)
    assert run.selective is not None
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert run.selective["sample_id"].to_list() == [r["sample_id"] for r in raw]
    assert run.selective["confidence"].to_list() == [r["confidence"] for r in raw]
    assert run.selective["no_gold_reason"].to_list() == [r["no_gold_reason"] for r in raw]
    assert run.selective["label"].to_list() == [r["label"] for r in raw]
    plain = load_rankings(ROOT / "data" / "demo" / "eval" / "demo" / "lexical_details.jsonl")
    assert plain.selective is None


def test_details_loader_rejects_bad_selective_fields(tmp_path: Path) -> None:
    base = {"sample_id": "s", "task_type": "abstention", "repo": "a/b", "base_commit": "c"}
    base |= {"gold_files": [], "top_files": ["x.py"]}
    for field, value in (("label", "negative"), ("confidence", "high")):
        path = tmp_path / f"{field}_details.jsonl"
        path.write_text(json.dumps(base | {field: value}) + "\n", encoding="utf-8")
        with pytest.raises(InputError, match=f"{path}:1: field '{field}'"):
            load_rankings(path)


@pytest.mark.shared
def test_real_abstention_pilot_and_v0_1_strata(shared_dir: Path) -> None:
    pilot = load_samples(shared_dir / "benchmark" / "v2_abstention_pilot")
    samples = pilot.samples
    assert samples.height == 82
    assert samples["stratum"].value_counts().sort("stratum").rows() == [
        ("counterfactual", 32),
        ("natural", 50),
    ]
    records = [
        json.loads(line)
        for line in (shared_dir / "benchmark" / "v2_abstention_pilot" / "abstention.jsonl")
        .read_text()
        .splitlines()
    ]
    by_id = {r["id"]: r for r in records}
    for sid, stratum, reason in samples.select(
        "sample_id", "stratum", "no_gold_reason"
    ).iter_rows():
        record = by_id[sid]
        assert record["gold"]["no_gold"] is True and reason == record["gold"]["reason"]
        assert (stratum == "natural") == record["metadata"]["organic"]
        assert (stratum == "counterfactual") == (reason == CF)
    assert pilot.labels.filter(pl.col("role") == "gold").height == 0
    core = load_samples(shared_dir / "benchmark" / "v0_1" / "samples.jsonl")
    assert core.samples.height == 35
    assert set(core.samples["stratum"]) == {"positive"}
    assert core.samples["no_gold_reason"].null_count() == 35
    gold_ids = set(core.labels.filter(pl.col("role") == "gold")["sample_id"])
    assert gold_ids == set(core.samples["sample_id"])


def test_stratum_disagreeing_with_organic_is_refused(tmp_path: Path) -> None:
    record = {"id": "s", "task_type": "abstention", "repo": "a/b", "base_commit": "c", "query": {}}
    record |= {"gold": {"files": [], "no_gold": True, "reason": CF}, "metadata": {"organic": True}}
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"field 'metadata\.organic'"):
        load_samples(path)


# ------------------------------------------------------------------ CLI on a fixture


def write_release(tmp_path: Path, rows: list[dict[str, Any]]) -> tuple[Path, Path]:
    """Samples JSONL + a predictions run whose rank-1 score is each row's confidence."""
    samples, predictions = [], []
    for r in rows:
        record: dict[str, Any] = {"id": r["sample_id"], "repo": r["repo"], "base_commit": "c0"}
        if r["label"] == "positive":
            record |= {"task_type": "code2test", "query": {"pr_title": "t"}}
            record["gold"] = {"files": ["g1.py", "g2.py"]}
            first = "g1.py" if r["recall"] > 0 else "zz.py"
            second = "g2.py" if r["recall"] == 1.0 else "yy.py"
        else:
            record |= {"task_type": "abstention", "query": {"text": "q"}}
            record["gold"] = {"files": [], "no_gold": True, "reason": r["reason"]}
            record["metadata"] = {"organic": r["reason"] != CF}
            first, second = "zz.py", "yy.py"
        samples.append(record)
        ranked = [{"path": first, "score": r["conf"]}, {"path": second, "score": r["conf"] / 2}]
        predictions.append({"sample_id": r["sample_id"], "ranked_files": ranked})
    sample_path = tmp_path / "samples.jsonl"
    sample_path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    run_path = tmp_path / "method_a.jsonl"
    run_path.write_text("".join(json.dumps(p) + "\n" for p in predictions), encoding="utf-8")
    return sample_path, run_path


def test_cli_json_shape_and_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        dict(r, recall=1.0 if r["recall"] == 1.0 else 0.5 if r["recall"] else 0.0)
        for r in hand_rows()
    ]
    samples, run = write_release(tmp_path, rows)
    assert main(["selective", str(run), "--samples", str(samples), "--protocol", "natural"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"runs", "protocol", "repo_folds"}
    expected = ref.out_of_fold(ref.natural(rows), 5)
    assert report["repo_folds"] == expected["folds"]
    (only,) = report["runs"]
    assert set(only) == {
        "run",
        "out_of_fold",
        "no_abstain",
        "folds",
        "threshold_summary",
        "predictions",
    }
    assert only["run"] == "method_a"
    for key, value in expected["out_of_fold"].items():
        assert only["out_of_fold"][key] == pytest.approx(value, abs=1e-12), key
    thresholds = [None if t == -math.inf else t for t in expected["thresholds"]]
    assert only["threshold_summary"]["thresholds"] == thresholds
    assert [f["threshold"] for f in only["folds"]] == thresholds
    assert set(only["folds"][0]) >= {
        "calibration_metrics",
        "test_metrics",
        "train_samples",
        "test_samples",
    }
    assert len(only["predictions"]) == len(ref.natural(rows))
    assert set(only["predictions"][0]) == {
        "sample_id",
        "repo",
        "label",
        "fold",
        "confidence",
        "threshold",
        "abstained",
    }
    assert report["protocol"]["no_gold"] == 6 and report["protocol"]["positive"] == 33
    assert report["protocol"]["unranked_samples"]["count"] == 0
    assert main(["selective", str(run), "--samples", str(samples), "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert "| Ranker | Pos. pass | No-gold abstain | Balanced acc. |" in text
    assert "| Fold | Samples | Positive | No-gold | Repositories |" in text


# ------------------------------------------------------------------ bad input


def test_runs_disagreeing_on_the_sample_map_are_refused() -> None:
    rows = hand_rows()
    for field, value in (("repo", "x/beta"), ("reason", "flaky_ci"), ("label", "no_gold")):
        other = [dict(r) for r in rows]
        other[0][field] = value
        if field == "label":
            other[0]["reason"] = "flaky_ci"
        with pytest.raises(InputError, match=r"disagree .* for 1 samples: 'x/alpha-p0'"):
            sfolds.calibrate({"a": frame(rows, "a"), "b": frame(other, "b")}, folds=5)
    with pytest.raises(InputError, match="x/zeta-c0"):
        sfolds.calibrate({"a": frame(rows, "a"), "b": frame(rows[:-1], "b")}, folds=5)


def test_details_label_disagreeing_with_samples_is_refused(tmp_path: Path) -> None:
    samples = load_samples(ROOT / "data" / "demo" / "benchmark" / "demo")
    source = DEMO_SELECTIVE / "demo_all_files_selective_lexical_details.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    path = tmp_path / "bad_details.jsonl"
    path.write_text("\n".join([json.dumps(first | {"label": "no_gold"}), *lines[1:]]) + "\n")
    with pytest.raises(InputError, match=f"label disagrees .* '{first['sample_id']}'"):
        srows.selective_rows(load_rankings(path), samples.samples, samples.labels)


def test_fold_without_no_gold_is_refused() -> None:
    rows = [
        row("a1", "a", 3.0, 1.0),
        row("a2", "a", 1.0, reason="flaky_ci"),
        row("a3", "a", 2.0, reason=CF),
    ]
    rows += [row("b1", "b", 2.0, 1.0), row("b2", "b", 2.0, 0.0), row("c1", "c", 5.0, 1.0)]
    with pytest.raises(
        InputError, match=r"fold 1 of 2 has no no_gold sample \(repos 'b'; samples 'b1', 'b2'\)"
    ):
        sfolds.assign_folds(frame(rows), 2)
    assert ref.folds(rows, 2) == {"a": 0, "b": 1, "c": 0}  # by hand: c joins a, b is alone
    with pytest.raises(InputError, match="need at least 5 repositories, got 3"):
        sfolds.assign_folds(frame(rows), 5)


def test_missing_and_nan_confidences_are_refused(tmp_path: Path) -> None:
    rows = hand_rows()
    samples, run = write_release(tmp_path, rows)
    sample_set = load_samples(samples)
    records = [json.loads(line) for line in run.read_text().splitlines()]
    records[1]["ranked_files"] = [{"path": "zz.py"}]  # no score
    records[4]["ranked_files"] = []  # answered, nothing ranked
    bad = tmp_path / "noscore.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(
        InputError, match=r"2 samples .* missing or NaN rank-1 score: 'x/alpha-p1', 'x/alpha-c0'"
    ):
        srows.selective_rows(load_rankings(bad), sample_set.samples, sample_set.labels)
    zero = srows.selective_rows(
        load_rankings(bad), sample_set.samples, sample_set.labels, missing="zero"
    )
    assert zero.filter(pl.col("sample_id").is_in(["x/alpha-p1", "x/alpha-c0"]))[
        "confidence"
    ].to_list() == [0.0, 0.0]
    table = pl.DataFrame({"sample_id": [r["sample_id"] for r in rows], "path": "zz.py", "rank": 1})
    table = table.with_columns(score=pl.Series([math.nan] + [r["conf"] for r in rows[1:]]))
    parquet = tmp_path / "nan.parquet"
    table.write_parquet(parquet)
    with pytest.raises(InputError, match="expected a finite number, got nan") as info:
        load_rankings(parquet)  # a NaN score is refused where it is read, like TREC's
    assert (info.value.line, info.value.field) == (1, "score")


def test_run_without_no_gold_samples_is_refused(tmp_path: Path) -> None:
    rows = [r for r in hand_rows() if r["label"] == "positive"]
    with pytest.raises(
        InputError, match=r"has no no_gold samples among its 33 samples .*'x/alpha-p0'"
    ):
        sfolds.calibrate({"a": frame(rows, "a")}, folds=5)
    natural_free = [r for r in hand_rows() if r["reason"] in (None, CF)]
    with pytest.raises(
        InputError, match="run 'a' under the natural protocol has no no_gold samples among its 33"
    ):
        sfolds.calibrate({"a": frame(natural_free, "a")}, protocol="natural", folds=5)


# ------------------------------------------------------------ rank -> selective end to end

DEMO = ROOT / "data" / "demo"
SELECTIVE_FIELDS = {"label", "no_gold_reason", "confidence", "top_score", "second_score"}
POSITIVE_ONLY = {"metrics", "gold_ranks", "hard_negative_ranks"}


@pytest.mark.slow
def test_rank_then_selective_reproduces_upstream_pipeline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = {}
    for line in (DEMO / "benchmark" / "demo" / "samples.jsonl").read_text().splitlines():
        record = json.loads(line)
        records[record["id"]] = record
    runs = []
    for method, ranker in (("lexical", "lexical"), ("bm25-arb", "bm25")):
        out = tmp_path / f"demo_selective_{method}_details.jsonl"
        assert main(["rank", "--method", method, "--data", str(DEMO), "--out", str(out)]) == 0
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert [r["sample_id"] for r in rows] == list(records)  # positives and no-gold alike
        for r in rows:
            gold = records[r["sample_id"]]["gold"]
            no_gold = gold.get("no_gold") is True
            assert SELECTIVE_FIELDS | {"score_margin", "ranker"} <= set(r)
            assert r["ranker"] == ranker
            assert r["label"] == ("no_gold" if no_gold else "positive")
            assert r["no_gold_reason"] == (gold["reason"] if no_gold else None)
            # confidence = top chunk score = best file score; margin = top - second chunk
            assert r["confidence"] == r["top_score"] == r["top_file_scores"][0]["score"]
            assert r["second_score"] <= r["top_score"]
            assert r["score_margin"] == r["top_score"] - r["second_score"]
            assert (set(r) >= POSITIVE_ONLY) == (not no_gold)
            assert no_gold or "hard_negative_files" in r
        runs.append((out, rows))
    literal = []
    for r in runs[0][1]:
        no_gold = r["label"] == "no_gold"
        recall = 0.0 if no_gold else r["metrics"]["Recall@20"]
        literal.append(
            {
                "sample_id": r["sample_id"],
                "repo": r["repo"],
                "label": r["label"],
                "reason": r["no_gold_reason"],
                "conf": r["confidence"],
                "recall": recall,
            }
        )
    for protocol in ("mixed", "natural"):
        argv = [
            "selective",
            str(runs[0][0]),
            str(runs[1][0]),
            "--samples",
            str(DEMO / "benchmark" / "demo"),
        ]
        assert main([*argv, "--protocol", protocol, "--folds", "5"]) == 0
        report = json.loads(capsys.readouterr().out)
        subset = literal if protocol == "mixed" else ref.natural(literal)
        expected = ref.out_of_fold(subset, 5)  # upstream's 5 folds: the demo has 5 repos
        assert report["repo_folds"] == expected["folds"]
        first = report["runs"][0]
        assert first["run"] == "demo_selective_lexical"
        assert [f["threshold"] for f in first["folds"]] == expected["thresholds"]
        for key, value in expected["out_of_fold"].items():
            assert first["out_of_fold"][key] == pytest.approx(value, abs=1e-12), key
        assert first["no_abstain"] == pytest.approx(expected["no_abstain"], abs=1e-12)
