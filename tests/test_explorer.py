"""Sample explorer frames on a hand-built release, and on the demo release."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from arbwb.analysis import explorer as ex
from arbwb.io.release import load_release
from arbwb.paths import DEMO_DIR


def _frames() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    samples = pl.DataFrame(
        {
            "sample_id": ["a", "b", "c"],
            "task": ["code2test", "comment2context", "abstention"],
            "repo": ["o/x", "o/x", "o/y"],
            "snapshot_id": ["o/x@1", "o/x@1", "o/y@1"],
            "stratum": ["positive", "positive", "natural"],
            "split": ["dev", "heldout", "dev"],
            "no_gold_reason": [None, None, "flaky_ci"],
            "query": [
                json.dumps({"pr_title": "t"}),
                json.dumps({"review_comment": "r"}),
                json.dumps({"text": "x"}),
            ],
        }
    )
    labels = pl.DataFrame(
        {
            "sample_id": ["b", "b", "b"],
            "path": ["g1.py", "g2.py", "given.py"],
            "role": ["gold", "gold", "given"],
        }
    )
    rankings = pl.DataFrame(
        {
            "run": ["r1", "r1", "r1", "r2", "r2", "r2"],
            "sample_id": ["b"] * 6,
            "rank": [1, 2, 3, 1, 2, 40],
            "path": ["given.py", "x.py", "g2.py", "y.py", "z.py", "g1.py"],
            "score": [3.0, 2.0, 1.0, None, None, None],
        }
    )
    return samples, labels, rankings


def test_pick_sample_by_id_and_filters() -> None:
    samples, _, _ = _frames()
    assert ex.pick_sample(samples) == "a"
    assert ex.pick_sample(samples, task="comment2context") == "b"
    assert ex.pick_sample(samples, "c", task="code2test") == "c"  # an id wins over filters
    assert ex.pick_sample(samples, repo="o/x", split="heldout") == "b"
    with pytest.raises(ValueError, match="no sample matches"):
        ex.pick_sample(samples, task="edit2ripple")
    with pytest.raises(ValueError, match="not in this release"):
        ex.pick_sample(samples, "zzz")
    with pytest.raises(ValueError, match="unknown sample filters"):
        ex.pick_sample(samples, colour="red")


def test_card_lists_and_first_gold() -> None:
    samples, labels, rankings = _frames()
    card = ex.sample_card(samples, labels, "b")
    assert (card["gold"], card["given"], card["query"]) == (
        ["g1.py", "g2.py"],
        ["given.py"],
        {"review_comment": "r"},
    )
    lists = ex.mark(ex.ranked_lists(rankings, labels, "b", depth=3))
    assert lists.filter(pl.col("run") == "r1")["hit"].to_list() == ["given", "", "GOLD"]
    assert lists.filter(pl.col("run") == "r2")["rank"].to_list() == [1, 2]
    first = ex.first_gold_ranks(rankings, labels, "b", ["r1", "r2", "r3"])
    assert first.rows() == [("r1", 3, 1, 2), ("r2", 40, 1, 2), ("r3", None, 0, 2)]
    with pytest.raises(ValueError, match="depth"):
        ex.ranked_lists(rankings, labels, "b", depth=0)
    assert ex.query_lines({"a": "x" * 7, "b": [1, 2]}, width=6) == ["a: xxxxxx ...", "b: [1, 2]"]


def test_card_without_query_says_so() -> None:
    samples, labels, _ = _frames()
    no_query = samples.with_columns(pl.lit(None, dtype=pl.String).alias("query"))
    card = ex.sample_card(no_query, labels, "b")
    assert card["query"] is None and card["gold"] == ["g1.py", "g2.py"]
    assert ex.query_lines(card["query"]) == [ex.QUERY_UNAVAILABLE]
    assert "unavailable" in ex.QUERY_UNAVAILABLE and "benchmark/" in ex.QUERY_UNAVAILABLE


def test_demo_given_file_trap_sample() -> None:
    release = load_release(DEMO_DIR)
    rankings = pl.concat([r.rankings for r in release.runs.values()])
    sid = ex.pick_sample(release.samples, task="comment2context")
    card = ex.sample_card(release.samples, release.labels, sid)
    assert card["given"] == ["tallyho/ledger.py"] and card["gold"] == ["tallyho/money.py"]
    lists = ex.mark(ex.ranked_lists(rankings, release.labels, sid, depth=5))
    # the given file takes rank 1; the compat copy, walkthrough and notes push gold to rank 5
    hits = lists.filter(pl.col("run") == "lexical")["hit"].to_list()
    assert hits == ["given", "", "", "", "GOLD"]
    details = [json.loads(line) for line in (DEMO_DIR / "eval/demo/bm25-arb_details.jsonl").open()]
    stored = next(d for d in details if d["sample_id"] == sid)["gold_ranks"]["tallyho/money.py"]
    first = ex.first_gold_ranks(rankings, release.labels, sid, ["bm25-arb"])
    assert first["first_gold_rank"].item() == stored


def test_run_on_demo_picks_filters_and_records_the_sample() -> None:
    release = load_release(DEMO_DIR)
    options = ex.ExplorerOptions(task="comment2context", depth=2)
    result = ex.run(release, options)
    sid = ex.pick_sample(release.samples, task="comment2context")
    assert result.skipped is None and result.card["sample_id"] == sid
    assert [t.name for t in result.tables()] == ["ranked_lists", "first_gold_rank"]
    assert result.ranked_lists.columns == ["run", "rank", "path", "score", "hit"]
    assert result.ranked_lists["rank"].max() == 2
    records = result.records()
    assert records["given"] == ["tallyho/ledger.py"] and records["query_available"] is True
    assert records["top1"]["lexical"] == "tallyho/ledger.py"
    assert set(records["first_gold_rank"]) == set(release.runs)
    assert result.card_lines[0].startswith(f"{sid}  comment2context")


def test_run_without_samples_is_a_skip(tmp_path: Path) -> None:
    (tmp_path / "benchmark").mkdir()
    result = ex.run(load_release(tmp_path), ex.ExplorerOptions())
    assert result.records() == {"skipped": f"no samples found under {tmp_path}"}
    assert result.tables() == [] and result.card_lines == []
