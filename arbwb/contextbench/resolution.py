"""Predicted paths resolved to repository files (contextbench-spec §2.2, QUIRK Q3)."""

from __future__ import annotations

from collections.abc import Iterable

from arbwb.io.checkout import Checkout


def path_candidates(raw: str) -> list[str]:
    """Candidates of a predicted path (§2.2): whole cleaned path, then minus 1, 2, ... parts."""
    path = raw.strip().strip("'\"").replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    parts = [p for p in path.lstrip("/").split("/") if p]
    return ["/".join(parts[i:]) for i in range(len(parts))]


def resolve_path(raw: str, checkout: Checkout | None, gold_files: Iterable[str] = ()) -> str | None:
    """First candidate that is a regular file at the commit (QUIRK Q3; None drops the entry);
    without a checkout, the first equal to a gold path, else the whole path (arbwb-defined)."""
    candidates = path_candidates(raw)
    if checkout is not None:
        return next((c for c in candidates if checkout.is_file(c)), None)
    gold = set(gold_files)
    return next((c for c in candidates if c in gold), candidates[0] if candidates else None)
