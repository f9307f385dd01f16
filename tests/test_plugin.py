"""Your own retriever: the protocol, the three ways to name it, error rows, report and fusion."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from arbwb.analysis import board as boards
from arbwb.analysis import leaderboard as lb
from arbwb.cli import main
from arbwb.errors import InputError
from arbwb.io import method_table as mt
from arbwb.io.corpus import open_corpus
from arbwb.io.release import load_release
from arbwb.io.samples import load_samples
from arbwb.paths import DEMO_DIR
from arbwb.retrievers.common import chunk_paths
from arbwb.retrievers.plugin import adapt, file_ranking, load_factory, parse_options, resolve
from arbwb.retrievers.release_runs import rank_release
from arbwb.retrievers.runner import run_method

REPO = Path(__file__).resolve().parents[1]
#: The demo's stored runs of the ``eval/demo`` group, which a new run there is compared with.
BASELINES = sorted((DEMO_DIR / "eval/demo").glob("*_details.jsonl"))

#: A plug-in written the way a user would, outside arbwb: the score of a chunk is the number
#: of distinct query words (at least ``min_length`` letters) in its text, plus a tiny length
#: term so that ties are rare; it says its own family.
PLUGIN = """
import re

class Overlap:
    family = "word overlap"

    def __init__(self, min_length):
        self.min_length = min_length

    def words(self, text):
        return {w.lower() for w in re.findall(r"[A-Za-z]+", text) if len(w) >= self.min_length}

    def index(self, chunks):
        return [(self.words(t), len(t)) for t in chunks["text"].to_list()]

    def score(self, index, query):
        wanted = self.words(query)
        return [len(wanted & words) + n / 1e7 for words, n in index]

def make(min_length=3):
    return Overlap(min_length)
"""


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _env(*paths: Path) -> dict[str, str]:
    """The environment of a CLI subprocess: ``paths`` then this checkout on PYTHONPATH."""
    return os.environ | {"PYTHONPATH": os.pathsep.join(str(p) for p in (*paths, REPO))}


def _arbwb(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "arbwb", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo release (the report writes nothing into data/demo)."""
    root = tmp_path_factory.mktemp("demo") / "demo"
    shutil.copytree(DEMO_DIR, root)
    return root


@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside arbwb holding ``myplug.py``."""
    folder = tmp_path_factory.mktemp("plugins")
    (folder / "myplug.py").write_text(PLUGIN, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def plugin_run(demo: Path, plugins: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``myplug:make`` ranked over the demo by the CLI, into ``runs/demo/`` (group ``demo``)."""
    out = tmp_path_factory.mktemp("runs") / "demo" / "myplug_details.jsonl"
    args = ("rank", "--method", "myplug:make", "--option", "min_length=4")
    done = _arbwb(*args, "--data", str(demo), "--out", str(out), cwd=REPO, env=_env(plugins))
    assert done.returncode == 0, done.stderr
    return out


def _best_chunk_files(demo: Path, min_length: int) -> dict[str, str]:
    """Each sample's expected top file, computed from the chunk files without arbwb."""
    manifest = _rows(demo / "corpus/demo/corpus_manifest.jsonl")
    chunk_file = {
        (m["repo"], m["base_commit"]): demo / "corpus" / m["chunks_path"] for m in manifest
    }
    expected = {}
    for sample in _rows(demo / "benchmark/demo/samples.jsonl"):
        query = json.dumps(sample["query"], ensure_ascii=False, sort_keys=True)
        wanted = {w.lower() for w in _words(query) if len(w) >= min_length}
        chunks = _rows(chunk_file[(sample["repo"], sample["base_commit"])])
        scored = [
            (-(len(wanted & {w.lower() for w in _words(c["text"]) if len(w) >= min_length})
               + len(c["text"]) / 1e7), c["path"], c["chunk_id"])
            for c in chunks
        ]  # fmt: skip
        expected[sample["id"]] = min(scored)[1]  # best score, then path, then chunk id
    return expected


def _with_gold(demo: Path) -> int:
    """The demo's samples that are not no-gold (abstention) samples."""
    records = _rows(demo / "benchmark/demo/samples.jsonl")
    return sum(1 for r in records if r["gold"].get("no_gold") is not True)


def _words(text: str) -> list[str]:
    import re

    return re.findall(r"[A-Za-z]+", text)


def test_module_factory_ranks_the_file_of_the_best_chunk_first(
    plugin_run: Path, demo: Path
) -> None:
    rows = _rows(plugin_run)
    expected = _best_chunk_files(demo, min_length=4)
    assert len(rows) == 95
    assert {r["sample_id"]: r["top_files"][0] for r in rows} == expected
    assert all(len(set(r["top_files"])) == len(r["top_files"]) for r in rows)  # distinct paths
    summary = json.loads((plugin_run.parent / "myplug_summary.json").read_text(encoding="utf-8"))
    assert summary["family"] == "word overlap" and summary["method"] == "myplug"
    assert summary["errors"] == {} and summary["evaluated"] == 95
    assert summary["fingerprint"]["params"]["options"] == {"min_length": 4}


def test_module_in_the_current_folder_and_unknown_names(demo: Path, plugins: Path) -> None:
    out = plugins / "here_details.jsonl"
    done = _arbwb(
        *("rank", "--method", "myplug:make", "--task", "code2test"),
        *("--data", str(demo), "--out", str(out)),
        cwd=plugins,
        env=_env(),  # myplug is importable only because it is in the current folder
    )
    assert done.returncode == 0, done.stderr
    assert {r["task_type"] for r in _rows(out)} == {"code2test"}
    with pytest.raises(InputError, match="unknown method 'bm99'; choose one of lexical, bm25-arb"):
        resolve("bm99")


def test_factory_import_looks_in_the_current_folder(
    tmp_path: Path, plugins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(plugins / "myplug.py", tmp_path / "cwdplug.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    factory = load_factory("cwdplug:make")
    assert factory(min_length=5).min_length == 5
    assert str(tmp_path) in sys.path


def test_entry_point_of_an_installed_package(demo: Path, tmp_path: Path, plugins: Path) -> None:
    site = tmp_path / "site"
    info = site / "overlap_dist-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: overlap-dist\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[arbwb.retrievers]\noverlap = myplug:make\n")
    shutil.copy(plugins / "myplug.py", site / "myplug.py")
    listed = _arbwb("rank", "--list", cwd=tmp_path, env=_env(site))
    assert "lexical\tbuilt-in" in listed.stdout
    assert "overlap\tentry point (overlap-dist)" in listed.stdout
    out = tmp_path / "ep_details.jsonl"
    done = _arbwb(
        *("rank", "--method", "overlap", "--data", str(demo), "--out", str(out)),
        cwd=tmp_path,
        env=_env(site),
    )
    assert done.returncode == 0, done.stderr
    rows = _rows(out)
    assert {r["ranker"] for r in rows} == {"overlap"}
    assert {r["sample_id"]: r["top_files"][0] for r in rows} == _best_chunk_files(demo, 3)


def test_plugin_run_joins_the_leaderboard_with_its_family_and_a_test_per_baseline(
    plugin_run: Path, demo: Path
) -> None:
    release = load_release(demo, extra_runs=[plugin_run])
    assert release.run_group["myplug"] == "demo"
    methods = mt.run_methods(release, mt.read_methods())
    family = dict(methods.select("run", "family").iter_rows())
    assert family["myplug"] == "word overlap" and family["dense_hash"] == "embedding"
    metrics = lb.release_metrics(release, metrics=["recall@20"])
    tests = boards.pairwise_tests(metrics, release.samples, run_group=release.run_group, n_perm=200)
    with_plugin = tests.filter((pl.col("run_a") == "myplug") | (pl.col("run_b") == "myplug"))
    others = {r for r, g in release.run_group.items() if g == "demo" and r != "myplug"}
    assert set(with_plugin["run_a"]) | set(with_plugin["run_b"]) == others | {"myplug"}
    assert with_plugin.height == len(others) == len(BASELINES) == 9
    assert with_plugin["n"].unique().to_list() == [_with_gold(demo)]


class Failing:
    """Scores every chunk 1.0 but raises on one query."""

    def __init__(self, bad_query: str) -> None:
        self.bad_query = bad_query

    def index(self, chunks: pl.DataFrame) -> int:
        return chunks.height

    def score(self, index: int, query: str) -> list[float]:
        if query == self.bad_query:
            msg = "cannot score this query"
            raise RuntimeError(msg)
        return [1.0] * index


def test_a_raising_plugin_gives_one_error_row_and_a_complete_run(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample_set = load_samples(demo / "benchmark/demo")
    bad = sample_set.samples.row(0, named=True)
    method = adapt(Failing(bad["query_text"]), "failing")
    out = tmp_path / "failing_details.jsonl"
    summary = run_method(method, sample_set, open_corpus(demo), out)
    rows = _rows(out)
    errors = [r for r in rows if r.get("status") == "error"]
    assert len(rows) == 95 and summary["evaluated"] == 95
    assert [r["sample_id"] for r in errors] == [bad["sample_id"]]
    assert errors[0]["error"] == "plugin_error" and errors[0]["top_files"] == []
    assert bad["sample_id"] in errors[0]["error_message"]
    assert "RuntimeError: cannot score this query" in errors[0]["error_message"]
    assert summary["errors"] == {"plugin_error": 1}
    assert summary["mode"] == "selective_failing"  # the demo holds no-gold samples
    err = capsys.readouterr().err
    assert err.count("Traceback") == 1 and f"failing raised on sample {bad['sample_id']}" in err


def test_rank_files_keeps_candidate_paths_once_in_order() -> None:
    chunks = pl.DataFrame(
        {"path": ["a.py", "b.py", "a.py", "c.py"], "chunk_id": ["1", "2", "3", "4"]}
    )
    ranking = file_ranking(["gone.py", "c.py", "a.py", "c.py"], chunk_paths(chunks))
    assert ranking.files == ["c.py", "a.py"]
    assert ranking.file_scores == [1.0, 0.5]
    assert ranking.order.tolist() == [3, 0, 2]  # c's chunk, then a's chunks in file order
    assert np.allclose(ranking.scores, [1.0, 0.5, 0.5])


def test_options_are_json_when_they_parse() -> None:
    assert parse_options(["k=3", "name=abc", "on=true", "w=[1, 2]", "e="]) == {
        "k": 3,
        "name": "abc",
        "on": True,
        "w": [1, 2],
        "e": "",
    }
    with pytest.raises(InputError, match="expected key=value"):
        parse_options(["novalue"])


def test_example_word_overlap_runs(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "wo_details.jsonl"
    done = _arbwb(
        *("rank", "--method", "examples.word_overlap:make", "--option", "min_length=4"),
        *("--data", str(demo), "--out", str(out)),
        cwd=REPO,
        env=_env(),
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "wo_summary.json").read_text(encoding="utf-8"))
    assert summary["method"] == "word_overlap" and summary["family"] == "lexical"
    assert summary["evaluated"] == 95 and summary["errors"] == {}
    assert summary["metrics"]["overall"]["Recall@20"] > 0.5


def test_release_runs_are_reused_until_the_plugin_changes(
    demo: Path, plugins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(plugins))
    (written,) = rank_release(["myplug:make"], demo, tmp_path / "runs")
    assert written == tmp_path / "runs/demo/myplug_details.jsonl"
    first = written.stat().st_mtime_ns
    assert rank_release(["myplug:make"], demo, tmp_path / "runs") == [written]
    assert written.stat().st_mtime_ns == first  # same inputs: not ranked again
    rank_release(["myplug:make"], demo, tmp_path / "runs", options={"min_length": 5})
    assert written.stat().st_mtime_ns != first  # other options: ranked again


def test_release_runs_are_ranked_again_when_a_chunk_file_changes_in_place(
    plugins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "demo"
    shutil.copytree(DEMO_DIR, root)
    monkeypatch.syspath_prepend(str(plugins))
    (written,) = rank_release(["myplug:make"], root, tmp_path / "runs")
    first = written.stat().st_mtime_ns
    chunk_file = sorted((root / "corpus").rglob("*.chunks.jsonl"))[0]
    before = chunk_file.stat()
    chunk_file.write_bytes(chunk_file.read_bytes().replace(b"def ", b"fed ", 1))
    os.utime(chunk_file, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert chunk_file.stat().st_size == before.st_size  # only ctime tells
    (again,) = rank_release(["myplug:make"], root, tmp_path / "runs")
    assert again == written and again.stat().st_mtime_ns != first  # ranked again
    (fresh,) = rank_release(["myplug:make"], root, tmp_path / "fresh")
    assert again.read_bytes() == fresh.read_bytes()


def test_a_run_in_a_folder_named_like_a_stored_group_keeps_both(tmp_path: Path) -> None:
    copy = tmp_path / "runs" / "demo" / "lexical_details.jsonl"
    copy.parent.mkdir(parents=True)
    shutil.copy(DEMO_DIR / "eval/demo/lexical_details.jsonl", copy)
    release = load_release(DEMO_DIR, extra_runs=[str(copy)])
    names = [n for n in release.runs if n.endswith("lexical")]
    assert sorted(names) == [str(copy.with_name("lexical")), "eval/demo/lexical"]
    assert {release.run_group[n] for n in names} == {"demo"}


def test_rrf_over_stored_runs_needs_no_queries(demo: Path, tmp_path: Path) -> None:
    runs = [demo / "eval/demo/lexical_details.jsonl", demo / "eval/demo/bm25_details.jsonl"]
    bare = tmp_path / "bare"
    (bare / "benchmark/demo").mkdir(parents=True)
    records = _rows(demo / "benchmark/demo/samples.jsonl")
    lines = [json.dumps({k: v for k, v in r.items() if k != "query"}) for r in records]
    (bare / "benchmark/demo/samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="query"):
        load_samples(bare)  # the samples themselves cannot be loaded
    out, reference = tmp_path / "rrf_details.jsonl", tmp_path / "ref" / "rrf_details.jsonl"
    fused = ["rank", "--method", "rrf", "--runs", *map(str, runs)]
    assert main([*fused, "--data", str(bare), "--out", str(out)]) == 0
    assert main([*fused, "--data", str(demo), "--out", str(reference)]) == 0
    assert out.read_bytes() == reference.read_bytes()
    alone = tmp_path / "alone" / "rrf_details.jsonl"  # no --data at all: gold from the rows
    assert main([*fused, "--out", str(alone)]) == 0
    assert alone.read_bytes() == reference.read_bytes()
    assert len(_rows(out)) == _with_gold(demo) == 74  # samples with gold, answered by both


def test_report_method_never_writes_runs_into_a_folder_that_is_not_a_report(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    foreign = tmp_path / "documents"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    args = ["report", "--data", str(demo), "--method", "lexical", "--out", str(foreign)]
    assert main(args) == 2
    assert "is not an arbwb report" in capsys.readouterr().err
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]


@pytest.mark.slow
def test_report_with_a_plugin_method(demo: Path, plugins: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    args = ("report", "--data", str(demo), "--method", "myplug:make", "--out", str(out))
    done = _arbwb(*args, "--no-progress", cwd=REPO, env=_env(plugins))
    assert done.returncode == 0, done.stderr
    assert (out / "runs/demo/myplug_details.jsonl").is_file()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["parameters"]["extra_runs"] == [str(out / "runs/demo/myplug_details.jsonl")]
    tests = pl.read_csv(out / "tables/01-leaderboard__significance.csv")
    pairs = tests.filter((pl.col("run_a") == "myplug") | (pl.col("run_b") == "myplug"))
    others = set(pairs["run_a"]) | set(pairs["run_b"])
    assert others == {"myplug", *(p.name.removesuffix("_details.jsonl") for p in BASELINES)}
    assert set(pairs.group_by("metric").len()["len"]) == {len(BASELINES)}  # each vs myplug
    methods = pl.read_csv(out / "tables/01-leaderboard__methods.csv")
    assert methods.filter(pl.col("run") == "myplug")["family"].to_list() == ["word overlap"]
