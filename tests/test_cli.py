"""The CLI dispatcher finds every subcommand module and maps bad input to exit 2."""

from __future__ import annotations

import argparse
import pkgutil
from collections.abc import Iterator

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


def _options(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    """Every option of ``parser`` and of its subcommands, nested ones included."""
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield from _options(child)


def test_every_format_option_has_help_and_a_default() -> None:
    formats = [
        (name, action)
        for name in commands.COMMANDS
        for action in _options(cli.build_parser(name))
        if "--format" in action.option_strings
    ]
    assert len(formats) >= 6, [name for name, _ in formats]  # score, depth, ..., taxonomy
    for name, action in formats:
        assert action.help and action.default in (action.choices or ()), name


def test_score_help_names_the_metrics(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["score", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "recall@K" in out and "mrr" in out and "bcy@B" in out and "(default: json)" in out
