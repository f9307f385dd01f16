"""The CLI dispatcher finds every subcommand module and maps bad input to exit 2."""

from __future__ import annotations

import pkgutil

import pytest

from arbwb import cli, commands


def test_every_command_module_is_registered() -> None:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    names = {m.name.replace("_", "-") for m in pkgutil.iter_modules(commands.__path__)}
    assert names <= set(sub.choices)  # type: ignore[arg-type]


def test_unknown_command_exits_with_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["no-such-command"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    from arbwb import __version__

    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"arbwb {__version__}\n"
