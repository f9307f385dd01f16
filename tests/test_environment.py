"""The conda environment file and the Makefile describe the same install as pyproject.toml."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject_names() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        names |= {_name(r) for r in extra}
    return names


def test_environment_yml_names_the_pyproject_dependencies() -> None:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "python=3.11" in env["dependencies"]
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    listed = {_name(r) for r in pip_section if not r.startswith("-")}
    assert listed == _pyproject_names()
    assert "-e ." in pip_section


def test_constraints_pin_every_dependency() -> None:
    pins = {
        _name(line): line.split("==", 1)[1]
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if "==" in line
    }
    missing = _pyproject_names() - pins.keys()
    assert not missing, f"constraints.txt lacks pins for {sorted(missing)}"
    assert pins["torch"].startswith("2.13.0"), "torch must stay the CPU build 2.13.0"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make report" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_make_test_installs_the_contextbench_pins() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pinned = set(project["optional-dependencies"]["contextbench"])
    assert pinned == {"tree-sitter==0.20.4", "tree-sitter-languages==1.10.2"}  # spec §4
    constraints = set((ROOT / "constraints.txt").read_text().splitlines())
    assert pinned <= constraints
    assert "-e '.[dev,dense,contextbench,ray]'" in (ROOT / "Makefile").read_text()
