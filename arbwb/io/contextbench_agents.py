"""Agent trajectory extractors of contextbench-spec §3.2, each producing a ``traj_data`` object.

One function per agent format returns ``(instance_id, traj_data, model_patch)`` items with
upstream's parsing rules (tag case, path prefixes, range swapping) reproduced.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from arbwb.errors import InputError
from arbwb.io.contextbench import Item, Predictions, default_run_name, unified_items
from arbwb.jsonio import as_object, iter_jsonl, read_json
from arbwb.metrics.intervals import merge_intervals

Traj = dict[str, Any]
Spans = dict[str, list[dict[str, Any]]]  # path -> line spans
Extracted = tuple[str, Traj, Any]  # instance id, traj_data, model patch (if a non-empty str)

_MINI_SUFFIX = ".traj.json"
_SWE_SUFFIXES = (".checkpoints.jsonl", ".context.json", "patch_context.txt", ".traj")
_AGENTLESS_SUFFIX = "_traj.json"
_SOURCE_EXTS = (
    ".py", ".js", ".java", ".go", ".rs", ".c", ".cpp", ".h", ".hpp", ".ts", ".tsx", ".jsx",
    ".rb", ".php", ".cs", ".kt", ".scala", ".swift",
)  # fmt: skip
_LINES_PAIR = re.compile(r"(\d+)\s*-\s*(\d+)")
_BASH_BLOCK = re.compile(r"```bash\s*\r?\n([\s\S]*?)\r?\n```")
_IMAGE_REPO = re.compile(r"_m_([A-Za-z0-9_.-]+)(?::|$)")
_CHUNK_SPLIT = re.compile(r"\s*(?:&&|\|\||;)\s*")
_NL_SED = re.compile(r"nl\s+[^|]+\s+([^\s|]+)\s*\|\s*sed\s+-n\s+['\"]?(\d+),(\d+)p")
_SED = re.compile(r"sed\s+-n\s+['\"]?(\d+),(\d+)p['\"]?\s+([^\s&|>;<]+)")
_HEAD = re.compile(r"\bhead\s+-n\s+(\d+)\s+([^\s&|>]+)")
_CAT = re.compile(r"\bcat\s+([^\s&|>]+)")
_GREP_EXTS = "|".join(ext[1:] for ext in _SOURCE_EXTS)  # upstream's list, in its order
_GREP = re.compile(rf"\bgrep\s+.*?\s+([^\s&|>]+\.(?:{_GREP_EXTS}))\b")
_WRITES = ("sed -i", "echo ", "mkdir", "rm ", "git add", "git commit")
_VIEW = re.compile(r"str_replace_editor view\s+(\S+)(?:\s+--view_range\s+(\d+)\s+(\d+))?")
_SWE_RANGE = re.compile(r"^\s*(-?\d+)\s*-\s*(-?\d+)\s*$")
_PROM_FILE = re.compile(r"^\s*File:\s*(.+?)\s*$")
_PROM_RANGE = re.compile(r"^\s*Line\s*number\s*range\s*:\s*(\d+)\s*-\s*(\d+)\s*$", re.IGNORECASE)
_LOC_LINE = re.compile(r"^line\s*:\s*(\d+)\s*$")
_LOC_LINES = re.compile(r"^lines\s*:\s*(\d+)\s*-\s*(\d+)\s*$")
_SYMBOL = re.compile(r"(?:function|class|variable):(.*)")


def _extractor(path: Path) -> Callable[[Path], list[Extracted]] | None:
    """The extractor of the agent format a file name announces (§3.2); None: unified records."""
    name = path.name
    if name.endswith(_MINI_SUFFIX):
        return extract_mini_swe
    if name.endswith(_AGENTLESS_SUFFIX):
        return extract_agentless
    if name.endswith(_SWE_SUFFIXES):
        return extract_swe_agent
    if name.endswith(".log"):
        return extract_prometheus
    return extract_openhands if name == "output.jsonl" else None


def _span(start: int, end: int) -> dict[str, Any]:
    return {"type": "line", "start": start, "end": end}


def _step(spans: Spans) -> Traj:
    """A step (or final context) of these spans and their files."""
    return {"files": sorted(spans), "spans": spans}


def _traj(steps: list[Traj], final: Spans, files: list[str] | None = None) -> Traj:
    """``traj_data`` of these steps and the final spans (files: theirs unless given)."""
    return {
        "pred_steps": steps,
        "pred_files": sorted(final) if files is None else files,
        "pred_spans": final,
    }


def _mini_repo_dir(data: dict[str, Any]) -> str:
    """The ``/home/<r>`` repo folder of Multi-SWE images (``..._m_<r>:tag``), else ""."""
    info = as_object(data.get("info"))
    image = ((info.get("config") or {}).get("environment") or {}).get("image") or ""
    match = _IMAGE_REPO.search(str(image))
    return match.group(1) if match else ""


def mini_path(raw: str, repo_dir: str = "") -> str:
    """mini-SWE-agent candidate path: quotes, ``/testbed/``, ``/home/<r>/``, leading '/', './'."""
    path = raw.strip().strip("'\"")
    if not path:
        return ""
    path = path.removeprefix("/testbed/")
    if path.startswith("/home/"):
        rest = path[len("/home/") :]
        first, sep, tail = rest.partition("/")
        if not sep:
            return ""
        path = tail if repo_dir and first == repo_dir else rest
    return path.lstrip("/").removeprefix("./")


def tag_blocks(text: str, tag: str) -> list[str]:
    """Inner texts of ``<tag>...</tag>`` blocks (case-sensitive, as upstream)."""
    pattern = rf"<{re.escape(tag)}>\s*([\s\S]*?)\s*</{re.escape(tag)}>"
    return [m.group(1) for m in re.finditer(pattern, text or "")]


def file_lines_pairs(text: str, repo_dir: str = "") -> Spans:
    """``File: p`` / ``Lines: a-b`` pairs of a mini-SWE block (a > b swapped)."""
    out: Spans = {}
    current = ""
    for raw in (text or "").splitlines():
        line = raw.strip()
        if line.startswith("File:"):
            current = mini_path(line[len("File:") :].strip(), repo_dir)
        elif line.startswith("Lines:") and current:
            match = _LINES_PAIR.match(line[len("Lines:") :].strip())
            if match:
                a, b = int(match.group(1)), int(match.group(2))
                out.setdefault(current, []).append(_span(min(a, b), max(a, b)))
    return out


def command_views(cmd: str) -> list[tuple[str, int | None, int | None]]:
    """File views ``(path, start, end)`` of a bash command (mini-SWE fallback): ranged
    sed/nl/head, file-only cat/grep."""
    if any(marker in cmd for marker in _WRITES):
        return []
    views = (_chunk_view(chunk.strip()) for chunk in _CHUNK_SPLIT.split(cmd))
    return list(dict.fromkeys(v for v in views if v and v[0].endswith(_SOURCE_EXTS)))


def _chunk_view(part: str) -> tuple[str, int | None, int | None] | None:
    """First matching view pattern of one command chunk (tried in upstream's order)."""
    if match := _NL_SED.search(part):
        file, start, end = match[1], int(match[2]), int(match[3])
    elif match := _SED.search(part):
        file, start, end = match[3], int(match[1]), int(match[2])
    elif match := _HEAD.search(part):
        file, start, end = match[2], 1, int(match[1])
    elif match := _CAT.search(part) or _GREP.search(part):
        file, start, end = match[1], None, None
    else:
        return None
    return file.strip("'\"").removeprefix("/testbed/"), start, end


def extract_mini_swe(path: Path) -> list[Extracted]:
    """mini-SWE-agent ``*.traj.json``: explore blocks (else bash views) and the last patch block."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError("expected a JSON object (mini-SWE-agent trajectory)", path=path)
    repo_dir = _mini_repo_dir(data)
    messages = [m for m in data.get("messages") or [] if isinstance(m, dict)]
    texts = [str(m.get("content") or "") for m in messages]
    explored = (
        file_lines_pairs(b, repo_dir) for t in texts for b in tag_blocks(t, "explore_context")
    )
    steps = [_step(spans) for spans in explored if spans] or _bash_steps(messages, repo_dir)
    patch_blocks = [block for text in texts for block in tag_blocks(text, "PATCH_CONTEXT")]
    final = file_lines_pairs(patch_blocks[-1], repo_dir) if patch_blocks else {}
    instance = data.get("instance_id") or path.name.removesuffix(_MINI_SUFFIX)
    return [(str(instance), _traj(steps, final), as_object(data.get("info")).get("submission"))]


def _bash_steps(messages: list[dict[str, Any]], repo_dir: str) -> list[Traj]:
    """One step per assistant bash block that views files (mini-SWE fallback)."""
    commands = [
        match.group(1).strip()
        for message in messages
        if message.get("role") == "assistant"
        and (match := _BASH_BLOCK.search(str(message.get("content") or "")))
    ]
    return [s for c in commands if "COMPLETE_TASK" not in c and (s := _views_step(c, repo_dir))]


def _views_step(command: str, repo_dir: str = "") -> Traj | None:
    """The step of the files a bash command views (ranged views as spans); None if none."""
    files: list[str] = []
    spans: Spans = {}
    for raw, start, end in command_views(command):
        if file := mini_path(raw, repo_dir):
            files.append(file)
            if start is not None and end is not None:
                spans.setdefault(file, []).append(_span(start, end))
    return {"files": sorted(set(files)), "spans": spans} if files else None


# --------------------------------------------------------------------------- SWE-agent


def _swe_path(path: str) -> str:
    return path[len("/testbed/") :] if path.startswith("/testbed/") else path.removeprefix("/")


def patch_context(text: str, where: Path) -> Spans:
    """SWE-agent ``File:``/``Lines: a-b`` text (no swapping; a file without lines is kept)."""
    files: Spans = {}
    current: str | None = None
    for raw in text.strip().split("\n"):
        line = raw.strip()
        if line.startswith("File:"):
            current = _swe_path(line.replace("File:", "").strip())
            files.setdefault(current, [])
        elif line.startswith("Lines:") and current is not None:
            rest = line.replace("Lines:", "").strip()
            if "-" in rest:
                match = _SWE_RANGE.match(rest)
                if not match:  # upstream's int(split('-')) raises here
                    raise InputError(f"bad Lines range {rest!r}", path=where, field="patch_context")
                files[current].append(_span(int(match.group(1)), int(match.group(2))))
    return files


def extract_swe_agent(path: Path) -> list[Extracted]:
    """SWE-agent checkpoints (view steps + patch_context) or a final-context-only file."""
    name = path.name
    suffix = next(s for s in _SWE_SUFFIXES if name.endswith(s))
    instance = name.removesuffix(suffix).rstrip("._") or name
    if name.endswith(".context.json"):
        traj = _context_json(path)
    elif name.endswith("patch_context.txt"):
        traj = _traj([], patch_context(path.read_text(encoding="utf-8"), path))
    elif name.endswith(".traj"):
        text = as_object(as_object(read_json(path)).get("info")).get("patch_context") or ""
        traj = _traj([], patch_context(text, path) if text else {})
    else:
        traj = _checkpoints(path)
    return [(instance, traj, None)]


def _context_json(path: Path) -> Traj:
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError("expected a JSON object (SWE-agent context.json)", path=path)
    spans: Spans = {}
    for raw, ranges in (data.get("file_line_ranges") or {}).items():
        found = [
            _span(r.get("start", 1), r.get("end", 1)) for r in ranges or [] if isinstance(r, dict)
        ]
        spans.setdefault(_swe_path(raw), []).extend(found)
    for raw in data.get("viewed_files") or []:
        spans.setdefault(_swe_path(raw), [])
    return _traj([], spans)


def _checkpoints(path: Path) -> Traj:
    steps: list[Traj] = []
    final: Traj | None = None
    for _, checkpoint in iter_jsonl(path):
        if checkpoint.get("type") == "patch_context":
            text = checkpoint.get("patch_context") or ""
            if text:
                spans = patch_context(text, path)
                final = {"files": list(spans), "spans": spans}
            continue
        match = _VIEW.search(str(checkpoint.get("action") or ""))
        if match and match.group(2) and match.group(3):
            start, end = int(match.group(2)), int(match.group(3))
            if start > 0 and end > 0:
                steps.append(_step({_swe_path(match.group(1)): [_span(start, end)]}))
    last = final or (steps[-1] if steps else _step({}))
    return _traj(steps, last["spans"], last["files"])


# --------------------------------------------------------------------------- Agentless


def edit_loc_spans(lines: list[Any]) -> list[tuple[int, int]]:
    """``line: N`` / ``lines: a-b`` mentions of Agentless edit locations (a > b swapped)."""
    spans: list[tuple[int, int]] = []
    for raw in lines:
        text = (raw or "").strip() if isinstance(raw, str) else ""
        candidates = [text] if _LOC_LINES.match(text) or _LOC_LINE.match(text) else []
        for line in candidates or [part.strip() for part in text.splitlines()]:
            if match := _LOC_LINES.match(line):
                a, b = int(match.group(1)), int(match.group(2))
                spans.append((min(a, b), max(a, b)))
            elif match := _LOC_LINE.match(line):
                spans.append((int(match.group(1)), int(match.group(1))))
    return spans


def _symbol_names(items: Any) -> list[str]:
    """Names of ``function:``/``class:``/``variable:`` lines of related-element strings."""
    texts = [item for item in items if isinstance(item, str)] if isinstance(items, list) else []
    lines = (line.strip() for text in texts for line in text.splitlines())
    return [name for line in lines if (m := _SYMBOL.match(line)) and (name := m[1].strip())]


def extract_agentless(path: Path) -> list[Extracted]:
    """Agentless ``*_traj.json``: one step = final (files, related symbols, edit-loc lines)."""
    data = read_json(path)
    if not isinstance(data, dict):
        return [(path.name.removesuffix(_AGENTLESS_SUFFIX), {"pred_steps": []}, None)]
    raw_files = data.get("3_final_combined_files") or data.get("2_embedding_selected_files") or []
    files = sorted({f for f in raw_files if isinstance(f, str) and f})
    related = as_object(data.get("4_related_elements")).items()
    symbols = {
        f: sorted(set(names)) for f, items in related if f and (names := _symbol_names(items))
    }
    spans = _agentless_spans(data.get("5_sampled_edit_locs_and_patches"))
    step = {"files": files, "spans": spans, "symbols": symbols}
    traj = _traj([step], spans, files) | {"pred_symbols": symbols}
    instance = data.get("instance_id") or path.name.removesuffix(_AGENTLESS_SUFFIX)
    return [(str(instance), traj, data.get("6_final_selected_patch"))]


def _agentless_spans(samples: Any) -> Spans:
    """Spans of the first sample whose edit_locs mention ``line:``/``lines:``, merged per file."""
    for sample in samples if isinstance(samples, list) else []:
        locs = sample.get("edit_locs") if isinstance(sample, dict) else None
        if not isinstance(locs, dict):
            continue
        mentions = any(
            isinstance(raw, str) and ("line:" in raw or "lines:" in raw)
            for lines in locs.values()
            if isinstance(lines, list)
            for raw in lines
        )
        if not mentions:
            continue
        return _merged({f: edit_loc_spans(v) for f, v in locs.items() if isinstance(v, list)})
    return {}


# --------------------------------------------------------------------------- Prometheus


def _prom_path(raw: str) -> str:
    path = raw.strip().replace("\\\\", "/")
    if path.startswith("/testbed/"):
        path = path.removeprefix("/testbed/")
    elif path.startswith("/workspace/"):
        path = path.removeprefix("/workspace/").split("/", 1)[-1]
    return path.lstrip("/")


def _between(text: str, begin: str, end: str) -> list[str]:
    """Texts between each ``begin`` and the next ``end`` (newlines around them stripped)."""
    pattern = f"{re.escape(begin)}(.*?){re.escape(end)}"
    return [block.strip("\n") for block in re.findall(pattern, text, re.DOTALL)]


def _prom_ranges(block: str) -> Spans:
    found: dict[str, list[tuple[int, int]]] = {}
    current: str | None = None
    for line in block.splitlines():
        if match := _PROM_FILE.match(line):
            current = _prom_path(match.group(1)) or None
            if current:
                found.setdefault(current, [])
        elif (match := _PROM_RANGE.match(line)) and current:
            a, b = int(match.group(1)), int(match.group(2))
            found[current].append((min(a, b), max(a, b)))
    return _merged(found)


def _merged(ranges: dict[str, list[tuple[int, int]]]) -> Spans:
    """Spans of each named file with ranges, merged (adjacent ones joined)."""
    return {
        f: [_span(a, b) for a, b in merge_intervals(ivs)] for f, ivs in ranges.items() if f and ivs
    }


def extract_prometheus(path: Path) -> list[Extracted]:
    """Prometheus ``*.log``: context blocks are steps; last aggregated block (else union) final."""
    text = path.read_text(encoding="utf-8", errors="replace")
    steps: list[Traj] = []
    for block in _between(text, "--- BEGIN CONTEXT ---", "--- END CONTEXT ---"):
        if spans := _prom_ranges(block):
            steps.append(_step(spans))
    aggregated = _between(
        text, "--- BEGIN AGGREGATED CONTEXT ---", "--- END AGGREGATED CONTEXT ---"
    )
    final = _prom_ranges(aggregated[-1]) if aggregated else {}
    if not final:
        final = _merged({f: [(s["start"], s["end"]) for s in v] for f, v in _union(steps).items()})
    if not steps and final:
        steps = [_step(final)]
    return [(path.name.removesuffix(".log"), _traj(steps, final), None)]


def _union(steps: list[Traj]) -> Spans:
    """Every step's spans per file, in step order."""
    union: Spans = {}
    for step in steps:
        for file, spans in step["spans"].items():
            union.setdefault(file, []).extend(spans)
    return union


# --------------------------------------------------------------------------- OpenHands


def extract_openhands(path: Path) -> list[Extracted]:
    """OpenHands ``output.jsonl``: ranged ``read`` actions and parsed ``run`` commands are steps;
    final = union of all steps (no declared final context). Best-effort reading of §3.2.
    """
    out: list[Extracted] = []
    for line, record in iter_jsonl(path):
        instance = record.get("instance_id")
        if not isinstance(instance, str) or not instance:
            raise InputError("record has no instance_id", path=path, line=line, field="instance_id")
        steps = [s for event in record.get("history") or [] if (s := _openhands_step(event))]
        files = sorted({file for step in steps for file in step["files"]})
        patch = (record.get("test_result") or {}).get("git_patch")
        out.append((instance, _traj(steps, _union(steps), files), patch))
    return out


def _openhands_step(event: Any) -> Traj | None:
    if not isinstance(event, dict):
        return None
    args = as_object(event.get("args"))
    if event.get("action") == "read" and args:
        file = mini_path(str(args.get("path") or ""))
        view = args.get("view_range")
        if isinstance(view, list) and len(view) == 2:
            start, end = view
        else:
            start, end = args.get("start"), args.get("end")
        if file and isinstance(start, int) and isinstance(end, int) and start > 0 and end > 0:
            return _step({file: [_span(start, end)]})
        return None
    if event.get("action") == "run" and args:
        return _views_step(str(args.get("command") or ""))
    return None


def load_trajectories(path: str | Path, *, run: str | None = None) -> Predictions:
    """One run from an agent file or a folder of them (one instance per file, OpenHands many)."""
    path = Path(path)
    name = run or (path.name if path.is_dir() else path.name.split(".")[0])
    loaded = Predictions.from_items(name, path, _agent_items(path))
    if loaded.records.is_empty():
        raise InputError("no agent trajectory files found (see contextbench-spec §3.2)", path=path)
    return loaded


def _agent_items(path: Path) -> Iterator[Item]:
    """Each instance of the agent files at ``path`` (a file, or a folder searched deeply)."""
    seen: dict[str, str] = {}
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        extract = _extractor(file)
        for instance, traj, patch in extract(file) if extract else []:
            if instance in seen:
                msg = f"instance {instance!r} also comes from {seen[instance]}"
                raise InputError(msg, path=file, field="instance_id")
            seen[instance] = str(file)
            yield instance, traj, {"model_patch": patch}, 0, str(file)


def load_predictions(path: str | Path, *, run: str | None = None) -> Predictions:
    """One run: a unified-records file, one agent trajectory, or a folder of trajectories."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_dir() or _extractor(path) is not None:
        return load_trajectories(path, run=run)
    return Predictions.from_items(run or default_run_name(path), path, unified_items(path))
