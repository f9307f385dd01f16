"""Rank a whole data root with named methods, one run per ``benchmark/<R>/`` (``arbwb report
--method``), reused or resumed as docs/data-layout.md says."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arbwb.errors import InputError
from arbwb.io.corpus import open_corpus
from arbwb.io.samples import load_samples
from arbwb.jsonio import read_json, write_json
from arbwb.retrievers.common import RetrievalMethod
from arbwb.retrievers.plugin import method_for
from arbwb.retrievers.runner import checkpoint_path, fingerprint, run_method


def _same(found: Any, expected: Mapping[str, Any]) -> bool:
    """Whether a stored fingerprint equals ``expected`` as JSON (tuples read back as lists)."""
    return bool(found == json.loads(json.dumps(dict(expected))))


def _checkpoint_matches(out: Path, expected: Mapping[str, Any]) -> bool:
    """Whether ``out`` has a checkpoint made with the same inputs (else start over)."""
    ckpt = checkpoint_path(out)
    if not ckpt.is_file():
        return False
    first = ckpt.read_text(encoding="utf-8").split("\n", 1)[0]
    try:
        return _same(json.loads(first).get("fingerprint"), expected)
    except ValueError:
        return False


def rank_release(
    names: Sequence[str],
    data: Path,
    runs_dir: Path,
    *,
    options: Mapping[str, Any] | None = None,
    builtin: Callable[[str], RetrievalMethod] | None = None,
) -> list[Path]:
    """Details files of every method in ``names`` over every sample release of ``data``
    (``options``: plug-in factories'; ``builtin(name)``: default the registry's)."""
    from arbwb.retrievers.registry import get_method

    make = builtin or get_method
    # the benchmark/<R>/ folders that hold sample files, sorted
    releases = sorted(p for p in (data / "benchmark").glob("*/") if any(p.glob("*.jsonl")))
    if not releases:
        raise InputError("no benchmark/<release>/ samples to rank", path=data, field="--method")
    methods = [method_for(n, options or {}, functools.partial(make, n)) for n in names]
    corpus = open_corpus(data)
    written: list[Path] = []
    for release in releases:
        sample_set = load_samples(release)
        for method in methods:
            out = runs_dir / release.name / f"{method.name}_details.jsonl"
            expected = fingerprint(method, sample_set, corpus, "all_files", None)
            kept = out.with_name(f"{method.name}_details.fingerprint.json")  # a finished run's
            recorded = read_json(kept) if kept.is_file() and out.is_file() else None
            if not _same(recorded, expected):
                resume = _checkpoint_matches(out, expected)
                run_method(method, sample_set, corpus, out, resume=resume)
                write_json(kept, dict(expected))
            written.append(out)
    return written
