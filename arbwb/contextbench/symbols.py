"""Block ("symbol") definitions of contextbench-spec §4 with the pinned tree-sitter stack.

Optional: needs ``tree-sitter==0.20.4`` and ``tree-sitter-languages==1.10.2`` (the versions
upstream pins; ``pip install 'arbwb[contextbench]'``). Imported lazily, so everything else in
arbwb works without them; :func:`tree_sitter_finder` raises an ImportError with that hint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import PurePosixPath
from typing import Any

from arbwb.contextbench.evaluate import Definition, SymbolFinder

INSTALL_HINT = (
    "block (symbol) level needs the tree-sitter stack upstream pins: "
    "pip install 'tree-sitter==0.20.4' 'tree-sitter-languages==1.10.2' "
    "(or pip install 'arbwb[contextbench]')"
)

#: §4: language by lower-cased extension.
LANGUAGES = {
    ".py": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".java": "java",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".hpp": "cpp",
    ".cs": "c_sharp",
    ".php": "php",
    ".rb": "ruby",
    ".swift": "swift",
    ".kt": "kotlin",
    ".scala": "scala",
}

_JS = ("function_declaration", "class_declaration", "method_definition")
#: §4: definition node types per language.
DEFINITIONS: dict[str, frozenset[str]] = {
    "python": frozenset({"function_definition", "class_definition", "async_function_definition"}),
    "javascript": frozenset({*_JS, "arrow_function"}),
    "typescript": frozenset({*_JS, "interface_declaration"}),
    "tsx": frozenset({*_JS, "interface_declaration"}),
    "java": frozenset(
        {
            "method_declaration",
            "class_declaration",
            "interface_declaration",
            "constructor_declaration",
        }
    ),
    "go": frozenset({"function_declaration", "method_declaration", "type_declaration"}),
    "rust": frozenset({"function_item", "impl_item", "struct_item", "trait_item"}),
    "c": frozenset({"function_definition", "struct_specifier"}),
    "cpp": frozenset({"function_definition", "class_specifier", "struct_specifier"}),
    "c_sharp": frozenset({"method_declaration", "class_declaration", "interface_declaration"}),
    "php": frozenset({"function_definition", "method_declaration", "class_declaration"}),
    "ruby": frozenset({"method", "class", "module"}),
    "swift": frozenset({"function_declaration", "class_declaration", "protocol_declaration"}),
    "kotlin": frozenset({"function_declaration", "class_declaration"}),
    "scala": frozenset({"function_definition", "class_definition", "trait_definition"}),
}
#: Name search order (§4): identifier < field_identifier < property_identifier <
#: method_identifier < any other *identifier kind.
_NAME_RANK = ("identifier", "field_identifier", "property_identifier", "method_identifier")


def _rank(node_type: str) -> int | None:
    if node_type in _NAME_RANK:
        return _NAME_RANK.index(node_type)
    return len(_NAME_RANK) if node_type.endswith("identifier") else None


def node_name(node: Any, source: bytes) -> str | None:
    """The ``name`` field's text, else the best-ranked identifier in pre-order of the
    ``declarator`` child (or the node itself); None for unnamed nodes (e.g. arrow functions).
    """
    name = node.child_by_field_name("name")
    if name is not None:
        return str(source[name.start_byte : name.end_byte].decode("utf-8", errors="replace"))
    root = node.child_by_field_name("declarator") or node
    best: tuple[int, Any] | None = None
    stack = [root]
    while stack:
        current = stack.pop()
        rank = _rank(current.type)
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, current)
        stack.extend(reversed(current.children))
    if best is None:
        return None
    found = best[1]
    return str(source[found.start_byte : found.end_byte].decode("utf-8", errors="replace"))


def _walk_definitions(root: Any, wanted: frozenset[str], source: bytes) -> list[Definition]:
    """Named, non-comment nodes from the root down (nested definitions included)."""
    out = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in wanted:
            out.append(
                Definition(node.type, node.start_byte, node.end_byte, node_name(node, source))
            )
        stack.extend(
            child
            for child in reversed(node.children)
            if child.is_named and "comment" not in child.type
        )
    return out


def tree_sitter_finder() -> SymbolFinder:
    """A :data:`SymbolFinder` parsing files with tree-sitter-languages (lazy import).

    ``.swift`` yields no definitions: the pinned wheel has no swift parser and upstream
    aborts the run there (BUG B9); arbwb scores those files without symbols instead.
    """
    try:
        from tree_sitter_languages import get_parser
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    parsers: dict[str, Any] = {}

    def find(path: str, source: bytes) -> Sequence[Definition]:
        language = LANGUAGES.get(PurePosixPath(path).suffix.lower())
        if language is None or language == "swift":
            return ()
        if language not in parsers:
            parsers[language] = get_parser(language)
        tree = parsers[language].parse(source)
        return _walk_definitions(tree.root_node, DEFINITIONS[language], source)

    return find


def table_finder(
    table: dict[str, Sequence[Definition]],
) -> Callable[[str, bytes], Sequence[Definition]]:
    """A finder from a fixed path -> definitions table (tests and hand-made fixtures)."""

    def find(path: str, source: bytes) -> Sequence[Definition]:
        return table.get(path, ())

    return find
