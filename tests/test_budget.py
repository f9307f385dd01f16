"""Canonical BCY (spec §5.7): TV7, a literal reference on random inputs, failures counted."""

from __future__ import annotations

import re
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbwb.io.corpus import Corpus, open_corpus, snapshot_id
from arbwb.jsonio import write_jsonl
from arbwb.metrics import evaluate, parse_metric
from arbwb.metrics.budget import MissingSnapshotWarning, bcy_curves, bcy_metrics, bcy_table, pack

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^A-Za-z0-9_\s]")


def write_corpus(root: Path, snapshots: Mapping[str, Mapping[str, str]]) -> Corpus:
    """A corpus folder with one chunk file per snapshot (file rows only) and its manifest."""
    manifest = []
    for sid, files in snapshots.items():
        repo, commit = sid.split("@")
        rel = f"{repo.replace('/', '__')}/{commit}.chunks.jsonl"
        rows = [
            {
                "chunk_id": f"c{i}",
                "repo": repo,
                "base_commit": commit,
                "path": path,
                "kind": "file",
                "symbol": "",
                "start_line": 1,
                "end_line": 1,
                "text": text,
            }
            for i, (path, text) in enumerate(files.items())
        ]
        write_jsonl(root / rel, rows)
        manifest.append({"repo": repo, "base_commit": commit, "status": "ok", "chunks_path": rel})
    write_jsonl(root / "corpus_manifest.jsonl", manifest)
    return open_corpus(root)


def frames(
    samples: Sequence[tuple[str, str, str, Sequence[str], Sequence[str]]],
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(run, sample_id, snapshot_id, ranked paths, gold paths) -> rankings, labels, snapshots."""
    rankings = pl.DataFrame(
        [
            {"run": run, "sample_id": sid, "rank": i + 1, "path": p, "score": None}
            for run, sid, _, ranked, _ in samples
            for i, p in enumerate(ranked)
        ],
        schema={
            "run": pl.String,
            "sample_id": pl.String,
            "rank": pl.Int64,
            "path": pl.String,
            "score": pl.Float64,
        },
    )
    labels = pl.DataFrame(
        [
            {"sample_id": sid, "path": p, "role": "gold"}
            for _, sid, _, _, gold in samples
            for p in gold
        ],
        schema={"sample_id": pl.String, "path": pl.String, "role": pl.String},
    ).unique(maintain_order=True)
    snapshots = pl.DataFrame(
        [{"sample_id": sid, "snapshot_id": snap} for _, sid, snap, _, _ in samples]
    ).unique()
    return rankings, labels, snapshots


def reference_bcy(
    ranked: Sequence[str],
    gold: Sequence[str],
    texts: Mapping[str, str],
    budget: int,
    taus: Sequence[int],
) -> dict[str, object]:
    """Spec §5.7 read literally: a loop over the ranked files with re.findall counts."""
    seen: list[str] = []
    for path in ranked:
        if path and path not in seen:
            seen.append(path)
    seen = seen[:20]
    used = packed = partial = missing = 0
    covered: dict[int, set[str]] = {t: set() for t in taus}
    for path in seen:
        if path not in texts:
            missing += 1
            continue
        h = len(TOKEN.findall("### " + path + "\n"))
        c = len(TOKEN.findall(texts[path]))
        total = h + c + (1 if texts[path] else 0)
        if budget - used <= 0:
            break
        packed += 1
        if total <= budget - used:
            used += total
            m = c
        else:
            partial += 1
            m = min(c, max(0, budget - used - h))
            used = budget
        if path in gold and c > 0:
            for t in taus:
                if m >= min(t, c):
                    covered[t].add(path)
        if used >= budget:
            break
    g = set(gold)
    return {
        "used_tokens": used,
        "packed_files": packed,
        "partial_files": partial,
        "missing_ranked_files": missing,
        **{f"bcy{t}": len(covered[t]) / len(g) for t in taus},
    }


TV7_TEXTS = {
    "a.py": "alpha beta gamma",
    "b.py": "one two three four five six",
    "gold.py": "def f(x):\n    return x + 1",
    "empty.py": "",
}
TV7 = [  # ranked, gold, B, used, BCY at tau 1/2/4/16, packed, partial, missing
    ("a gold", "gold", 10, 10, (0, 0, 0, 0), 1, 0, 0),
    ("a gold", "gold", 16, 16, (0, 0, 0, 0), 2, 1, 0),
    ("a gold", "gold", 17, 17, (1, 0, 0, 0), 2, 1, 0),
    ("a gold", "gold", 20, 20, (1, 1, 1, 0), 2, 1, 0),
    ("a gold", "gold", 27, 27, (1, 1, 1, 1), 2, 0, 0),
    ("missing empty a gold b", "gold b", 30, 30, (0.5, 0.5, 0.5, 0), 3, 1, 1),
    ("missing empty a gold b", "gold b", 40, 40, (1.0, 0.5, 0.5, 0.5), 4, 1, 1),
    ("gold", "gold", 5, 5, (0, 0, 0, 0), 1, 1, 0),
    ("gold", "gold", 7, 7, (1, 0, 0, 0), 1, 1, 0),
]


@pytest.fixture
def tv7_corpus(tmp_path: Path) -> Corpus:
    return write_corpus(tmp_path, {"o/r@abc": TV7_TEXTS})


@pytest.mark.parametrize("row", TV7, ids=[f"tv7-{i}" for i in range(len(TV7))])
def test_tv7(
    row: tuple[str, str, int, int, tuple[float, ...], int, int, int], tv7_corpus: Corpus
) -> None:
    ranked, gold, budget, used, bcys, packed, partial, missing = row
    paths = [f"{p}.py" for p in ranked.split()]
    rankings, labels, snaps = frames(
        [("r", "s", "o/r@abc", paths, [f"{g}.py" for g in gold.split()])]
    )
    table = bcy_table(
        rankings, labels, tv7_corpus, snapshots=snaps, budgets=[budget], thresholds=[1, 2, 4, 16]
    )
    assert table["tau"].to_list() == [1, 2, 4, 16]
    assert table["bcy"].to_list() == list(bcys)
    first = table.row(0, named=True)
    assert (first["used_tokens"], first["packed_files"], first["partial_files"]) == (
        used,
        packed,
        partial,
    )
    assert first["missing_ranked_files"] == missing
    assert first["gold_count"] == len(gold.split())
    assert not first["lower_bound"] and not first["missing_snapshot"]


def test_tv7_costs_match_spec_headers(tv7_corpus: Corpus) -> None:
    files = tv7_corpus.files("o/r@abc").sort("path")
    assert dict(zip(files["path"], files["n_tokens"], strict=True)) == {
        "a.py": 3,
        "b.py": 6,
        "empty.py": 0,
        "gold.py": 10,
    }


PATHS = ["a.py", "b/c.py", "d.txt", "é.md", "x y.py", "n1", "gone.py"]


@st.composite
def bcy_cases(
    draw: st.DrawFn,
) -> tuple[dict[str, str], list[tuple[list[str], list[str]]], list[int], list[int]]:
    texts = draw(st.dictionaries(st.sampled_from(PATHS[:-1]), st.text(max_size=40), max_size=6))
    samples = draw(
        st.lists(
            st.tuples(
                st.lists(st.sampled_from(PATHS), max_size=24),
                st.lists(st.sampled_from(PATHS), min_size=1, max_size=3, unique=True),
            ),
            min_size=1,
            max_size=4,
        )
    )
    budgets = draw(st.lists(st.integers(1, 120), min_size=1, max_size=3, unique=True))
    taus = sorted(set(draw(st.lists(st.integers(1, 20), max_size=3))) | {1})
    return texts, samples, budgets, taus


@settings(max_examples=40, deadline=None)
@given(bcy_cases())
def test_bcy_equals_literal_reference(
    case: tuple[dict[str, str], list[tuple[list[str], list[str]]], list[int], list[int]],
) -> None:
    texts, samples, budgets, taus = case
    rows = [
        (run, f"s{i}", "o/r@abc", ranked, gold)
        for i, (ranked, gold) in enumerate(samples)
        for run in ("r1", "r2")
        if run == "r1" or i % 2 == 0
    ]
    # rankings hold distinct paths (schema contract); the reference dedups the raw list itself.
    deduped = [(r, s, sn, list(dict.fromkeys(ranked)), g) for r, s, sn, ranked, g in rows]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = write_corpus(Path(tmp), {"o/r@abc": texts})
        rankings, labels, snaps = frames(deduped)
        table = bcy_table(
            rankings, labels, corpus, snapshots=snaps, budgets=budgets, thresholds=taus
        )
    got = {
        (r["run"], r["sample_id"], r["budget"], r["tau"]): r for r in table.iter_rows(named=True)
    }
    samples_by_run = {(run, sid) for run, sid, *_ in rows}
    runs = set(rankings["run"])  # a run is known from its rows
    for i, (ranked, gold) in enumerate(samples):
        for run in runs:
            for budget in budgets:
                ref = reference_bcy(
                    ranked if (run, f"s{i}") in samples_by_run else [], gold, texts, budget, taus
                )
                for tau in taus:
                    row = got[(run, f"s{i}", budget, tau)]
                    assert row["bcy"] == ref[f"bcy{tau}"]
                    for key in (
                        "used_tokens",
                        "packed_files",
                        "partial_files",
                        "missing_ranked_files",
                    ):
                        assert row[key] == ref[key], key


def test_missing_snapshot_is_a_counted_failure(tv7_corpus: Corpus) -> None:
    rankings, labels, snaps = frames(
        [
            ("r", "s1", "o/r@abc", ["gold.py"], ["gold.py"]),
            ("r", "s2", "o/r@zzz", ["gold.py"], ["gold.py"]),
        ]
    )
    with pytest.warns(MissingSnapshotWarning, match="1 \\(run, sample\\) pairs"):
        table = bcy_table(rankings, labels, tv7_corpus, snapshots=snaps, budgets=[8000])
    tau1 = table.filter(pl.col("tau") == 1)
    assert tau1.select("sample_id", "bcy", "missing_snapshot").rows() == [
        ("s1", 1.0, False),
        ("s2", 0.0, True),
    ]


def test_lower_bound_flag_needs_a_full_prefix(tv7_corpus: Corpus) -> None:
    twenty = ["a.py", "gold.py"] + [f"m{i}.py" for i in range(18)]
    rankings, labels, snaps = frames(
        [
            ("r", "full", "o/r@abc", twenty, ["gold.py"]),
            ("r", "short", "o/r@abc", ["a.py", "gold.py"], ["gold.py"]),
        ]
    )
    table = bcy_table(
        rankings, labels, tv7_corpus, snapshots=snaps, budgets=[27, 8000], thresholds=[1]
    )
    flags = {(r["sample_id"], r["budget"]): r["lower_bound"] for r in table.iter_rows(named=True)}
    assert flags == {
        ("full", 27): False,
        ("full", 8000): True,
        ("short", 27): False,
        ("short", 8000): False,
    }
    used = {
        (r["sample_id"], r["budget"]): r["missing_ranked_files"]
        for r in table.iter_rows(named=True)
    }
    assert used[("full", 27)] == 0 and used[("full", 8000)] == 18


def test_ranks_beyond_20_are_ignored(tv7_corpus: Corpus) -> None:
    ranked = [f"m{i}.py" for i in range(20)] + ["gold.py"]
    rankings, labels, snaps = frames([("r", "s", "o/r@abc", ranked, ["gold.py"])])
    table = bcy_table(rankings, labels, tv7_corpus, snapshots=snaps, budgets=[8000], thresholds=[1])
    assert table.select("bcy", "missing_ranked_files", "packed_files").row(0) == (0.0, 20, 0)


def test_bcy_metrics_and_evaluate(tv7_corpus: Corpus) -> None:
    rankings, labels, snaps = frames(
        [
            ("r", "s1", "o/r@abc", ["a.py", "gold.py"], ["gold.py"]),
            ("r", "s2", "o/r@abc", ["b.py"], ["gold.py", "b.py"]),
        ]
    )
    specs = [parse_metric("bcy@17"), parse_metric("bcy_tau2@17")]
    got = bcy_metrics(rankings, labels, tv7_corpus, specs, snapshots=snaps)
    assert sorted(got.select("sample_id", "metric", "value").rows()) == [
        ("s1", "bcy@17", 1.0),
        ("s1", "bcy_tau2@17", 0.0),
        ("s2", "bcy@17", 0.5),
        ("s2", "bcy_tau2@17", 0.5),
    ]
    samples = snaps.with_columns(task=pl.lit("code2test"))
    full = evaluate(
        rankings, labels, metrics=["recall@1", "bcy@17"], samples=samples, corpus=tv7_corpus
    )
    assert full.filter(pl.col("metric") == "bcy@17").sort("sample_id")["value"].to_list() == [
        1.0,
        0.5,
    ]


def test_sample_without_snapshot_is_input_error(tv7_corpus: Corpus) -> None:
    rankings, labels, _ = frames([("r", "s1", "o/r@abc", ["a.py"], ["a.py"])])
    empty = pl.DataFrame(schema={"sample_id": pl.String, "snapshot_id": pl.String})
    with pytest.raises(Exception, match="no snapshot"):
        bcy_table(rankings, labels, tv7_corpus, snapshots=empty)


def test_bad_budgets_are_rejected(tv7_corpus: Corpus) -> None:
    rankings, labels, snaps = frames([("r", "s1", "o/r@abc", ["a.py"], ["a.py"])])
    with pytest.raises(ValueError, match="positive"):
        bcy_table(rankings, labels, tv7_corpus, snapshots=snaps, budgets=[0, 8000])


def test_curves_bootstrap_and_overall(tv7_corpus: Corpus) -> None:
    rows = [
        ("r", f"s{i}", "o/r@abc", ["gold.py"] if i % 2 else ["a.py"], ["gold.py"]) for i in range(6)
    ]
    rankings, labels, snaps = frames(rows)
    table = bcy_table(rankings, labels, tv7_corpus, snapshots=snaps, budgets=[8000], thresholds=[1])
    tasks = pl.DataFrame(
        {"sample_id": [f"s{i}" for i in range(6)], "task": ["t1"] * 4 + ["t2"] * 2}
    )
    curves = bcy_curves(table, tasks, n_boot=500, seed=1)
    got = {r["task"]: r for r in curves.iter_rows(named=True)}
    assert (got["overall"]["n"], got["overall"]["bcy"]) == (6, 0.5)
    assert (got["t1"]["n"], got["t1"]["bcy"], got["t2"]["bcy"]) == (4, 0.5, 0.5)
    assert 0.0 <= got["overall"]["ci_low"] < 0.5 < got["overall"]["ci_high"] <= 1.0
    assert bcy_curves(table, tasks, n_boot=500, seed=1).equals(curves)  # seeded
    with pytest.raises(Exception, match="no task"):
        bcy_curves(table, tasks.head(2))


def test_pack_gives_zero_rows_for_unranked_gold_samples() -> None:
    ranked = pl.DataFrame(
        {
            "run": ["r"],
            "sample_id": ["a"],
            "rank": [1],
            "path": ["x.py"],
            "n_tokens": [5],
            "n_bytes": [9],
        }
    )
    gold = pl.DataFrame({"sample_id": ["a", "b"], "path": ["x.py", "y.py"]})
    out = pack(ranked, gold, budgets=[100], thresholds=[1])
    assert out.sort("sample_id").select("sample_id", "bcy", "used_tokens").rows() == [
        ("a", 1.0, 12),
        ("b", 0.0, 0),
    ]


def test_snapshot_id_format() -> None:
    assert snapshot_id("o/r", "abc") == "o/r@abc"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert snapshot_id("a/b", "c") == "a/b@c"
