"""The predictions format written down (``predictions.schema.json``) and ``arbwb validate``'s
check of a file against it, each problem located by line (JSONL) or JSON pointer (JSON).
``jsonschema`` is imported only there, not on the loaders' path."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from arbwb.errors import InputError
from arbwb.jsonio import iter_jsonl, read_json

SCHEMA_FILE = "predictions.schema.json"


@cache
def schema() -> dict[str, Any]:
    """The predictions JSON Schema shipped in the package (draft 2020-12)."""
    text = resources.files("arbwb").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def is_predictions(path: Path) -> bool:
    """Whether a file is a predictions file: ``.json``, or ``.jsonl`` with ``ranked_files``."""
    from arbwb.io.rankings import detect_format

    if path.suffix.lower() not in (".json", ".jsonl"):
        return False
    try:
        return detect_format(path) == "predictions"
    except (InputError, StopIteration):  # not a ranking file (a sample file, say)
        return False


def problems(path: Path) -> Iterator[tuple[int | None, str, str]]:
    """(line, field, message) for every schema violation of a predictions file (a JSON
    document against the schema branch of its type, so each message points into it)."""
    import jsonschema

    full = schema()

    def part(document: dict[str, Any]) -> jsonschema.Draft202012Validator:
        return jsonschema.Draft202012Validator({"$defs": full["$defs"], **document})

    if path.suffix.lower() != ".json":
        record = part({"$ref": "#/$defs/record"})
        for line, obj in iter_jsonl(path):
            for error in record.iter_errors(obj):
                yield line, _pointer(error), error.message
        return
    document = read_json(path)
    kind = "array" if isinstance(document, list) else "object" if isinstance(document, dict) else ""
    branches = [b for b in full["oneOf"] if b["type"] == kind]
    validator = part(branches[0]) if branches else jsonschema.Draft202012Validator(full)
    for error in validator.iter_errors(document):
        yield None, _pointer(error), error.message


def _pointer(error: Any) -> str:
    """A JSON pointer-like location (``/3/ranked_files/0``); ``/`` for the whole document."""
    return "/" + "/".join(str(p) for p in error.absolute_path)
