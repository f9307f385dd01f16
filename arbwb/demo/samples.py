"""The hand-written demo samples of ``data/demo-src/samples.jsonl``, base snapshots named by commit
index; the builder resolves ids, SHAs, gold spans (located by text) and gold blocks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbwb.demo.source import read_rows
from arbwb.errors import InputError


@dataclass(frozen=True)
class SpanSpec:
    """A gold span: ``n_lines`` lines of ``path`` from the first line containing ``needle``."""

    path: str
    needle: str
    n_lines: int
    reason: str = ""  # gold_spans reason (ARB samples)
    written_as: str = ""  # gold path as a ContextBench row spells it; "" = path


@dataclass(frozen=True)
class SampleSpec:
    """One demo sample before ids, SHAs, spans and blocks are resolved by the builder."""

    key: str  # unique slug; the sample id is stable_id("arbwb-demo", task_type, repo, key)
    task_type: str
    repo: str
    commit: int  # index of the base commit in the repo's history
    query: Mapping[str, Any]
    gold: Mapping[str, Any]
    metadata: Mapping[str, Any]
    spans: Sequence[SpanSpec] = ()
    hard_negative_files: Sequence[str] = ()
    audit: Mapping[str, str] | None = None
    source_key: str | None = None  # counterfactual: key of the positive the query comes from


def locate_span(files: Mapping[str, str], span: SpanSpec) -> tuple[int, int]:
    """1-based inclusive line range of a span: first line containing the needle, n lines long."""
    text = files.get(span.path)
    if text is None:
        msg = f"demo span names {span.path!r}, not in the snapshot; fix its row in data/demo-src"
        raise ValueError(msg)
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if span.needle in line:
            end = number + span.n_lines - 1
            if end > len(lines):
                msg = f"demo span {span.needle!r} runs past the end of {span.path}, got end {end}"
                raise ValueError(msg)
            return number, end
    msg = f"demo span needle {span.needle!r} not found in {span.path}; fix its row in data/demo-src"
    raise ValueError(msg)


def read_samples(src: Path) -> tuple[SampleSpec, ...]:
    """The samples of ``src/samples.jsonl`` in file order (the order records are written)."""
    path = src / "samples.jsonl"
    samples = read_rows(path, SampleSpec, spans=SpanSpec)
    keys = {s.key for s in samples}
    for sample in samples:
        if sample.source_key is not None and sample.source_key not in keys:
            msg = f"sample {sample.key!r} names {sample.source_key!r}, no sample of this file"
            raise InputError(msg, path=path, field="source_key")
    return samples
