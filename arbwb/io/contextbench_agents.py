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
from arbwb.io.contextbench import Predictions, record_row, traj_rows, unified_predictions
from arbwb.jsonio import as_object, iter_jsonl, read_json
from arbwb.metrics.intervals import merge_intervals

Traj = dict[str, Any]
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


def agent_of(path: Path) -> str | None:
    """The agent format a file name announces (§3.2), or None for unified records."""
    name = path.name
    if name.endswith(_MINI_SUFFIX):
        return "mini-swe-agent"
    if name.endswith(_AGENTLESS_SUFFIX):
        return "agentless"
    if name.endswith(_SWE_SUFFIXES):
        return "swe-agent"
    if name.endswith(".log"):
        return "prometheus"
    if name == "output.jsonl":
        return "openhands"
    return None


def _span(start: int, end: int) -> dict[str, Any]:
    return {"type": "line", "start": start, "end": end}


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
    if path.startswith("/"):
        path = path.lstrip("/")
    return path.removeprefix("./")


def tag_blocks(text: str, tag: str) -> list[str]:
    """Inner texts of ``<tag>...</tag>`` blocks (case-sensitive, as upstream)."""
    pattern = rf"<{re.escape(tag)}>\s*([\s\S]*?)\s*</{re.escape(tag)}>"
    return [m.group(1) for m in re.finditer(pattern, text or "")]


def file_lines_pairs(text: str, repo_dir: str = "") -> dict[str, list[dict[str, Any]]]:
    """``File: p`` / ``Lines: a-b`` pairs of a mini-SWE block (a > b swapped)."""
    out: dict[str, list[dict[str, Any]]] = {}
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


def command_views(cmd: str) -> list[dict[str, Any]]:
    """File views of a bash command (mini-SWE fallback): ranged sed/nl/head, file-only cat/grep."""
    if any(marker in cmd for marker in _WRITES):
        return []
    unique: dict[tuple[Any, ...], dict[str, Any]] = {}
    for chunk in _CHUNK_SPLIT.split(cmd):
        view = _chunk_view(chunk.strip())
        if view is not None and view["file"].endswith(_SOURCE_EXTS):
            unique.setdefault((view["file"], view.get("start"), view.get("end")), view)
    return list(unique.values())


def _chunk_view(part: str) -> dict[str, Any] | None:
    """First matching view pattern of one command chunk (tried in upstream's order)."""
    if match := _NL_SED.search(part):
        return _view(match.group(1), int(match.group(2)), int(match.group(3)))
    if match := _SED.search(part):
        return _view(match.group(3), int(match.group(1)), int(match.group(2)))
    if match := _HEAD.search(part):
        return _view(match.group(2), 1, int(match.group(1)))
    if match := _CAT.search(part):
        return _view(match.group(1))
    if match := _GREP.search(part):
        return _view(match.group(1))
    return None


def _view(file: str, start: int | None = None, end: int | None = None) -> dict[str, Any]:
    path = file.strip("'\"").removeprefix("/testbed/")
    return {"file": path} if start is None else {"file": path, "start": start, "end": end}


def extract_mini_swe(path: Path) -> list[Extracted]:
    """mini-SWE-agent ``*.traj.json``: explore blocks (else bash views) and the last patch block."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError("expected a JSON object (mini-SWE-agent trajectory)", path=path)
    repo_dir = _mini_repo_dir(data)
    messages = [m for m in data.get("messages") or [] if isinstance(m, dict)]
    steps: list[Traj] = []
    for message in messages:
        for block in tag_blocks(str(message.get("content") or ""), "explore_context"):
            spans = file_lines_pairs(block, repo_dir)
            if spans:
                steps.append({"files": sorted(spans), "spans": spans})
    if not steps:
        steps = _bash_steps(messages, repo_dir)
    patch_blocks = [
        block
        for message in messages
        for block in tag_blocks(str(message.get("content") or ""), "PATCH_CONTEXT")
    ]
    final = file_lines_pairs(patch_blocks[-1], repo_dir) if patch_blocks else {}
    traj = {"pred_steps": steps, "pred_files": sorted(final), "pred_spans": final}
    instance = data.get("instance_id") or path.name.removesuffix(_MINI_SUFFIX)
    return [(str(instance), traj, as_object(data.get("info")).get("submission"))]


def _bash_steps(messages: list[dict[str, Any]], repo_dir: str) -> list[Traj]:
    """One step per assistant bash block that views files (mini-SWE fallback)."""
    steps: list[Traj] = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        match = _BASH_BLOCK.search(str(message.get("content") or ""))
        if match and "COMPLETE_TASK" not in match.group(1).strip():
            step = _views_step(match.group(1).strip(), repo_dir)
            if step is not None:
                steps.append(step)
    return steps


def _views_step(command: str, repo_dir: str = "") -> Traj | None:
    """The step of the files a bash command views (ranged views as spans); None if none."""
    files: list[str] = []
    spans: dict[str, list[dict[str, Any]]] = {}
    for view in command_views(command):
        file = mini_path(view["file"], repo_dir)
        if file:
            files.append(file)
            if "start" in view:
                spans.setdefault(file, []).append(_span(view["start"], view["end"]))
    return {"files": sorted(set(files)), "spans": spans} if files else None


# --------------------------------------------------------------------------- SWE-agent


def _swe_path(path: str) -> str:
    return path[len("/testbed/") :] if path.startswith("/testbed/") else path.removeprefix("/")


def patch_context(text: str, where: Path) -> dict[str, list[dict[str, Any]]]:
    """SWE-agent ``File:``/``Lines: a-b`` text (no swapping; a file without lines is kept)."""
    files: dict[str, list[dict[str, Any]]] = {}
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
    for suffix in _SWE_SUFFIXES:
        if name.endswith(suffix):
            instance = name.removesuffix(suffix).rstrip("._") or name
            break
    if name.endswith(".context.json"):
        traj = _context_json(path)
    elif name.endswith("patch_context.txt"):
        traj = _final_only(patch_context(path.read_text(encoding="utf-8"), path))
    elif name.endswith(".traj"):
        text = as_object(as_object(read_json(path)).get("info")).get("patch_context") or ""
        traj = _final_only(patch_context(text, path) if text else {})
    else:
        traj = _checkpoints(path)
    return [(instance, traj, None)]


def _final_only(spans: dict[str, list[dict[str, Any]]]) -> Traj:
    """A trajectory of its final context alone: these spans and their files."""
    return {"pred_steps": [], "pred_files": sorted(spans), "pred_spans": spans}


def _context_json(path: Path) -> Traj:
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError("expected a JSON object (SWE-agent context.json)", path=path)
    files: set[str] = set()
    spans: dict[str, list[dict[str, Any]]] = {}
    for raw, ranges in (data.get("file_line_ranges") or {}).items():
        key = _swe_path(raw)
        files.add(key)
        for item in ranges or []:
            if isinstance(item, dict):
                spans.setdefault(key, []).append(_span(item.get("start", 1), item.get("end", 1)))
        spans.setdefault(key, [])
    for raw in data.get("viewed_files") or []:
        key = _swe_path(raw)
        files.add(key)
        spans.setdefault(key, [])
    return {"pred_steps": [], "pred_files": sorted(files), "pred_spans": spans}


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
                file = _swe_path(match.group(1))
                steps.append({"files": [file], "spans": {file: [_span(start, end)]}})
    last = final or (steps[-1] if steps else {"files": [], "spans": {}})
    return {"pred_steps": steps, "pred_files": last["files"], "pred_spans": last["spans"]}


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
    names: list[str] = []
    for item in items if isinstance(items, list) else []:
        for raw in item.splitlines() if isinstance(item, str) else []:
            line = raw.strip()
            if line.startswith(("function:", "class:", "variable:")):
                name = re.sub(r"^(?:function|class|variable)\s*:\s*", "", line).strip()
                if name:
                    names.append(name)
    return names


def extract_agentless(path: Path) -> list[Extracted]:
    """Agentless ``*_traj.json``: one step = final (files, related symbols, edit-loc lines)."""
    data = read_json(path)
    if not isinstance(data, dict):
        return [(path.name.removesuffix(_AGENTLESS_SUFFIX), {"pred_steps": []}, None)]
    raw_files = data.get("3_final_combined_files") or data.get("2_embedding_selected_files") or []
    files = sorted({f for f in raw_files if isinstance(f, str) and f})
    related = data.get("4_related_elements")
    symbols = {}
    for file, items in (related if isinstance(related, dict) else {}).items():
        names = _symbol_names(items)
        if file and names:
            symbols[file] = sorted(set(names))
    spans = _agentless_spans(data.get("5_sampled_edit_locs_and_patches"))
    step = {"files": files, "spans": spans, "symbols": symbols}
    traj = {"pred_steps": [step], "pred_files": files, "pred_spans": spans, "pred_symbols": symbols}
    instance = data.get("instance_id") or path.name.removesuffix(_AGENTLESS_SUFFIX)
    return [(str(instance), traj, data.get("6_final_selected_patch"))]


def _agentless_spans(samples: Any) -> dict[str, list[dict[str, Any]]]:
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
        out: dict[str, list[dict[str, Any]]] = {}
        for file, lines in locs.items():
            if file and isinstance(lines, list):
                merged = merge_intervals(edit_loc_spans(lines))
                if merged:
                    out[file] = [_span(a, b) for a, b in merged]
        return out
    return {}


# --------------------------------------------------------------------------- Prometheus


def _prom_path(raw: str) -> str:
    path = raw.strip().replace("\\\\", "/")
    if path.startswith("/testbed/"):
        path = path[len("/testbed/") :]
    elif path.startswith("/workspace/"):
        rest = path[len("/workspace/") :]
        first, sep, tail = rest.partition("/")
        path = tail if sep else first
    return path.lstrip("/") if path.startswith("/") else path


def _between(text: str, begin: str, end: str) -> list[str]:
    blocks, start = [], 0
    while (i := text.find(begin, start)) >= 0 and (j := text.find(end, i + len(begin))) >= 0:
        blocks.append(text[i + len(begin) : j].strip("\n"))
        start = j + len(end)
    return blocks


def _prom_ranges(block: str) -> dict[str, list[tuple[int, int]]]:
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
    return {f: merge_intervals(ivs) for f, ivs in found.items() if ivs}


def _unified(ranges: dict[str, list[tuple[int, int]]]) -> dict[str, list[dict[str, Any]]]:
    return {f: [_span(a, b) for a, b in ivs] for f, ivs in ranges.items() if f}


def extract_prometheus(path: Path) -> list[Extracted]:
    """Prometheus ``*.log``: context blocks are steps; last aggregated block (else union) final."""
    text = path.read_text(encoding="utf-8", errors="replace")
    steps: list[Traj] = []
    for block in _between(text, "--- BEGIN CONTEXT ---", "--- END CONTEXT ---"):
        spans = _unified(_prom_ranges(block))
        if spans:
            steps.append({"files": sorted(spans), "spans": spans})
    aggregated = _between(
        text, "--- BEGIN AGGREGATED CONTEXT ---", "--- END AGGREGATED CONTEXT ---"
    )
    final = _unified(_prom_ranges(aggregated[-1])) if aggregated else {}
    if not final:
        union: dict[str, list[tuple[int, int]]] = {}
        for step in steps:
            step_spans: dict[str, list[dict[str, Any]]] = step["spans"]
            for file, items in step_spans.items():
                union.setdefault(file, []).extend((s["start"], s["end"]) for s in items)
        final = _unified({f: merge_intervals(ivs) for f, ivs in union.items()})
    if not steps and final:
        steps = [{"files": sorted(final), "spans": final}]
    traj = {"pred_steps": steps, "pred_files": sorted(final), "pred_spans": final}
    return [(path.name.removesuffix(".log"), traj, None)]


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
        files: set[str] = set()
        union: dict[str, list[dict[str, Any]]] = {}
        for step in steps:
            files.update(step["files"])
            for file, spans in step["spans"].items():
                union.setdefault(file, []).extend(spans)
        traj = {"pred_steps": steps, "pred_files": sorted(files), "pred_spans": union}
        out.append((instance, traj, (record.get("test_result") or {}).get("git_patch")))
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
            return {"files": [file], "spans": {file: [_span(start, end)]}}
        return None
    if event.get("action") == "run" and args:
        return _views_step(str(args.get("command") or ""))
    return None


EXTRACTORS: dict[str, Callable[[Path], list[Extracted]]] = {
    "mini-swe-agent": extract_mini_swe,
    "swe-agent": extract_swe_agent,
    "agentless": extract_agentless,
    "prometheus": extract_prometheus,
    "openhands": extract_openhands,
}


def _files(path: Path) -> Iterator[Path]:
    if path.is_file():
        yield path
        return
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        if agent_of(file) is not None:
            yield file


def load_trajectories(path: str | Path, *, run: str | None = None) -> Predictions:
    """One run from an agent file or a folder of them (one instance per file, OpenHands many)."""
    path = Path(path)
    name = run or (path.name if path.is_dir() else path.name.split(".")[0])
    records: list[dict[str, Any]] = []
    context: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for file in _files(path):
        agent = agent_of(file)
        assert agent is not None
        for instance, traj, patch in EXTRACTORS[agent](file):
            if instance in seen:
                msg = f"instance {instance!r} also comes from {seen[instance]}"
                raise InputError(msg, path=file, field="instance_id")
            seen[instance] = str(file)
            context.extend(traj_rows(name, instance, traj, str(file)))
            record = {"model_patch": patch}
            records.append(record_row(name, instance, 0, traj, record, str(file)))
    if not records:
        raise InputError("no agent trajectory files found (see contextbench-spec §3.2)", path=path)
    return Predictions.from_rows(name, path, records, context)


def load_predictions(path: str | Path, *, run: str | None = None) -> Predictions:
    """One run: a unified-records file, one agent trajectory, or a folder of trajectories."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_dir() or agent_of(path) is not None:
        return load_trajectories(path, run=run)
    return unified_predictions(path, run=run)
