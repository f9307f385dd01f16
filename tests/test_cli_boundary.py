"""The CLI's one error boundary: one line and exit 2 per user error, 130 on Ctrl-C, 141 on a
closed stdout, tracebacks only for bugs or with ``--debug``; outputs respect the umask."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arbwb import cli
from arbwb.commands import cache as cache_command
from arbwb.errors import user_message
from arbwb.jsonio import atomic_open
from arbwb.paths import DEMO_DIR, PROJECT_DIR
from arbwb.retrievers.runner import checkpoint_path

DETAILS = DEMO_DIR / "eval" / "demo" / "lexical_details.jsonl"
SELECTIVE = DEMO_DIR / "eval" / "demo_selective" / "lexical_selective_details.jsonl"
#: ``python -c`` program: ``arbwb`` whose rank loop sleeps after each sample, so a test can
#: interrupt it mid-run (the demo ranks in under a second).
SLOW_RANK = (
    "import sys, time\n"
    "import arbwb.retrievers.runner as runner\n"
    "run_method = runner.run_method\n"
    "runner.run_method = lambda *a, **k: run_method(*a, on_sample=lambda i: time.sleep(0.2), **k)\n"
    "from arbwb.cli import main\n"
    "sys.exit(main())\n"
)


def _env() -> dict[str, str]:
    """This process's environment (the test's private cache) with this checkout on the path."""
    return os.environ | {"PYTHONPATH": str(PROJECT_DIR), "HF_HUB_OFFLINE": "1"}


def arbwb(*args: str | Path, umask: int = -1, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``python -m arbwb ARGS`` in a subprocess with this checkout first on the path."""
    command = [sys.executable, "-m", "arbwb", *map(str, args)]
    kwargs.setdefault("capture_output", True)
    return subprocess.run(command, env=_env(), text=True, umask=umask, check=False, **kwargs)


def assert_one_line(result: subprocess.CompletedProcess[str], *names: str | Path) -> str:
    """Exit 2, stderr one ``arbwb X: error:`` line without a traceback, naming every ``names``."""
    lines = result.stderr.splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("arbwb ") and ": error: " in lines[0]
    for name in names:
        assert str(name) in lines[0]
    return lines[0]


def _out_commands(out: Path) -> dict[str, list[str | Path]]:
    """Every command that writes a file, with ``out`` as that file."""
    rows = DEMO_DIR / "contextbench" / "rows.parquet"
    predictions = next((DEMO_DIR / "contextbench" / "predictions").iterdir())
    return {
        "score": ["score", DETAILS, "--out", out],
        "rank": ["rank", "--method", "lexical", "--data", DEMO_DIR, "--out", out, "--no-cache"],
        "depth": ["depth", DETAILS, "--out", out],
        "selective": ["selective", SELECTIVE, "--samples", DEMO_DIR / "benchmark", "--out", out],
        "granularity": ["granularity", "--samples", DEMO_DIR, "--corpus", DEMO_DIR, "--out", out],
        "contextbench": ["contextbench", "score", predictions, "--rows", rows, "--out", out],
        "validate": ["validate", DEMO_DIR, "--json", out],
        "merge-corpus": ["merge-corpus", "--dir", DEMO_DIR, "--out", out],
    }


def _dir_commands(out: Path) -> dict[str, list[str | Path]]:
    """Every command that writes a folder, with ``out`` as that folder."""
    return {
        "report": ["report", "--data", DEMO_DIR, "--out", out, "--no-progress"],
        "demo": ["demo", "build", "--out", out],
        "snapshot": [
            *("snapshot", "build", "--git", PROJECT_DIR, "--repo", "o/n"),
            *("--commit", "HEAD", "--out", out),
        ],
    }


@pytest.mark.parametrize("command", list(_out_commands(Path("x"))))
def test_file_output_onto_a_folder_fails_before_any_work(command: str, tmp_path: Path) -> None:
    line = assert_one_line(arbwb(*_out_commands(tmp_path)[command]), tmp_path)
    assert "is a folder" in line
    assert not any(tmp_path.iterdir())  # no checkpoint, summary or temporary left behind


@pytest.mark.parametrize("command", ["score", "rank", "validate"])
def test_file_output_under_an_existing_file(command: str, tmp_path: Path) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("keep")
    out = blocker / "sub" / "out.json"
    line = assert_one_line(arbwb(*_out_commands(out)[command]), out)
    assert f"{blocker} is a file, not a folder" in line
    assert blocker.read_text() == "keep"


@pytest.mark.parametrize("command", list(_dir_commands(Path("x"))))
def test_folder_output_onto_or_under_a_file(command: str, tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    target.write_text("keep")
    assert "is a file" in assert_one_line(arbwb(*_dir_commands(target)[command]), target)
    under = target / "report"
    assert "is a file, not a folder" in assert_one_line(arbwb(*_dir_commands(under)[command]))
    assert target.read_text() == "keep"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
@pytest.mark.parametrize("command", ["score", "rank"])
def test_file_output_in_a_read_only_folder(command: str, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    out = locked / "out.json"
    assert "permission denied" in assert_one_line(arbwb(*_out_commands(out)[command]), out)


def test_closed_stdout_ends_quietly_with_141() -> None:
    """``arbwb score ... | head`` where head has gone: no BrokenPipeError traceback."""
    read, write = os.pipe()
    os.close(read)  # every write to stdout now fails with EPIPE
    try:
        result = arbwb(
            "score",
            DETAILS,
            "--format",
            "markdown",
            stdout=write,
            stderr=subprocess.PIPE,
            capture_output=False,
        )
    finally:
        os.close(write)
    assert result.returncode == cli.EXIT_BROKEN_PIPE
    assert result.stderr == ""


def test_debug_shows_the_traceback_of_a_user_error(tmp_path: Path) -> None:
    result = arbwb("--debug", "score", DETAILS, "--out", tmp_path)
    assert result.returncode == 1
    assert "Traceback" in result.stderr and "InputError" in result.stderr


def _replace_cache_run(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    """Make ``arbwb cache info`` raise ``error``."""

    def run(args: object) -> int:
        raise error

    monkeypatch.setattr(cache_command, "run", run)


def test_a_bug_keeps_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    _replace_cache_run(monkeypatch, RuntimeError("a genuine bug"))
    with pytest.raises(RuntimeError, match="a genuine bug"):
        cli.main(["cache", "info"])


def test_generic_interrupt_is_one_line_and_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _replace_cache_run(monkeypatch, KeyboardInterrupt())
    assert cli.main(["cache", "info"]) == cli.EXIT_INTERRUPTED
    assert capsys.readouterr().err == "arbwb cache: interrupted\n"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            OSError(errno.ENOSPC, "No space left on device", "/r/out.json"),
            "/r/out.json: no space left on device; free some space or write elsewhere",
        ),
        (
            PermissionError(errno.EACCES, "Permission denied", "/r/x"),
            "/r/x: permission denied; choose a location you can write to, or fix its permissions",
        ),
        (
            IsADirectoryError(errno.EISDIR, "Is a directory", "/r"),
            "/r: is a directory; pass the path of a file inside it",
        ),
        (
            FileNotFoundError(errno.ENOENT, "No such file or directory", "/r/y"),
            "/r/y: no such file or directory",
        ),
    ],
)
def test_user_message_of_an_unusable_path(error: OSError, expected: str) -> None:
    assert user_message(error) == expected


def test_user_message_leaves_bugs_alone() -> None:
    assert user_message(RuntimeError("x")) is None
    assert user_message(OSError(errno.EBADF, "Bad file descriptor")) is None


def test_full_disk_on_write_names_the_output(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    with pytest.raises(OSError, match="No space") as caught, atomic_open(out) as handle:
        handle.write("{")
        raise OSError(errno.ENOSPC, "No space left on device")  # what write() raises
    assert caught.value.filename == str(out) and caught.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []  # the temporary is gone


def test_rename_onto_a_folder_names_the_output_not_the_temporary(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with pytest.raises(IsADirectoryError) as caught, atomic_open(tmp_path / "out") as handle:
        handle.write("{}")
    assert caught.value.filename == str(tmp_path / "out")
    assert user_message(caught.value) == f"{tmp_path / 'out'}: is a directory; " + (
        "pass the path of a file inside it"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def _wait_for(check: Callable[[], bool], process: subprocess.Popen[str], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.slow
def test_ctrl_c_on_rank_hints_at_resume_and_resume_completes(tmp_path: Path) -> None:
    out = tmp_path / "resumed" / "lexical_details.jsonl"
    argv = ["rank", "--method", "lexical", "--data", str(DEMO_DIR), "--no-cache"]
    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_RANK, *argv, "--out", str(out)],
        env=_env(),
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, which Ctrl-C in a terminal signals
    )
    ckpt = checkpoint_path(out)
    _wait_for(
        lambda: ckpt.is_file() and len(ckpt.read_text().splitlines()) >= 3, process, 120
    )  # the fingerprint and two ranked samples
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == cli.EXIT_INTERRUPTED, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    last = err.splitlines()[-1]
    assert last == (
        "arbwb rank: interrupted; rerun the same command with --resume to continue from the "
        "checkpoint"
    )
    assert ckpt.is_file() and not out.exists()

    assert arbwb(*argv, "--out", out, "--resume").returncode == 0
    fresh = tmp_path / "fresh" / "lexical_details.jsonl"
    assert arbwb(*argv, "--out", fresh).returncode == 0
    assert out.read_bytes() == fresh.read_bytes()
    assert not ckpt.exists()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)])
def test_score_and_rank_outputs_respect_the_umask(umask: int, mode: int, tmp_path: Path) -> None:
    score = tmp_path / "score.json"
    assert arbwb("score", DETAILS, "--out", score, umask=umask).returncode == 0
    details = tmp_path / "rank" / "lexical_details.jsonl"
    rank = _out_commands(details)["rank"]
    assert arbwb(*rank, umask=umask).returncode == 0
    written = [score, *details.parent.iterdir()]
    assert len(written) == 3  # score, details, summary
    assert {p.name: _mode(p) for p in written} == {p.name: mode for p in written}
