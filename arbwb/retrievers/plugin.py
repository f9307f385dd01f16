"""Plug-in retrievers: a factory ``make(**options) -> retriever``, named by a built-in name,
``package.module:factory`` or an ``arbwb.retrievers`` entry point (docs/retrievers.md)."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import inspect
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from arbwb.errors import InputError
from arbwb.retrievers.common import RetrievalMethod
from arbwb.retrievers.interface import FileRetriever as FileRetriever  # re-exported
from arbwb.retrievers.interface import Retriever as Retriever  # re-exported
from arbwb.retrievers.interface import bind, guard
from arbwb.retrievers.interface import file_ranking as file_ranking  # re-exported

#: The entry-point group installed packages declare their retriever factories in.
ENTRY_POINT_GROUP = "arbwb.retrievers"
#: A plug-in factory: keyword options in, retriever out.
Factory = Callable[..., Retriever | FileRetriever]


@dataclass(frozen=True)
class MethodSpec:
    """Where a method name leads: ``builtin``, an ``entry point`` (its dist) or a ``module``."""

    name: str
    source: str
    target: str  # "module:factory" for plug-ins, the name for built-ins


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``key=value`` strings as factory options (JSON values parsed, else strings)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            msg = f"expected key=value, got {pair!r}"
            raise InputError(msg, field="--option")
        try:
            options[key] = json.loads(text)
        except ValueError:
            options[key] = text
    return options


def entry_points() -> dict[str, MethodSpec]:
    """Retriever factories installed packages declare (group ``arbwb.retrievers``), by name."""
    found: dict[str, MethodSpec] = {}
    for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = point.dist.name if point.dist is not None else "unknown distribution"
        found.setdefault(point.name, MethodSpec(point.name, f"entry point ({dist})", point.value))
    return found


def available() -> list[MethodSpec]:
    """Every method name ``arbwb rank --method`` accepts now: built-ins first, then entry points."""
    from arbwb.retrievers import METHOD_NAMES

    builtins = [MethodSpec(n, "built-in", n) for n in METHOD_NAMES]
    return builtins + [s for n, s in sorted(entry_points().items()) if n not in METHOD_NAMES]


def resolve(name: str) -> MethodSpec:
    """The :class:`MethodSpec` of a ``--method`` value; unknown names list the available ones."""
    if ":" in name:
        return MethodSpec(name, "module", name)
    known = {s.name: s for s in available()}
    if name not in known:
        names = ", ".join(known)
        msg = (
            f"unknown method {name!r}; choose one of {names}, or name your own retriever "
            "as package.module:factory"
        )
        raise InputError(msg, field="--method")
    return known[name]


def load_factory(target: str) -> Factory:
    """Import ``package.module:factory`` (the current folder is importable too)."""
    module_name, _, attr = target.partition(":")
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)  # the current folder, after everything installed
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        msg = f"cannot import {module_name!r} ({exc}); put its folder on PYTHONPATH or run here"
        raise InputError(msg, field="--method") from None
    factory = getattr(module, attr, None) if attr else None
    if not callable(factory):
        msg = f"{module_name!r} has no callable {attr!r}; expected package.module:factory"
        raise InputError(msg, field="--method")
    return factory  # type: ignore[no-any-return]


def _source(factory: Factory) -> str | None:
    """SHA-256 of the file defining ``factory``: a changed plug-in is never resumed or reused."""
    with contextlib.suppress(TypeError):  # a built-in has no source file
        found = inspect.getsourcefile(factory)
        return None if found is None else hashlib.sha256(Path(found).read_bytes()).hexdigest()
    return None


def adapt(
    retriever: Any, default_name: str, params: Mapping[str, Any] | None = None
) -> RetrievalMethod:
    """The :class:`RetrievalMethod` of a plug-in object (:func:`guard`, then :func:`bind`)."""
    return bind(guard(retriever, default_name, params))


def method_for(
    name: str, options: Mapping[str, Any], builtin: Callable[[], RetrievalMethod]
) -> RetrievalMethod:
    """The :class:`RetrievalMethod` a ``--method`` value names: ``builtin()`` for a built-in, else
    the plug-in spec's factory called with ``options``."""
    spec = resolve(name)
    if spec.source == "built-in":
        if options:
            msg = f"--option applies to plug-in retrievers, not the built-in {name!r}"
            raise InputError(msg, field="--option")
        return builtin()
    factory = load_factory(spec.target)
    try:
        retriever = factory(**options)
    except TypeError as exc:
        msg = f"{spec.target} rejected the options {sorted(options)}: {exc}"
        raise InputError(msg, field="--option") from None
    default = spec.name if spec.source != "module" else spec.target.partition(":")[0]
    params = {"factory": spec.target, "options": dict(options), "source_sha256": _source(factory)}
    return adapt(retriever, default.rsplit(".", 1)[-1], params)
