"""Project, data and figure directories, resolved from the package location; output checks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from arbwb.errors import InputError

PROJECT_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = PROJECT_DIR / "data"
DEMO_DIR = DATA_DIR / "demo"
DEMO_SRC_DIR = DATA_DIR / "demo-src"
DOCS_DIR = PROJECT_DIR / "docs"
NOTEBOOKS_DIR = PROJECT_DIR / "notebooks"
#: The published subset releases (their ``corpus/<R>/`` and ``eval/<R>/`` folder names) in spec
#: §1.4's merge order; other corpus/<R>/ folders follow by name.
RELEASE_ORDER = (
    "v2_code2test", "v2_comment2context", "v2_trace2code", "v2_edit2ripple", "v2_abstention",
)  # fmt: skip


def check_output_path(
    path: str | Path | None, *, kind: Literal["file", "dir"] = "file", field: str = "--out"
) -> None:
    """Refuse an output path that cannot be written (``None``, stdout, passes) before a command
    works: of the right kind, below a writable folder (temporaries are made beside it)."""
    if path is None:
        return
    target = Path(path)
    if kind == "file" and target.is_dir():
        msg = "is a folder; pass a file path, e.g. one inside it"
        raise InputError(msg, path=target, field=field)
    if kind == "dir" and target.exists() and not target.is_dir():
        msg = "is a file; pass a folder (a new or an existing one)"
        raise InputError(msg, path=target, field=field)
    above = target.absolute().parent
    while not above.exists():
        above = above.parent
    if not above.is_dir():
        msg = f"cannot be created: {above} is a file, not a folder"
        raise InputError(msg, path=target, field=field)
    if not os.access(above, os.W_OK | os.X_OK):
        msg = f"cannot be written: permission denied in {above}; choose a writable location"
        raise InputError(msg, path=target, field=field)
