"""Spec §5.7 read literally (plain Python, no arbwb): the reference every BCY benchmark
times against. One packing loop, shared so two benchmarks cannot drift apart."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^A-Za-z0-9_\s]")


def file_texts(chunk_file: Path) -> dict[str, str]:
    """Text of every file row of a chunk file, read line by line with ``json.loads``."""
    texts: dict[str, str] = {}
    with chunk_file.open(encoding="utf-8") as chunks:
        for chunk_line in chunks:
            chunk = json.loads(chunk_line)
            if chunk["kind"] == "file":
                texts[chunk["path"]] = chunk["text"]
    return texts


def literal_covered(
    ranked: Sequence[str],
    texts: Mapping[str, str],
    gold: set[str],
    budget: int,
    taus: Sequence[int],
) -> dict[int, int]:
    """Gold files covered at each tau when packing ``ranked`` file texts into ``budget``."""
    used = 0
    covered = dict.fromkeys(taus, 0)
    for path in ranked:
        if path not in texts:
            continue
        h = len(TOKEN.findall("### " + path + "\n"))
        c = len(TOKEN.findall(texts[path]))
        total = h + c + (1 if texts[path] else 0)
        if budget - used <= 0:
            break
        if total <= budget - used:
            used += total
            m = c
        else:
            m = min(c, max(0, budget - used - h))
            used = budget
        if path in gold and c > 0:
            for t in taus:
                covered[t] += m >= min(t, c)
        if used >= budget:
            break
    return covered
