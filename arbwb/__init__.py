"""arbwb: a Jupyter-first analysis workbench for Agent Retrieval Bench (ARB); the public names
load on first use (PEP 562), so ``import arbwb`` and the CLI's start stay free of Polars."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (CLI start-up)

__version__ = "0.1.0"

#: Public name -> the module that defines it (a subpackage is its own module).
_LAZY: dict[str, str] = {
    "load_release": "arbwb.io.release", "Release": "arbwb.io.release",
    "load_rankings": "arbwb.io.rankings", "RunData": "arbwb.io.rankings",
    "load_samples": "arbwb.io.samples", "SampleSet": "arbwb.io.samples",
    "open_corpus": "arbwb.io.corpus", "Corpus": "arbwb.io.corpus",
    "evaluate": "arbwb.metrics.evaluation", "parse_metric": "arbwb.metrics.spec",
    "Resampling": "arbwb.analysis.result", "Result": "arbwb.analysis.result",
    "Table": "arbwb.analysis.result", "Recorder": "arbwb.report.record", "show": "arbwb.tables",
    "Retriever": "arbwb.retrievers.plugin", "FileRetriever": "arbwb.retrievers.plugin",
    "InputError": "arbwb.errors", "analysis": "arbwb.analysis", "plots": "arbwb.plots",
}  # fmt: skip

#: Written out for static tools (ruff, mypy, IDEs); tests/test_architecture.py checks it
#: lists exactly ``__version__`` and the lazy names.
__all__ = [
    "Corpus", "FileRetriever", "InputError", "Recorder", "Release", "Resampling", "Result",
    "Retriever", "RunData", "SampleSet", "Table", "__version__", "analysis", "evaluate",
    "load_rankings", "load_release", "load_samples", "open_corpus", "parse_metric", "plots", "show",
]  # fmt: skip

if TYPE_CHECKING:
    from arbwb import analysis, plots
    from arbwb.analysis.result import Resampling, Result, Table
    from arbwb.errors import InputError
    from arbwb.io.corpus import Corpus, open_corpus
    from arbwb.io.rankings import RunData, load_rankings
    from arbwb.io.release import Release, load_release
    from arbwb.io.samples import SampleSet, load_samples
    from arbwb.metrics.evaluation import evaluate
    from arbwb.metrics.spec import parse_metric
    from arbwb.report.record import Recorder
    from arbwb.retrievers.plugin import FileRetriever, Retriever
    from arbwb.tables import show


def __getattr__(name: str) -> object:
    """Import a public name's module on first use and keep the name here."""
    where = _LAZY.get(name)
    if where is None:
        msg = f"module 'arbwb' has no attribute {name!r}; the public names are arbwb.__all__"
        raise AttributeError(msg)
    module = importlib.import_module(where)
    value = module if where == f"arbwb.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's own names plus every lazy public name."""
    return sorted({*globals(), *_LAZY})
