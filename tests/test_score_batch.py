"""Scoring runs together (``score_all``, ``run_summaries``, one ``score_table``) gives exactly
what scoring them one at a time gives; aggregation over many runs and metrics at once equals
a literal per-group computation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arbwb.analysis import scoring
from arbwb.io.corpus import Corpus, open_corpus
from arbwb.jsonio import write_jsonl
from arbwb.metrics.aggregate import aggregate, pooled_mean, task_macro

COMMITS = ("a" * 40, "b" * 40)
TEXTS = {
    "src/a.py": "def a():\n    return 1\n" * 30,
    "src/b.py": "class B:\n    pass\n" * 200,
    "tests/test_a.py": "import a\nassert a.a() == 1\n" * 10,
    "docs/x.md": "",
    "big.py": "x = [" + ", ".join(map(str, range(3000))) + "]",
}
METRICS = ["recall@5", "mrr", "bcy@64", "bcy@512", "bcy_tau16@4000"]


def write_corpus(root: Path) -> Corpus:
    """One snapshot per commit (``o/r``), the first lacking ``big.py``; a third is unlisted."""
    manifest = []
    for i, commit in enumerate(COMMITS):
        rows = [
            {
                "base_commit": commit,
                "chunk_id": f"c{j}",
                "end_line": text.count("\n") + 1,
                "kind": "file",
                "path": path,
                "repo": "o/r",
                "start_line": 1,
                "symbol": "",
                "text": text,
            }
            for j, (path, text) in enumerate(TEXTS.items())
            if i or path != "big.py"
        ]
        write_jsonl(root / "o__r" / f"{commit}.chunks.jsonl", rows)
        manifest.append({"repo": "o/r", "base_commit": commit, "status": "ok"})
        manifest[-1]["chunks_path"] = f"o__r/{commit}.chunks.jsonl"
    write_jsonl(root / "corpus_manifest.jsonl", manifest)
    return open_corpus(root, cache_dir=root / "cache")


def details_row(
    sid: str, task: str, commit: str, gold: list[str], top: list[str]
) -> dict[str, Any]:
    return {
        "sample_id": sid,
        "task_type": task,
        "repo": "o/r",
        "base_commit": commit,
        "gold_files": gold,
        "top_files": top,
    }


SAMPLES = [  # sample id, task, commit, gold
    ("s1", "code2test", COMMITS[0], ["tests/test_a.py"]),
    ("s2", "trace2code", COMMITS[1], ["src/a.py", "big.py"]),
    ("s3", "trace2code", COMMITS[0], ["src/b.py"]),
    ("s4", "code2test", "c" * 40, ["src/a.py"]),  # snapshot the corpus lacks
]
TOPS = {
    "lex": {
        "s1": ["src/b.py", "tests/test_a.py"],
        "s2": ["big.py", "src/a.py"],
        "s3": ["docs/x.md", "src/b.py", "gone.py"],
        "s4": ["src/a.py"],
    },
    "dense": {
        "s1": ["tests/test_a.py"],
        "s2": ["src/a.py", "src/b.py", "big.py"],
        "s3": [],
        "s4": ["x.py", "src/a.py"],
    },
    "grep": {"s1": [], "s2": ["src/b.py"], "s3": ["src/b.py"], "s4": []},
}


def write_runs(root: Path) -> list[Path]:
    """Three runs judged by the same gold, a fourth whose s3 gold differs, a fifth whose
    details list the samples in another order (same gold)."""
    paths = []
    for name, tops in TOPS.items():
        rows = [details_row(s, t, c, g, tops[s]) for s, t, c, g in SAMPLES]
        paths.append(root / f"{name}_details.jsonl")
        write_jsonl(paths[-1], rows)
    other = [
        details_row(s, t, c, ["src/a.py"] if s == "s3" else g, TOPS["lex"][s])
        for s, t, c, g in SAMPLES
    ]
    paths.append(root / "regold_details.jsonl")
    write_jsonl(paths[-1], other)
    reordered = [details_row(s, t, c, g, TOPS["dense"][s]) for s, t, c, g in reversed(SAMPLES)]
    paths.append(root / "reordered_details.jsonl")
    write_jsonl(paths[-1], reordered)
    return paths


@pytest.fixture
def loaded(tmp_path: Path) -> tuple[list[scoring.RunData], Corpus]:
    corpus = write_corpus(tmp_path / "corpus")
    return scoring.load_runs(write_runs(tmp_path)), corpus


def test_score_all_equals_one_run_at_a_time(
    loaded: tuple[list[scoring.RunData], Corpus], tmp_path: Path
) -> None:
    runs, corpus = loaded
    with pytest.warns(UserWarning, match="snapshot the corpus lacks"):
        together = scoring.score_all(runs, None, METRICS, corpus)
    alone_corpus = open_corpus(corpus.root)  # no shared memory, no disk cache
    with pytest.warns(UserWarning):
        alone = [scoring.score_run(r, None, METRICS, alone_corpus) for r in runs]
    assert [s.run.run for s in together] == ["lex", "dense", "grep", "regold", "reordered"]
    for got, want in zip(together, alone, strict=True):
        assert got.metrics.equals(want.metrics), got.run.run
        assert got.counts == want.counts
        assert got.samples.equals(want.samples)
    assert together[0].counts["n_missing_snapshot"] == 1
    # the regold run really is judged by its own gold: s3's gold src/a.py is never ranked
    regold = together[3].metrics.filter(pl.col("sample_id") == "s3", pl.col("metric") == "recall@5")
    assert regold["value"].to_list() == [0.0]
    for by in (None, "task", "repo", "split"):
        assert scoring.run_summaries(together, by) == [
            scoring.run_summaries([s], by)[0] for s in alone
        ]


def test_one_score_table_equals_per_run_tables_in_grouping_order(
    loaded: tuple[list[scoring.RunData], Corpus],
) -> None:
    runs, corpus = loaded
    with pytest.warns(UserWarning):
        scored = scoring.score_all(runs, None, METRICS, corpus)
    table = scoring.score_table(scored, by="repo")
    singles = [scoring.score_table([s], by="repo") for s in scored]
    expected = pl.concat(
        [t.filter(pl.col("grouping") == g) for g in ("overall", "task", "repo") for t in singles]
    )
    assert table.equals(expected)
    # the overall mean is the plain mean of the per-sample values
    for s in scored:
        for metric, part in s.metrics.group_by("metric"):
            values = part["value"].to_list()
            row = table.filter(
                pl.col("run") == s.run.run,
                pl.col("grouping") == "overall",
                pl.col("metric") == metric[0],
            ).row(0, named=True)
            assert row["n"] == len(values)
            assert row["value"] == pytest.approx(sum(values) / len(values), abs=1e-12)


def test_score_cli_output_equals_per_run_summaries(
    loaded: tuple[list[scoring.RunData], Corpus], tmp_path: Path
) -> None:
    from arbwb.cli import main

    runs, corpus = loaded
    out = tmp_path / "score.json"
    argv = ["score", *(r.path for r in runs), "--corpus", str(corpus.root), "--metrics"]
    with pytest.warns(UserWarning):
        assert main([*argv, ",".join(METRICS), "--no-cache", "--out", str(out)]) == 0
        alone = [scoring.score_run(r, None, METRICS, open_corpus(corpus.root)) for r in runs]
    assert json.loads(out.read_text())["runs"] == [scoring.run_summaries([s])[0] for s in alone]


def test_aggregate_many_runs_and_metrics_equals_literal_group_means() -> None:
    samples = pl.DataFrame(
        {
            "sample_id": ["s1", "s2", "s3", "s4", "s5"],
            "task": ["code2test", "trace2code", "code2test", "edit2ripple", "trace2code"],
        }
    )
    values = {  # (run, metric) -> per-sample values, None = no value
        ("r2", "mrr"): [0.5, None, 1.0, 0.25, 0.0],
        ("r2", "first_gold_rank"): [2.0, None, 1.0, 4.0, None],
        ("r1", "mrr"): [1.0, 0.5, 0.0, 1 / 3, 0.2],
        ("r1", "first_gold_rank"): [None, None, None, None, None],
    }
    metrics = pl.DataFrame(
        [
            {"run": run, "sample_id": f"s{i + 1}", "metric": metric, "value": v}
            for (run, metric), vs in values.items()
            for i, v in enumerate(vs)
        ],
        schema={"run": pl.String, "sample_id": pl.String, "metric": pl.String, "value": pl.Float64},
    )
    task_of = dict(samples.iter_rows())

    def mean(xs: list[float | None]) -> float | None:
        """Spec §0 literally: a left-to-right sum divided by the count."""
        total, count = 0.0, 0
        for x in xs:
            if x is not None:
                total, count = total + x, count + 1
        return total / count if count else None

    overall = {
        (r["run"], r["metric"]): (r["n"], r["value"])
        for r in aggregate(metrics).iter_rows(named=True)
    }
    assert list(overall) == list(values)  # groups in order of appearance
    for key, vs in values.items():
        assert overall[key][0] == 5
        assert overall[key][1] == mean(vs)  # the same additions in the same order
    by_task = aggregate(metrics, samples, by="task")
    assert by_task["run"].to_list() == sorted(by_task["run"].to_list())
    for row in by_task.iter_rows(named=True):
        vs = values[(row["run"], row["metric"])]
        part = [v for i, v in enumerate(vs) if task_of[f"s{i + 1}"] == row["task"]]
        assert row["n"] == len(part)
        assert row["value"] == mean(part)
    macro = task_macro(metrics, samples)
    for row in macro.iter_rows(named=True):
        vs = values[(row["run"], row["metric"])]
        tasks = sorted(set(task_of.values()))
        per_task = [mean([v for i, v in enumerate(vs) if task_of[f"s{i + 1}"] == t]) for t in tasks]
        kept = [m for m in per_task if m is not None]
        want = sum(kept) / len(kept) if kept else None
        assert row["value"] == (None if want is None else pytest.approx(want, abs=1e-12))
        assert row["n_tasks"] == 3 and row["tasks"] == ",".join(tasks)


def test_pooled_mean_sums_left_to_right_where_blocked_sums_differ() -> None:
    # 40 values whose sum depends on the order: 1e16 swallows the ones added after it
    values: list[float | None] = [1.0] * 20 + [1e16] + [1.0] * 18 + [-1e16, None]
    total = 0.0
    for v in values[:-1]:
        total += v  # type: ignore[operator]
    assert pooled_mean(values) == total / 40
    assert pooled_mean([None, float("nan")]) is None
    metrics = pl.DataFrame(
        {"run": ["r"] * 41, "sample_id": [f"s{i:02d}" for i in range(41)], "metric": ["m"] * 41},
    ).with_columns(value=pl.Series(values, dtype=pl.Float64))
    assert aggregate(metrics).rows() == [("r", "m", 41, total / 40)]


def test_cached_costs_of_many_snapshots_read_together_and_bad_entries_recomputed(
    tmp_path: Path,
) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    wanted = {f"o/r@{c}": ["src/a.py", "big.py", "gone.py"] for c in COMMITS}
    fresh = corpus.file_costs(wanted)
    assert fresh["path"].to_list() == ["src/a.py", "big.py", "src/a.py"]  # first lacks big.py
    entries = sorted((tmp_path / "corpus" / "cache").glob("*.paths.parquet"))
    assert len(entries) == 2
    again = open_corpus(corpus.root, cache_dir=corpus.root / "cache")
    assert again.file_costs(wanted).equals(fresh)
    assert again.file_costs({f"o/r@{COMMITS[0]}": ["docs/x.md"]})["n_tokens"].to_list() == [0]
    entries[0].write_bytes(b"not parquet")  # unreadable: recomputed from the chunk file
    third = open_corpus(corpus.root, cache_dir=corpus.root / "cache")
    assert third.file_costs(wanted).equals(fresh)


def test_snapshots_looked_up_together_are_read_from_one_bundle(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    cache = corpus.root / "cache"
    wanted = {f"o/r@{c}": ["src/a.py", "gone.py"] for c in COMMITS}
    fresh = corpus.file_costs(wanted)
    (bundle,) = (cache / "bundles").glob("*.parquet")
    # the next lookup of the same snapshots reads the bundle: prove it by editing the bundle
    edited = pl.read_parquet(bundle).with_columns(n_tokens=pl.col("n_tokens") * 10)
    edited.write_parquet(bundle)
    reread = open_corpus(corpus.root, cache_dir=cache).file_costs(wanted)
    assert reread["n_tokens"].to_list() == [t * 10 for t in fresh["n_tokens"]]
    # a rewritten entry changes the bundle's key: the entries are read (and bundled) again
    entry = next(cache.glob("*.paths.parquet"))
    pl.read_parquet(entry).write_parquet(entry)
    again = open_corpus(corpus.root, cache_dir=cache).file_costs(wanted)
    assert again.equals(fresh)
    assert len(list((cache / "bundles").glob("*.parquet"))) == 2
    # a lookup of other paths scans for them and bundles the grown entries
    more = {sid: ["src/b.py"] for sid in wanted}
    assert open_corpus(corpus.root, cache_dir=cache).file_costs(more).height == 2
    assert len(list((cache / "bundles").glob("*.parquet"))) == 3


def test_score_with_bcy_loads_no_numpy(
    loaded: tuple[list[scoring.RunData], Corpus], tmp_path: Path
) -> None:
    """Importing numpy costs a warm ``arbwb score`` about a fifth of its time (reading chunk
    files cold may use it)."""
    import os
    import subprocess
    import sys

    runs, corpus = loaded
    argv = ["score", *(r.path for r in runs), "--corpus", str(corpus.root)]
    argv += ["--metrics", "recall@5,mrr,bcy@512", "--by", "repo", "--out", str(tmp_path / "s.json")]
    probe = (
        "import sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "from arbwb.cli import main\n"
        f"assert main({argv!r}) == 0\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'matplotlib') if m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[1]
    env = os.environ | {"ARBWB_CACHE_DIR": str(tmp_path / "cache")}
    loads = [
        subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
            env=env,
        ).stdout.split("\n")[-2]
        for _ in ("cold", "warm")
    ]
    assert loads[1] == "[]"
    assert json.loads((tmp_path / "s.json").read_text())["runs"][0]["run"] == "lex"
